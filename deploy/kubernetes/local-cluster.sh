#!/usr/bin/env bash
# A real one-node Kubernetes cluster on this machine, for deploy/kubernetes/e2e.sh.
#
#   local-cluster.sh up     build (once, cached) and start etcd, kube-apiserver,
#                           kube-controller-manager, kube-scheduler, containerd
#                           and the kubelet; import the images; wait for the
#                           node to be Ready
#   local-cluster.sh down   stop all of it, remove everything `up` made, then
#                           check that nothing is left (exit 1 naming it if so)
#   local-cluster.sh build  only build and cache the binaries and images
#   local-cluster.sh images [TARGET...]
#                           only build the images (OCI archives in the cache):
#                           pause, shootout and one per target (all by default)
#   local-cluster.sh env    print the KUBECONFIG line for this cluster
#
# second-node.sh adds a second node (127.0.0.2) to it; `down` runs its
# `down` first.
#
# Kubernetes' own sources at K8S_VERSION (default v1.34.4, a release whose
# kubelet still starts on a cgroup v1 host with failCgroupV1: false, as
# this one has) come from the Go module proxy; the binaries are cached
# in $SHOOTOUT_K8S_CACHE (default ~/.cache/shootout/k8s-$K8S_VERSION/bin), so
# a second `up` builds nothing. etcd, containerd, runc, the CNI plugins and
# kubectl are Debian's packages.
#
# Network: everything binds to and talks to 127.0.0.1. The API server,
# etcd, the kubelet, the controller manager and the scheduler listen on
# loopback only; there is no kube-proxy, no CoreDNS and no pod network (the
# CNI configuration is a loopback-only one; pods must use hostNetwork). The
# node is named 127.0.0.1: the kubelet refuses a loopback --node-ip
# ("nodeIP can't be loopback address", pkg/kubelet/kubelet_node_status.go),
# but takes an IP given as --hostname-override as the node's address
# unvalidated, which is how the API server reaches it on 127.0.0.1:10250.
#
# Needs root, cgroup v1 or v2, overlayfs. Everything it makes is under
# $STATE (/var/lib/shootout-k8s), $RUN (/run/shootout-k8s), the cgroup
# /shootout-k8s of each hierarchy, /var/log/containers (symlinks, the
# kubelet's fixed path) and the kubelet's iptables chains (KUBE-*); `down`
# removes each of them.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.34.4}
CACHE=${SHOOTOUT_K8S_CACHE:-$HOME/.cache/shootout/k8s-$K8S_VERSION}
# The CPUs the kubelet keeps for itself and the shared pool (see
# write_configs): the upper half by default.
NCPU=$(nproc)
RESERVED_CPUS=${RESERVED_CPUS:-$(seq -s, $(((NCPU + 1) / 2)) $((NCPU - 1)))}
# The CPUs the cluster's own daemons (etcd, the API server, controller
# manager, scheduler, containerd, the kubelet) are pinned to: the upper
# half, where `shootout run` pins its generator, whatever RESERVED_CPUS
# says. The kubelet's reservedSystemCPUs expects its daemons to be pinned
# by other means; unpinned, every `kubectl exec` of a generator pod woke
# them on the server's CPU too (measured: 10 to 26% of a one-CPU server's
# CPU taken by other processes in each level, none with the load in the
# shootout process). A pod's processes leave this mask for their pod's
# cpuset when runc puts them in it.
DAEMON_CPUS=${DAEMON_CPUS:-$(seq -s, $(((NCPU + 1) / 2)) $((NCPU - 1)))}
STATE=/var/lib/shootout-k8s
RUN=/run/shootout-k8s
CGROUP=shootout-k8s
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
. "$HERE/lib.sh" local-cluster
REPO=$(cd "$HERE/../.." && pwd)
SOCK=$RUN/containerd/containerd.sock
ETCD_PORT=23790
ETCD_PEER_PORT=23800
API_PORT=16443
NODE=127.0.0.1
# The image names the e2e uses: "localhost/" so that a pull, if one were
# ever tried, could only go to this machine.
PAUSE_IMAGE=localhost/shootout-pause:3.10
SHOOTOUT_IMAGE=localhost/shootout:e2e
# Each target's image (images.py's --name-format): go-nethttp's is
# localhost/go-nethttp:e2e, e2e.sh's SERVER_IMAGE.
TARGET_IMAGE='localhost/{target}:e2e'
IMAGES_FAILED=""


kctl() { kubectl --kubeconfig "$STATE/pki/admin.kubeconfig" "$@"; }

# ---------------------------------------------------------------- build ---

staging_modules="api apiextensions-apiserver apimachinery apiserver cli-runtime
client-go cloud-provider cluster-bootstrap code-generator component-base
component-helpers controller-manager cri-api cri-client csi-translation-lib
dynamic-resource-allocation endpointslice externaljwt kms kube-aggregator
kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
mount-utils pod-security-admission sample-apiserver sample-cli-plugin
sample-controller"
k8s_commands="kube-apiserver kube-controller-manager kube-scheduler kubelet"

build_k8s() {
    local c missing=""
    for c in $k8s_commands; do [ -x "$CACHE/bin/$c" ] || missing="$missing $c"; done
    if [ -z "$missing" ]; then
        log "Kubernetes $K8S_VERSION binaries cached in $CACHE/bin"
        return 0
    fi
    command -v go >/dev/null || die "go is needed to build Kubernetes"
    log "building$missing from k8s.io/kubernetes@$K8S_VERSION into $CACHE/bin"
    local src=$CACHE/src staging_version minor m
    staging_version=v0.${K8S_VERSION#v1.}
    minor=$(echo "$K8S_VERSION" | cut -d. -f2)
    mkdir -p "$src" "$CACHE/bin"
    # k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces
    # them with ./staging/src/...; outside its tree, every one of them must be
    # pinned to the release's published v0.X.Y instead.
    {
        echo "module shootout.local/k8s-build"
        echo
        echo "go 1.24.0"
        echo
        echo "godebug default=go1.24"
        echo
        echo "replace ("
        for m in $staging_modules; do printf '\tk8s.io/%s => k8s.io/%s %s\n' "$m" "$m" "$staging_version"; done
        echo ")"
    } >"$src/go.mod"
    local pkgs="" t0=$SECONDS
    for c in $k8s_commands; do pkgs="$pkgs k8s.io/kubernetes/cmd/$c@$K8S_VERSION"; done
    # shellcheck disable=SC2086
    (cd "$src" && GOFLAGS=-mod=mod go get $pkgs)
    local ld="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
    ld="$ld -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
    ld="$ld -X k8s.io/component-base/version.gitTreeState=clean"
    for c in $missing; do
        log "go build $c"
        (cd "$src" && GOMAXPROCS=${GOMAXPROCS:-2} CGO_ENABLED=0 nice -n 19 \
            go build -p "${GO_BUILD_P:-1}" -trimpath -ldflags "$ld" \
            -o "$CACHE/bin/$c.tmp" "k8s.io/kubernetes/cmd/$c")
        mv "$CACHE/bin/$c.tmp" "$CACHE/bin/$c"
    done
    log "built$missing in $((SECONDS - t0))s"
}

install_packages() {
    local need="" p
    for p in etcd-server containerd runc containernetworking-plugins kubectl busybox-static iptables nftables; do
        dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
    done
    command -v openssl >/dev/null || need="$need openssl"
    command -v python3 >/dev/null || need="$need python3"
    if [ -n "$need" ]; then
        log "apt-get install$need"
        apt-get update -qq
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
    fi
}

# The shootout release binary, built from this checkout.
build_release_binaries() {
    local target=${CARGO_TARGET_DIR:-$REPO/target}
    # SHOOTOUT_BIN: a release binary built elsewhere, used as it is.
    if [ -z "${SHOOTOUT_BIN:-}" ]; then
        SHOOTOUT_BIN=$target/release/shootout
        if [ ! -x "$SHOOTOUT_BIN" ] || [ -n "$(find "$REPO/crates" "$REPO/Cargo.lock" -newer "$SHOOTOUT_BIN" -print -quit)" ]; then
            log "cargo build --release -p shootout"
            (cd "$REPO" && nice -n 19 cargo build --release --locked -p shootout)
        fi
    fi
}

# OCI image archives (no Docker, no registry): the pause and shootout
# images by mkimage.py, and one image per target by images.py, made from what
# `shootout build` produced (all of targets/ unless TARGET... is given), each
# named localhost/TARGET:e2e. go-nethttp's also has /usr/local/bin/go-nethttp,
# the command contestant-go-nethttp.yaml gives.
build_images() {
    build_release_binaries
    local dir=$CACHE/images
    mkdir -p "$dir"
    if [ ! -x "$dir/pause" ] || [ "$HOME/go/pkg/mod/k8s.io/kubernetes@$K8S_VERSION/build/pause/linux/pause.c" -nt "$dir/pause" ]; then
        local pausec
        pausec=$(cd "$CACHE/src" && go env GOMODCACHE)/k8s.io/kubernetes@$K8S_VERSION/build/pause/linux/pause.c
        [ -f "$pausec" ] || (cd "$CACHE/src" && go mod download k8s.io/kubernetes)
        log "cc -static pause.c (Kubernetes' own pause, $K8S_VERSION)"
        cc -Os -static -DVERSION="$K8S_VERSION" -o "$dir/pause" "$pausec"
    fi
    # Each archive is written again only when what goes in changed: its
    # arguments, the binary (path, size, time) or mkimage.py.
    image() {
        local out=$1 bin=$2 key
        shift 2
        key="$* $(stat -c '%n %s %Y' "$bin" "$HERE/mkimage.py" /bin/busybox | tr '\n' ' ')"
        if [ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then
            log "$out is up to date"
            return
        fi
        python3 "$HERE/mkimage.py" --out "$out" "$@"
        echo "$key" >"$out.key"
    }
    image "$dir/pause.tar" "$dir/pause" --name "$PAUSE_IMAGE" \
        --file "$dir/pause:/pause" --entrypoint /pause
    image "$dir/shootout.tar" "$SHOOTOUT_BIN" --name "$SHOOTOUT_IMAGE" \
        --file "$SHOOTOUT_BIN:/usr/local/bin/shootout" --with-libs --busybox /bin/busybox
    local targets=("$@") t key stale=() line
    if ((${#targets[@]} == 0)); then
        for t in "$REPO"/targets/*/target.toml; do
            t=${t%/target.toml}
            targets+=("${t##*/}")
        done
    fi
    log "shootout build ${targets[*]}"
    # A target that does not build (a toolchain missing) gets no image; the
    # others still do, and `up` still starts (IMAGES_FAILED names it).
    "$SHOOTOUT_BIN" build --targets-dir "$REPO/targets" "${targets[@]}" >&2 ||
        log "warning: shootout build failed (above): images.py will name the targets it cannot make"
    # A target's image is written again when its build stamp (what
    # `shootout build` last built) or images.py/mkimage.py changed.
    key_of() {
        echo "$(cat "$REPO/targets/.build/$1.stamp" 2>/dev/null) $(stat -c '%n %s %Y' "$HERE/images.py" "$HERE/mkimage.py" /bin/busybox | tr '\n' ' ')"
    }
    for t in "${targets[@]}"; do
        if [ -f "$dir/$t.tar" ] && [ "$(cat "$dir/$t.tar.key" 2>/dev/null)" = "$(key_of "$t")" ]; then
            log "$dir/$t.tar is up to date"
        else
            stale+=("$t")
        fi
    done
    ((${#stale[@]})) || return 0
    log "images.py ${stale[*]}"
    local t0=$SECONDS rc=0
    python3 "$HERE/images.py" --out-dir "$dir" --debs "$dir/debs" --name-format "$TARGET_IMAGE" \
        --alias go-nethttp:/usr/local/bin/go-nethttp=bin/go-nethttp "${stale[@]}" >"$dir/images.out" || rc=$?
    while read -r line; do
        log "$line"
        t=${line%% *}
        t=${t##*/}
        t=${t%.tar}
        key_of "$t" >"$dir/$t.tar.key"
    done <"$dir/images.out"
    log "$(wc -l <"$dir/images.out") of ${#stale[@]} target image(s) in $((SECONDS - t0))s"
    if [ "$rc" != 0 ]; then
        IMAGES_FAILED=$(for t in "${stale[@]}"; do grep -q "/$t.tar " "$dir/images.out" || printf '%s ' "$t"; done)
        log "warning: no image for $IMAGES_FAILED(images.py's messages are above)"
    fi
}

# ------------------------------------------------------------- snapshot ---

# Folders that Kubernetes or containerd make at fixed paths whatever their
# configuration says: /var/log/containers (the kubelet's symlinks),
# /run/containerd (containerd 1.6 puts its shims' sockets in
# /run/containerd/s), and the usual others, checked in case.
fixed_dirs="/var/log/containers /var/log/pods /var/lib/kubelet /etc/kubernetes
/usr/libexec/kubernetes /etc/cni /opt/cni /var/lib/cni /run/containerd
/var/lib/containerd /var/run/netns"

# The kernel settings the kubelet sets at its start unless
# protectKernelDefaults (which then refuses to start when they differ):
# setupKernelTunables in pkg/kubelet/cm/container_manager_linux.go.
# `down` puts back the values they had before `up`.
kubelet_sysctls="vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops
kernel/keys/root_maxkeys kernel/keys/root_maxbytes"

# What the machine had before `up`, so that `down` can tell what it left.
snapshot() {
    {
        echo "## links"
        ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | sort
        echo "## netns"
        ip netns list 2>/dev/null | awk '{print $1}' | sort
        echo "## iptables"
        { iptables-save 2>/dev/null || true; ip6tables-save 2>/dev/null || true; } |
            { grep -v '^#' || true; } | sed 's/\[[0-9]*:[0-9]*\]//' | sort
        echo "## nft-tables"
        nft list tables 2>/dev/null | sort || true
        echo "## sysctl"
        for k in $kubelet_sysctls; do echo "$k=$(cat "/proc/sys/$k")"; done
        echo "## dirs"
        for d in $fixed_dirs; do
            if [ -e "$d" ]; then echo "$d"; fi
        done
    }
}

# ------------------------------------------------------------------- pki ---

make_pki() {
    local pki=$STATE/pki
    mkdir -p "$pki"
    cd "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 \
        -subj "/CN=shootout-local-ca" 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    # name CN O [SANs]
    cert() {
        local name=$1 cn=$2 o=$3 san=${4:-}
        local subj="/CN=$cn"
        [ -n "$o" ] && subj="/O=$o/CN=$cn"
        openssl req -newkey rsa:2048 -nodes -keyout "$name.key" -out "$name.csr" -subj "$subj" 2>/dev/null
        {
            echo "basicConstraints=CA:FALSE"
            echo "keyUsage=digitalSignature,keyEncipherment"
            if [ -n "$san" ]; then
                echo "extendedKeyUsage=serverAuth,clientAuth"
                echo "subjectAltName=$san"
            else
                echo "extendedKeyUsage=clientAuth"
            fi
        } >"$name.ext"
        openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
            -out "$name.crt" -days 2 -extfile "$name.ext" 2>/dev/null
        rm -f "$name.csr" "$name.ext"
    }
    cert apiserver kube-apiserver "" "IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
    cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
    cert admin admin system:masters
    cert controller-manager system:kube-controller-manager ""
    cert scheduler system:kube-scheduler ""
    cert kubelet "system:node:$NODE" system:nodes
    local who
    for who in admin controller-manager scheduler kubelet; do
        cat >"$who.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    certificate-authority: $pki/ca.crt
    server: https://127.0.0.1:$API_PORT
users:
- name: $who
  user:
    client-certificate: $pki/$who.crt
    client-key: $pki/$who.key
contexts:
- name: local
  context: {cluster: local, user: $who}
current-context: local
EOF
    done
    cd - >/dev/null
}

# ---------------------------------------------------------------- start ---

# start NAME CMD...: runs CMD in its own session, logs to $STATE/log/NAME.log,
# records its PID in $RUN/pids/NAME.
start() {
    local name=$1
    shift
    mkdir -p "$STATE/log" "$RUN/pids"
    if [ -n "$DAEMON_CPUS" ]; then
        set -- taskset -c "$DAEMON_CPUS" "$@"
    fi
    setsid "$@" >"$STATE/log/$name.log" 2>&1 </dev/null &
    echo $! >"$RUN/pids/$name"
    log "started $name (pid $!)"
}

wait_for() {
    local what=$1 tries=$2
    shift 2
    local i
    for ((i = 0; i < tries; i++)); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 1
    done
    die "$what did not come up in ${tries}s (logs: $STATE/log/)"
}

write_configs() {
    mkdir -p "$STATE/cni/net.d" "$STATE/containerd" "$RUN/containerd" "$STATE/kubelet" "$STATE/volumes/logs"
    # A loopback-only CNI network: containerd reports its network ready, and
    # a pod without hostNetwork would get a namespace with lo and nothing
    # else, so no pod traffic is ever routed.
    cat >"$STATE/cni/net.d/10-shootout-loopback.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "shootout-loopback", "plugins": [{"type": "loopback"}]}
EOF
    cat >"$STATE/containerd/config.toml" <<EOF
version = 2
root = "$STATE/containerd"
state = "$RUN/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$RUN/containerd/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$STATE/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  # Without CAP_SYS_RESOURCE (this machine's root lacks it) no process may
  # lower its oom_score_adj, and runc fails every sandbox, whose score the
  # kubelet sets to -998 ("nsexec: failed to update /proc/self/oom_score_adj:
  # Permission denied"). This keeps each score at least containerd's own.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$RUN/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
EOF
    # readOnlyPort: shootout's Kubernetes place reads a pod's CPU and memory
    # from the kubelet's Summary API. The API server will not proxy to a node
    # whose address is loopback ("address not allowed"), so on this cluster
    # it is read from the read-only port, bound like the rest to 127.0.0.1
    # (see crates/runner/src/place/kubelet.rs). PodAndContainerStatsFromCRI
    # makes the Summary read each pod's cgroup when asked (through the
    # container runtime) instead of cAdvisor's copy from its last
    # housekeeping (every 1.4 to 3 s here even at 1s, measured): a
    # one-second level's CPU time needs the former.
    # The static CPU manager hands whole CPUs to Guaranteed pods from the
    # CPUs it does not reserve. By default the node reserves the upper half
    # of the CPUs, where `shootout run` pins its generator (its automatic
    # split gives servers the lower half): a contestant pod then gets the
    # CPUs a local run would pin it to (CPU 0 of two). RESERVED_CPUS=0 makes
    # it the client node of second-node.sh's two-node layout instead.
    cat >"$STATE/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: 10250
readOnlyPort: 10255
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $STATE/pki/ca.crt}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix://$SOCK
cgroupDriver: cgroupfs
cgroupRoot: /$CGROUP
cgroupsPerQOS: true
failCgroupV1: false
failSwapOn: false
cpuManagerPolicy: static
kubeReserved: {memory: 256Mi}
reservedSystemCPUs: "$RESERVED_CPUS"
enforceNodeAllocatable: [pods]
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
podLogsDirectory: $STATE/pod-logs
resolvConf: /etc/resolv.conf
hairpinMode: none
serializeImagePulls: false
registerNode: true
featureGates: {PodAndContainerStatsFromCRI: true}
EOF
}

up() {
    [ "$(id -u)" = 0 ] || die "needs root"
    [ -n "$RESERVED_CPUS" ] || die "needs two CPUs or more (one for the kubelet's shared pool, one for pods)"
    if [ -e "$RUN" ] || [ -e "$STATE" ]; then
        die "$RUN or $STATE exists: a cluster is up or a down failed; run '$0 down' first"
    fi
    local t0=$SECONDS port
    install_packages
    build_k8s
    build_images
    for port in $ETCD_PORT $ETCD_PEER_PORT $API_PORT 10250 10255 10248 10257 10259; do
        if ss -Hltn "sport = :$port" | grep -q .; then die "port $port is taken"; fi
    done
    mkdir -p "$RUN" "$STATE"
    snapshot >"$RUN/before"
    make_pki
    write_configs
    local bin=$CACHE/bin pki=$STATE/pki

    start etcd etcd --name shootout --data-dir "$STATE/etcd" \
        --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
        --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
        --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-cluster "shootout=http://127.0.0.1:$ETCD_PEER_PORT"
    wait_for etcd 30 curl -sf "http://127.0.0.1:$ETCD_PORT/health"

    start kube-apiserver "$bin/kube-apiserver" \
        --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port=$API_PORT \
        --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
        --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
        --client-ca-file="$pki/ca.crt" \
        --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" \
        --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
        --kubelet-preferred-address-types=InternalIP,Hostname \
        --service-account-issuer=https://kubernetes.default.svc \
        --service-account-key-file="$pki/sa.pub" \
        --service-account-signing-key-file="$pki/sa.key" \
        --service-cluster-ip-range=10.255.255.0/24 \
        --endpoint-reconciler-type=none \
        --authorization-mode=Node,RBAC --allow-privileged=true \
        --enable-priority-and-fairness=false --profiling=false
    wait_for kube-apiserver 90 kctl get --raw /readyz

    start kube-controller-manager "$bin/kube-controller-manager" \
        --kubeconfig="$pki/controller-manager.kubeconfig" \
        --authentication-kubeconfig="$pki/controller-manager.kubeconfig" \
        --authorization-kubeconfig="$pki/controller-manager.kubeconfig" \
        --bind-address=127.0.0.1 --secure-port=10257 \
        --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
        --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" \
        --use-service-account-credentials=true --leader-elect=false \
        --flex-volume-plugin-dir="$STATE/flex" --profiling=false
    start kube-scheduler "$bin/kube-scheduler" \
        --kubeconfig="$pki/scheduler.kubeconfig" \
        --authentication-kubeconfig="$pki/scheduler.kubeconfig" \
        --authorization-kubeconfig="$pki/scheduler.kubeconfig" \
        --bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false --profiling=false

    start containerd containerd --config "$STATE/containerd/config.toml"
    wait_for containerd 30 ctr --address "$SOCK" version
    local img
    for img in "$CACHE"/images/*.tar; do
        ctr --address "$SOCK" -n k8s.io images import "$img" >/dev/null
    done
    log "images: $(ctr --address "$SOCK" -n k8s.io images ls -q | tr '\n' ' ')"

    # The kubelet wants its cgroup root to exist in every hierarchy.
    local h
    for h in /sys/fs/cgroup/*/; do
        mkdir -p "$h$CGROUP"
        if [ -f "${h}cpuset.cpus" ]; then
            cat "${h}cpuset.cpus" >"$h$CGROUP/cpuset.cpus"
            cat "${h}cpuset.mems" >"$h$CGROUP/cpuset.mems"
        fi
    done
    start kubelet "$bin/kubelet" --config="$STATE/kubelet/config.yaml" \
        --kubeconfig="$pki/kubelet.kubeconfig" --root-dir="$STATE/kubelet" \
        --cert-dir="$STATE/kubelet/pki" --hostname-override="$NODE" \
        --volume-plugin-dir="$STATE/kubelet/volume-plugins" --housekeeping-interval=1s
    wait_for "node $NODE" 120 kctl wait --for=condition=Ready "node/$NODE" --timeout=1s
    # The e2e's shared volume: a hostPath PersistentVolume with no class,
    # which the shipped claim (no storageClassName, no default class here)
    # binds to, as it would to an NFS volume on a real cluster.
    kctl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: shootout-logs-local}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteMany]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  hostPath: {path: $STATE/volumes/logs, type: Directory}
EOF
    log "node $NODE Ready in $((SECONDS - t0))s; export KUBECONFIG=$STATE/pki/admin.kubeconfig"
    kctl get node -o wide >&2
}

# ----------------------------------------------------------------- down ---


# PIDs whose command line or executable names this cluster's folders: the
# containerd shims and anything the pods left; a check, not a name match.
our_pids() {
    local p cmd exe
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [ "$p" = $$ ] && continue
        cmd=$({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null) || continue
        exe=$(readlink "/proc/$p/exe" 2>/dev/null || true)
        case "$cmd" in *"$STATE"* | *"$RUN"*)
            echo "$p"
            continue
            ;;
        esac
        case "$exe" in "$CACHE/bin/"*) echo "$p" ;; esac
    done
}

our_cgroups() {
    local h
    for h in /sys/fs/cgroup/*/; do
        [ -d "$h$CGROUP" ] && echo "${h}$CGROUP"
    done
    [ -d "/sys/fs/cgroup/$CGROUP" ] && echo "/sys/fs/cgroup/$CGROUP"
    return 0
}

cgroup_pids() {
    local cg
    for cg in $(our_cgroups); do
        find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null
    done | sort -u
}

our_mounts() { awk -v s="$STATE" -v r="$RUN" '$5 ~ "^" s || $5 ~ "^" r {print $5}' /proc/self/mountinfo | sort -r; }

down() {
    [ "$(id -u)" = 0 ] || die "needs root"
    local t0=$SECONDS name pid
    # A second node (second-node.sh up) goes first, by its own down.
    if [ -e "$RUN/node2" ] || [ -e "$STATE/node2" ]; then
        "$HERE/second-node.sh" down || log "warning: second-node.sh down failed (above); sweeping on"
    fi
    if [ -S "$SOCK" ]; then
        # Stop every pod's containers through containerd, so the shims exit.
        local ids id
        ids=$(ctr --address "$SOCK" -n k8s.io tasks ls -q 2>/dev/null || true)
        for id in $ids; do ctr --address "$SOCK" -n k8s.io tasks kill -s KILL "$id" >/dev/null 2>&1 || true; done
    fi
    for name in kubelet kube-scheduler kube-controller-manager kube-apiserver; do
        [ -f "$RUN/pids/$name" ] && stop_pid "$name" "$(cat "$RUN/pids/$name")"
    done
    if [ -S "$SOCK" ]; then
        sleep 1
        for id in $(ctr --address "$SOCK" -n k8s.io tasks ls -q 2>/dev/null || true); do
            ctr --address "$SOCK" -n k8s.io tasks delete -f "$id" >/dev/null 2>&1 || true
        done
        for id in $(ctr --address "$SOCK" -n k8s.io containers ls -q 2>/dev/null || true); do
            ctr --address "$SOCK" -n k8s.io containers delete "$id" >/dev/null 2>&1 || true
        done
    fi
    for name in containerd etcd; do
        [ -f "$RUN/pids/$name" ] && stop_pid "$name" "$(cat "$RUN/pids/$name")"
    done
    # Whatever still runs in the kubelet's cgroups (a container whose task
    # would not die) or from our socket (a shim): by PID, as found there.
    for pid in $(cgroup_pids) $(our_pids | while read -r p; do
        grep -qF "$SOCK" "/proc/$p/cmdline" 2>/dev/null && echo "$p"; done); do
        stop_pid "leftover" "$pid"
    done

    local m
    for m in $(our_mounts); do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
    # cgroups: the kubelet's /shootout-k8s tree, deepest first.
    local cg d
    for cg in $(our_cgroups); do
        find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    done
    # The kubelet's iptables chains (KUBE-IPTABLES-HINT, KUBE-FIREWALL,
    # KUBE-KUBELET-CANARY) for both families, unless they were there before.
    local before=$RUN/before ipt
    for ipt in iptables ip6tables; do
        command -v "$ipt" >/dev/null || continue
        if ! grep -q -- '-j KUBE-FIREWALL' "$before" 2>/dev/null; then
            while $ipt -t filter -D INPUT -j KUBE-FIREWALL 2>/dev/null; do :; done
            while $ipt -t filter -D OUTPUT -j KUBE-FIREWALL 2>/dev/null; do :; done
        fi
        local t c
        for t in mangle:KUBE-IPTABLES-HINT filter:KUBE-FIREWALL mangle:KUBE-KUBELET-CANARY \
            nat:KUBE-KUBELET-CANARY filter:KUBE-KUBELET-CANARY; do
            c=${t#*:}
            t=${t%%:*}
            grep -q "^:$c " "$before" 2>/dev/null && continue
            $ipt -t "$t" -F "$c" 2>/dev/null || true
            $ipt -t "$t" -X "$c" 2>/dev/null || true
        done
    done
    # iptables-nft made the tables those chains were in; each one that was
    # not there before `up` goes, if nothing but empty base chains is left
    # in it (so nobody else's rules are dropped).
    if [ -f "$before" ] && command -v nft >/dev/null; then
        local table
        while IFS= read -r table; do
            [ -n "$table" ] || continue
            grep -qx "$table" "$before" && continue
            if nft list "$table" | grep -qvE '^\s*(table .*\{|chain .*\{|type .*;|\}|)$'; then
                log "$table holds rules: left as it is"
                continue
            fi
            # shellcheck disable=SC2086
            nft delete $table
        done < <(nft list tables 2>/dev/null)
    fi
    # The kernel settings the kubelet changed, back as they were.
    if [ -f "$before" ]; then
        local kv
        while IFS= read -r kv; do
            if [ "$(cat "/proc/sys/${kv%%=*}")" != "${kv#*=}" ]; then
                log "sysctl ${kv%%=*}: back to ${kv#*=}"
                echo "${kv#*=}" >"/proc/sys/${kv%%=*}"
            fi
        done < <(sed -n '/^## sysctl/,/^## /{/=/p}' "$before")
    fi
    # The fixed folders: the kubelet's symlinks in /var/log/containers, and
    # any of them that was not there before `up`.
    if [ -d /var/log/containers ]; then
        find /var/log/containers -maxdepth 1 -type l -lname "$STATE/*" -delete 2>/dev/null || true
    fi
    if [ -f "$before" ]; then
        for d in $fixed_dirs; do
            if [ -e "$d" ] && ! grep -qx "$d" "$before"; then
                log "removing $d (made while the cluster was up)"
                rm -rf "$d"
            fi
        done
    fi
    local saved=""
    [ -f "$before" ] && saved=$(cat "$before")
    rm -rf "$STATE" "$RUN" 2>/dev/null || true

    # ---- the check: nothing of ours is left.
    local left=()
    for pid in $(our_pids); do left+=("process $pid: $({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null)"); done
    for m in $(our_mounts); do left+=("mount $m"); done
    for cg in $(our_cgroups); do left+=("cgroup $cg"); done
    for d in "$STATE" "$RUN"; do [ -e "$d" ] && left+=("folder $d"); done
    if [ -n "$saved" ]; then
        local now
        now=$(snapshot)
        while IFS= read -r line; do
            [ -n "$line" ] && left+=("$line")
        done < <(diff <(echo "$saved" | awk '/^## /{s=$2; next} {print s": "$0}' | sort) \
            <(echo "$now" | awk '/^## /{s=$2; next} {print s": "$0}' | sort) | sed -n 's/^> /new since up: /p')
    else
        log "warning: no snapshot from 'up' (nothing was up?): checked processes, mounts, cgroups, folders only"
    fi
    if ((${#left[@]})); then
        log "FAILED: down left these behind:"
        printf '  %s\n' "${left[@]}" >&2
        exit 1
    fi
    log "down in $((SECONDS - t0))s: no process, mount, cgroup, netns, interface, iptables rule or folder of the cluster is left"
}

case "${1:-}" in
up) up ;;
down) down ;;
build)
    install_packages
    build_k8s
    build_images
    ;;
images)
    shift
    build_images "$@"
    [ -z "$IMAGES_FAILED" ] || exit 1
    ;;
env) echo "export KUBECONFIG=$STATE/pki/admin.kubeconfig" ;;
*)
    echo "usage: $0 up|down|build|images [TARGET...]|env" >&2
    exit 2
    ;;
esac
