# shellcheck shell=bash
# What local-cluster.sh and second-node.sh share: their messages and how
# they stop a process. Sourced with the script's name for the messages:
#   . "$HERE/lib.sh" local-cluster
LOG_NAME=$1

log() { printf '[%s %s] %s\n' "$LOG_NAME" "$(date +%T)" "$*" >&2; }
die() {
    log "error: $*"
    exit 1
}

pid_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

# TERM, up to 10 s for it to go, then KILL.
stop_pid() {
    local name=$1 pid=$2 i
    pid_alive "$pid" || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
        pid_alive "$pid" || return 0
        sleep 0.2
    done
    log "$name (pid $pid) still running 10s after TERM: KILL"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.2
}
