#!/bin/sh
# The entry point of the postgres image (images.py postgres): the database
# of shootout's database scenarios as a pod (issue #50), set up as
# crates/servers/src/database/cluster.rs sets up a local one. As root it
# hands PGROOT to the `postgres` user and runs itself again as that user
# (initdb refuses root); then, unless PGDATA is already seeded (a restarted
# container), it runs initdb (UTF8, locale C, local trust, scram-sha-256
# over TCP, the superuser's password from PG_SUPERUSER_PASSWORD), writes
# PG_SETTINGS (the lines settings.rs renders) into postgresql.auto.conf
# followed by the pod's own listen_addresses (127.0.0.1 and NODE_IP), port
# (PORT) and socket folder, which win over PG_SETTINGS', starts the server
# on its unix socket only, loads TechEmpower's role, database, seed.sql and
# pg_stat_statements, stops it, and `exec`s postgres in the foreground: the
# container's stop signal reaches the postmaster itself (the image's
# StopSignal is SIGINT, PostgreSQL's fast shutdown).
#
# Environment: PORT (required), PG_SUPERUSER_PASSWORD (required: the runner
# reads pg_stat_statements over TCP as the superuser), PG_SETTINGS
# (optional), NODE_IP (optional, an IPv4 or IPv6 address), PGROOT (default
# /var/lib/postgresql: the pod's emptyDir).
set -eu
say() { printf 'shootout-postgres: %s\n' "$*" >&2; }
die() {
    say "$*"
    exit 1
}
PGROOT=${PGROOT:-/var/lib/postgresql}
PGDATA=$PGROOT/data
SOCKETS=$PGROOT/run
SEED=/usr/share/shootout/seed.sql
# TechEmpower's names, as crates/servers/src/database/access.rs fixes them.
APP_USER=benchmarkdbuser
APP_PASSWORD=benchmarkdbpass
DB_NAME=hello_world
export PGDATA LC_ALL=C PGCLIENTENCODING=UTF8

case ${PORT:-} in
'' | *[!0-9]*) die "PORT='${PORT:-}' is not a port number; expected 1 to 65535" ;;
esac
if [ "$PORT" -lt 1 ] || [ "$PORT" -gt 65535 ]; then
    die "PORT='$PORT' is not a port number; expected 1 to 65535"
fi
[ -n "${PG_SUPERUSER_PASSWORD:-}" ] ||
    die "PG_SUPERUSER_PASSWORD is not set; expected the password the runner reads pg_stat_statements with, as user postgres over TCP"
case ${NODE_IP:-} in
*[!0-9a-fA-F.:]*) die "NODE_IP='$NODE_IP' is not an IP address" ;;
esac
[ -r "$SEED" ] || die "$SEED is missing: the image has no seed (TechEmpower's world and fortune tables)"

if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGROOT"
    chown postgres:postgres "$PGROOT"
    chmod 700 "$PGROOT"
    # busybox su execs: the postmaster keeps this process's PID.
    # shellcheck disable=SC2016 # expanded by the shell su runs
    exec su -p -s /bin/sh postgres -c 'exec /bin/sh "$0" "$@"' "$0" "$@"
fi

listen=127.0.0.1
if [ -n "${NODE_IP:-}" ] && [ "$NODE_IP" != 127.0.0.1 ]; then
    listen="$listen,$NODE_IP"
fi

if [ ! -f "$PGDATA/shootout-seeded" ]; then
    rm -rf "$PGDATA" "$SOCKETS"
    mkdir -p "$SOCKETS"
    pwfile=$PGROOT/superuser-password
    (umask 077 && printf '%s\n' "$PG_SUPERUSER_PASSWORD" >"$pwfile")
    initdb -D "$PGDATA" -U postgres -E UTF8 --locale=C --no-sync \
        --auth-local=trust --auth-host=scram-sha-256 --pwfile="$pwfile" >&2
    rm -f "$pwfile"
    {
        printf '%s\n' "${PG_SETTINGS:-}"
        printf '%s\n' "# The pod's own (PORT, NODE_IP), written last: they win over the lines above."
        printf "listen_addresses = '%s'\nport = '%s'\nunix_socket_directories = '%s'\n" "$listen" "$PORT" "$SOCKETS"
    } >"$PGDATA/postgresql.auto.conf"
    # initdb allows TCP from 127.0.0.1 and ::1 only; the runner may be on
    # another node (the password still applies).
    printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -w -t 120 -o "-c listen_addresses=''" start >&2
    psql -X -q -v ON_ERROR_STOP=1 -h "$SOCKETS" -p "$PORT" -U postgres -d postgres \
        -c "CREATE ROLE $APP_USER LOGIN PASSWORD '$APP_PASSWORD'" \
        -c "CREATE DATABASE $DB_NAME" >&2
    psql -X -q -v ON_ERROR_STOP=1 -h "$SOCKETS" -p "$PORT" -U postgres -d "$DB_NAME" \
        -f "$SEED" -c "CREATE EXTENSION pg_stat_statements" >&2
    pg_ctl -D "$PGDATA" -w -t 120 -m fast stop >&2
    date -u >"$PGDATA/shootout-seeded"
    say "initialised and seeded; serving on $listen port $PORT"
fi
exec postgres -D "$PGDATA"
