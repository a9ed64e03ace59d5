#!/usr/bin/env bash
# The quick checks of deploy/kubernetes/ (scripts/test.sh runs them; the
# cluster itself, local-cluster.sh and e2e.sh, is too slow for CI): the
# manifests render with a user's values and refuse bad ones (every row of
# the README's "Values render.sh checks", run by rendercheck.py), N agrees
# in its three places, every pod uses hostNetwork, run.sh refuses a bad
# LEAD and an unreachable cluster, the shell scripts parse and pass shellcheck
# (scripts/setup.sh installs it; without it this fails, naming it), and
# mkimage.py writes the same image twice (and images.py the same layer),
# and imagecheck.py passes an image that serves and fails one that lacks a
# file.
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
python3 -m py_compile "$HERE/mkimage.py" "$HERE/images.py" "$HERE/imagecheck.py" "$HERE/hdrcheck.py" "$HERE/render.py" "$HERE/rendercheck.py"
# render.sh: every value of the README's table (and a few no table can
# show) is refused with exit 2 and OUTDIR untouched, or renders YAML that
# parses back with the value intact; through kubectl too when the local
# cluster (local-cluster.sh up, loopback only) answers. Never another
# kubeconfig's cluster: this check talks to nothing but 127.0.0.1.
if ! python3 -c 'import yaml' 2>/dev/null; then
    echo "check.sh: PyYAML is not importable by python3 (pip install pyyaml, or apt-get install python3-yaml)" >&2
    exit 2
fi
local_kc=/var/lib/shootout-k8s/pki/admin.kubeconfig
kc_args=()
if [ -r "$local_kc" ] && command -v kubectl >/dev/null &&
    kubectl --kubeconfig "$local_kc" get --raw=/readyz --request-timeout=5s </dev/null >/dev/null 2>&1; then
    kc_args=(--kubeconfig "$local_kc")
else
    echo "check.sh: no local cluster answers (local-cluster.sh up): renders are read back by PyYAML only, not kubectl" >&2
fi
mkdir "$tmp/render"
python3 "$HERE/rendercheck.py" "$tmp/render" "${kc_args[@]}"
# run.sh refuses a bad LEAD, and says plainly when no cluster answers (a
# kubeconfig naming 127.0.0.1:9, where nothing listens).
cat >"$tmp/kubeconfig" <<'EOF'
apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: none, user: {token: none}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
EOF
run_refuses() { # run_refuses MESSAGE ARGS...: exit 2 and MESSAGE in stderr
    local want=$1 rc=0
    shift
    KUBECONFIG=$tmp/kubeconfig JOB_TIMEOUT=${JOB_TIMEOUT_CASE:-5} bash "$HERE/run.sh" "$@" 2>"$tmp/run.err" >/dev/null || rc=$?
    if [ "$rc" != 2 ] || ! grep -qF -- "$want" "$tmp/run.err"; then
        echo "check.sh: run.sh $* exited $rc, expected 2 with '$want'; stderr: $(cat "$tmp/run.err")" >&2
        exit 1
    fi
}
run_refuses "LEAD_SECONDS '-5' is negative" -5
run_refuses "LEAD_SECONDS 'abc' is not a whole number of seconds" abc
run_refuses "LEAD_SECONDS '0' is out of range" 0
run_refuses "expected at most one argument" 5 6
JOB_TIMEOUT_CASE=-1 run_refuses "JOB_TIMEOUT '-1' is not a whole number of seconds" 5
if command -v kubectl >/dev/null; then
    run_refuses "run.sh: no reachable Kubernetes cluster at https://127.0.0.1:9: The connection to the server 127.0.0.1:9 was refused" 5
    if grep -q -- '--validate=false' "$tmp/run.err"; then
        echo "check.sh: run.sh passes on kubectl's --validate=false hint: $(cat "$tmp/run.err")" >&2
        exit 1
    fi
else
    run_refuses "kubectl is not installed" 5
fi
printf 'hello\n' >"$tmp/f"
python3 "$HERE/mkimage.py" --name localhost/t:1 --out "$tmp/a.tar" --file "$tmp/f:/f" >"$tmp/a.txt"
python3 "$HERE/mkimage.py" --name localhost/t:1 --out "$tmp/b.tar" --file "$tmp/f:/f" >"$tmp/b.txt"
cmp -s "$tmp/a.tar" "$tmp/b.tar" || { echo "check.sh: mkimage.py is not reproducible" >&2; exit 1; }
tar -tf "$tmp/a.tar" | grep -qx index.json
# images.py's layers depend on content, not on times: a tree touched, and
# given a __pycache__, makes the same layer. (Its Debian layers need apt and
# a mirror, so whole images are built twice by hand: README, "An image for
# every contestant".)
mkdir -p "$tmp/tree/app/__pycache__"
printf 'x\n' >"$tmp/tree/app/f"
ln -s f "$tmp/tree/app/l"
python3 - "$HERE" "$tmp/tree" <<'EOF'
import os, sys
sys.path.insert(0, sys.argv[1])
import images
def diff_id():
    layer = images.Layer("check")
    layer.add_tree(sys.argv[2], "/srv/t", skip=lambda rel: "__pycache__" in rel.split("/"))
    return layer.blob()["diff_id"]
a = diff_id()
os.utime(os.path.join(sys.argv[2], "app/f"), (1, 1))
open(os.path.join(sys.argv[2], "app/__pycache__/f.pyc"), "w").write("y")
if diff_id() != a:
    sys.exit("check.sh: images.py's layer changed with an mtime or a __pycache__")
EOF
# imagecheck.py runs an image in a chroot (root, unshare): a busybox httpd
# image serving SPEC.md's two bodies passes; the same with its httpd link
# dangling fails, naming the link. Under a second; the images of the
# targets themselves are checked by hand (README).
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && [ -x /bin/busybox ]; then
    for kind in ok broken; do
        python3 - "$HERE" "$tmp/$kind.tar" "$kind" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import images, mkimage
layer = images.Layer("app: check")
layer.add("bin/busybox", "file", 0o755, "/bin/busybox")
layer.add("bin/sh", "link", 0o777, "busybox")
for d in ("proc", "dev", "tmp"):
    layer.add(d, "dir", 0o755)
layer.add("www/plaintext", "data", 0o644, b"Hello, World!")
layer.add("www/json", "data", 0o644, b'{"message":"Hello, World!"}')
layer.add("bin/httpd", "link", 0o777, "/bin/busybox" if sys.argv[3] == "ok" else "/bin/busybox-missing")
config = mkimage.image_config(env=["HOST=127.0.0.1", "PORT=8080"], workdir="/www",
                              entrypoint=["/bin/sh", "-c", 'exec /bin/httpd -f -p "$HOST:$PORT" -h /www'])
mkimage.write_layout(sys.argv[2], "localhost/check:1", [layer.blob()], config)
EOF
    done
    python3 "$HERE/imagecheck.py" --timeout 10 "$tmp/ok.tar" >/dev/null
    if python3 "$HERE/imagecheck.py" --timeout 10 "$tmp/broken.tar" 2>"$tmp/ic.err" ||
        ! grep -qF 'the image lacks /bin/httpd -> /bin/busybox-missing' "$tmp/ic.err"; then
        echo "check.sh: imagecheck.py did not fail on a dangling link: $(cat "$tmp/ic.err")" >&2
        exit 1
    fi
else
    echo "check.sh: imagecheck.py not run (it needs root, unshare and /bin/busybox)" >&2
fi
# postgres-pod.yaml: a Guaranteed hostNetwork pod whose sample PG_SETTINGS
# names exactly the settings settings.rs chooses (so imagecheck.py and
# dbcheck.sh run with what a run sends); postgres-entry.sh refuses a bad
# PORT, no superuser password, a bad NODE_IP and a missing seed before it
# touches anything. (The image itself needs apt and a mirror: it is built
# and checked by hand, README "PostgreSQL as a pod".)
python3 - "$HERE" <<'EOF'
import os, re, sys, yaml
here = sys.argv[1]
pod = yaml.safe_load(open(os.path.join(here, "postgres-pod.yaml")))
spec = pod["spec"]
c = spec["containers"][0]
res = c["resources"]
problems = []
if spec.get("hostNetwork") is not True:
    problems.append("hostNetwork is not true")
if res["requests"] != res["limits"] or not str(res["limits"]["cpu"]).isdigit():
    problems.append(f"not Guaranteed with whole CPUs: {res}")
env = {e["name"]: e for e in c["env"]}
if set(env) != {"PORT", "NODE_IP", "PG_SUPERUSER_PASSWORD", "PG_SETTINGS"}:
    problems.append(f"env is {sorted(env)}")
sample = re.findall(r"^([a-z_.]+) = '", env["PG_SETTINGS"]["value"], re.M)
rust = open(os.path.join(here, "../../crates/servers/src/database/settings.rs")).read()
chosen = re.findall(r'set\(\s*"([a-z_.]+)"', rust.split("pub fn chosen", 1)[1].split("\n}\n", 1)[0])
if not chosen or sorted(sample) != sorted(chosen):
    problems.append(f"PG_SETTINGS names {sorted(sample)}, settings.rs chooses {sorted(chosen)}")
if "$PORT" not in " ".join(c["readinessProbe"]["exec"]["command"]):
    problems.append("the readiness probe does not read PORT")
if problems:
    sys.exit("check.sh: postgres-pod.yaml: " + "; ".join(problems))
EOF
entry_refuses() { # entry_refuses MESSAGE VAR=VALUE...: exit 1 and MESSAGE in stderr
    local want=$1 rc=0
    shift
    env -i PATH="$PATH" "$@" sh "$HERE/postgres-entry.sh" 2>"$tmp/entry.err" >/dev/null || rc=$?
    if [ "$rc" != 1 ] || ! grep -qF -- "$want" "$tmp/entry.err"; then
        echo "check.sh: postgres-entry.sh with $* exited $rc, expected 1 with '$want'; stderr: $(cat "$tmp/entry.err")" >&2
        exit 1
    fi
}
entry_refuses "PORT='abc' is not a port number" PORT=abc PG_SUPERUSER_PASSWORD=x
entry_refuses "PORT='70000' is not a port number" PORT=70000 PG_SUPERUSER_PASSWORD=x
entry_refuses "PG_SUPERUSER_PASSWORD is not set" PORT=5432
entry_refuses "NODE_IP='1.2.3.4;x' is not an IP address" PORT=5432 PG_SUPERUSER_PASSWORD=x 'NODE_IP=1.2.3.4;x'
if [ ! -e /usr/share/shootout/seed.sql ]; then
    entry_refuses "/usr/share/shootout/seed.sql is missing: the image has no seed" PORT=5432 PG_SUPERUSER_PASSWORD=x
fi
echo "deploy/kubernetes: manifests render (bad values refused), N agrees, hostNetwork everywhere, run.sh refuses, scripts parse, images reproducible, imagecheck passes and fails, the postgres pod and entry point"
