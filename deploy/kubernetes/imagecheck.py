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

An image labelled dev.shootout.database=postgres (images.py postgres) is
checked as the database instead: its entry point runs the same way with
PORT, PG_SUPERUSER_PASSWORD and PG_SETTINGS (the sample postgres-pod.yaml ships: lines as
crates/servers/src/database/settings.rs renders them, with the runner's
own listen_addresses, port and socket folder, which the entry point's must
override), and psql on this machine, over TCP to 127.0.0.1:PORT, must find
seed.sql's rows (world 10000, fortune 12), every sample setting applied
from postgresql.auto.conf, and, as the superuser, pg_stat_statements
counting benchmarkdbuser's queries as crates/servers/src/verify/counts.rs
reads them. Then, with a session of benchmarkdbuser still open in
pg_sleep, the image's StopSignal (what containerd sends on a pod's
deletion; SIGTERM when it names none) goes to the entry point's process,
which must be the postmaster, and everything must be gone within 5 s.
Paths in the label dev.shootout.requires must exist in the image.

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
import re
import secrets
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
    for path in config["config"].get("Labels", {}).get("dev.shootout.requires", "").split():
        if not resolve(root, path):
            missing.append(f"{path} (its label dev.shootout.requires names it)")
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


def sample_settings():
    """What a runner sends as PG_SETTINGS: the sample postgres-pod.yaml
    ships (settings::render's lines). Its listen_addresses, port and socket
    folder are a runner's own, which in a pod mean nothing: the entry
    point's lines must win (the folder does not exist in the image, so a
    server that took it would not start)."""
    import yaml
    pod = yaml.safe_load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "postgres-pod.yaml")))
    return next(e["value"] for e in pod["spec"]["containers"][0]["env"] if e["name"] == "PG_SETTINGS")


POD_OWN = ("listen_addresses", "port", "unix_socket_directories")
APP_USER, APP_PASSWORD, DB_NAME = "benchmarkdbuser", "benchmarkdbpass", "hello_world"
# seed.sql's rows (crates/servers/src/database/seed.sql).
SEED_ROWS = {"world": 10000, "fortune": 12}
STOP_WITHIN_S = 5


def psql(port, user, password, sql, timeout=10):
    """One statement through this machine's psql over TCP; its output, or
    CheckError with psql's message."""
    env = dict(os.environ, PGPASSWORD=password, PGCONNECT_TIMEOUT="3", PGCLIENTENCODING="UTF8")
    try:
        p = subprocess.run(["psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(port),
                            "-U", user, "-d", DB_NAME, "-c", sql], env=env, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise CheckError("psql is not installed on this machine (apt-get install postgresql-client)")
    except subprocess.TimeoutExpired:
        raise CheckError(f"psql as {user}: `{sql}` took over {timeout}s")
    if p.returncode != 0:
        raise CheckError(f"psql as {user}: `{sql}`: {p.stderr.strip()}")
    return p.stdout.strip()


def main_process(root):
    """The host pid of the entry point's process: rooted in `root`, its
    parent (the wrapper) not."""
    def rooted(pid):
        try:
            r = os.readlink(f"/proc/{pid}/root")
        except OSError:
            return False
        return r == root or r.startswith(root + "/")
    for pid in os.listdir("/proc"):
        if pid.isdigit() and rooted(pid):
            try:
                ppid = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1]
            except OSError:
                continue
            if not rooted(ppid):
                return int(pid)
    return None


def check_database(port, password, settings):
    """From this machine, over TCP to 127.0.0.1:PORT: seed.sql's rows, every
    line of `settings` (PG_SETTINGS) but the pod's own three applied from
    postgresql.auto.conf, the port the pod's, and pg_stat_statements
    counting benchmarkdbuser's statements for the superuser, as the runner
    reads them (counts.rs's tally). Returns the names of the settings
    checked; raises CheckError naming what differs. dbcheck.sh runs it
    against the pod."""
    for table, want in SEED_ROWS.items():
        got = psql(port, "postgres", password, f"SELECT count(*) FROM {table}")
        if got != str(want):
            raise CheckError(f"SELECT count(*) FROM {table} gave {got}, seed.sql makes {want}")
    names = [m.group(1) for m in re.finditer(r"^([a-z_.]+) = ", settings, re.M) if m.group(1) not in POD_OWN]
    rows = psql(port, "postgres", password,
                "SELECT name || ' ' || source || ' ' || coalesce(sourcefile, '') FROM pg_settings WHERE name IN ("
                + ", ".join(f"'{n}'" for n in names) + ") ORDER BY name").splitlines()
    applied = {r.split()[0] for r in rows if r.split()[1:2] == ["configuration"] and r.endswith("/postgresql.auto.conf")}
    if set(names) - applied:
        raise CheckError(f"PG_SETTINGS not applied: {sorted(set(names) - applied)}; pg_settings says: {rows}")
    own = psql(port, "postgres", password, "SELECT current_setting('port')")
    if own != str(port):
        raise CheckError(f"the server's port is {own!r}, not the pod's {port}")
    for i in range(5):
        psql(port, APP_USER, APP_PASSWORD, f"SELECT id, randomnumber FROM world WHERE id = {i + 1}")
    psql(port, APP_USER, APP_PASSWORD, "UPDATE world SET randomnumber = 1 WHERE id = 1")
    tally = psql(port, "postgres", password,
                 "SELECT coalesce(sum(s.calls), 0)::bigint || ' ' || "
                 "coalesce(sum(s.rows) FILTER (WHERE s.query ~* 'update'), 0)::bigint "
                 "FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid "
                 f"WHERE r.rolname = '{APP_USER}' AND s.query ~* '\\mworld\\M'")
    if tally != "6 1":
        raise CheckError(f"pg_stat_statements counts {tally!r} (calls, rows updated) of {APP_USER}'s statements on world; expected '6 1'")
    return names


def hold_session(port, password):
    """A session of benchmarkdbuser left open in pg_sleep(60), as a server's
    pool leaves them, once pg_stat_activity shows it: a stop must still end
    the server at once. The caller kills it."""
    holder = subprocess.Popen(["psql", "-X", "-h", "127.0.0.1", "-p", str(port), "-U", APP_USER, "-d", DB_NAME,
                               "-c", "SELECT pg_sleep(60)"], env=dict(os.environ, PGPASSWORD=APP_PASSWORD),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    while psql(port, "postgres", password, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'") != "1":
        if time.monotonic() - t0 > 10:
            holder.kill()
            raise CheckError("the open session never showed in pg_stat_activity")
        time.sleep(0.1)
    return holder


def serve_database(archive, root, timeout, log):
    """The database check (see the module's docstring); returns a summary."""
    config, app = unpack(archive, root)
    missing = lacks(root, config, app)
    if missing:
        raise CheckError("the image lacks " + "; ".join(missing))
    port = free_port()
    password = secrets.token_hex(16)
    env = dict(kv.partition("=")[::2] for kv in config["config"].get("Env", []))
    settings = sample_settings()
    env.update(PORT=str(port), PG_SUPERUSER_PASSWORD=password, PG_SETTINGS=settings)
    entry = (config["config"].get("Entrypoint") or []) + (config["config"].get("Cmd") or [])
    workdir = config["config"].get("WorkingDir", "/")
    argv = ["unshare", "--mount", "--pid", "--fork", "--kill-child", "--", "/bin/sh", "-c", WRAPPER, "wrapper", root, workdir, *entry]
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    holder = None
    t0 = time.monotonic()
    try:
        while True:
            if proc.poll() is not None:
                raise CheckError(f"the entry point exited with {proc.returncode} before PostgreSQL answered; its output:\n{tail(log)}")
            try:
                version = psql(port, "postgres", password, "SHOW server_version", timeout=5)
                break
            except CheckError as e:
                if time.monotonic() - t0 > timeout:
                    raise CheckError(f"PostgreSQL did not answer on 127.0.0.1:{port} within {timeout}s ({e}); its output:\n{tail(log)}")
            time.sleep(0.2)
        ready = time.monotonic() - t0
        names = check_database(port, password, settings)
        holder = hold_session(port, password)
        main = main_process(root)
        comm = open(f"/proc/{main}/comm").read().strip() if main else None
        if comm != "postgres":
            raise CheckError(f"the entry point's process is {comm!r} (pid {main}), not the postmaster: the stop signal would not reach it")
        name = config["config"].get("StopSignal", "SIGTERM")
        signum = getattr(signal, name if name.startswith("SIG") else "SIG" + name)
        t2 = time.monotonic()
        os.kill(main, signum)
        try:
            proc.wait(STOP_WITHIN_S)
        except subprocess.TimeoutExpired:
            raise CheckError(f"{name} to the postmaster: still running after {STOP_WITHIN_S}s; its output:\n{tail(log)}")
        stopped = time.monotonic() - t2
        out = open(log, errors="replace").read()
        if "database system is shut down" not in out:
            raise CheckError(f"{name} stopped it, but not cleanly (no 'database system is shut down'); its output:\n{tail(log)}")
        return (f"{version}; ready in {ready:.1f}s; world {SEED_ROWS['world']}, fortune {SEED_ROWS['fortune']}; "
                f"{len(names)} settings applied; pg_stat_statements counted {APP_USER}'s 6 statements; "
                f"{name} with a session open: stopped in {stopped:.1f}s")
    finally:
        if holder:
            holder.kill()
            holder.wait()
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
        os.chmod(root, 0o755)  # the image's /: mkdtemp's 0700 would shut out a non-root user
        log = root + ".log"
        name = os.path.basename(archive)
        t0 = time.monotonic()
        try:
            if read_image(archive)[2]["config"].get("Labels", {}).get("dev.shootout.database") == "postgres":
                summary = serve_database(archive, root, a.timeout, log)
                print(f"imagecheck: {name}: PASS (PostgreSQL {summary}; {time.monotonic() - t0:.1f}s in all)")
            else:
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
