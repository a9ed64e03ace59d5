#!/usr/bin/env bash
# Runs a sharded load on the current kubectl context: the log volume, the
# shards with one --start-at LEAD seconds from now (time for every pod to be
# scheduled and started), then the merge. Usage: run.sh [LEAD_SECONDS]
set -euo pipefail
cd "$(dirname "$0")"
lead=${1:-60}
start_at=$(date -u -d "+${lead} seconds" +%Y-%m-%dT%H:%M:%SZ)
kubectl apply -f logs-pvc.yaml
kubectl delete job shootout-shards shootout-merge --ignore-not-found
sed "s/\${START_AT}/${start_at}/" shards-job.yaml | kubectl apply -f -
echo "shards start at ${start_at}"
kubectl wait --for=condition=complete --timeout=1h job/shootout-shards
kubectl apply -f merge-job.yaml
kubectl wait --for=condition=complete --timeout=10m job/shootout-merge || true
kubectl logs job/shootout-merge
