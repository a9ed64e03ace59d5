#!/usr/bin/env bash
# End to end on the cluster of local-cluster.sh: the shipped manifests, with
# only the values a user changes (images, TARGET_URL, RATE, DURATION,
# WARMUP, the shards' CPU request), run a sharded load against a contestant:
#
#   1. go-nethttp as a Deployment (contestant-go-nethttp.yaml), Guaranteed
#      QoS with one whole CPU; reports whether the static CPU manager gave it
#      that CPU to itself
#   2. run.sh: the shards' Indexed Job (N = 2, one --start-at), then the
#      merge Job
#   3. checks: merged sent/completed = the sum of the shards' = the
#      contestant's own count of responses; the merged p99 is the p99 of the
#      shards' latency histograms added up by hdrcheck.py; then, with shard
#      2's result deleted, the merge Job must fail naming it
#
# Exits non-zero on any failed check; always deletes what it created.
# Usage: local-cluster.sh up && e2e.sh; local-cluster.sh down
set -euo pipefail
for tool in jq curl; do
    command -v "$tool" >/dev/null || { echo "e2e.sh: needs $tool (apt-get install $tool; scripts/setup.sh does)" >&2; exit 2; }
done
HERE=$(cd "$(dirname "$0")" && pwd)
STATE=/var/lib/shootout-k8s
export KUBECONFIG=${KUBECONFIG:-$STATE/pki/admin.kubeconfig}
LOGS=${LOGS_DIR:-$STATE/volumes/logs}
SOCK=/run/shootout-k8s/containerd/containerd.sock
SHOOTOUT_IMAGE=${SHOOTOUT_IMAGE:-localhost/shootout:e2e}
SERVER_IMAGE=${SERVER_IMAGE:-localhost/go-nethttp:e2e}
PORT=18080
URL=http://127.0.0.1:$PORT/plaintext
# Bounded: RATE req/s for DURATION, RATE * DURATION requests in all.
RATE=${RATE:-2000}
DURATION_S=${DURATION_S:-10}
N=2
LEAD=${LEAD:-20}

t0=$SECONDS
failures=()
check() { # check WHAT CONDITION-COMMAND...
    local what=$1
    shift
    if "$@"; then
        echo "ok: $what"
    else
        echo "FAILED: $what"
        failures+=("$what")
    fi
}
say() { printf '\n== %s\n' "$*"; }

work=$(mktemp -d)
teardown() {
    local rc=$?
    say "teardown"
    kubectl delete job shootout-shards shootout-merge --ignore-not-found --wait=true --timeout=60s || true
    kubectl delete deployment contestant --ignore-not-found --wait=true --timeout=60s || true
    kubectl delete pvc shootout-logs --ignore-not-found --wait=true --timeout=60s || true
    kubectl wait --for=delete pod -l app.kubernetes.io/name=shootout --timeout=60s 2>/dev/null || true
    # The hostPath volume's files, and the volume back to Available for the
    # next run (a Retain volume keeps its old claim's reference).
    rm -rf "${LOGS:?}"/* 2>/dev/null || true
    kubectl patch pv shootout-logs-local --type=json -p='[{"op":"remove","path":"/spec/claimRef"}]' >/dev/null 2>&1 || true
    rm -rf "$work"
    echo "e2e took $((SECONDS - t0))s"
    exit "$rc"
}
trap teardown EXIT

kubectl get node -o wide

# ---- the manifests as a user would change them.
say "manifests: the shipped ones with only the user's values changed"
SHOOTOUT_IMAGE=$SHOOTOUT_IMAGE SERVER_IMAGE=$SERVER_IMAGE TARGET_URL=$URL RATE=$RATE \
    DURATION=${DURATION_S}s WARMUP=0s SHARD_CPU=400m bash "$HERE/render.sh" "$work"
grep -q "^  completions: $N\$" "$work/shards-job.yaml" || {
    echo "e2e expects N = $N shards" >&2
    exit 1
}

# ---- 1. the contestant.
say "contestant: go-nethttp, Guaranteed, 1 whole CPU"
kubectl apply -f "$work/contestant-go-nethttp.yaml"
kubectl rollout status deployment/contestant --timeout=120s
pod=$(kubectl get pod -l app.kubernetes.io/component=contestant -o jsonpath='{.items[0].metadata.name}')
qos=$(kubectl get pod "$pod" -o jsonpath='{.status.qosClass}')
check "contestant's QoS class is Guaranteed ($qos)" [ "$qos" = Guaranteed ]
cid=$(kubectl get pod "$pod" -o jsonpath='{.status.containerStatuses[0].containerID}')
cid=${cid#containerd://}
spid=$(ctr --address "$SOCK" -n k8s.io tasks ls | awk -v id="$cid" '$1 == id {print $2}')
[ -n "$spid" ] || {
    echo "no task for container $cid" >&2
    exit 1
}
server_cpus=$(awk '/^Cpus_allowed_list/ {print $2}' "/proc/$spid/status")
shared=$(jq -r .defaultCpuSet "$STATE/kubelet/cpu_manager_state" 2>/dev/null || echo "?")
policy=$(jq -r .policyName "$STATE/kubelet/cpu_manager_state" 2>/dev/null || echo "?")
echo "CPU manager policy $policy: the server (pid $spid) may run on CPUs $server_cpus; every other container on the shared pool $shared"
exclusive=no
if [ "$policy" = static ] && [ "$server_cpus" != "$shared" ] &&
    ! echo ",$shared," | grep -q ",$server_cpus,"; then exclusive=yes; fi
check "static CPU manager gave the contestant CPU $server_cpus exclusively (shared pool: $shared)" [ $exclusive = yes ]

# Its own count: go-nethttp keeps none, so it is read from the kernel's
# accounting of the server process's write(2) calls (/proc/PID/io): each
# response is one write of L bytes; the Go runtime's only other writes are
# 8-byte eventfd wake-ups. From syscw = n + k and wchar = n*L + 8k:
# n = (wchar - 8*syscw) / (L - 8), which must come out whole.
io() { awk -v k="$1" '$1 == k":" {print $2}' "/proc/$spid/io"; }
L=$(curl -s -i "$URL" | wc -c)
w0=$(io wchar) s0=$(io syscw)
curl -s -o /dev/null "$URL"
w1=$(io wchar) s1=$(io syscw)
echo "one response: $L bytes as curl received it; the server wrote $((w1 - w0)) bytes in $((s1 - s0)) write(2)"
one_write=no
[ "$((w1 - w0))" = "$L" ] && [ "$((s1 - s0))" = 1 ] && one_write=yes
check "one request = one write(2) of the response's length" [ $one_write = yes ]

# ---- 2. the shards and the merge, through run.sh.
say "shards: Indexed Job, N=$N, $RATE req/s for ${DURATION_S}s on one --start-at, then the merge"
w0=$(io wchar) s0=$(io syscw)
status=0
JOB_TIMEOUT=$((LEAD + DURATION_S + 120)) bash "$work/run.sh" "$LEAD" | tee "$work/merge.txt" || status=$?
w1=$(io wchar) s1=$(io syscw)
check "run.sh (shards, then merge) succeeded" [ "$status" = 0 ]
kubectl get pods -l app.kubernetes.io/name=shootout -o wide
kubectl get job shootout-shards -o jsonpath='{.status.succeeded} of {.spec.completions} shards succeeded, completed indexes {.status.completedIndexes}{"\n"}'

# ---- 3. the checks.
say "checks"
ls -l "$LOGS"
dw=$((w1 - w0)) ds=$((s1 - s0))
served=$(((dw - 8 * ds) / (L - 8)))
wakeups=$((ds - served))
echo "contestant: wrote $dw bytes in $ds write(2) => $served responses, $wakeups eventfd wake-ups"
whole=no
[ $(((dw - 8 * ds) % (L - 8))) = 0 ] && [ "$wakeups" -ge 0 ] && whole=yes
check "the contestant's count is whole ($dw - 8*$ds divisible by $L - 8)" [ $whole = yes ]
m=$LOGS/merged.json
if [ -f "$m" ]; then
    sum() { jq -s "map(.summary.requests.$1) | add" "$LOGS"/shard-*.hlog.json; }
    for k in sent completed ok; do
        check "merged $k $(jq ".requests.$k" "$m") = the shards' sum $(sum $k)" [ "$(jq ".requests.$k" "$m")" = "$(sum $k)" ]
    done
    merged=$(jq .requests.completed "$m")
    check "merged sent $(jq .requests.sent "$m") = the contestant's own count of responses $served" [ "$(jq .requests.sent "$m")" = "$served" ]
    check "merged sent $(jq .requests.sent "$m") = $RATE req/s x ${DURATION_S}s within 1%" \
        python3 -c "import sys; s=$(jq .requests.sent "$m"); p=$RATE*$DURATION_S; sys.exit(not (p*0.99 <= s <= p))"
    check "every response was a 200, no errors" [ "$(jq '.status | to_entries | map(select(.key != "200") | .value) | add // 0' "$m")" = 0 ]
    mine=$(python3 "$HERE/hdrcheck.py" "$LOGS"/shard-*.hlog)
    echo "the shards' latency histograms added by hdrcheck.py: $mine"
    echo "shootout merge: $(jq -c '.latency_ms | {p50, p99, max}' "$m")"
    check "merged p99 $(jq .latency_ms.p99 "$m") ms = the p99 of the shards' histograms added up ($(echo "$mine" | jq .p99) ms)" \
        [ "$(jq .latency_ms.p99 "$m")" = "$(echo "$mine" | jq .p99)" ]
    check "histogram count $(echo "$mine" | jq .count) = merged completed $merged" [ "$(echo "$mine" | jq .count)" = "$merged" ]
    echo "merged: $(jq .requests.completed "$m") requests completed, $(jq .rps "$m") req/s, p99 $(jq .latency_ms.p99 "$m") ms, start skew $(jq .start_skew_ms "$m") ms"
else
    check "the merge wrote $m" false
fi

say "the merge Job with shard 2's result deleted"
rm -f "$LOGS/shard-2.hlog" "$LOGS/shard-2.hlog.json"
kubectl delete job shootout-merge --ignore-not-found --wait=true
kubectl apply -f "$work/merge-job.yaml"
state=""
for _ in $(seq 60); do
    state=$(kubectl get job shootout-merge -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type} {end}')
    case "$state" in *Complete* | *Failed*) break ;; esac
    sleep 2
done
kubectl logs job/shootout-merge >"$work/missing.txt" 2>&1 || true
cat "$work/missing.txt"
check "the merge Job failed ($state)" grep -q Failed <<<"$state"
check "its log names the missing shard" grep -q "shard 2/2 is missing" "$work/missing.txt"

say "result"
if ((${#failures[@]})); then
    echo "e2e: ${#failures[@]} check(s) failed:"
    printf '  %s\n' "${failures[@]}"
    exit 1
fi
echo "e2e: every check passed"
