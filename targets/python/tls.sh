#!/usr/bin/env bash
# Runs a targets/python-* server command, and when TLS_PORT, TLS_CERT and
# TLS_KEY are set (../SPEC.md "TLS"), a second instance of it on TLS_PORT;
# and, given a WebSocket command and WS_PORT (../SPEC.md "WebSocket",
# `ws_port = true`), that server beside them.
#
#   tls.sh gunicorn|uvicorn 'COMMAND' ['WS_COMMAND']
#
# COMMAND is the target's whole cleartext run line (it reads PORT). Without
# the TLS variables and without WS_COMMAND and WS_PORT, this script execs it
# unchanged, so the cleartext server is exactly what it was. With the TLS
# variables, it runs COMMAND twice: as given, and with PORT=TLS_PORT and
# the server's documented TLS options appended:
#
#   gunicorn  --certfile --keyfile [--ca-certs --cert-reqs 2]
#             (gunicorn docs, Settings, SSL:
#             https://docs.gunicorn.org/en/stable/settings.html#ssl)
#   uvicorn   --ssl-certfile --ssl-keyfile [--ssl-ca-certs --ssl-cert-reqs 2]
#             (uvicorn docs, Settings, HTTPS:
#             https://www.uvicorn.org/settings/#https)
#
# (2 is ssl.CERT_REQUIRED.) A second process, because neither server can
# listen with and without TLS at once: gunicorn applies its certfile to
# every --bind, and uvicorn binds one socket. Each instance starts its own
# workers by the target's rule; the database pool is split between them
# (the cleartext one gets the larger half of DB_POOL_SIZE, the TLS one the
# rest), so the total stays within DB_POOL_SIZE.
#
# WS_COMMAND (a WSGI target's ASGI server for /ws, which reads WS_PORT) is
# run as given, one more process, only when WS_PORT is set; it opens no
# database connection, so the pool is not split for it. Without WS_PORT it
# is not started: nothing asked for /ws.
#
# When any of the processes exits, the others are stopped and this script
# exits with its status.
set -euo pipefail

die() { echo "tls.sh: $*" >&2; exit 2; }

kind=${1:-}
command=${2:-}
ws_command=${3:-}
[ -n "$command" ] || die "usage: tls.sh gunicorn|uvicorn 'COMMAND' ['WS_COMMAND']"
case "$kind" in
    gunicorn) tls='--certfile "$TLS_CERT" --keyfile "$TLS_KEY"'
              mutual='--ca-certs "$TLS_CLIENT_CA" --cert-reqs 2' ;;
    uvicorn) tls='--ssl-certfile "$TLS_CERT" --ssl-keyfile "$TLS_KEY"'
             mutual='--ssl-ca-certs "$TLS_CLIENT_CA" --ssl-cert-reqs 2' ;;
    *) die "unknown server '$kind' (gunicorn or uvicorn)" ;;
esac

with_tls=yes
if [ -z "${TLS_PORT:-}" ] || [ -z "${TLS_CERT:-}" ] || [ -z "${TLS_KEY:-}" ]; then
    with_tls=
fi
with_ws=
[ -z "$ws_command" ] || [ -z "${WS_PORT:-}" ] || with_ws=yes
if [ -z "$with_tls" ] && [ -z "$with_ws" ]; then
    exec sh -c "$command"
fi
[ -z "${TLS_CLIENT_CA:-}" ] || tls="$tls $mutual"

clear_pool= tls_pool=
if [ -n "$with_tls" ] && [ -n "${DB_POOL_SIZE:-}" ]; then
    case "$DB_POOL_SIZE" in '' | *[!0-9]* | 0*) die "DB_POOL_SIZE must be a positive integer, got '$DB_POOL_SIZE'" ;; esac
    [ "$DB_POOL_SIZE" -ge 2 ] || die "DB_POOL_SIZE=$DB_POOL_SIZE cannot be split between the cleartext and the TLS server"
    tls_pool=$((DB_POOL_SIZE / 2))
    clear_pool=$((DB_POOL_SIZE - tls_pool))
fi

# Each instance in a subshell so that its PORT and DB_POOL_SIZE are its own.
(
    [ -z "$clear_pool" ] || export DB_POOL_SIZE="$clear_pool"
    exec sh -c "$command"
) &
if [ -n "$with_tls" ]; then
    (
        [ -z "$tls_pool" ] || export DB_POOL_SIZE="$tls_pool"
        export PORT="$TLS_PORT"
        exec sh -c "$command $tls"
    ) &
fi
if [ -n "$with_ws" ]; then
    ( exec sh -c "$ws_command" ) &
fi
# The runner signals the whole process group; this shell only reaps.
status=0
wait -n || status=$?
kill -TERM $(jobs -p) 2>/dev/null || true
wait || true
exit "$status"
