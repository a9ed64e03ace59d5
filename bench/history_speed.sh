#!/usr/bin/env bash
# How long `shootout history` takes on a long history (issue #49): a
# fixture store of N runs (default 300; rust-trio runs, every tenth a
# database run, rust-axum 25% slower in the middle third), then the
# listing and one target's JSON series, each timed 5 times; prints the
# sorted wall-clock seconds (the median is the third). No network.
#
#   bash bench/history_speed.sh [N]
# SHOOTOUT_BIN picks the binary (default target/release/shootout), e.g. to
# time two builds on the same store; KEEP_DB=PATH keeps the store there.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-300}"
bin="${SHOOTOUT_BIN:-target/release/shootout}"
[ -x "$bin" ] || cargo build -q --release -p shootout
cargo build -q --release -p shootout-report-fixtures --example many_runs
work=$(mktemp -d /tmp/shootout-history-speed.XXXXXX)
trap 'rm -rf "$work"' EXIT
db="${KEEP_DB:-$work/history.db}"
rm -f "$db"
target/release/examples/many_runs "$db" "$n"
timed() { # timed LABEL ARGS...
  local label=$1
  shift
  local times=()
  for _ in 1 2 3 4 5; do
    local t0 t1
    t0=$(date +%s.%N)
    "$bin" history --db "$db" "$@" >/dev/null
    t1=$(date +%s.%N)
    times+=("$(echo "$t1 - $t0" | bc)")
  done
  echo "$label: $(printf '%s\n' "${times[@]}" | sort -n | tr '\n' ' ')(s, sorted)"
}
timed "history ($n runs)"
timed "history --target rust-axum --format json" --target rust-axum --format json
