#!/usr/bin/env python3
"""The independent check of between-start noise (issue #46): each target
started N times in a shuffled, interleaved order (seeded), its server on
CPU 0 and wrk on CPU 1, warmed W s and measured M s with wrk (one thread,
64 keep-alive connections) on one route; prints, per target, the mean
req/s and the standard deviation of ln(req/s) between starts, the figure
the study's own between-starts line gives. Talks to 127.0.0.1 only; every
server is stopped (SIGTERM to its group, SIGKILL after 5 s).

Usage: bench/noise_check.py [--starts N] [--warm S] [--measure S]
                            [--route /json] [--seed K] TARGET...
Needs wrk (apt-get install wrk) and built targets (shootout build)."""
import argparse, math, os, random, re, signal, socket, subprocess, sys, tempfile, time, tomllib, urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(target, port, tmp):
    manifest = tomllib.loads((ROOT / "targets" / target / "target.toml").read_text())
    env = dict(os.environ, PORT=str(port), HOST="127.0.0.1", SERVER_CPUS="1", TMPDIR=tmp)
    log = open(Path(tmp) / f"{target}.log", "w")
    p = subprocess.Popen(["taskset", "-c", "0", "sh", "-c", manifest["run"]], cwd=ROOT / "targets" / target,
                         env=env, stdout=log, stderr=log, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        if p.poll() is not None:
            raise SystemExit(f"{target} exited with {p.returncode} (log {log.name})")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{manifest.get('ready', '/plaintext')}", timeout=1) as r:
                if r.status == 200:
                    return p
        except Exception:
            time.sleep(0.1)
    stop(p)
    raise SystemExit(f"{target} not ready within 120 s")


def stop(p):
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    except ProcessLookupError:
        pass


def wrk(port, route, secs):
    out = subprocess.run(["taskset", "-c", "1", "wrk", "-t1", "-c64", f"-d{secs}s", "--timeout", "5s",
                          f"http://127.0.0.1:{port}{route}"], capture_output=True, text=True, timeout=secs + 30).stdout
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if not m:
        raise SystemExit(f"wrk said no rate:\n{out}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--starts", type=int, default=4)
    ap.add_argument("--warm", type=int, default=3)
    ap.add_argument("--measure", type=int, default=5)
    ap.add_argument("--route", default="/json")
    ap.add_argument("--seed", type=int, default=46)
    ap.add_argument("targets", nargs="+")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    values = {t: [] for t in a.targets}
    with tempfile.TemporaryDirectory(prefix="noise-check-") as tmp:
        for rep in range(a.starts):
            order = list(a.targets)
            rng.shuffle(order)
            for t in order:
                port = free_port()
                p = start(t, port, tmp)
                try:
                    wrk(port, a.route, a.warm)
                    values[t].append(wrk(port, a.route, a.measure))
                finally:
                    stop(p)
                print(f"start {rep + 1}/{a.starts} {t}: {values[t][-1]:.0f} req/s", file=sys.stderr)
    print(f"target\tmean req/s\tsd ln between starts\tstarts")
    for t, v in values.items():
        logs = [math.log(x) for x in v]
        m = sum(logs) / len(logs)
        sd = math.sqrt(sum((x - m) ** 2 for x in logs) / (len(logs) - 1)) if len(logs) > 1 else float("nan")
        print(f"{t}\t{sum(v) / len(v):.0f}\t{sd * 100:.1f}%\t{len(v)}")


if __name__ == "__main__":
    main()
