#!/usr/bin/env bash
# Runs a sharded load on the current kubectl context: the log volume, the
# shards with one --start-at LEAD seconds from now (time for every pod to be
# scheduled and started), then the merge. Usage: run.sh [LEAD_SECONDS]
#
# Exits non-zero when a shard failed (the merge is not run) or when the merge
# Job failed (its log, printed, says why). JOB_TIMEOUT (seconds, default
# 3600) bounds each wait.
#
# Before anything is created it refuses (exit 2) a LEAD or JOB_TIMEOUT that
# is not a whole number of seconds from 1 to 86400, a missing kubectl, and a
# cluster that does not answer (naming the server kubectl would talk to).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
usage() {
    echo "run.sh: $*" >&2
    exit 2
}
lead=${1:-60}
timeout=${JOB_TIMEOUT:-3600}
(($# <= 1)) || usage "expected at most one argument, LEAD_SECONDS (got $#)"
case "$lead" in
-*) usage "LEAD_SECONDS '$lead' is negative: the shards' common start must be in the future; give whole seconds from now, 1 to 86400 (default 60)" ;;
'' | *[!0-9]*) usage "LEAD_SECONDS '$lead' is not a whole number of seconds; give 1 to 86400 (default 60)" ;;
esac
((10#$lead >= 1 && 10#$lead <= 86400)) ||
    usage "LEAD_SECONDS '$lead' is out of range: the shards' common start must be 1 to 86400 seconds from now (default 60)"
case "$timeout" in
'' | *[!0-9]*) usage "JOB_TIMEOUT '$timeout' is not a whole number of seconds; give 1 to 86400 (default 3600)" ;;
esac
((10#$timeout >= 1 && 10#$timeout <= 86400)) || usage "JOB_TIMEOUT '$timeout' is out of range: give 1 to 86400 seconds (default 3600)"
command -v kubectl >/dev/null || usage "kubectl is not installed (it is how run.sh reaches the cluster)"
# One cheap request first, so that no reachable cluster is said plainly
# rather than by the first apply's validation error.
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}' 2>/dev/null || true)
[ -n "$server" ] || server="http://localhost:8080 (kubectl's default: no kubeconfig or no current context)"
if ! err=$(kubectl get --raw=/version --request-timeout=10s 2>&1 </dev/null >/dev/null); then
    why=$(printf '%s\n' "$err" | grep -v '^E[0-9]' | tail -n 1)
    # With no credentials kubectl asks for a user name; stdin is closed.
    [ "$why" != "error: EOF" ] || why="the kubeconfig has no credentials for it (kubectl asked for a user name)"
    usage "no reachable Kubernetes cluster at $server: $why
run.sh: start one (local-cluster.sh up), or point KUBECONFIG or the current context at yours; nothing was created"
fi
start_at=$(date -u -d "+$((10#$lead)) seconds" +%Y-%m-%dT%H:%M:%SZ)

# wait_job NAME: until the Job is Complete (0) or Failed (1), or the timeout.
wait_job() {
    local deadline=$((SECONDS + timeout)) state
    while ((SECONDS < deadline)); do
        state=$(kubectl get job "$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type} {end}')
        case " $state " in
        *" Complete "*) return 0 ;;
        *" Failed "*)
            echo "job/$1 failed" >&2
            return 1
            ;;
        esac
        sleep 2
    done
    echo "job/$1 did not finish in ${timeout}s" >&2
    return 1
}

kubectl apply -f "$HERE/logs-pvc.yaml"
kubectl delete job shootout-shards shootout-merge --ignore-not-found
sed "s/\${START_AT}/${start_at}/" "$HERE/shards-job.yaml" | kubectl apply -f -
echo "shards start at ${start_at}"
if ! wait_job shootout-shards; then
    kubectl logs job/shootout-shards --all-containers --prefix --tail=20 >&2 || true
    exit 1
fi
kubectl apply -f "$HERE/merge-job.yaml"
status=0
wait_job shootout-merge || status=1
kubectl logs job/shootout-merge
exit "$status"
