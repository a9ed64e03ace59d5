#!/usr/bin/env bash
# Writes the shipped manifests and run.sh into OUTDIR with only the values a
# user changes, each from the environment: SHOOTOUT_IMAGE, SERVER_IMAGE,
# TARGET_URL (required; loopback unless REMOTE=1), RATE, DURATION, WARMUP
# and SHARD_CPU (the shards' CPU request); an unset one keeps the shipped
# value. Every value is checked first (exit 2 naming the variable, the value
# and what is expected), then written by render.py as a quoted YAML scalar,
# not by text substitution. Checks that N agrees in its three places
# (completions, parallelism, SHARDS) and that every pod uses the host's
# network, and prints what changed. OUTDIR is written whole or not at all.
# Usage: render.sh OUTDIR
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# PYTHON: the interpreter to use (default python3 on PATH).
python=${PYTHON:-python3}
command -v "$python" >/dev/null || {
    echo "render.sh: needs python3 (apt-get install python3), or PYTHON naming one; '$python' is not found" >&2
    exit 2
}
# -S -E: render.py needs only the standard library (and starts in a tenth of
# the time without site-packages).
exec "$python" -S -E "$HERE/render.py" "$@"
