#!/usr/bin/env python3
"""render.sh tried with every value in the README's table "Values render.sh
checks" (check.sh runs this), plus the values a table cannot hold.

A row whose exit is 2 must be refused: render.sh exits 2, its stderr holds
the row's message (the message cell's first code span; `…` stands for
anything), and the OUTDIR it was given (an existing folder with a file in
it) is left exactly as it was, with no temporary folder beside it. A row
whose exit is 0 must render: the YAML is parsed back (PyYAML) and every
value is where it belongs and intact, an env value as Kubernetes will give
it to the shard (its `$(VAR)` expansion applied), N agrees and every pod
uses hostNetwork. With --kubeconfig (a cluster that answers), each rendered
folder also goes through `kubectl apply --dry-run=client -o json`, and the
values kubectl read must be the same.

Usage: rendercheck.py WORKDIR [--kubeconfig PATH]
"""

import concurrent.futures
import json
import os
import re
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
RENDER = os.path.join(HERE, "render.sh")
README = os.path.join(HERE, "README.md")
TABLE = "## Values render.sh checks"
# The base of every row: render.sh needs a TARGET_URL.
BASE = {"TARGET_URL": "http://127.0.0.1:18080/plaintext"}
VARIABLES = ("SHOOTOUT_IMAGE", "SERVER_IMAGE", "TARGET_URL", "RATE", "DURATION", "WARMUP", "SHARD_CPU", "REMOTE")

# Values no markdown table can show: (assignments, exit, message).
EXTRA = [
    ({"TARGET_URL": "http://127.0.0.1:18080/a\nb"}, 2, r"TARGET_URL='http://127.0.0.1:18080/a\nb': '\n' at byte 24"),
    ({"TARGET_URL": "http://127.0.0.1:18080/a b"}, 2, "TARGET_URL='http://127.0.0.1:18080/a b': ' ' at byte 24"),
    ({"RATE": "1000\n"}, 2, r"RATE='1000\n'"),
    ({"SHOOTOUT_IMAGE": "shootout:1\n    command: [rm]"}, 2, r"SHOOTOUT_IMAGE='shootout:1\n    command: [rm]'"),
    ({"DURATION": "5s\ttrue"}, 2, r"DURATION='5s\ttrue'"),
]


def cells(line):
    """A markdown table row's cells; `\\|` is a literal bar."""
    parts = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [p.strip().replace("\\|", "|") for p in parts]


def rows():
    text = open(README, encoding="utf-8").read()
    if TABLE not in text:
        sys.exit(f"rendercheck: {README} has no section {TABLE!r}")
    section = text.split(TABLE, 1)[1].split("\n## ", 1)[0]
    out = []
    for line in section.splitlines():
        if not line.startswith("|") or line.startswith("|---") or "| exit |" in line:
            continue
        given, message, code = cells(line)
        env = {}
        for span in re.findall(r"`([^`]*)`", given):
            name, eq, value = span.partition("=")
            if name not in VARIABLES:
                sys.exit(f"rendercheck: README row {line!r}: {name!r} is not a variable render.sh reads")
            env[name] = value if eq else None  # `NAME` alone: unset
        spans = re.findall(r"`([^`]*)`", message)
        out.append((env, int(code), spans[0] if spans else ""))
    if len(out) < 10:
        sys.exit(f"rendercheck: only {len(out)} rows under {TABLE!r}")
    return out


def matches(want, got):
    pattern = ".*".join(re.escape(p) for p in want.split("…"))
    return re.search(pattern, got, flags=re.S) is not None


def expand(value, defined):
    """Kubernetes' expansion of an env value (third_party/forked/golang/expansion):
    $$ is $, $(NAME) is NAME's value when an earlier variable defines it."""
    out, i = [], 0
    while i < len(value):
        if value[i] == "$" and i + 1 < len(value):
            nxt = value[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "(":
                end = value.find(")", i + 2)
                if end != -1:
                    name = value[i + 2:end]
                    out.append(defined.get(name, f"$({name})"))
                    i = end + 1
                    continue
                out.append("$(")
                i += 2
                continue
            out.append(value[i:i + 2])
            i += 2
            continue
        out.append(value[i])
        i += 1
    return "".join(out)


def pod(doc):
    return doc["spec"]["template"]["spec"]


def container_env(c):
    defined = {}
    for e in c.get("env", []):
        defined[e["name"]] = expand(e["value"], defined)
    return defined


def load(folder):
    docs = {}
    for f in ("shards-job.yaml", "merge-job.yaml", "contestant-go-nethttp.yaml", "logs-pvc.yaml"):
        with open(os.path.join(folder, f), encoding="utf-8") as fh:
            docs[f] = yaml.safe_load(fh)
    return docs


def values_of(docs):
    """What the cluster will be given: name -> value, as render.sh's variables name them."""
    shard = pod(docs["shards-job.yaml"])["containers"][0]
    env = container_env(shard)
    merge = pod(docs["merge-job.yaml"])["containers"][0]
    server = pod(docs["contestant-go-nethttp.yaml"])["containers"][0]
    got = {name: env[name] for name in ("TARGET_URL", "RATE", "DURATION", "WARMUP")}
    got["SHOOTOUT_IMAGE"] = shard["image"]
    got["MERGE_IMAGE"] = merge["image"]
    got["SERVER_IMAGE"] = server["image"]
    got["SHARD_CPU"] = str(shard["resources"]["requests"]["cpu"])
    spec = docs["shards-job.yaml"]["spec"]
    got["N"] = (spec["completions"], spec["parallelism"], int(env["SHARDS"]))
    got["hostNetwork"] = [pod(docs[f]).get("hostNetwork") for f in
                          ("shards-job.yaml", "merge-job.yaml", "contestant-go-nethttp.yaml")]
    return got


def kubectl_values(folder, kubeconfig):
    """The same values as kubectl reads them (client-side dry run against the cluster)."""
    out = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "apply", "--dry-run=client", "-o", "json",
                          "-f", folder], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    if out.returncode != 0:
        raise AssertionError(f"kubectl apply --dry-run=client refused {folder}: {out.stderr.strip()}")
    items = json.loads(out.stdout)
    items = items.get("items", [items])
    by_name = {i["metadata"]["name"]: i for i in items}
    docs = {"shards-job.yaml": by_name["shootout-shards"], "merge-job.yaml": by_name["shootout-merge"],
            "contestant-go-nethttp.yaml": by_name["contestant"]}
    return values_of(docs)


def one(work, i, given, code, message, shipped, kubeconfig):
    """Runs one case; True when it rendered, False when it was refused as it should be."""
    env = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    env.update(BASE)
    env["PYTHON"] = sys.executable  # not a version manager's shim, 0.15 s a start
    for name, value in given.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    out = os.path.join(work, f"case{i}")
    if code != 0:
        os.makedirs(out)
        with open(os.path.join(out, "before"), "w") as fh:
            fh.write("kept\n")
    p = subprocess.run(["bash", RENDER, out], env=env, capture_output=True, text=True, timeout=30)
    if p.returncode != code:
        raise AssertionError(f"exit {p.returncode}, expected {code}; stderr: {p.stderr.strip()}")
    if code != 0:
        if not matches(message, p.stderr):
            raise AssertionError(f"stderr lacks {message!r}: {p.stderr.strip()}")
        left = sorted(os.listdir(out))
        if left != ["before"] or open(os.path.join(out, "before")).read() != "kept\n":
            raise AssertionError(f"OUTDIR changed after a refusal: {left}")
        stray = [f for f in os.listdir(work) if f.startswith(f".case{i}.render-")]
        if stray:
            raise AssertionError(f"temporary folders left beside OUTDIR: {stray}")
        return False
    if message and not matches(message, p.stdout):
        raise AssertionError(f"stdout lacks {message!r}: {p.stdout.strip()}")
    want = dict(shipped)
    for name in ("SHOOTOUT_IMAGE", "SERVER_IMAGE", "TARGET_URL", "RATE", "DURATION", "WARMUP", "SHARD_CPU"):
        if name in env:
            want[name] = env[name]
    want["MERGE_IMAGE"] = want["SHOOTOUT_IMAGE"]
    readers = [("PyYAML", values_of(load(out)))]
    if kubeconfig:
        readers.append(("kubectl", kubectl_values(out, kubeconfig)))
    for reader, got in readers:
        for name, value in want.items():
            if got[name] != value:
                raise AssertionError(f"{reader} reads {name} as {got[name]!r}, not {value!r}")
    return True


def main(argv):
    work = argv[1]
    kubeconfig = argv[3] if len(argv) == 4 and argv[2] == "--kubeconfig" else None
    shipped = values_of(load(HERE))
    cases = [(env, code, msg, f"README row {env}") for env, code, msg in rows()]
    cases += [(env, code, msg, f"extra case {env}") for env, code, msg in EXTRA]
    if len(set(shipped["N"])) != 1 or shipped["hostNetwork"] != [True] * 3:
        print(f"check.sh: the shipped manifests: N {shipped['N']}, hostNetwork {shipped['hostNetwork']}", file=sys.stderr)
        return 1

    def run(i):
        given, code, message, what = cases[i]
        try:
            return one(work, i, given, code, message, shipped, kubeconfig)
        except AssertionError as e:
            return f"{what}: {e}"

    # The cases are independent processes: a few at a time.
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, range(len(cases))))
    failures = [r for r in results if isinstance(r, str)]
    rendered = sum(1 for r in results if r is True)
    for f in failures:
        print(f"check.sh: render.sh, {f}", file=sys.stderr)
    if failures:
        return 1
    print(f"render.sh: {len(cases) - rendered} bad values refused (exit 2, OUTDIR untouched), {rendered} "
          f"renders read back intact by PyYAML{' and kubectl' if kubeconfig else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
