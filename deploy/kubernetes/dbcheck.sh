#!/usr/bin/env bash
# PostgreSQL as the pod a Kubernetes run of the database scenarios starts
# (issue #50), on the local cluster (local-cluster.sh up): the image of
# `images.py postgres` is imported into the db node's containerd (`ctr
# images import`, no registry), postgres-pod.yaml is rendered through
# PyYAML (name shootout-pg-check, label shootout.dev/helper=pg, PORT, CPU,
# MEMORY, a random superuser password, the shipped sample PG_SETTINGS) and
# applied with nodeSelector kubernetes.io/hostname = the db node: the node
# whose shootout.dev/role names db (or with shootout.dev/role-db set), else
# the only node, which then gets shootout.dev/role-db=true (left on, and
# said). Ready when its readiness probe (pg_isready) passes; then, from the
# node, imagecheck.py's check_database: seed.sql's rows, the settings
# applied, pg_stat_statements counting benchmarkdbuser's statements for the
# superuser over TCP. Then, with a session left open, the pod is deleted
# and waited for: its log must show a fast shutdown and the port must be
# free. Every wait is bounded; the pod is always deleted.
#
#   dbcheck.sh [ARCHIVE]    default ~/.cache/shootout/k8s-v1.34.4/images/postgres.tar
#                           (built by images.py when missing)
#
# Environment: KUBECONFIG (default local-cluster.sh's), PORT (15432), CPU
# (1), MEMORY (1Gi), READY_S (120). Exits 1 when a check failed, 2 when it
# cannot run (a tool or the cluster missing).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
STATE=/var/lib/shootout-k8s
RUN=/run/shootout-k8s
CACHE=${SHOOTOUT_K8S_CACHE:-$HOME/.cache/shootout/k8s-v1.34.4}
export KUBECONFIG=${KUBECONFIG:-$STATE/pki/admin.kubeconfig}
ARCHIVE=${1:-$CACHE/images/postgres.tar}
PORT=${PORT:-15432}
CPU=${CPU:-1}
MEMORY=${MEMORY:-1Gi}
READY_S=${READY_S:-120}
POD=shootout-pg-check
SELECTOR=shootout.dev/helper=pg
say() { printf 'dbcheck: %s\n' "$*" >&2; }
fail() {
    say "FAILED: $*"
    exit 1
}
for tool in kubectl ctr psql python3; do
    command -v "$tool" >/dev/null || { say "needs $tool"; exit 2; }
done
python3 -c 'import yaml' 2>/dev/null || { say "needs PyYAML (apt-get install python3-yaml)"; exit 2; }
kubectl get --raw=/readyz --request-timeout=5s >/dev/null 2>&1 ||
    { say "no cluster answers with KUBECONFIG=$KUBECONFIG (local-cluster.sh up)"; exit 2; }
tmp=$(mktemp -d)
logs_pid=""
cleanup() {
    [ -z "$logs_pid" ] || kill "$logs_pid" 2>/dev/null || true
    kubectl delete pod -l "$SELECTOR" --ignore-not-found --wait=true --timeout=90s >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# The db node, by the runner's rule.
node=$(kubectl get nodes -o json | python3 -c '
import json, re, sys
nodes = json.load(sys.stdin)["items"]
def db(n):
    labels = n["metadata"].get("labels", {})
    return "db" in re.split(r"[_.]", labels.get("shootout.dev/role", "")) or labels.get("shootout.dev/role-db", "false") != "false"
found = [n["metadata"]["name"] for n in nodes if db(n)]
if len(found) == 1:
    print(found[0])
elif not found and len(nodes) == 1:
    print("label " + nodes[0]["metadata"]["name"])
else:
    sys.exit(f"dbcheck: {len(found)} of the {len(nodes)} nodes carry the db role (shootout.dev/role=...db... or shootout.dev/role-db): expected one")
')
if [ "${node#label }" != "$node" ]; then
    node=${node#label }
    kubectl label node "$node" shootout.dev/role-db=true >/dev/null
    say "the only node, $node, had no db role: labeled shootout.dev/role-db=true (left on)"
fi
sock=$RUN/containerd/containerd.sock
[ "$node" = 127.0.0.1 ] || sock=$RUN/node2/containerd/containerd.sock
[ -S "$sock" ] || { say "no containerd socket $sock for node $node"; exit 2; }

t0=$SECONDS
if [ ! -f "$ARCHIVE" ]; then
    say "$ARCHIVE is missing: images.py postgres"
    mkdir -p "$(dirname "$ARCHIVE")"
    python3 "$HERE/images.py" --out-dir "$(dirname "$ARCHIVE")" --debs "$CACHE/images/debs" postgres >&2
fi
image=$(python3 -c 'import json, sys, tarfile
t = tarfile.open(sys.argv[1]); m = json.load(t.extractfile("index.json"))["manifests"][0]
print(m["annotations"]["io.containerd.image.name"], m["digest"])' "$ARCHIVE")
ctr --address "$sock" -n k8s.io images import "$ARCHIVE" >/dev/null
say "imported ${image% *} (${image#* }, $(stat -c %s "$ARCHIVE") bytes) into node $node's containerd in $((SECONDS - t0))s"

password=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
python3 - "$HERE/postgres-pod.yaml" "$tmp/pod.yaml" "$POD" "$node" "$PORT" "$CPU" "$MEMORY" "$password" "${image% *}" <<'EOF'
import sys, yaml
src, out, name, node, port, cpu, memory, password, image = sys.argv[1:]
pod = yaml.safe_load(open(src))
pod["metadata"]["name"] = name
pod["metadata"]["labels"]["shootout.dev/helper"] = "pg"
pod["spec"]["nodeSelector"] = {"kubernetes.io/hostname": node}
c = pod["spec"]["containers"][0]
c["image"] = image
for e in c["env"]:
    if e["name"] == "PORT":
        e["value"] = port
    elif e["name"] == "PG_SUPERUSER_PASSWORD":
        e["value"] = password
c["resources"] = {k: {"cpu": cpu, "memory": memory} for k in ("requests", "limits")}
yaml.safe_dump(pod, open(out, "w"), sort_keys=False)
EOF
settings=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import imagecheck; print(imagecheck.sample_settings(), end="")' "$HERE")
if ss -ltnH "sport = :$PORT" | grep -q .; then
    say "port $PORT is taken on this machine (PORT=... to choose another)"
    exit 2
fi

t0=$SECONDS
kubectl apply -f "$tmp/pod.yaml" >/dev/null
if ! kubectl wait --for=condition=Ready "pod/$POD" --timeout="${READY_S}s" >/dev/null 2>&1; then
    kubectl logs "$POD" --tail=30 2>&1 | sed 's/^/  /' >&2 || true
    kubectl get pod "$POD" -o jsonpath='{.status}' >&2 || true
    fail "pod $POD not ready in ${READY_S}s"
fi
ready=$((SECONDS - t0))
info=$(kubectl get pod "$POD" -o jsonpath='{.spec.nodeName} {.status.qosClass} {.status.containerStatuses[0].imageID}')
say "ready in ${ready}s; node, QoS, image: $info"
[ "$(echo "$info" | cut -d' ' -f2)" = Guaranteed ] || fail "QoS is not Guaranteed: $info"
kubectl logs -f "$POD" >"$tmp/pod.log" 2>&1 &
logs_pid=$!

# From the node, over TCP to 127.0.0.1:PORT (hostNetwork).
t0=$SECONDS
python3 - "$HERE" "$PORT" "$password" "$settings" <<'EOF' || fail "the queries (above)"
import sys
sys.path.insert(0, sys.argv[1])
import imagecheck
port, password, settings = int(sys.argv[2]), sys.argv[3], sys.argv[4]
try:
    version = imagecheck.psql(port, "postgres", password, "SHOW server_version")
    names = imagecheck.check_database(port, password, settings)
except imagecheck.CheckError as e:
    sys.exit(f"dbcheck: {e}")
rows = imagecheck.SEED_ROWS
print(f"dbcheck: PostgreSQL {version}: world {rows['world']}, fortune {rows['fortune']}, {len(names)} settings applied, "
      f"pg_stat_statements counted {imagecheck.APP_USER}'s 6 statements (superuser over TCP)", file=sys.stderr)
EOF
say "queries in $((SECONDS - t0))s"

# Delete with a session open, as a server's pool leaves one.
PGPASSWORD=benchmarkdbpass psql -X -h 127.0.0.1 -p "$PORT" -U benchmarkdbuser -d hello_world \
    -c 'SELECT pg_sleep(60)' >/dev/null 2>&1 &
holder=$!
for _ in $(seq 50); do
    n=$(PGPASSWORD=$password psql -X -At -h 127.0.0.1 -p "$PORT" -U postgres -d hello_world \
        -c "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'")
    [ "$n" = 1 ] && break
    sleep 0.1
done
[ "$n" = 1 ] || fail "the open session never showed in pg_stat_activity"
start=$(date +%s.%N)
kubectl delete pod "$POD" --wait=true --timeout=60s >/dev/null || fail "pod $POD not deleted in 60s"
gone=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
wait "$logs_pid" 2>/dev/null || true
logs_pid=""
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true
grep -q 'received fast shutdown request' "$tmp/pod.log" ||
    fail "no fast shutdown in the pod's log (the image's StopSignal SIGINT not used?): $(tail -5 "$tmp/pod.log")"
grep -q 'database system is shut down' "$tmp/pod.log" || fail "no clean shutdown in the pod's log: $(tail -5 "$tmp/pod.log")"
if ss -ltnH "sport = :$PORT" | grep -q .; then
    fail "port $PORT still listened on after the pod is gone"
fi
say "deleted with a session open: fast shutdown, gone in ${gone}s; port $PORT free"
say "ok"
