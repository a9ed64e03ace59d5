#!/usr/bin/env bash
# Each contestant's image (images.py, imported by `local-cluster.sh up`)
# run as the pod a Kubernetes place of `shootout run` will run (issue #50):
# Guaranteed QoS with one whole CPU, hostNetwork, the image's own entry
# point (the target's `run` command), ready when `/plaintext` answers 200
# on the node. Then /plaintext and /json are fetched from this machine
# and their bodies checked against targets/SPEC.md, the node and the
# container's image digest are printed, and the pod is deleted and waited
# for. One pod at a time; every wait is bounded.
#
#   local-cluster.sh up && podcheck.sh go-nethttp rust-actix ...; local-cluster.sh down
#
# Exits 1 naming each target whose pod did not serve; always deletes the
# pods it created (label app.kubernetes.io/component=podcheck).
set -euo pipefail
for tool in kubectl curl jq; do
    command -v "$tool" >/dev/null || { echo "podcheck.sh: needs $tool" >&2; exit 2; }
done
STATE=/var/lib/shootout-k8s
export KUBECONFIG=${KUBECONFIG:-$STATE/pki/admin.kubeconfig}
PORT=${PORT:-18090}
READY_S=${READY_S:-120}
(($# > 0)) || { echo "usage: podcheck.sh TARGET..." >&2; exit 2; }

cleanup() {
    kubectl delete pod -l app.kubernetes.io/component=podcheck --ignore-not-found \
        --wait=true --timeout=90s >/dev/null 2>&1 || true
}
trap cleanup EXIT

failed=()
for t in "$@"; do
    pod=podcheck-$t
    start=$SECONDS
    kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $pod
  labels: {app.kubernetes.io/name: shootout, app.kubernetes.io/component: podcheck}
spec:
  hostNetwork: true
  automountServiceAccountToken: false
  enableServiceLinks: false
  restartPolicy: Never
  containers:
    - name: server
      image: localhost/$t:e2e
      imagePullPolicy: Never
      env:
        - {name: HOST, value: "127.0.0.1"}
        - {name: PORT, value: "$PORT"}
        - {name: SERVER_CPUS, value: "1"}
      readinessProbe:
        httpGet: {host: 127.0.0.1, path: /plaintext, port: $PORT}
        periodSeconds: 1
        failureThreshold: 1
      resources:
        requests: {cpu: "1", memory: 1Gi}
        limits: {cpu: "1", memory: 1Gi}
EOF
    if ! kubectl wait --for=condition=Ready "pod/$pod" --timeout="${READY_S}s" >/dev/null 2>&1; then
        echo "FAILED: $t: not ready in ${READY_S}s; its log:"
        kubectl logs "$pod" --tail=20 2>&1 | sed 's/^/  /' || true
        kubectl get pod "$pod" -o jsonpath='{.status.containerStatuses[0].state}' 2>&1 | sed 's/^/  /' || true
        echo
        failed+=("$t")
    else
        ready=$((SECONDS - start))
        plain=$(curl -sf --max-time 5 "http://127.0.0.1:$PORT/plaintext" || true)
        json=$(curl -sf --max-time 5 "http://127.0.0.1:$PORT/json" | jq -c . 2>/dev/null || true)
        info=$(kubectl get pod "$pod" -o json | jq -r '[.spec.nodeName, .status.qosClass, .status.containerStatuses[0].imageID] | join(" ")')
        if [ "$plain" = "Hello, World!" ] && [ "$json" = '{"message":"Hello, World!"}' ]; then
            echo "ok: $t ready in ${ready}s on node/qos/image: $info"
        else
            echo "FAILED: $t: /plaintext gave '$plain', /json gave '$json'"
            failed+=("$t")
        fi
    fi
    kubectl delete pod "$pod" --wait=true --timeout=90s >/dev/null
done
if ((${#failed[@]} > 0)); then
    echo "podcheck.sh: no working pod for: ${failed[*]}" >&2
    exit 1
fi
