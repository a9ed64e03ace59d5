#!/usr/bin/env bash
# Runs a sharded load on the current kubectl context: the log volume, the
# shards with one --start-at LEAD seconds from now (time for every pod to be
# scheduled and started), then the merge. Usage: run.sh [LEAD_SECONDS]
#
# Exits non-zero when a shard failed (the merge is not run) or when the merge
# Job failed (its log, printed, says why). JOB_TIMEOUT (seconds, default
# 3600) bounds each wait.
set -euo pipefail
cd "$(dirname "$0")"
lead=${1:-60}
timeout=${JOB_TIMEOUT:-3600}
start_at=$(date -u -d "+${lead} seconds" +%Y-%m-%dT%H:%M:%SZ)

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

kubectl apply -f logs-pvc.yaml
kubectl delete job shootout-shards shootout-merge --ignore-not-found
sed "s/\${START_AT}/${start_at}/" shards-job.yaml | kubectl apply -f -
echo "shards start at ${start_at}"
if ! wait_job shootout-shards; then
    kubectl logs job/shootout-shards --all-containers --prefix --tail=20 >&2 || true
    exit 1
fi
kubectl apply -f merge-job.yaml
status=0
wait_job shootout-merge || status=1
kubectl logs job/shootout-merge
exit "$status"
