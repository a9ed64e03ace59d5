#!/usr/bin/env python3
"""Writes a one-layer OCI image archive (an OCI image layout in a tar) from
files on this machine, without Docker or a registry; `ctr images import`
loads it into containerd.

    mkimage.py --name localhost/shootout:e2e --out shootout.tar \\
        --file target/release/shootout:/usr/local/bin/shootout --with-libs \\
        --busybox /bin/busybox

--file SRC:DST   put SRC at DST (mode kept), repeatable
--with-libs      also every shared library `ldd` names for the --file
                 executables, and the dynamic loader, at their own paths
--busybox PATH   a static busybox at /bin/busybox with /bin/sh and the
                 usual applets as symlinks (the Jobs run `sh -c`)
--env K=V        an environment variable of the image's config, repeatable
--entrypoint P   the image's entry point (none by default, like the
                 Dockerfile's image: the manifests give the command)

The archive is reproducible: fixed mtimes, owners and order, so the same
inputs give the same digests. images.py (an image per target, in layers)
writes its archives with gzip_layer, image_config and write_layout.
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import re
import subprocess
import tarfile

APPLETS = "sh ls cat cp mv rm mkdir sleep env date echo head tail wc grep sed test true false id ps".split()
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def libs_of(path):
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    if "not a dynamic executable" in out or "statically linked" in out:
        return []
    found = []
    for line in out.splitlines():
        m = re.search(r"=>\s*(/\S+)", line) or re.match(r"\s*(/\S+)", line)
        if m:
            found.append(m.group(1))
    return found


def add_dir(tar, name, seen):
    parts = name.strip("/").split("/")
    for i in range(1, len(parts) + 1):
        d = "/".join(parts[:i])
        if d in seen:
            continue
        seen.add(d)
        info = tarfile.TarInfo(d)
        info.type = tarfile.DIRTYPE
        info.mode = 0o1777 if d == "tmp" else 0o755
        tar.addfile(info)


def layer(args):
    entries = []  # (dst, src or None for symlink, link target)
    for spec in args.file:
        src, dst = spec.split(":", 1)
        entries.append((dst, src, None))
        if args.with_libs:
            for lib in libs_of(src):
                entries.append((lib, os.path.realpath(lib), None))
    if args.busybox:
        entries.append(("/bin/busybox", args.busybox, None))
        for a in APPLETS:
            entries.append((f"/bin/{a}", None, "busybox"))
    buf = io.BytesIO()
    seen = set()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for d in ("tmp", "etc", "proc", "sys", "dev", "logs"):
            add_dir(tar, d, seen)
        done = set()
        for dst, src, link in sorted(entries, key=lambda e: e[0]):
            name = dst.lstrip("/")
            if name in done:
                continue
            done.add(name)
            add_dir(tar, os.path.dirname(name), seen)
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type = tarfile.SYMTYPE
                info.linkname = link
                info.mode = 0o777
                tar.addfile(info)
                continue
            with open(src, "rb") as f:
                data = f.read()
            info.size = len(data)
            info.mode = os.stat(src).st_mode & 0o777 | 0o444
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def blob(out, data):
    digest = hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo(f"blobs/sha256/{digest}")
    info.size = len(data)
    info.mode = 0o444
    out.addfile(info, io.BytesIO(data))
    return f"sha256:{digest}", len(data)


def gzip_layer(raw, annotations=None):
    """A layer for write_layout: the raw tar gzipped reproducibly (mtime 0,
    no file name, a fixed level), with its diff ID."""
    return {
        "gz": gzip.compress(raw, compresslevel=6, mtime=0),
        "diff_id": "sha256:" + hashlib.sha256(raw).hexdigest(),
        "annotations": annotations or {},
    }


def image_config(env=(), entrypoint=None, workdir="/", labels=None, diff_ids=()):
    """The image's config: PATH first, then `env`; `entrypoint` a list."""
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Env": [f"PATH={PATH}"] + list(env), "WorkingDir": workdir},
        "rootfs": {"type": "layers", "diff_ids": list(diff_ids)},
    }
    if entrypoint:
        config["config"]["Entrypoint"] = list(entrypoint)
    if labels:
        config["config"]["Labels"] = dict(labels)
    return config


def write_layout(path, name, layers, config):
    """Writes an OCI image layout, as a tar, to `path` (through a temporary
    file renamed into place); returns the manifest's digest. `layers` are
    gzip_layer results, lowest first; `config` an image_config whose diff
    IDs are set here."""
    config = dict(config, rootfs={"type": "layers", "diff_ids": [l["diff_id"] for l in layers]})
    tmp = path + ".tmp"
    with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as out:
        descriptors = []
        for l in layers:
            digest, size = blob(out, l["gz"])
            d = {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": digest, "size": size}
            if l["annotations"]:
                d["annotations"] = dict(l["annotations"])
            descriptors.append(d)
        cfg = json.dumps(config, sort_keys=True).encode()
        cfg_digest, cfg_size = blob(out, cfg)
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": cfg_digest,
                "size": cfg_size,
            },
            "layers": descriptors,
        }
        m = json.dumps(manifest, sort_keys=True).encode()
        m_digest, m_size = blob(out, m)
        index = {
            "schemaVersion": 2,
            "manifests": [
                {
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "digest": m_digest,
                    "size": m_size,
                    "platform": {"architecture": "amd64", "os": "linux"},
                    "annotations": {
                        "io.containerd.image.name": name,
                        "org.opencontainers.image.ref.name": name.rsplit(":", 1)[-1],
                    },
                }
            ],
        }
        for fname, data in (
            ("oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode()),
            ("index.json", json.dumps(index, sort_keys=True).encode()),
        ):
            info = tarfile.TarInfo(fname)
            info.size = len(data)
            info.mode = 0o444
            out.addfile(info, io.BytesIO(data))
    os.replace(tmp, path)
    return m_digest


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--name", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--file", action="append", default=[])
    p.add_argument("--with-libs", action="store_true")
    p.add_argument("--busybox")
    p.add_argument("--env", action="append", default=[])
    p.add_argument("--entrypoint")
    args = p.parse_args()

    raw = layer(args)
    config = image_config(env=args.env, entrypoint=[args.entrypoint] if args.entrypoint else None)
    m_digest = write_layout(args.out, args.name, [gzip_layer(raw)], config)
    print(f"{args.out}: {args.name} {m_digest}")


if __name__ == "__main__":
    main()
