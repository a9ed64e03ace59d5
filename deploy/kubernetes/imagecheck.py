#!/usr/bin/env python3
"""Proves that each image archive serves, without a cluster: its layers are
unpacked into a temporary root, its entry point runs there under
`unshare --mount --pid --fork --kill-child` and `chroot` (a mount and PID
namespace of its own: /proc, a small /dev with null, zero, random and
urandom bound from the host, and /dev/shm, mounted inside that namespace
and unmounted after), on 127.0.0.1 with a free PORT, and
GET /plaintext and GET /json must answer 200 with the bodies of
targets/SPEC.md.

    imagecheck.py [--timeout SECONDS] [--command PROGRAM] ARCHIVE...

--command runs PROGRAM (an absolute path in the image, with no arguments)
instead of the entry point, as a pod's `command:` does
(contestant-go-nethttp.yaml runs /usr/local/bin/go-nethttp).

Before the run, the image is checked for what it names but lacks: the
entry point's program, every absolute symlink of the app and shared layers
(the venv's python3 -> /usr/bin/python3.11) and the ELF interpreter of
every executable there. A lack is reported by name and the image fails
without a run.

Each check is bounded (--timeout, default 120 s, for the start; 10 s per
request; 10 s to stop after SIGTERM to the process group, then SIGKILL).
Afterwards no process may have its root in the temporary root and
/proc/self/mountinfo may hold no mount under it; only then is the root
removed. Exit 0 when every image served, 1 otherwise, 2 on bad usage or a
machine that cannot run the check (not root, no unshare).
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request

WANT = {
    "/plaintext": lambda body: body == b"Hello, World!",
    "/json": lambda body: json.loads(body) == {"message": "Hello, World!"},
}

# Runs inside the new namespaces (still the host's root, as PID 1 of the
# new PID namespace): mounts, the entry point under chroot, then stops
# every process of the namespace and unmounts.
WRAPPER = r"""
set -eu
r=$1 wd=$2
shift 2
mount --make-rprivate /
mount -t proc proc "$r/proc"
mount -t tmpfs -o mode=755,size=1m shootout-imagecheck-dev "$r/dev"
for n in null zero random urandom; do
    : >"$r/dev/$n"
    mount --bind "/dev/$n" "$r/dev/$n"
done
mkdir "$r/dev/shm"
mount -t tmpfs -o mode=1777,size=64m shootout-imagecheck-shm "$r/dev/shm"
ln -s /proc/self/fd "$r/dev/fd"
set +e
chroot "$r" /bin/sh -c 'cd "$1" || exit 127; shift; exec "$@"' sh "$wd" "$@" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM INT
wait "$child"
rc=$?
if kill -0 "$child" 2>/dev/null; then wait "$child"; rc=$?; fi
kill -s KILL -1 2>/dev/null
wait
for m in "$r/dev/shm" "$r/dev/null" "$r/dev/zero" "$r/dev/random" "$r/dev/urandom" "$r/dev" "$r/proc"; do
    umount "$m" || echo "imagecheck: could not unmount $m" >&2
done
exit "$rc"
"""


class CheckError(Exception):
    """Why an image failed its check."""


def read_image(archive):
    """(config, [(layer tar member, annotation)]) of the archive's image."""
    tar = tarfile.open(archive)
    blob = lambda d: tar.extractfile("blobs/sha256/" + d.split(":", 1)[1])  # noqa: E731
    index = json.load(tar.extractfile("index.json"))
    manifest = json.load(blob(index["manifests"][0]["digest"]))
    config = json.load(blob(manifest["config"]["digest"]))
    layers = [(l["digest"], l.get("annotations", {}).get("dev.shootout.layer", "")) for l in manifest["layers"]]
    return tar, blob, config, layers


def inside(root, name):
    """The host path of image path `name`, refusing any component that
    leaves the root or passes through a symlink."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise CheckError(f"layer entry {name!r} leaves the root")
    path = root
    for p in parts[:-1]:
        path = os.path.join(path, p)
        if os.path.islink(path):
            raise CheckError(f"layer entry {name!r} passes through the symlink /{os.path.relpath(path, root)}")
    return os.path.join(root, *parts) if parts else root


def unpack(archive, root):
    """Unpacks the layers in order; returns (config, app paths): the image
    paths of the app and shared layers' entries."""
    tar, blob, config, layers = read_image(archive)
    app = []
    for digest, what in layers:
        mine = what.startswith(("app:", "shared:"))
        with tarfile.open(fileobj=blob(digest), mode="r:gz") as layer:
            for m in layer:
                dst = inside(root, m.name)
                if dst == root:
                    continue
                if mine:
                    app.append((m.name, m))
                if m.isdir():
                    os.makedirs(dst, exist_ok=True)
                    os.chmod(dst, m.mode)
                    continue
                if os.path.lexists(dst):
                    os.unlink(dst)
                if m.issym():
                    os.symlink(m.linkname, dst)
                    continue
                if m.islnk():
                    os.link(inside(root, m.linkname), dst)
                    continue
                if not m.isfile():
                    continue
                with open(dst, "wb") as f:
                    shutil.copyfileobj(layer.extractfile(m), f)
                os.chmod(dst, m.mode)
                os.chown(dst, m.uid, m.gid)
    return config, app


def resolve(root, path, depth=0):
    """Whether image path `path` exists in the root, following symlinks
    inside the root (never the host's)."""
    if depth > 40:
        return False
    parts = [p for p in path.split("/") if p]
    cur = "/"
    for i, p in enumerate(parts):
        nxt = os.path.normpath(os.path.join(cur, p))
        host = root + nxt
        if os.path.islink(host):
            to = os.readlink(host)
            to = to if to.startswith("/") else os.path.join(cur, to)
            rest = "/".join(parts[i + 1:])
            return resolve(root, os.path.normpath(os.path.join(to, rest)) if rest else to, depth + 1)
        if not os.path.exists(host):
            return False
        cur = nxt
    return True


def elf_interp(path):
    """The PT_INTERP of a 64-bit little-endian ELF file, else None."""
    with open(path, "rb") as f:
        head = f.read(64)
        if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2:
            return None
        phoff = int.from_bytes(head[32:40], "little")
        phentsize = int.from_bytes(head[54:56], "little")
        phnum = int.from_bytes(head[56:58], "little")
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            ph = f.read(phentsize)
            if int.from_bytes(ph[0:4], "little") == 3:
                off = int.from_bytes(ph[8:16], "little")
                size = int.from_bytes(ph[32:40], "little")
                f.seek(off)
                return f.read(size).rstrip(b"\0").decode()
    return None


def lacks(root, config, app, command=None):
    """What the image names but does not hold."""
    missing = []
    entry = [command] if command else config["config"].get("Entrypoint") or config["config"].get("Cmd") or []
    if entry and entry[0].startswith("/") and not resolve(root, entry[0]):
        missing.append(f"the entry point's program {entry[0]}")
    workdir = config["config"].get("WorkingDir", "/")
    if not resolve(root, workdir):
        missing.append(f"the WorkingDir {workdir}")
    for name, m in app:
        if m.issym() and m.linkname.startswith("/") and not resolve(root, m.linkname):
            missing.append(f"/{name} -> {m.linkname} (no such file in the image)")
        elif m.isfile() and m.mode & 0o111:
            interp = elf_interp(os.path.join(root, name))
            if interp and not resolve(root, interp):
                missing.append(f"the ELF interpreter {interp} of /{name} (no libc layer?)")
    return missing


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
        return r.status, r.read()


def tail(path, n=15):
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError:
        return ""
    return "\n".join("    " + line for line in lines[-n:])


def leftovers(root):
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                r = os.readlink(f"/proc/{pid}/root")
            except OSError:
                continue
            if r == root or r.startswith(root + "/"):
                found.append(f"process {pid} rooted in {r}")
    for line in open("/proc/self/mountinfo"):
        mp = line.split()[4]
        if mp == root or mp.startswith(root + "/"):
            found.append(f"mount {mp}")
    return found


def serve(archive, root, timeout, log, command=None):
    config, app = unpack(archive, root)
    missing = lacks(root, config, app, command)
    if missing:
        raise CheckError("the image lacks " + "; ".join(missing))
    port = free_port()
    env = {}
    for kv in config["config"].get("Env", []):
        k, _, v = kv.partition("=")
        env[k] = v
    env.update(PORT=str(port), HOST="127.0.0.1", SERVER_CPUS="1")
    entry = (config["config"].get("Entrypoint") or []) + (config["config"].get("Cmd") or [])
    if command:
        entry = [command]
    workdir = config["config"].get("WorkingDir", "/")
    argv = ["unshare", "--mount", "--pid", "--fork", "--kill-child", "--", "/bin/sh", "-c", WRAPPER, "wrapper", root, workdir, *entry]
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    t0 = time.monotonic()
    try:
        while True:
            if proc.poll() is not None:
                raise CheckError(f"the entry point exited with {proc.returncode} before /plaintext answered; its output:\n{tail(log)}")
            try:
                get(port, "/plaintext")
                break
            except OSError:
                pass
            if time.monotonic() - t0 > timeout:
                raise CheckError(f"/plaintext did not answer within {timeout}s; its output:\n{tail(log)}")
            time.sleep(0.2)
        ready = time.monotonic() - t0
        for path, ok in WANT.items():
            status, body = get(port, path)
            if status != 200 or not ok(body):
                raise CheckError(f"GET {path}: {status} {body[:200]!r}")
        return ready
    finally:
        stop(proc)


def stop(proc):
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("archives", nargs="+", metavar="ARCHIVE")
    p.add_argument("--timeout", type=float, default=120)
    p.add_argument("--command", help="an absolute path in the image to run instead of the entry point")
    a = p.parse_args()
    if os.geteuid() != 0:
        print("imagecheck.py: needs root (mount, chroot)", file=sys.stderr)
        return 2
    if not shutil.which("unshare") or not shutil.which("chroot"):
        print("imagecheck.py: unshare and chroot are needed (util-linux, coreutils)", file=sys.stderr)
        return 2
    failed = 0
    for archive in a.archives:
        root = tempfile.mkdtemp(prefix="shootout-imagecheck-")
        log = root + ".log"
        name = os.path.basename(archive)
        t0 = time.monotonic()
        try:
            ready = serve(archive, root, a.timeout, log, a.command)
            print(f"imagecheck: {name}: PASS (/plaintext and /json as SPEC.md says; ready in {ready:.1f}s, "
                  f"{time.monotonic() - t0:.1f}s in all)")
        except (CheckError, OSError, tarfile.TarError, KeyError, ValueError) as e:
            print(f"imagecheck: {name}: FAIL: {e}", file=sys.stderr)
            failed = 1
        left = leftovers(root)
        if left:
            print(f"imagecheck: {name}: left behind, {root} kept: " + "; ".join(left), file=sys.stderr)
            failed = 1
        else:
            shutil.rmtree(root)
        if os.path.exists(log):
            os.unlink(log)
    return failed


if __name__ == "__main__":
    sys.exit(main())
