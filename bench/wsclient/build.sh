#!/usr/bin/env bash
# Builds the reference WebSocket benchmark client (main.go) into
# bench/wsclient/bin/wsclient. Safe to run again: go build only rebuilds what
# changed. Needs Go 1.22 or newer; modules come through the Go module proxy,
# pinned by go.sum.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if ! command -v go >/dev/null 2>&1; then
    echo "bench/wsclient/build.sh: go is not installed (or not on PATH); install Go 1.22 or newer" >&2
    exit 2
fi
mkdir -p "$here/bin"
cd "$here"
go build -mod=readonly -trimpath -o bin/wsclient .
echo "built $here/bin/wsclient" >&2
