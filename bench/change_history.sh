#!/usr/bin/env bash
# A history with a real change, for `shootout history`'s change points
# (issue #49, docs/statistics.md "Change points"): go-nethttp is run
# N times as it is, N times with a 1 ms sleep added to its /plaintext
# handler (a copy of the target under the same name in another targets
# folder), and N times as it is again, into one fresh results store; then
# `shootout history --target go-nethttp` shows where the series moved.
# The change points must fall on the first run of each phase and nowhere
# else. Traffic stays on 127.0.0.1; each run is a few seconds of load.
#
#   bash bench/change_history.sh [N]   (N runs per phase, default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-5}"
bin="${SHOOTOUT_BIN:-target/release/shootout}"
[ -x "$bin" ] || cargo build -q --release -p shootout
work=$(mktemp -d /tmp/shootout-change-history.XXXXXX)
trap 'rm -rf "$work"' EXIT
db="$work/history.db"
# The original: the repository's own targets folder. The changed one: a
# folder holding a copy of go-nethttp whose /plaintext sleeps 1 ms first.
changed="$work/targets"
mkdir -p "$changed/go-nethttp"
for shared in data SPEC.md; do ln -s "$PWD/targets/$shared" "$changed/$shared"; done
cp targets/go-nethttp/{go.mod,go.sum,main.go,target.toml} "$changed/go-nethttp/"
python3 - "$changed/go-nethttp/main.go" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "func plaintext(w http.ResponseWriter, r *http.Request) {\n"
assert old in s, "plaintext handler not found"
s = s.replace(old, old + "\ttime.Sleep(time.Millisecond)\n", 1)
if '"time"' not in s:
    s = s.replace("import (\n", "import (\n\t\"time\"\n", 1)
open(p, "w").write(s)
PY
cat > "$work/plaintext.toml" <<'TOML'
name = "change-history"
description = "go-nethttp on plaintext, 8 connections, 2 s after a 1 s warm-up, two starts: a history for change points."
source = "shootout's own check of `shootout history`."
targets = ["go-nethttp"]
repetitions = 2
restart = "per-repetition"
warmup = "1s"

[[scenario]]
name = "plaintext"
load = { mode = "closed", connections = 8, duration = "2s", keepalive = true }
TOML
phase() { # phase NAME TARGETS_DIR
  for i in $(seq 1 "$n"); do
    echo "== $1, run $i of $n" >&2
    NO_COLOR=1 "$bin" run "$work/plaintext.toml" --db "$db" --targets-dir "$2" >/dev/null
  done
}
start=$(date +%s)
phase original targets
phase "1 ms sleep" "$changed"
phase original targets
echo "== $((3 * n)) runs in $(( $(date +%s) - start )) s" >&2
"$bin" history --db "$db" --target go-nethttp --max-age 1d
