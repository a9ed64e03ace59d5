#!/usr/bin/env bash
# A second node on this machine, for the local cluster of local-cluster.sh
# (issue #50, item 3: the client/server layout in miniature).
#
#   second-node.sh up     start a second containerd and kubelet, registered
#                         as node 127.0.0.2; label the nodes by role
#   second-node.sh down   stop them and remove everything `up` made, then
#                         check that nothing of node 2 is left (exit 1 if so)
#   second-node.sh prove [PORT]
#                         a go-nethttp pod on the server node, listening on
#                         127.0.0.2:PORT (default 18291), and a `shootout
#                         load -n 20000 -c 16` pod on the client node; prints
#                         where each ran, each container's cpuset and the
#                         load's JSON, then deletes both pods
#
# Needs `local-cluster.sh up` first. Node 2 has its own containerd (root
# $STATE/node2/containerd, state and socket under $RUN/node2), its own
# kubelet root, certificate and pod-log folders under $STATE/node2, its own
# cgroup root /shootout-k8s/node2 (inside node 1's, so that
# `local-cluster.sh down`'s cgroup sweep covers it; node 1's kubelet only
# manages /shootout-k8s/kubepods) and listens on 127.0.0.2 only
# (10250, 10248; containerd's stream server on a free port of 127.0.0.2).
# Its containerd and kubelet configurations are node 1's, as `up` wrote
# them, with those paths and addresses changed: one definition of each.
#
# CPUs. Both kubelets see both CPUs; each one's static CPU manager hands
# whole CPUs to Guaranteed pods from the CPUs it does not reserve. Node 1
# reserves CPU 0 when started with RESERVED_CPUS=0 (`prove` checks), so its
# Guaranteed pods get CPU 1: it is the client node. (`shootout run
# --kubernetes` runs its generator as a process pinned to CPU 1, not as a
# pod, and needs no such reservation on node 1.) Node 2 reserves
# CPU 1 (reservedSystemCPUs), so its Guaranteed pods get CPU 0: it is the
# server node. Labels: shootout.dev/role=server on 127.0.0.2, =client on
# 127.0.0.1. Neither kubelet knows of the other's pods: the split holds
# for Guaranteed pods with whole CPUs only (a Burstable pod of either node
# may run on both CPUs).
#
# Shared with node 1, as the kubelet fixes these paths whatever its
# configuration: /var/lib/kubelet/device-plugins/kubelet.sock (the device
# manager's socket, pluginapi.KubeletSocket: the last kubelet to start owns
# it; no device plugin is used here), /var/log/containers (symlinks, named
# per pod and container) and the kubelet's iptables chains (KUBE-*, the
# same rules). `local-cluster.sh down` runs `second-node.sh down` first.
set -euo pipefail

STATE=/var/lib/shootout-k8s
RUN=/run/shootout-k8s
N2=$STATE/node2
R2=$RUN/node2
NODE1=127.0.0.1
NODE2=127.0.0.2
SOCK2=$R2/containerd/containerd.sock
CGROUP2=shootout-k8s/node2
K8S_VERSION=${K8S_VERSION:-v1.34.4}
CACHE=${SHOOTOUT_K8S_CACHE:-$HOME/.cache/shootout/k8s-$K8S_VERSION}
ROLE=shootout.dev/role
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
. "$HERE/lib.sh" second-node
# Node 2's daemons go where node 1's do (local-cluster.sh's DAEMON_CPUS,
# the upper half of the CPUs), off the server node's CPU.
NCPU=$(nproc)
DAEMON_CPUS=${DAEMON_CPUS:-$(seq -s, $(((NCPU + 1) / 2)) $((NCPU - 1)))}

kctl() { kubectl --kubeconfig "$STATE/pki/admin.kubeconfig" "$@"; }

wait_for() {
    local what=$1 tries=$2 i
    shift 2
    for ((i = 0; i < tries; i++)); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 1
    done
    die "$what did not come up in ${tries}s (logs: $N2/log/)"
}

start() {
    local name=$1
    shift
    mkdir -p "$N2/log" "$R2/pids"
    # Pinned where node 1's daemons are (local-cluster.sh DAEMON_CPUS).
    if [ -n "$DAEMON_CPUS" ]; then
        set -- taskset -c "$DAEMON_CPUS" "$@"
    fi
    setsid "$@" >"$N2/log/$name.log" 2>&1 </dev/null &
    echo $! >"$R2/pids/$name"
    log "started $name (pid $!)"
}

# The kubelet's client certificate (system:node:127.0.0.2, for the Node
# authorizer) from node 1's CA, and its kubeconfig.
make_pki() {
    local pki=$N2/pki
    mkdir -p "$pki"
    openssl req -newkey rsa:2048 -nodes -keyout "$pki/kubelet.key" -out "$pki/kubelet.csr" \
        -subj "/O=system:nodes/CN=system:node:$NODE2" 2>/dev/null
    printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' >"$pki/kubelet.ext"
    openssl x509 -req -in "$pki/kubelet.csr" -CA "$STATE/pki/ca.crt" -CAkey "$STATE/pki/ca.key" \
        -CAcreateserial -CAserial "$pki/ca.srl" -out "$pki/kubelet.crt" -days 2 \
        -extfile "$pki/kubelet.ext" 2>/dev/null
    rm -f "$pki/kubelet.csr" "$pki/kubelet.ext"
    sed -e "s#$STATE/pki/kubelet\.#$pki/kubelet.#g" "$STATE/pki/kubelet.kubeconfig" >"$pki/kubelet.kubeconfig"
}

# Node 1's configurations with node 2's paths and addresses; each change
# is checked to have happened.
write_configs() {
    mkdir -p "$N2/containerd" "$R2/containerd" "$N2/kubelet"
    sed -e "s#\"$STATE/containerd#\"$N2/containerd#g" \
        -e "s#\"$RUN/containerd/#\"$R2/containerd/#g" \
        -e "s#\"$RUN/containerd\"#\"$R2/containerd\"#g" \
        -e "s#\"$RUN/runc\"#\"$R2/runc\"#g" \
        -e "s#stream_server_address = \"$NODE1\"#stream_server_address = \"$NODE2\"#" \
        "$STATE/containerd/config.toml" >"$N2/containerd/config.toml"
    sed -e "s#^address: $NODE1\$#address: $NODE2#" \
        -e "s#^healthzBindAddress: $NODE1\$#healthzBindAddress: $NODE2#" \
        -e "s#^containerRuntimeEndpoint: .*#containerRuntimeEndpoint: unix://$SOCK2#" \
        -e "s#^cgroupRoot: .*#cgroupRoot: /$CGROUP2#" \
        -e "s#^reservedSystemCPUs: .*#reservedSystemCPUs: \"1\"#" \
        -e "s#^podLogsDirectory: .*#podLogsDirectory: $N2/pod-logs#" \
        "$STATE/kubelet/config.yaml" >"$N2/kubelet/config.yaml"
    local f want
    for want in "root = \"$N2/containerd\"" "state = \"$R2/containerd\"" "address = \"$SOCK2\"" \
        "Root = \"$R2/runc\"" "stream_server_address = \"$NODE2\""; do
        grep -qF "$want" "$N2/containerd/config.toml" || die "node 2's containerd config lacks: $want"
    done
    if grep -E "\"($STATE/containerd|$RUN/containerd|$RUN/runc)" "$N2/containerd/config.toml"; then
        die "node 2's containerd config still names node 1's folders (above)"
    fi
    f=$N2/kubelet/config.yaml
    for want in "address: $NODE2" "healthzBindAddress: $NODE2" "cgroupRoot: /$CGROUP2" \
        'reservedSystemCPUs: "1"' "podLogsDirectory: $N2/pod-logs" "containerRuntimeEndpoint: unix://$SOCK2"; do
        grep -qxF "$want" "$f" || die "node 2's kubelet config lacks: $want"
    done
}

up() {
    [ "$(id -u)" = 0 ] || die "needs root"
    if [ ! -f "$STATE/kubelet/config.yaml" ] || [ ! -f "$RUN/pids/kubelet" ]; then
        die "node 1 is not up: run local-cluster.sh up first"
    fi
    if [ -e "$N2" ] || [ -e "$R2" ]; then die "$N2 or $R2 exists: node 2 is up or a down failed; run '$0 down' first"; fi
    kctl get node "$NODE2" >/dev/null 2>&1 && die "node $NODE2 is registered already"
    local port t0=$SECONDS
    for port in 10250 10255 10248; do
        if ss -Hltn "src $NODE2 and sport = :$port" | grep -q .; then die "$NODE2:$port is taken"; fi
    done
    mkdir -p "$N2" "$R2"
    make_pki
    write_configs

    start containerd containerd --config "$N2/containerd/config.toml"
    wait_for containerd 30 ctr --address "$SOCK2" version
    local img
    for img in "$CACHE"/images/*.tar; do
        ctr --address "$SOCK2" -n k8s.io images import "$img" >/dev/null
    done
    log "images: $(ctr --address "$SOCK2" -n k8s.io images ls -q | grep -c localhost/) imported"

    local h
    for h in /sys/fs/cgroup/*/; do
        [ -d "${h}shootout-k8s" ] || die "no cgroup ${h}shootout-k8s: node 1 is not up"
        mkdir -p "$h$CGROUP2"
        if [ -f "${h}cpuset.cpus" ]; then
            cat "${h}shootout-k8s/cpuset.cpus" >"$h$CGROUP2/cpuset.cpus"
            cat "${h}shootout-k8s/cpuset.mems" >"$h$CGROUP2/cpuset.mems"
        fi
    done
    start kubelet "$CACHE/bin/kubelet" --config="$N2/kubelet/config.yaml" \
        --kubeconfig="$N2/pki/kubelet.kubeconfig" --root-dir="$N2/kubelet" \
        --cert-dir="$N2/kubelet/pki" --hostname-override="$NODE2" \
        --volume-plugin-dir="$N2/kubelet/volume-plugins" --housekeeping-interval=1s
    wait_for "node $NODE2" 120 kctl wait --for=condition=Ready "node/$NODE2" --timeout=1s
    kctl label node "$NODE2" "$ROLE=server" --overwrite >/dev/null
    if [ -z "$(kctl get node "$NODE1" -o jsonpath="{.metadata.labels.shootout\.dev/role}")" ]; then
        kctl label node "$NODE1" "$ROLE=client" >/dev/null
        touch "$R2/labelled-node1"
    else
        log "warning: node $NODE1 has a $ROLE label already; left as it is"
    fi
    log "node $NODE2 Ready in $((SECONDS - t0))s"
    kctl get node -o wide -L "$ROLE" >&2
}


# PIDs whose command line names node 2's folders (its containerd, kubelet
# and shims), or that run in its cgroups.
node2_pids() {
    local p cmd h
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [ "$p" = $$ ] && continue
        cmd=$({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null) || continue
        case "$cmd" in *"$N2"* | *"$R2"*) echo "$p" ;; esac
    done
    for h in /sys/fs/cgroup/*/; do
        [ -d "$h$CGROUP2" ] && find "$h$CGROUP2" -name cgroup.procs -exec cat {} + 2>/dev/null
    done
    return 0
}
node2_cgroups() {
    local h
    for h in /sys/fs/cgroup/*/; do [ -d "$h$CGROUP2" ] && echo "$h$CGROUP2"; done
    return 0
}
node2_mounts() { awk -v s="$N2" -v r="$R2" '$5 ~ "^" s || $5 ~ "^" r {print $5}' /proc/self/mountinfo | sort -r; }

down() {
    [ "$(id -u)" = 0 ] || die "needs root"
    local t0=$SECONDS name id pid
    # The pods bound to node 2 go first, while its kubelet can still stop
    # them; then the node object and the labels up set.
    if kctl get node "$NODE2" >/dev/null 2>&1; then
        kctl delete pods -A --field-selector "spec.nodeName=$NODE2" --wait=true --timeout=60s >/dev/null 2>&1 ||
            kctl delete pods -A --field-selector "spec.nodeName=$NODE2" --force --grace-period=0 >/dev/null 2>&1 || true
    fi
    if [ -S "$SOCK2" ]; then
        for id in $(ctr --address "$SOCK2" -n k8s.io tasks ls -q 2>/dev/null || true); do
            ctr --address "$SOCK2" -n k8s.io tasks kill -s KILL "$id" >/dev/null 2>&1 || true
        done
    fi
    [ -f "$R2/pids/kubelet" ] && stop_pid kubelet "$(cat "$R2/pids/kubelet")"
    kctl delete node "$NODE2" --ignore-not-found >/dev/null 2>&1 || true
    if [ -f "$R2/labelled-node1" ]; then kctl label node "$NODE1" "$ROLE-" >/dev/null 2>&1 || true; fi
    if [ -S "$SOCK2" ]; then
        for id in $(ctr --address "$SOCK2" -n k8s.io tasks ls -q 2>/dev/null || true); do
            ctr --address "$SOCK2" -n k8s.io tasks delete -f "$id" >/dev/null 2>&1 || true
        done
        for id in $(ctr --address "$SOCK2" -n k8s.io containers ls -q 2>/dev/null || true); do
            ctr --address "$SOCK2" -n k8s.io containers delete "$id" >/dev/null 2>&1 || true
        done
    fi
    [ -f "$R2/pids/containerd" ] && stop_pid containerd "$(cat "$R2/pids/containerd")"
    for pid in $(node2_pids | sort -u); do stop_pid leftover "$pid"; done
    local m cg
    for m in $(node2_mounts); do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
    for cg in $(node2_cgroups); do find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || true; done
    if [ -d /var/log/containers ]; then
        find /var/log/containers -maxdepth 1 -type l -lname "$N2/*" -delete 2>/dev/null || true
    fi
    rm -rf "$N2" "$R2" 2>/dev/null || true

    local left=()
    for pid in $(node2_pids | sort -u); do left+=("process $pid: $({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null)"); done
    for m in $(node2_mounts); do left+=("mount $m"); done
    for cg in $(node2_cgroups); do left+=("cgroup $cg"); done
    for m in "$N2" "$R2"; do [ -e "$m" ] && left+=("folder $m"); done
    if ss -Hltn "src $NODE2" | grep -q .; then left+=("listener on $NODE2: $(ss -Hltnp "src $NODE2" | tr '\n' ' ')"); fi
    if kctl get node "$NODE2" >/dev/null 2>&1; then left+=("node $NODE2"); fi
    if ((${#left[@]})); then
        log "FAILED: node 2's down left these behind:"
        printf '  %s\n' "${left[@]}" >&2
        exit 1
    fi
    log "node 2 down in $((SECONDS - t0))s: no process, mount, cgroup, folder, listener or node object of it is left"
}

# The proof: a server pod on the server node, a generator pod on the client
# node, both Guaranteed with one whole CPU and hostNetwork.
prove() {
    local port=${1:-18291} server=two-node-server gen=two-node-load
    local sel='app.kubernetes.io/component=two-node'
    # The generator pod below must get CPU 1 on node 1.
    grep -qxF 'reservedSystemCPUs: "0"' "$STATE/kubelet/config.yaml" ||
        die "prove runs a Guaranteed generator pod on node 1, which must then reserve CPU 0 (so the pod gets CPU 1, the client's): RESERVED_CPUS=0 local-cluster.sh up"
    trap 'kctl delete pod -l '"$sel"' --ignore-not-found --wait=true --timeout=60s >/dev/null 2>&1 || true' EXIT
    pod() { # NAME ROLE IMAGE [ARGS as a YAML list]
        cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels: {app.kubernetes.io/name: shootout, app.kubernetes.io/component: two-node}
spec:
  hostNetwork: true
  automountServiceAccountToken: false
  enableServiceLinks: false
  restartPolicy: Never
  nodeSelector: {$ROLE: $2}
  containers:
    - name: main
      image: $3
      imagePullPolicy: Never
${4:-}
      resources:
        requests: {cpu: "1", memory: 512Mi}
        limits: {cpu: "1", memory: 512Mi}
EOF
    }
    pod "$server" server localhost/go-nethttp:e2e "      env:
        - {name: HOST, value: \"$NODE2\"}
        - {name: PORT, value: \"$port\"}
        - {name: SERVER_CPUS, value: \"1\"}
      readinessProbe:
        httpGet: {host: $NODE2, path: /plaintext, port: $port}
        periodSeconds: 1
        failureThreshold: 1" | kctl apply -f - >/dev/null
    kctl wait --for=condition=Ready "pod/$server" --timeout=90s >/dev/null || die "the server pod is not ready"
    # The generator's container is gone once the load ends: it reports its
    # own cgroup and CPUs first ("# " lines), from inside.
    # shellcheck disable=SC2016 # expanded in the container
    local probe='echo "# cgroup: $(grep cpuset /proc/self/cgroup)"; echo "# cpuset.cpus: $(cat /sys/fs/cgroup/cpuset/cpuset.cpus)"; echo "# $(grep Cpus_allowed_list /proc/self/status)"'
    pod "$gen" client localhost/shootout:e2e "      command: [sh, -c, '$probe; exec shootout load -n 20000 -c 16 http://$NODE2:$port/plaintext -o json']" |
        kctl apply -f - >/dev/null
    kctl wait --for=jsonpath='{.status.phase}'=Succeeded "pod/$gen" --timeout=90s >/dev/null ||
        die "the generator pod did not succeed: $(kctl get pod "$gen" -o jsonpath='{.status}')"
    echo "## kubectl get nodes -o wide -L $ROLE"
    kctl get nodes -o wide -L "$ROLE"
    echo "## kubectl get pods -o wide"
    kctl get pods -o wide -l "$sel"
    echo "## each container's cpuset (cgroup v1 cpuset of its container)"
    local p uid cid node cg pid
    for p in "$server" "$gen"; do
        uid=$(kctl get pod "$p" -o jsonpath='{.metadata.uid}')
        cid=$(kctl get pod "$p" -o jsonpath='{.status.containerStatuses[0].containerID}')
        cid=${cid#containerd://}
        node=$(kctl get pod "$p" -o jsonpath='{.spec.nodeName}')
        cg=$(find /sys/fs/cgroup/cpuset/shootout-k8s -type d -name "$cid" | head -1)
        echo "$p on $node: ${cg:-(cgroup gone: the container exited)} cpuset.cpus=$(cat "$cg/cpuset.cpus" 2>/dev/null || echo '?')"
        echo "  $p's CPU manager entry: $(jq -c --arg u "$uid" '.entries[$u] // "none"' \
            "$([ "$node" = "$NODE2" ] && echo "$N2" || echo "$STATE")/kubelet/cpu_manager_state")"
        if [ -n "$cg" ]; then
            while read -r pid; do
                echo "  pid $pid ($(cat "/proc/$pid/comm")): $(grep Cpus_allowed_list "/proc/$pid/status" | tr '\t' ' ')"
            done <"$cg/cgroup.procs"
        fi
    done
    echo "## the generator's own report, from inside its container"
    kctl logs "$gen" | grep '^# '
    echo "## the load's JSON (the generator pod's log)"
    kctl logs "$gen" | grep -v '^# '
}

case "${1:-}" in
up) up ;;
down) down ;;
prove)
    shift
    prove "$@"
    ;;
*)
    echo "usage: $0 up|down|prove [PORT]" >&2
    exit 2
    ;;
esac
