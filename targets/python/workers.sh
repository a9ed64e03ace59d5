#!/bin/sh
# Prints how many worker processes a targets/python-* server starts, by its
# server's documented rule, for the CPUs it is given:
#
#   workers.sh 2n+1   (2 x CPUs) + 1: gunicorn's rule ("How Many Workers?" in
#                     gunicorn's design docs), and the process count of
#                     Robyn's fast mode (`--fast`, robyn/argument_parser.py)
#   workers.sh n      one per CPU: one event loop per core, FastAPI's rule
#                     ("Server Workers" in its deployment docs)
#
# CPUs are SERVER_CPUS when the runner sets it (see ../SPEC.md), else the CPUs
# this process may run on (nproc honours the affinity mask, like
# os.sched_getaffinity).
#
# Every process opens at least one database connection, so when DB_POOL_SIZE
# is set the count is capped at it: the total then stays within the pool
# (SPEC.md gives each of W processes max(1, DB_POOL_SIZE / W)). The runner's
# default pool, 4 per server CPU, never binds this cap.
set -eu

die() { echo "workers.sh: $*" >&2; exit 2; }

positive() {
    case "$2" in
        '' | *[!0-9]* | 0*) die "$1 must be a positive integer, got '$2'" ;;
    esac
}

if [ -n "${SERVER_CPUS:-}" ]; then
    positive SERVER_CPUS "$SERVER_CPUS"
    cpus=$SERVER_CPUS
else
    cpus=$(nproc)
fi

case "${1:-}" in
    2n+1) n=$((2 * cpus + 1)) ;;
    n) n=$cpus ;;
    *) die "usage: workers.sh 2n+1|n" ;;
esac

if [ -n "${DB_POOL_SIZE:-}" ]; then
    positive DB_POOL_SIZE "$DB_POOL_SIZE"
    [ "$n" -le "$DB_POOL_SIZE" ] || n=$DB_POOL_SIZE
fi
echo "$n"
