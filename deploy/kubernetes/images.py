#!/usr/bin/env python3
"""An OCI image archive for each target in targets/, made from what
`shootout build TARGET` produced, without Docker and without building
anything inside an image (mkimage.py writes the archives).

    images.py --out-dir DIR [--debs DIR] TARGET...

Each image is these layers, lowest first; a layer the same for several
images has the same digest in each:

  base      a static busybox at /bin/busybox, /bin/sh and the usual applets
            as symlinks, /etc/passwd and /etc/group with root and nobody
  libc      Debian's packages that own the shared libraries `ldd` names for
            the target's executables (`dpkg -S`), with their dependencies
            as apt resolves them on this machine: libc6, libgcc-s1,
            gcc-12-base for every target here
  runtime   python3: Debian's python3.11 and bash (../python/tls.sh is a
            bash script); maven: Debian's openjdk-17-jre-headless, with the
            /usr/bin/java link its postinst would make; node: the `node` of
            the installed nodejs package, the one `shootout build` ran npm
            with (NodeSource's 20.x on this machine, checked against dpkg's
            md5sums; Debian's bookworm has only 18, whose addon ABI is not
            the one node_modules was built for), plus the packages owning
            the libraries it links; go and cargo: none
  shared    one per folder of targets/ other than the target's own that its
            footprint or run command names (../python, ../node,
            ../target/release, ../data): the python venv is one layer that
            all five python targets share
  app       the target's own folder: its footprint, and the inputs its run
            command names

Debian packages are fetched with `apt-get download` into --debs (kept, so
the next run fetches nothing) and unpacked with `dpkg-deb -x`, the way apko
and distroless build from packages: no maintainer script runs. The closure
is apt's own resolution for an empty system (`apt-get install -s
--no-install-recommends` against an empty dpkg status), less what a lower
layer already holds. usr/share/doc, man, info, locale, lintian and bug are
left out.

Files sit at the absolute paths they have in this checkout and WorkingDir
is the target's folder: a venv writes its own absolute path into its
scripts (the build cache does not keep venvs for that reason), so the paths
cannot move. The venv's interpreter link and pyvenv.cfg are pointed at the
image's /usr/bin/python3.11 (the checkout's point at the python that built
it, pyenv's 3.11.7 here; wheels for CPython 3.11 load in any 3.11), and
__pycache__ folders are left out (their timestamps would not match the
image's fixed mtimes; Python writes them again at the first import).

Artefacts (footprint paths that are not inputs) come from the build cache
entry ($SHOOTOUT_CACHE_DIR, else $XDG_CACHE_HOME/shootout, else
~/.cache/shootout, then builds/TARGET-KEY/files/N, N counting the
artefacts in footprint order, as crates/servers/src/build_cache.rs stores
them) whose content equals the checkout's after `shootout build`; the key
is not computed here (the CLI owns that recipe), the entry is found by
content. Python targets are never cached and come from the checkout.

The config: Entrypoint ["/bin/sh", "-c", RUN] (the target's `run`),
WorkingDir the target's folder, Env PATH, HOST=127.0.0.1, PORT=8080, and
labels naming the target, the cache entry and the packages. Mtimes are 0,
owners root (packages' files keep the deb's owners), entries sorted, gzip
mtime 0: the same inputs give the same digests.

--omit-runtime leaves the runtime layer out, for a deliberately broken
image (imagecheck.py must then fail, naming what is missing).

The name `postgres` is not a target: it makes localhost/postgres:e2e (the
--name-format's {target} is `postgres`), PostgreSQL for the database
scenarios as a pod, from this machine's installed version (`pg_config
--version`; Debian's postgresql-N, postgresql-client-N and libpq5 at the
versions installed here, so the pod runs the server a local run does).
Its layers, lowest first: base and libc (the targets' own, same digests),
the packages owning the libraries its executables link (`dpkg -S`, apt's
closure, llvmjit's libLLVM too), the server and client packages and tzdata
(their other dependencies, postgresql-common's perl wrappers, are not
used), and the entry layer: /etc/passwd and /etc/group with a `postgres`
user (uid 999; initdb refuses root), su and chown as busybox links,
postgres-entry.sh at /usr/local/bin/shootout-postgres, seed.sql (copied
from crates/servers/src/database/) at /usr/share/shootout/seed.sql and
/var/lib/postgresql owned by postgres. StopSignal is SIGINT (fast
shutdown). --omit-seed leaves seed.sql out, for a deliberately broken
image.
"""

import argparse
import hashlib
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mkimage  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DROP = ("usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale", "usr/share/lintian", "usr/share/bug")
APPLETS = sorted(
    set(mkimage.APPLETS)
    | set("awk basename chmod cut dirname expr find kill ln nproc printf readlink sort touch tr uname xargs".split())
)
PYTHON = "/usr/bin/python3.11"
RUNTIMES = {
    "python3": {"packages": ["python3.11", "bash"], "links": {}},
    "maven": {
        "packages": ["openjdk-17-jre-headless"],
        "links": {"/usr/bin/java": "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"},
    },
    "node": {"installed": "nodejs", "files": ["/usr/bin/node"]},
}
# The database image: not a target (see the docstring).
POSTGRES = "postgres"
PG_UID = 999
PG_ENTRY = "/usr/local/bin/shootout-postgres"
PG_SEED = "/usr/share/shootout/seed.sql"
PG_SEED_SRC = os.path.join(REPO, "crates/servers/src/database/seed.sql")


class ImageError(Exception):
    """Why an image cannot be made (the message names the thing)."""


def run(argv, **kw):
    try:
        p = subprocess.run(argv, capture_output=True, text=True, **kw)
    except FileNotFoundError as e:
        raise ImageError(f"{argv[0]} is not installed ({e})")
    if p.returncode != 0:
        raise ImageError(f"`{' '.join(argv)}` failed ({p.returncode}): {p.stderr.strip()[-800:]}")
    return p.stdout


# ------------------------------------------------------------- tar layers ---


class Layer:
    """A layer being assembled: image path -> (kind, mode, uid, gid, payload),
    payload a source path ("file"), bytes ("data") or a link target ("link")."""

    def __init__(self, what):
        self.what = what
        self.entries = {}

    def add(self, name, kind, mode, payload=None, uid=0, gid=0):
        name = name.strip("/")
        parts = name.split("/")
        for i in range(1, len(parts)):
            d = "/".join(parts[:i])
            self.entries.setdefault(d, ("dir", 0o1777 if d == "tmp" else 0o755, 0, 0, None))
        if kind == "dir" and name in self.entries and self.entries[name][0] != "dir":
            return
        self.entries[name] = (kind, mode, uid, gid, payload)

    def add_tree(self, src, dst, keep_owner=False, skip=lambda rel: False, rewrite=None):
        """Adds `src` (a file, link or folder) at image path `dst`."""
        for path, rel in walk(src):
            if skip(rel):
                continue
            st = os.lstat(path)
            name = (dst.rstrip("/") + ("/" + rel if rel else "")).strip("/")
            if not name:
                continue
            uid, gid = (st.st_uid, st.st_gid) if keep_owner else (0, 0)
            mode = st.st_mode & 0o7777
            if rewrite and rel in rewrite:
                kind, payload = rewrite[rel]
                self.add(name, kind, 0o777 if kind == "link" else mode, payload, uid, gid)
            elif os.path.islink(path):
                self.add(name, "link", 0o777, os.readlink(path), uid, gid)
            elif os.path.isdir(path):
                self.add(name, "dir", mode, None, uid, gid)
            elif os.path.isfile(path):
                self.add(name, "file", mode, path, uid, gid)

    def raw(self):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name in sorted(self.entries):
                kind, mode, uid, gid, payload = self.entries[name]
                info = tarfile.TarInfo(name)
                info.mode, info.uid, info.gid, info.mtime = mode, uid, gid, 0
                if kind == "dir":
                    info.type = tarfile.DIRTYPE
                    tar.addfile(info)
                elif kind == "link":
                    info.type = tarfile.SYMTYPE
                    info.linkname = payload
                    tar.addfile(info)
                else:
                    data = payload if kind == "data" else open(payload, "rb").read()
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        return buf.getvalue()

    def blob(self):
        return mkimage.gzip_layer(self.raw(), {"dev.shootout.layer": self.what})


def walk(src):
    """(path, path relative to src) for src and everything under it, sorted;
    symlinks are not followed."""
    yield src, ""
    if os.path.isdir(src) and not os.path.islink(src):
        for root, dirs, files in os.walk(src):
            dirs.sort()
            for n in sorted(dirs + files):
                p = os.path.join(root, n)
                yield p, os.path.relpath(p, src)


def base_layer(busybox):
    layer = Layer("base: busybox")
    for d in ("tmp", "etc", "proc", "sys", "dev", "logs", "root"):
        layer.add(d, "dir", 0o1777 if d == "tmp" else 0o755)
    layer.add("bin/busybox", "file", 0o755, busybox)
    for a in APPLETS:
        layer.add(f"bin/{a}", "link", 0o777, "busybox")
    layer.add("etc/passwd", "data", 0o644, b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
    layer.add("etc/group", "data", 0o644, b"root:x:0:\nnogroup:x:65534:\n")
    return layer


# -------------------------------------------------------- Debian packages ---


def apt_closure(packages):
    """[(name, version, arch)] apt installs for `packages` on an empty
    system, recommends left out."""
    with tempfile.NamedTemporaryFile() as empty:
        out = run(
            ["apt-get", "install", "-s", "--no-install-recommends", "-o", f"Dir::State::status={empty.name}",
             "-o", "APT::Get::Show-User-Simulation-Note=false", *packages],
            env=dict(os.environ, LC_ALL="C"),
        )
    found = []
    for line in out.splitlines():
        m = re.match(r"Inst (\S+) \((\S+) .*\[(\S+)\]\)", line)
        if m:
            found.append(m.groups())
    if not found:
        raise ImageError(f"apt resolved nothing for {' '.join(packages)}: {out.strip()[-400:]}")
    return sorted(found)


def owners(paths):
    """The Debian packages that own `paths` (`dpkg -S`, /usr-merged aliases
    and the real path tried too)."""
    pkgs = set()
    for p in paths:
        tries = [p, os.path.realpath(p)]
        tries += [t[4:] if t.startswith("/usr/") else "/usr" + t for t in list(tries)]
        for t in tries:
            r = subprocess.run(["dpkg", "-S", t], capture_output=True, text=True)
            if r.returncode == 0:
                pkgs.add(r.stdout.split(":", 1)[0].split(",")[0].strip())
                break
        else:
            raise ImageError(f"{p} belongs to no Debian package (dpkg -S): it cannot come from a package layer")
    return pkgs


def libs_of(path):
    if open(path, "rb").read(4) != b"\x7fELF":
        return []
    return mkimage.libs_of(path)


def fetch_debs(pkgs, debs_dir):
    """The .deb file of each (name, version, arch), `apt-get download`ed into
    debs_dir unless there already."""
    os.makedirs(debs_dir, exist_ok=True)
    files = {p: os.path.join(debs_dir, f"{p[0]}_{p[1].replace(':', '%3a')}_{p[2]}.deb") for p in pkgs}
    missing = [f"{n}={v}" for (n, v, a), f in files.items() if not os.path.exists(f)]
    if missing:
        run(["apt-get", "download", "-q", "-o", "APT::Sandbox::User=root", *missing], cwd=debs_dir)
    for p, f in files.items():
        if not os.path.exists(f):
            raise ImageError(f"apt-get download {p[0]}={p[1]} wrote no {f}")
    return files


def deb_layer(what, pkgs, debs_dir, links=None):
    files = fetch_debs(pkgs, debs_dir)
    layer = Layer(f"{what}: " + " ".join(f"{n}={v}" for n, v, _ in pkgs))
    with tempfile.TemporaryDirectory(prefix="shootout-debs-") as stage:
        for p in sorted(files):
            run(["dpkg-deb", "-x", files[p], stage])
        skip = lambda rel: any(rel == d or rel.startswith(d + "/") for d in DROP)  # noqa: E731
        layer.add_tree(stage, "", keep_owner=True, skip=skip)
        for link, to in (links or {}).items():
            layer.add(link, "link", 0o777, to)
        return layer.blob()


def installed_files_layer(what, package, paths):
    """Files of an installed package, each checked against dpkg's md5sums."""
    version = run(["dpkg-query", "-W", "-f", "${Version}", package]).strip()
    sums = {}
    md5 = f"/var/lib/dpkg/info/{package}.md5sums"
    if os.path.exists(md5):
        for line in open(md5):
            s, f = line.split(None, 1)
            sums["/" + f.strip()] = s
    layer = Layer(f"{what}: {package}={version} (installed files {' '.join(paths)})")
    for p in paths:
        if p not in sums:
            raise ImageError(f"{p} is not in {md5}: not a file of the installed {package}")
        if hashlib.md5(open(p, "rb").read()).hexdigest() != sums[p]:
            raise ImageError(f"{p} differs from the installed {package} {version} (dpkg's md5sums)")
        layer.add(p, "file", os.stat(p).st_mode & 0o777, p)
    return layer, version


# ----------------------------------------------------------------- targets ---


def cache_dir():
    env = lambda k: os.environ.get(k) or None  # noqa: E731
    if env("SHOOTOUT_CACHE_DIR"):
        return env("SHOOTOUT_CACHE_DIR")
    if env("XDG_CACHE_HOME"):
        return os.path.join(env("XDG_CACHE_HOME"), "shootout")
    return os.path.join(os.environ["HOME"], ".cache/shootout")


def tree_digest(path):
    h = hashlib.sha256()
    for p, rel in walk(path):
        if os.path.islink(p):
            h.update(f"link {rel} {os.readlink(p)}\n".encode())
        elif os.path.isdir(p):
            h.update(f"dir {rel}\n".encode())
        else:
            h.update(f"file {rel} {os.stat(p).st_mode & 0o111 != 0} ".encode())
            h.update(hashlib.sha256(open(p, "rb").read()).digest())
    return h.hexdigest()


def is_input(t, p):
    return any(p == i.rstrip("/") or p.startswith(i.rstrip("/") + "/") for i in t.get("inputs", []))


def cache_entry(t, tdir, artefacts):
    """(folder, note): the build cache entry holding exactly the checkout's
    artefacts, or None and why there is none."""
    if t.get("toolchain") == "python3":
        return None, "not cached (a Python venv holds its own absolute path): taken from the checkout"
    builds = os.path.join(cache_dir(), "builds")
    want = [tree_digest(os.path.normpath(os.path.join(tdir, a))) for a in artefacts]
    pat = re.compile(re.escape(t["name"]) + r"-[0-9a-f]{64}")
    for e in sorted(os.listdir(builds)) if os.path.isdir(builds) else []:
        entry = os.path.join(builds, e)
        if not pat.fullmatch(e) or not os.path.isfile(os.path.join(entry, "meta")):
            continue
        got = [os.path.join(entry, "files", str(i)) for i in range(len(artefacts))]
        if all(os.path.lexists(g) for g in got) and [tree_digest(g) for g in got] == want:
            return entry, f"build cache entry {e}"
    return None, f"no entry of {builds} holds the checkout's artefacts (built with --no-cache?): taken from the checkout"


def load_target(targets_dir, name):
    path = os.path.join(targets_dir, name, "target.toml")
    if not os.path.isfile(path):
        raise ImageError(f"no target {name!r}: {path} does not exist")
    with open(path, "rb") as f:
        t = tomllib.load(f)
    t.setdefault("name", name)
    return t


def venv_rewrite(venv):
    """Points a venv at the image's interpreter: bin/python3 and pyvenv.cfg."""
    cfg = open(os.path.join(venv, "pyvenv.cfg")).read()
    m = re.search(r"^version\s*=\s*(\S+)", cfg, re.M)
    if not m or not m.group(1).startswith("3.11."):
        raise ImageError(f"{venv} was made by Python {m.group(1) if m else '?'}, not 3.11: the image's python3.11 cannot run it")
    cfg = re.sub(r"^home\s*=.*$", "home = /usr/bin", cfg, flags=re.M)
    cfg = re.sub(r"^executable\s*=.*$", f"executable = {PYTHON}", cfg, flags=re.M)
    return {"bin/python3": ("link", PYTHON), "pyvenv.cfg": ("data", cfg.encode())}


def app_layers(t, tdir, targets_dir, aliases):
    """The shared layers and the app layer, and the build note."""
    run_cmd = t["run"]
    footprint = t.get("footprint", [])
    artefacts = [p for p in footprint if not is_input(t, p)]
    for p in footprint:
        if not os.path.lexists(os.path.join(tdir, p)):
            raise ImageError(f"{t['name']}: footprint {p} is missing: run `shootout build {t['name']}` first")
    entry, note = cache_entry(t, tdir, artefacts)
    wanted = list(footprint) + [i for i in t.get("inputs", []) if i not in footprint and i in run_cmd]
    data = os.path.join(targets_dir, "data", "titanic.csv")
    groups = {}
    for p in wanted:
        dst = os.path.normpath(os.path.join(tdir, p))
        src = os.path.join(entry, "files", str(artefacts.index(p))) if entry and p in artefacts else dst
        group = os.path.relpath(dst, targets_dir).split("/")[0]
        groups.setdefault(group, []).append((src, dst))
    if os.path.exists(data):
        groups.setdefault("data", []).append((data, data))
    layers = []
    own = t["name"]
    groups.setdefault(own, [])
    for group in sorted(groups, key=lambda g: (g == own, g)):
        layer = Layer(f"{'app' if group == own else 'shared'}: targets/{group}")
        for src, dst in sorted(groups[group], key=lambda e: e[1]):
            rewrite = None
            if os.path.isfile(os.path.join(src, "pyvenv.cfg")):
                rewrite = venv_rewrite(src)
            layer.add_tree(src, dst, skip=lambda rel: "__pycache__" in rel.split("/"), rewrite=rewrite)
        if group == own:
            layer.add(tdir, "dir", 0o755)
            for link, rel in aliases:
                layer.add(link, "link", 0o777, os.path.join(tdir, rel))
        layers.append(layer.blob())
    return layers, note, [os.path.join(tdir, p) for p in artefacts]


class Builder:
    """Builds images; layers shared between targets are made once."""

    def __init__(self, args):
        self.args = args
        self.memo = {}

    def once(self, key, make):
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]

    def postgres_image(self):
        """localhost/postgres:e2e: this machine's PostgreSQL, the entry
        point and the seed (see the docstring)."""
        a = self.args
        major = run(["dpkg-query", "-W", "-f", "${Version}", "postgresql"]).split("+")[0].strip()
        if not major.isdigit():
            raise ImageError(f"the installed postgresql package's version does not start with a major version: {major!r}")
        server, client = f"postgresql-{major}", f"postgresql-client-{major}"
        # Pinned at the installed versions: the pod runs the server a local run runs.
        pinned = {}
        for pkg in (server, client, "libpq5"):
            r = subprocess.run(["dpkg-query", "-W", "-f", "${Status} ${Version}", pkg], capture_output=True, text=True)
            if r.returncode != 0 or not r.stdout.startswith("install ok installed"):
                raise ImageError(f"{pkg} is not installed (apt-get install postgresql): the image takes this machine's PostgreSQL")
            pinned[pkg] = r.stdout.split()[-1]
        elfs = []
        for pkg in (server, client):
            for f in run(["dpkg-query", "-L", pkg]).splitlines():
                if os.path.isfile(f) and not os.path.islink(f) and open(f, "rb").read(4) == b"\x7fELF":
                    elfs.append(f)
        libs = sorted({lib for e in elfs for lib in libs_of(e)})
        base_pkgs = self.once(("closure", "libc6", ()), lambda: apt_closure(["libc6"]))
        have = {n for n, _, _ in base_pkgs}
        lib_owners = owners(libs) - set(pinned)
        lib_pkgs = [p for p in apt_closure(sorted(lib_owners) + [f"libpq5={pinned['libpq5']}"]) if p[0] not in have]
        have |= {n for n, _, _ in lib_pkgs}
        pg_pkgs = [p for p in apt_closure([f"{server}={pinned[server]}", f"{client}={pinned[client]}", "tzdata"])
                   if p[0] in (server, client, "tzdata") and p[0] not in have]
        if sorted(n for n, _, _ in pg_pkgs) != sorted([client, server, "tzdata"]):
            raise ImageError(f"apt resolved {pg_pkgs} for {server}, {client} and tzdata")
        entry = Layer("app: postgres entry point and seed")
        entry.add("etc/passwd", "data", 0o644, (
            "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
            f"postgres:x:{PG_UID}:{PG_UID}:PostgreSQL:/var/lib/postgresql:/bin/sh\n").encode())
        entry.add("etc/group", "data", 0o644, f"root:x:0:\nnogroup:x:65534:\npostgres:x:{PG_UID}:\n".encode())
        for applet in ("su", "chown"):
            entry.add(f"bin/{applet}", "link", 0o777, "busybox")
        entry.add(PG_ENTRY, "file", 0o755, os.path.join(HERE, "postgres-entry.sh"))
        if not a.omit_seed:
            entry.add(PG_SEED, "file", 0o644, PG_SEED_SRC)
        entry.add("var/lib/postgresql", "dir", 0o700, uid=PG_UID, gid=PG_UID)
        layers = [self.once("base", lambda: base_layer(a.busybox).blob()),
                  self.once(("debs", tuple(base_pkgs)), lambda: deb_layer("libc", base_pkgs, a.debs)),
                  deb_layer("postgres libraries", lib_pkgs, a.debs),
                  deb_layer("postgres", pg_pkgs, a.debs),
                  entry.blob()]
        bindir = f"/usr/lib/postgresql/{major}/bin"
        labels = {
            "dev.shootout.database": "postgres",
            "dev.shootout.seed": hashlib.sha256(open(PG_SEED_SRC, "rb").read()).hexdigest()
            + ("" if not a.omit_seed else " (left out: --omit-seed)"),
            "dev.shootout.requires": " ".join([PG_ENTRY, PG_SEED] + [f"{bindir}/{p}" for p in ("initdb", "pg_ctl", "postgres", "psql")]),
            "dev.shootout.packages": " ".join(f"{n}={v}" for n, v, _ in base_pkgs + lib_pkgs + pg_pkgs),
        }
        config = mkimage.image_config(
            env=["PATH=" + bindir + ":" + mkimage.PATH, "PORT=5432", "LC_ALL=C", "TZ=Etc/UTC"],
            entrypoint=["/bin/sh", PG_ENTRY],
            workdir="/var/lib/postgresql",
            labels=labels,
        )
        config["config"]["Env"] = config["config"]["Env"][1:]  # the PATH above replaces mkimage's
        config["config"]["StopSignal"] = "SIGINT"
        out = os.path.join(a.out_dir, f"{POSTGRES}.tar")
        image_name = a.name_format.format(target=POSTGRES)
        return out, image_name, mkimage.write_layout(out, image_name, layers, config)

    def image(self, name):
        a = self.args
        if name == POSTGRES:
            return self.postgres_image()
        t = load_target(a.targets_dir, name)
        tdir = os.path.join(a.targets_dir, name)
        aliases = [(link, rel) for tgt, link, rel in a.alias if tgt == name]
        apps, note, artefact_paths = app_layers(t, tdir, a.targets_dir, aliases)
        toolchain = t.get("toolchain", "")
        runtime = RUNTIMES.get(toolchain)
        # The libc layer: the owners of what the target's own executables link.
        elfs = [p for p in artefact_paths if os.path.isfile(p)]
        libs = sorted({lib for e in elfs for lib in libs_of(e)})
        base_pkgs = self.once(("closure", "libc6", tuple(libs)),
                              lambda: apt_closure(sorted(owners(libs) | {"libc6"})))
        layers = [self.once("base", lambda: base_layer(a.busybox).blob()),
                  self.once(("debs", tuple(base_pkgs)), lambda: deb_layer("libc", base_pkgs, a.debs))]
        packages = [f"{n}={v}" for n, v, _ in base_pkgs]
        have = {n for n, _, _ in base_pkgs}
        if runtime and "packages" in runtime:
            pkgs = [p for p in self.once(("closure", toolchain), lambda: apt_closure(runtime["packages"])) if p[0] not in have]
            if not a.omit_runtime:
                layers.append(self.once(("debs", tuple(pkgs)),
                                        lambda: deb_layer(f"runtime {toolchain}", pkgs, a.debs, runtime["links"])))
            packages += [f"{n}={v}" for n, v, _ in pkgs]
        elif runtime:
            def node_layers():
                files, version = installed_files_layer(f"runtime {toolchain}", runtime["installed"], runtime["files"])
                need = sorted({lib for f in runtime["files"] for lib in libs_of(f)})
                pkgs = [p for p in apt_closure(sorted(owners(need))) if p[0] not in have]
                out = [deb_layer(f"runtime {toolchain} libraries", pkgs, a.debs)] if pkgs else []
                return out + [files.blob()], [f"{runtime['installed']}={version} (installed)"] + [f"{n}={v}" for n, v, _ in pkgs]
            rl, rp = self.once(("installed", toolchain), node_layers)
            if not a.omit_runtime:
                layers += rl
            packages += rp
        layers += apps
        labels = {
            "dev.shootout.target": name,
            "dev.shootout.build": note,
            "dev.shootout.packages": " ".join(packages),
        }
        config = mkimage.image_config(
            env=["HOST=127.0.0.1", "PORT=8080"],
            entrypoint=["/bin/sh", "-c", t["run"]],
            workdir=tdir,
            labels=labels,
        )
        out = os.path.join(a.out_dir, f"{name}.tar")
        image_name = a.name_format.format(target=name)
        digest = mkimage.write_layout(out, image_name, layers, config)
        return out, image_name, digest


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("targets", nargs="+", metavar="TARGET")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--targets-dir", default=os.path.join(REPO, "targets"))
    p.add_argument("--debs", help="where .deb files are kept (default OUT_DIR/debs)")
    p.add_argument("--busybox", default="/bin/busybox")
    p.add_argument("--name-format", default="localhost/{target}:e2e")
    p.add_argument("--alias", action="append", default=[], metavar="TARGET:PATH=REL",
                   help="also a symlink PATH to the target's REL in its app layer")
    p.add_argument("--omit-runtime", action="store_true", help="leave the runtime layer out (a broken image)")
    p.add_argument("--omit-seed", action="store_true", help="leave seed.sql out of the postgres image (a broken image)")
    a = p.parse_args()
    a.targets_dir = os.path.abspath(a.targets_dir)
    a.debs = a.debs or os.path.join(a.out_dir, "debs")
    aliases = []
    for spec in a.alias:
        m = re.fullmatch(r"([^:]+):(/[^=]+)=(.+)", spec)
        if not m:
            p.error(f"--alias {spec!r}: expected TARGET:/ABS/PATH=RELATIVE")
        aliases.append(m.groups())
    a.alias = aliases
    os.makedirs(a.out_dir, exist_ok=True)
    b = Builder(a)
    failed = 0
    for name in a.targets:
        try:
            out, image_name, digest = b.image(name)
        except (ImageError, OSError) as e:
            print(f"images.py: {name}: {e}", file=sys.stderr)
            failed = 1
            continue
        print(f"{out} {image_name} {digest} {os.path.getsize(out)}")
    return failed


if __name__ == "__main__":
    sys.exit(main())
