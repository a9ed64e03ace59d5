#!/usr/bin/env python3
"""The engine's WebSocket echo rate and CPU per message against gorilla's.

Issue #48 asks that `shootout load ws://` echo within 15% of an independent
client's rate on the same server, at no more CPU per message. This script
measures both as same-run ratios: go-nethttp (targets/go-nethttp, built
here) on CPU 0 with GOMAXPROCS=1, each client on CPU 1, 64 connections,
64-byte text messages, rounds interleaved in a random order per round
(Abedi and Brecht's randomized interleaved trials), and the median of the
rounds for each client. Each client's CPU is its own (getrusage of the
child process, user + system), so CPU per message is the same figure for
both. Every run must end with every echo checked and no error, or the
script stops: a failed run is never a number.

    bench/ws_ratio.py [--rounds 7] [--seconds 5] [--connections 64] [--server-quota 0.3]

On two cores both clients saturate their one CPU before go-nethttp does, so
the plain run compares the generators' own speed (client-bound).
`--server-quota F` caps the server at F of a CPU (a cgroup's CFS quota,
v1 or v2, made and removed here), so both clients have headroom and the
rates must agree: that run checks that the engine counts what the server
echoed (server-bound). Run both.

Needs `cargo build --release` (target/release/shootout) and
`bench/wsclient/build.sh` (bench/wsclient/bin/wsclient). Traffic goes only
to 127.0.0.1. Prints one JSON object to stdout; progress to stderr.
"""

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOOTOUT = os.path.join(ROOT, "target", "release", "shootout")
WSCLIENT = os.path.join(ROOT, "bench", "wsclient", "bin", "wsclient")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_child(argv):
    """Runs argv to its end and returns its stdout. The caller reads the
    child's CPU as the change in this process's reaped-children times."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=120)
    if p.returncode != 0:
        sys.exit(f"{argv[0]} exited {p.returncode}: {err.decode()[-2000:]}")
    return out


def children_cpu():
    r = os.times()
    return r.children_user + r.children_system


def engine(url, c, secs):
    before = children_cpu()
    out = run_child(["taskset", "-c", "1", SHOOTOUT, "load", url, "-c", str(c),
                     "-z", f"{secs}s", "--message-size", "64", "-t", "1", "-o", "json"])
    cpu = children_cpu() - before
    d = json.loads(out)
    errs = sum(d["errors"].values())
    if errs or d["requests"]["completed"] == 0:
        sys.exit(f"engine run failed: errors {d['errors']}")
    n = d["requests"]["completed"]
    return {"rate": n / d["duration_s"], "cpu_us": cpu / n * 1e6, "p99_ms": d["latency_ms"]["p99"]}


def gorilla(url, c, secs):
    before = children_cpu()
    out = run_child(["taskset", "-c", "1", WSCLIENT, "-url", url, "-c", str(c),
                     "-d", f"{secs}s", "-size", "64"])
    cpu = children_cpu() - before
    d = json.loads(out)
    if d["mismatches"] or d["errors"] or d["messages"] == 0:
        sys.exit(f"wsclient run failed: {d}")
    n = d["messages"]
    return {"rate": d["messages_per_sec"], "cpu_us": cpu / n * 1e6,
            "p99_ms": d["latency_us"]["p99"] / 1000}


class Quota:
    """A cgroup capping one process at `share` of a CPU (CFS quota)."""

    def __init__(self, share):
        name = f"ws-ratio-{os.getpid()}"
        v2 = os.path.exists("/sys/fs/cgroup/cgroup.controllers")
        self.dir = f"/sys/fs/cgroup/{name}" if v2 else f"/sys/fs/cgroup/cpu/{name}"
        os.mkdir(self.dir)
        period = 100_000
        if v2:
            self._write("cpu.max", f"{int(share * period)} {period}")
        else:
            self._write("cpu.cfs_period_us", str(period))
            self._write("cpu.cfs_quota_us", str(int(share * period)))

    def _write(self, name, text):
        with open(os.path.join(self.dir, name), "w") as f:
            f.write(text)

    def add(self, pid):
        self._write("cgroup.procs", str(pid))

    def remove(self):
        os.rmdir(self.dir)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--server-quota", type=float, default=None,
                    help="cap the server at this share of a CPU (e.g. 0.3)")
    a = ap.parse_args()
    if a.server_quota is not None and not 0.01 <= a.server_quota <= 1:
        sys.exit(f"--server-quota {a.server_quota}: expected a share of a CPU from 0.01 to 1")
    for path in (SHOOTOUT, WSCLIENT):
        if not os.access(path, os.X_OK):
            sys.exit(f"missing {path}: build it first (see this script's docstring)")
    tmp = tempfile.mkdtemp(prefix="ws-ratio-")
    server_bin = os.path.join(tmp, "go-nethttp")
    subprocess.run(["go", "build", "-o", server_bin, "."], check=True,
                   cwd=os.path.join(ROOT, "targets", "go-nethttp"))
    port = free_port()
    env = dict(os.environ, PORT=str(port), GOMAXPROCS="1")
    server = subprocess.Popen(["taskset", "-c", "0", server_bin], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    quota = None
    try:
        if a.server_quota is not None:
            quota = Quota(a.server_quota)
            quota.add(server.pid)
        deadline = time.monotonic() + 10
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/plaintext", timeout=1).read()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    sys.exit("go-nethttp did not answer /plaintext within 10 s")
                time.sleep(0.1)
        url = f"ws://127.0.0.1:{port}/ws"
        # One short warm-up of each, not counted.
        engine(url, a.connections, 2)
        gorilla(url, a.connections, 2)
        runs = {"engine": [], "gorilla": []}
        for r in range(a.rounds):
            order = ["engine", "gorilla"]
            random.shuffle(order)
            for who in order:
                f = engine if who == "engine" else gorilla
                runs[who].append(f(url, a.connections, a.seconds))
                m = runs[who][-1]
                print(f"round {r + 1}/{a.rounds} {who:8} {m['rate']:9.0f} msg/s "
                      f"{m['cpu_us']:6.2f} µs/msg", file=sys.stderr)
    finally:
        server.terminate()
        server.wait()
        if quota is not None:
            quota.remove()

    def med(who, key):
        return statistics.median(x[key] for x in runs[who])

    out = {
        "rounds": a.rounds, "seconds": a.seconds, "connections": a.connections,
        "message_size": 64, "server_quota": a.server_quota,
        "engine": {k: med("engine", k) for k in ("rate", "cpu_us", "p99_ms")},
        "gorilla": {k: med("gorilla", k) for k in ("rate", "cpu_us", "p99_ms")},
        "loadavg_at_end": os.getloadavg(),
    }
    out["rate_ratio"] = out["engine"]["rate"] / out["gorilla"]["rate"]
    out["cpu_ratio"] = out["engine"]["cpu_us"] / out["gorilla"]["cpu_us"]
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
