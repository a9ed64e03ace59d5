#!/usr/bin/env bash
# The quick checks of deploy/kubernetes/ (scripts/test.sh runs them; the
# cluster itself, local-cluster.sh and e2e.sh, is too slow for CI): the
# manifests render with a user's values, N agrees in its three places, every
# pod uses hostNetwork, the shell scripts parse and pass shellcheck
# (scripts/setup.sh installs it; without it this fails, naming it), and
# mkimage.py writes the same image twice.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$HERE"/*.sh; do bash -n "$f"; done
if ! command -v shellcheck >/dev/null; then
    echo "check.sh: shellcheck is not installed (apt-get install shellcheck; scripts/setup.sh does)" >&2
    exit 2
fi
shellcheck "$HERE"/*.sh "$HERE"/../../scripts/*.sh
python3 -m py_compile "$HERE/mkimage.py" "$HERE/hdrcheck.py"
bash "$HERE/render.sh" "$tmp/shipped" >/dev/null
SHOOTOUT_IMAGE=registry.example/shootout:1 SERVER_IMAGE=registry.example/go-nethttp:1 \
    TARGET_URL=http://server.example:8080/plaintext RATE=1000 DURATION=5s WARMUP=0s SHARD_CPU=500m \
    bash "$HERE/render.sh" "$tmp/user" >"$tmp/user.txt"
for want in 'image: registry.example/shootout:1' 'value: "http://server.example:8080/plaintext"' \
    'value: "1000"' 'value: "5s"' 'value: "0s"' 'cpu: "500m"'; do
    if ! grep -qF -- "$want" "$tmp/user/shards-job.yaml"; then
        echo "check.sh: render.sh did not set $want" >&2
        exit 1
    fi
done
grep -qF 'image: registry.example/go-nethttp:1' "$tmp/user/contestant-go-nethttp.yaml"
printf 'hello\n' >"$tmp/f"
python3 "$HERE/mkimage.py" --name localhost/t:1 --out "$tmp/a.tar" --file "$tmp/f:/f" >"$tmp/a.txt"
python3 "$HERE/mkimage.py" --name localhost/t:1 --out "$tmp/b.tar" --file "$tmp/f:/f" >"$tmp/b.txt"
cmp -s "$tmp/a.tar" "$tmp/b.tar" || { echo "check.sh: mkimage.py is not reproducible" >&2; exit 1; }
tar -tf "$tmp/a.tar" | grep -qx index.json
echo "deploy/kubernetes: manifests render, N agrees, hostNetwork everywhere, scripts parse, images reproducible"
