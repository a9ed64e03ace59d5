#!/usr/bin/env bash
# Writes the shipped manifests and run.sh into OUTDIR with only the values a
# user changes: the images, TARGET_URL, RATE, DURATION, WARMUP and the
# shards' CPU request (each from the environment; unset keeps the shipped
# value). Checks that N agrees in its three places (completions,
# parallelism, SHARDS) and that every pod uses the host's network, and
# prints what changed. Usage: render.sh OUTDIR
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: render.sh OUTDIR}
mkdir -p "$out"
cp "$HERE/run.sh" "$HERE/logs-pvc.yaml" "$out/"
# The value line after `- name: NAME`, for each setting given.
args=(-e "s|image: shootout:latest|image: ${SHOOTOUT_IMAGE:-shootout:latest}|"
    -e "s|cpu: \"2\"|cpu: \"${SHARD_CPU:-2}\"|")
for name in TARGET_URL RATE DURATION WARMUP; do
    if [ -n "${!name:-}" ]; then args+=(-e "/- name: $name\$/{n;s|value: \".*\"|value: \"${!name}\"|}"); fi
done
sed "${args[@]}" "$HERE/shards-job.yaml" >"$out/shards-job.yaml"
sed -e "s|image: shootout:latest|image: ${SHOOTOUT_IMAGE:-shootout:latest}|" \
    "$HERE/merge-job.yaml" >"$out/merge-job.yaml"
sed -e "s|image: go-nethttp:latest|image: ${SERVER_IMAGE:-go-nethttp:latest}|" \
    "$HERE/contestant-go-nethttp.yaml" >"$out/contestant-go-nethttp.yaml"

fail() {
    echo "render.sh: $*" >&2
    exit 1
}
s=$out/shards-job.yaml
completions=$(sed -n 's/^  completions: *//p' "$s")
parallelism=$(sed -n 's/^  parallelism: *//p' "$s")
shards=$(grep -A1 -- '- name: SHARDS$' "$s" | sed -n 's/.*value: "\(.*\)"/\1/p')
if [ -z "$completions" ] || [ "$completions" != "$parallelism" ] || [ "$completions" != "$shards" ]; then
    fail "N differs: completions $completions, parallelism $parallelism, SHARDS $shards"
fi
for f in shards-job.yaml merge-job.yaml contestant-go-nethttp.yaml; do
    grep -q '^      hostNetwork: true$' "$out/$f" || fail "$f: the pod does not use hostNetwork"
    grep -q 'imagePullPolicy: IfNotPresent' "$out/$f" || fail "$f: no imagePullPolicy: IfNotPresent"
done
for f in shards-job.yaml merge-job.yaml contestant-go-nethttp.yaml; do
    { diff "$HERE/$f" "$out/$f" || true; } | sed -n "s|^> |$f: |p"
done
echo "N = $completions in completions, parallelism and SHARDS"
