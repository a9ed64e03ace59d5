#!/usr/bin/env python3
"""Writes the shipped manifests with a user's values (render.sh runs this).

Every value comes from the environment and is checked before anything is
written: a bad one is refused with exit 2, naming the variable, the value
and what is expected. The values are then written into the shipped YAML as
double-quoted scalars by a serializer (json.dumps: a JSON string is a YAML
double-quoted scalar, so no value can end a line, open a mapping or lose a
character), and an env value's `$` is doubled so that Kubernetes' own
`$(VAR)` expansion gives the value back as written. Everything is written
into a temporary folder beside OUTDIR and moved into place only when
complete, so a failure leaves OUTDIR as it was.

Standard library only: render.sh must run wherever python3 does.
Usage: render.py OUTDIR
"""

import difflib
import ipaddress
import json
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROG = "render.sh"

# The largest rate shootout's engine accepts for a whole load
# (crates/engine/src/workload.rs MAX_RATE); every shard keeps the whole one.
MAX_RATE = 1e9
# The longest duration shootout accepts (crates/engine/src/units.rs).
MAX_DURATION_S = 30 * 24 * 3600

# An OCI image reference: [registry[:port]/]path[:tag][@sha256:digest].
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
IMAGE = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]+)?/)?"
    rf"{_COMPONENT}(?:/{_COMPONENT})*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?"
)
_NUMBER = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
RATE = re.compile(rf"({_NUMBER}(?:[eE][+-]?[0-9]+)?)([kKmM]?)")
DURATION = re.compile(
    rf"(?:({_NUMBER}(?:[eE][+-]?[0-9]+)?)|({_NUMBER})(us|µs|ms|s|min|m|h))"
)
DURATION_UNITS = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
# A Kubernetes CPU quantity: whole or up to 3 decimals of CPUs, or millicores.
CPU = re.compile(r"([0-9]+(?:\.[0-9]{1,3})?|\.[0-9]{1,3})|([0-9]+)m")
# RFC 3986 path and query characters, as shootout's URL check allows them
# (crates/engine/src/url.rs allowed_in_target); '%' starts an escape.
TARGET_CHAR = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?]")
HOST_NAME = re.compile(r"[A-Za-z0-9\-._~]+")

# name: what is expected of its value
SETTINGS = {
    "SHOOTOUT_IMAGE": "an image reference such as registry.example/shootout:1 (both Jobs' image)",
    "SERVER_IMAGE": "an image reference such as registry.example/go-nethttp:1 (the contestant's image)",
    "TARGET_URL": "the server's URL, http://HOST[:PORT][/PATH][?QUERY], as `shootout load` takes it",
    "RATE": f"the whole load's rate in requests per second, more than 0 and at most {MAX_RATE:.0f} (e.g. 20000, 2.5k)",
    "DURATION": "how long each shard measures, more than 0 and at most 30 days (e.g. 30s, 2m)",
    "WARMUP": "the warm-up before measuring, 0 or more and at most 30 days (e.g. 0s, 5s)",
    "SHARD_CPU": "each shard's CPU request, a Kubernetes quantity above 0 (e.g. 2, 1.5, 500m)",
    "REMOTE": "1 to allow a TARGET_URL that is not loopback, 0 or unset for loopback only",
}


class Refused(Exception):
    """A value that cannot be rendered: exit 2."""


class Broken(Exception):
    """A shipped template that no longer has what render.py fills in: exit 1."""


def shown(value):
    """The value quoted, with control characters escaped (a message cannot break a line)."""
    return "'" + "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in value) + "'"


def refuse(name, value, why):
    raise Refused(f"{name}={shown(value)}: {why}; expected {SETTINGS[name]}")


def check_url(value, remote):
    name = "TARGET_URL"
    bad = next((c for c in value if not ("!" <= c <= "~")), None)
    if bad is not None:
        refuse(name, value, f"{shown(bad)} at byte {value.index(bad)} is not visible ASCII (percent-encode it, e.g. %20)")
    m = re.fullmatch(r"(https?)://([^/?#]*)([^#]*)(#.*)?", value)
    if not m:
        refuse(name, value, "it does not start with http:// or https://")
    scheme, authority, target, fragment = m.groups()
    if fragment is not None:
        refuse(name, value, "a '#' starts a fragment, which is never sent (percent-encode it as %23)")
    if "@" in authority:
        refuse(name, value, "credentials in the URL (user:password@) are not supported")
    if not authority:
        refuse(name, value, "it has no host")
    v6 = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\](?::([0-9]+))?", authority)
    if v6:
        host, port = v6.group(1), v6.group(2)
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            refuse(name, value, f"'[{host}]' is not an IPv6 address")
    else:
        host, _, port = authority.partition(":") if authority.count(":") == 1 else (authority, "", None)
        if port == "":
            refuse(name, value, "it has a ':' but no port after it")
        if not HOST_NAME.fullmatch(host):
            refuse(name, value, f"'{authority}' is not a host name or address with an optional :PORT")
    if port is not None and not (port.isdigit() and 1 <= int(port) <= 65535):
        refuse(name, value, f"the port '{port}' is not a number from 1 to 65535")
    at = first_bad_target_byte(target)
    if at is not None:
        c = target[at]
        why = "a '%' that does not start an escape such as %20 (write a literal % as %25)" if c == "%" else \
            f"'{c}' is not allowed in a path or query by RFC 3986 (percent-encode it)"
        refuse(name, value, f"{why}, at byte {len(value) - len(target) + at}")
    if not (remote or is_loopback(host)):
        refuse(name, value, f"{host} is not 127.0.0.1, localhost or [::1]; the shards run `shootout load --remote`, "
                            "so set REMOTE=1 to load another machine on purpose")


def first_bad_target_byte(target):
    """Where a path and query stop being RFC 3986's (None: nowhere)."""
    i = 0
    while i < len(target):
        if target[i] == "%":
            if not re.fullmatch(r"[0-9A-Fa-f]{2}", target[i + 1:i + 3]):
                return i
            i += 3
        elif TARGET_CHAR.fullmatch(target[i]):
            i += 1
        else:
            return i
    return None


def is_loopback(host):
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def seconds(name, value, minimum_exclusive):
    m = DURATION.fullmatch(value)
    if value.startswith("-"):
        refuse(name, value, "it is negative")
    if not m:
        refuse(name, value, "it is not a duration (units us, ms, s, m or min, h; a bare number is seconds)")
    secs = float(m.group(1)) if m.group(1) is not None else float(m.group(2)) * DURATION_UNITS[m.group(3)]
    if secs > MAX_DURATION_S:
        refuse(name, value, "it is longer than the 30-day limit")
    if minimum_exclusive and secs <= 0:
        refuse(name, value, "it is zero: nothing would be measured")
    return secs


def rate(value):
    m = RATE.fullmatch(value)
    if value.startswith("-"):
        refuse("RATE", value, "it is negative")
    if not m:
        refuse("RATE", value, "it is not a positive number")
    r = float(m.group(1)) * {"": 1, "k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6}[m.group(2)]
    if r <= 0:
        refuse("RATE", value, "it is zero")
    if r > MAX_RATE:
        refuse("RATE", value, "it is above what shootout's engine accepts")
    return r


def cpu(value):
    m = CPU.fullmatch(value)
    if not m:
        refuse("SHARD_CPU", value, "it is not a CPU quantity")
    milli = float(m.group(1)) * 1000 if m.group(1) is not None else int(m.group(2))
    if milli < 1:
        refuse("SHARD_CPU", value, "it is zero")


def settings(env, shipped):
    """The checked values to write: name -> value (absent: keep the shipped one)."""
    errors, out = [], {}
    remote = env.get("REMOTE", "")
    if remote not in ("", "0", "1"):
        errors.append(f"REMOTE={shown(remote)}: expected {SETTINGS['REMOTE']}")
    for name in SETTINGS:
        if name == "REMOTE":
            continue
        value = env.get(name)
        try:
            if value is None and name == "TARGET_URL":
                raise Refused(f"TARGET_URL is not set; expected {SETTINGS[name]} (the shipped "
                              f"{shipped['TARGET_URL']} is a placeholder)")
            if value is None:
                continue
            if value == "":
                raise Refused(f"{name} is set but empty; expected {SETTINGS[name]}, or unset it to keep the "
                              f"shipped {shipped[name]}" if name != "TARGET_URL" else
                              f"TARGET_URL is set but empty; expected {SETTINGS[name]}")
            if name.endswith("_IMAGE"):
                if not IMAGE.fullmatch(value):
                    refuse(name, value, "it is not an image reference")
            elif name == "TARGET_URL":
                check_url(value, remote == "1")
            elif name == "RATE":
                rate(value)
            elif name in ("DURATION", "WARMUP"):
                seconds(name, value, name == "DURATION")
            elif name == "SHARD_CPU":
                cpu(value)
            out[name] = value
        except Refused as e:
            errors.append(str(e))
    if not errors:
        n = int(shipped["SHARDS"])
        r = rate(out.get("RATE", shipped["RATE"]))
        d = seconds("DURATION", out.get("DURATION", shipped["DURATION"]), True)
        if r * d / n < 1:
            errors.append(f"RATE={shown(out.get('RATE', shipped['RATE']))} with DURATION="
                          f"{shown(out.get('DURATION', shipped['DURATION']))}: each of the {n} shards would be "
                          f"due fewer than one request (RATE x DURATION / {n} = {r * d / n:g}); expected at least "
                          "one request per shard")
    if errors:
        raise Refused("\n".join(errors))
    return out


def quote(value):
    """A YAML double-quoted scalar holding exactly `value`."""
    return json.dumps(value)


def replace_once(text, file, pattern, repl):
    new, n = re.subn(pattern, repl, text, flags=re.M)
    if n != 1:
        raise Broken(f"{file}: expected one line matching {pattern!r}, found {n}: the template changed")
    return new


def env_line(name):
    # `- name: NAME` and, on the next line, its `value: "..."`.
    return rf"^(\s*- name: {name}\n\s*value: )\"[^\"\n]*\"$"


def shipped_values(shards):
    vals = {}
    for name in ("SHARDS", "TARGET_URL", "RATE", "DURATION", "WARMUP"):
        m = re.search(env_line(name), shards, flags=re.M)
        if not m:
            raise Broken(f"shards-job.yaml: no env value for {name}: the template changed")
        vals[name] = json.loads(m.group(0)[len(m.group(1)):])
    vals["SHOOTOUT_IMAGE"], vals["SERVER_IMAGE"], vals["SHARD_CPU"] = "shootout:latest", "go-nethttp:latest", "2"
    return vals


def render(values, texts):
    out = dict(texts)
    if "SHOOTOUT_IMAGE" in values:
        for f in ("shards-job.yaml", "merge-job.yaml"):
            out[f] = replace_once(out[f], f, r"^(\s*image: )shootout:latest$",
                                  lambda m: m.group(1) + quote(values["SHOOTOUT_IMAGE"]))
    if "SERVER_IMAGE" in values:
        f = "contestant-go-nethttp.yaml"
        out[f] = replace_once(out[f], f, r"^(\s*image: )go-nethttp:latest$",
                              lambda m: m.group(1) + quote(values["SERVER_IMAGE"]))
    f = "shards-job.yaml"
    for name in ("TARGET_URL", "RATE", "DURATION", "WARMUP"):
        if name in values:
            # Kubernetes expands $(VAR) in an env value and reads $$ as $.
            out[f] = replace_once(out[f], f, env_line(name),
                                  lambda m, v=values[name]: m.group(1) + quote(v.replace("$", "$$")))
    if "SHARD_CPU" in values:
        out[f] = replace_once(out[f], f, r"^(\s*requests:\n\s*cpu: )\"2\"$",
                              lambda m: m.group(1) + quote(values["SHARD_CPU"]))
    return out


def check(texts):
    """N agrees in its three places; every pod uses the host's network and pulls IfNotPresent."""
    s = texts["shards-job.yaml"]
    completions = re.findall(r"^  completions: *(\S+)$", s, flags=re.M)
    parallelism = re.findall(r"^  parallelism: *(\S+)$", s, flags=re.M)
    shards = shipped_values(s)["SHARDS"]
    if not completions or completions != parallelism or completions[0] != shards:
        raise Broken(f"N differs: completions {completions}, parallelism {parallelism}, SHARDS {shards}")
    for f in ("shards-job.yaml", "merge-job.yaml", "contestant-go-nethttp.yaml"):
        if not re.search(r"^      hostNetwork: true$", texts[f], flags=re.M):
            raise Broken(f"{f}: the pod does not use hostNetwork")
        if "imagePullPolicy: IfNotPresent" not in texts[f]:
            raise Broken(f"{f}: no imagePullPolicy: IfNotPresent")
    return completions[0]


def write(out_dir, texts):
    """Writes every file into a temporary folder beside out_dir, then moves it into place."""
    out_dir = os.path.abspath(out_dir)
    if os.path.realpath(out_dir) == os.path.realpath(HERE):
        raise Refused(f"OUTDIR {out_dir} is deploy/kubernetes itself: render into another folder")
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise Refused(f"OUTDIR {out_dir} exists and is not a folder")
    parent = os.path.dirname(out_dir)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(out_dir)}.render-", dir=parent)
    try:
        for f in ("run.sh", "logs-pvc.yaml"):
            shutil.copy2(os.path.join(HERE, f), os.path.join(tmp, f))
        for f, text in texts.items():
            with open(os.path.join(tmp, f), "w", encoding="utf-8") as fh:
                fh.write(text)
        if not os.path.isdir(out_dir):
            os.rename(tmp, out_dir)
            os.chmod(out_dir, 0o777 & ~current_umask())
            return
        # An existing folder (e.g. mktemp -d's): each complete file replaces its old copy.
        for f in sorted(os.listdir(tmp)):
            os.replace(os.path.join(tmp, f), os.path.join(out_dir, f))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def main(argv):
    if len(argv) != 2 or not argv[1] or argv[1].startswith("-"):
        print(f"usage: {PROG} OUTDIR (values from the environment: {', '.join(SETTINGS)})", file=sys.stderr)
        return 2
    names = ("shards-job.yaml", "merge-job.yaml", "contestant-go-nethttp.yaml")
    try:
        texts = {}
        for f in names:
            with open(os.path.join(HERE, f), encoding="utf-8") as fh:
                texts[f] = fh.read()
        values = settings(os.environ, shipped_values(texts["shards-job.yaml"]))
        rendered = render(values, texts)
        n = check(rendered)
        write(argv[1], rendered)
    except Refused as e:
        for line in str(e).splitlines():
            print(f"{PROG}: {line}", file=sys.stderr)
        return 2
    except (Broken, OSError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    for f in names:
        for line in difflib.ndiff(texts[f].splitlines(), rendered[f].splitlines()):
            if line.startswith("+ "):
                print(f"{f}: {line[2:]}")
    print(f"N = {n} in completions, parallelism and SHARDS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
