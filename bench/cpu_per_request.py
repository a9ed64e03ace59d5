#!/usr/bin/env python3
"""CPU cost per request of shootout's load generator against wrk and oha.

One nginx worker serves a 13-byte body pinned to one core; each generator in
turn is pinned to another core and loads it with the same c=50 keep-alive load
for the same duration. A generator's CPU time (user + sys, from wait4) divided
by the requests it completed is its cost per request. Rounds interleave the
tools so machine noise hits them alike; the medians and the ratios against wrk
and oha, all from this one run, are printed at the end.

A second shootout row, "expect-body", runs the same load with every response
checked against the body nginx sends (`--expect-body 'Hello, World!'`), so
the cost of checking is measured against the plain row in the same run; the
issue's budget for it is 5% more CPU per request.

Two more rows measure HTTP/1.1 pipelining at depth 16 on the same c=50:
"pipelined" is `shootout load --pipeline 16`, "wrk-pipelined" is wrk with the
classic pipeline.lua script (16 `wrk.format` calls in init, their
concatenation returned for every request), and their ratio is printed.
shootout refills a pipelined connection once half its requests are answered
(its JSON says so in `pipeline_refill_at`); wrk writes 16 once all are.

Two scaling rows, "shootout-t2" and "wrk-t2", run each generator with two
threads allowed on both CPUs (nginx keeps its one worker on CPU 0, so one
generator thread shares that core): their CPU per request beside the
one-thread rows shows what a second thread costs per request, and their
req/s what it adds.

Two io_uring rows, "shootout-uring" and "pipelined-uring", run the plain and
the pipelined load with `--io uring` (io_uring completions: multishot receive
into provided buffers, one io_uring_enter per loop turn) and compare with wrk
and wrk-pipelined like their epoll rows.

With --syscalls, each generator also runs once more (plain and pipelined, 3 s,
not counted in the rounds) under `perf stat` counting the system calls it
enters (the raw_syscalls:sys_enter tracepoint, plus the socket, epoll and
io_uring calls by name), printed per completed request, with the share of its
CPU time spent in user space (the rest is the kernel's).

With --tls the script measures HTTPS/1.1 instead, as its own section: the
same nginx serves TLS (1.3, certificates from `shootout certs`), "https" is
`shootout load --cacert ca.pem https://…`, "wrk-https" is wrk on the same
URL, both with keep-alive; the CPU-per-request and req/s ratios of shootout
to wrk are printed (the issue's budgets: CPU at most wrk's, req/s within
15% of wrk's).

With --http2 it measures HTTP/2 over TLS instead: nginx offers h2 through
ALPN (`listen ... ssl http2`), "h2" is `shootout load --http2 --streams 16
--cacert ca.pem https://…` and "h2load" is `h2load -m 16` (Debian's
nghttp2-client) on the same URL, same connections and duration; the ratios
of shootout to h2load are printed (budgets: CPU at most h2load's, req/s
within 15% of h2load's).

With --baseline PATH, a second shootout binary (an older build) runs every
shootout row above again as "base-<row>", right after its row in the same
interleaved rounds (same pinning, same nginx, same duration; apart only in
the round whose rotation starts between them), so issue #23's "nothing else
gets slower" is judged within one run. A section "against the baseline"
prints each row's CPU per request and req/s, current over baseline, and a
verdict read from the median of the per-round ratios (a pair runs back to
back, so this cancels the machine's drift between rounds): "at least as
good" when it is at most 1.0, else "slower by N%" (the verdicts do not
change the exit status). A row
that uses a flag the baseline's `load --help` does not list (e.g. `--io`,
before io_uring) is skipped, and the section says which and why. Not with
--tls or --http2.

With --only ROWS (comma-separated row names) only those rows run, and
their base-<row> with --baseline: more rounds of the rows in question in
the same time, e.g. `--only shootout,expect-body,shootout-t2 --baseline
PATH --rounds 9`.

Usage: bench/cpu_per_request.py [--rounds 3] [--duration 10] [--connections 50] [--syscalls] [--baseline PATH]
       [--only ROWS] [--tls | --http2]
"""

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BODY = "Hello, World!"
NGINX_CONF = """worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  keepalive_requests 100000000;
  server {{
    listen 127.0.0.1:{port};
    location / {{ default_type text/plain; return 200 "{body}"; }}
  }}
}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The user-space share of the last measured child's CPU time.
LAST_USER_SHARE = [0.0]
# Set while learning a row's command line (row_argv): run_measured then
# raises Argv with the command instead of running it.
DRY_RUN = [False]


class Argv(Exception):
    """The command a row would run, raised by run_measured under DRY_RUN."""


def run_measured(cmd: list) -> tuple:
    """Runs cmd; returns (stdout, cpu seconds of the child)."""
    if DRY_RUN[0]:
        raise Argv(cmd)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited with {proc.returncode}")
    cpu = usage.ru_utime + usage.ru_stime
    LAST_USER_SHARE[0] = usage.ru_utime / cpu if cpu else 0.0
    return out, cpu


PIPELINE = 16
# wrk's classic pipelining script, at depth PIPELINE: every "request" wrk
# writes is PIPELINE requests back to back, and it counts each response.
WRK_PIPELINE_LUA = """init = function(args)
  local r = {{}}
  for i = 1, {depth} do
    r[i] = wrk.format(nil, nil)
  end
  req = table.concat(r)
end

request = function()
  return req
end
"""


def wrk(url, a, cpu, extra=(), threads=1, prefix=()):
    out, cpu_s = run_measured([*prefix, "taskset", "-c", cpu, "wrk", f"-t{threads}", f"-c{a.connections}",
                               f"-d{a.duration}s", *extra, url])
    return int(re.search(r"(\d+) requests in", out).group(1)), cpu_s


def wrk_pipelined(url, a, cpu):
    """wrk with pipeline.lua at depth PIPELINE."""
    return wrk(url, a, cpu, ["-s", str(a.lua)])


def oha(url, a, cpu):
    out, cpu_s = run_measured(["taskset", "-c", cpu, "oha", "--no-tui", "--output-format", "json",
                               "-c", str(a.connections), "-z", f"{a.duration}s", url])
    return sum(json.loads(out)["statusCodeDistribution"].values()), cpu_s


def shootout(url, a, cpu, extra=(), threads=1, prefix=()):
    out, cpu_s = run_measured([*prefix, str(a.shootout), "load", "--quiet", "-o", "json", "-t", str(threads),
                               "--cpus", cpu, "-c", str(a.connections), "-z", f"{a.duration}s", *extra, url])
    report = json.loads(out)
    # Read defensively: an older build (--baseline) may lack fields. Every
    # build so far has requests.completed; "ok" (the 2xx/3xx among them) is
    # the fall-back, which is the same count against nginx's 200s.
    errors = report.get("errors") or {}
    if errors.get("mismatch", 0):
        raise RuntimeError(f"{errors['mismatch']} mismatches: {report.get('first_mismatch')}")
    requests = report.get("requests") or {}
    completed = requests.get("completed", requests.get("ok"))
    if completed is None:
        raise RuntimeError(f"{a.shootout}: no requests.completed (nor requests.ok) in its JSON output")
    return completed, cpu_s


def shootout_expect(url, a, cpu):
    """The plain load, with every response checked against nginx's exact body."""
    return shootout(url, a, cpu, ["--expect-status", "200", "--expect-body", BODY])


def shootout_pipelined(url, a, cpu):
    """The plain load with PIPELINE requests in flight on each connection."""
    return shootout(url, a, cpu, ["--pipeline", str(PIPELINE)])


def shootout_uring(url, a, cpu):
    """The plain load over io_uring."""
    return shootout(url, a, cpu, ["--io", "uring"])


def pipelined_uring(url, a, cpu):
    """The pipelined load over io_uring."""
    return shootout(url, a, cpu, ["--io", "uring", "--pipeline", str(PIPELINE)])


def shootout_t2(url, a, cpu):
    """The plain load on two threads, allowed on both CPUs (nginx's included)."""
    return shootout(url, a, "0,1", threads=2)


def wrk_t2(url, a, cpu):
    """wrk on two threads, allowed on both CPUs (nginx's included)."""
    return wrk(url, a, "0,1", threads=2)


# The system calls counted by name beside the total (socket I/O and epoll,
# under the names each tool's libc uses).
SYSCALLS = ["sendto", "recvfrom", "read", "write", "epoll_wait", "epoll_pwait", "epoll_pwait2", "epoll_ctl",
            "io_uring_enter"]


def count_syscalls(url, a, tool, extra):
    """Runs `tool` once for 3 s under perf stat; returns (requests, {syscall: count})."""
    events = ["raw_syscalls:sys_enter"] + [f"syscalls:sys_enter_{n}" for n in SYSCALLS]
    out_file = a.tmp / "perf.csv"
    prefix = ["perf", "stat", "-x", ",", "-o", str(out_file), "-e", ",".join(events), "--"]
    quick = argparse.Namespace(**{**vars(a), "duration": 3})
    n, _ = tool(url, quick, "1", extra=extra, prefix=prefix)
    counts = {}
    for line in out_file.read_text().splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[0].strip().isdigit():
            name = fields[2].split(":")[-1].replace("sys_enter_", "").replace("sys_enter", "all")
            counts[name] = int(fields[0])
    return n, counts


def print_syscalls(url, a):
    """System calls per completed request, each generator plain and pipelined."""
    runs = [("shootout", shootout, ()), ("shootout-uring", shootout, ("--io", "uring")), ("wrk", wrk, ()),
            ("pipelined", shootout, ("--pipeline", str(PIPELINE))),
            ("pipelined-uring", shootout, ("--io", "uring", "--pipeline", str(PIPELINE))),
            ("wrk-pipelined", wrk, ("-s", str(a.lua)))]
    print(f"\nSystem calls per request (perf stat, one 3 s run each, c={a.connections})\n")
    print("| generator | user CPU | all | " + " | ".join(SYSCALLS) + " |")
    print("|---|---:|---:|" + "---:|" * len(SYSCALLS))
    for name, tool, extra in runs:
        n, counts = count_syscalls(url, a, tool, extra)
        cells = [f"{counts.get(s, 0) / n:.3f}" if counts.get(s) else "" for s in ["all"] + SYSCALLS]
        print(f"| {name} | {LAST_USER_SHARE[0]:.0%} | " + " | ".join(cells) + " |")


NGINX_TLS_CONF = """worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  keepalive_requests 100000000;
  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {dir}/certs/server.pem;
    ssl_certificate_key {dir}/certs/server.key;
    ssl_protocols TLSv1.3;
    location / {{ default_type text/plain; return 200 "{body}"; }}
  }}
}}
"""


def shootout_https(url, a, cpu):
    """The plain load over TLS, verified against the throw-away CA."""
    return shootout(url, a, cpu, ["--cacert", str(a.tls_dir / "certs" / "ca.pem")])


STREAMS = 16


def shootout_h2(url, a, cpu):
    """HTTP/2 through ALPN, STREAMS streams per connection, verified."""
    return shootout(url, a, cpu, ["--http2", "--streams", str(STREAMS),
                                  "--cacert", str(a.tls_dir / "certs" / "ca.pem")])


def h2load(url, a, cpu):
    out, cpu_s = run_measured(["taskset", "-c", cpu, "h2load", "-t1", f"-c{a.connections}",
                               f"-m{STREAMS}", f"-D{a.duration}", url])
    return int(re.search(r"(\d+) succeeded", out).group(1)), cpu_s


def tls_main(a) -> int:
    """The --tls (or --http2) section: shootout and wrk over HTTPS/1.1 (or
    h2load over HTTP/2), interleaved rounds."""
    if a.http2:
        tools = {"h2": shootout_h2, "h2load": h2load}
    else:
        tools = {"https": shootout_https, "wrk-https": wrk}
    ours, ref = list(tools)
    tmp = Path(tempfile.mkdtemp(prefix="shootout-bench-tls-"))
    a.tls_dir = tmp
    subprocess.run([str(a.shootout), "certs", str(tmp / "certs")], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = free_port()
    conf = NGINX_TLS_CONF.format(dir=tmp, port=port, body=BODY)
    if a.http2:
        conf = conf.replace(" ssl;", " ssl http2;")
    (tmp / "nginx.conf").write_text(conf)
    nginx = subprocess.Popen(["taskset", "-c", "0", "nginx", "-c", str(tmp / "nginx.conf"), "-p", str(tmp)])
    cost = {t: [] for t in tools}
    rate = {t: [] for t in tools}
    try:
        time.sleep(0.5)
        url = f"https://127.0.0.1:{port}/"
        for r in range(a.rounds):
            order = list(tools)[r % len(tools):] + list(tools)[:r % len(tools)]
            for name in order:
                n, cpu_s = tools[name](url, a, "1")
                cost[name].append(cpu_s * 1e6 / n)
                rate[name].append(n / a.duration)
                print(f"round {r + 1} {name:9} {n:>9} requests  {cpu_s:6.2f} CPU-s  "
                      f"{cost[name][-1]:5.2f} µs/request", file=sys.stderr)
    finally:
        nginx.terminate()
        nginx.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    med = {t: statistics.median(v) for t, v in cost.items()}
    rps = {t: statistics.median(v) for t, v in rate.items()}
    what = f"HTTP/2 ({STREAMS} streams per connection)" if a.http2 else "HTTPS/1.1"
    print(f"\n{what} over TLS 1.3, CPU per request, median of {a.rounds} rounds of {a.duration} s, "
          f"c={a.connections}, keep-alive, nginx on CPU 0, generator on CPU 1\n")
    print(f"| generator | µs CPU / request | req/s | CPU vs {ref} | req/s vs {ref} |")
    print("|---|---:|---:|---:|---:|")
    for t in tools:
        print(f"| {t} | {med[t]:.2f} | {rps[t]:.0f} | {med[t] / med[ref]:.2f}× | "
              f"{rps[t] / rps[ref]:.2f}× |")
    cpu_ratio = med[ours] / med[ref]
    rps_ratio = rps[ours] / rps[ref]
    print(f"\n{ours} / {ref}: CPU {cpu_ratio:.2f} ({'within' if cpu_ratio <= 1.0 else 'ABOVE'} the 1.0× budget), "
          f"req/s {rps_ratio:.2f} ({'within' if abs(rps_ratio - 1) <= 0.15 else 'OUTSIDE'} 15%)")
    return 0 if cpu_ratio <= 1.0 and abs(rps_ratio - 1) <= 0.15 else 1


def row_argv(row, url, a) -> list:
    """The command `row` would run, learnt without running it."""
    DRY_RUN[0] = True
    try:
        row(url, a, "1")
    except Argv as e:
        return e.args[0]
    finally:
        DRY_RUN[0] = False
    raise RuntimeError(f"{row.__name__} ran no command")


def load_flags(binary: Path) -> set:
    """The flags (short and long) that `binary load --help` lists."""
    out = subprocess.run([str(binary), "load", "--help"], capture_output=True, text=True, timeout=30,
                         check=True).stdout
    flags = set()
    # clap's option lines: "  -c, --connections <N>  ..." or "      --pipeline <N>  ...".
    for line in out.splitlines():
        m = re.match(r"\s{1,8}(?:(-[A-Za-z0-9]),\s*)?(--[A-Za-z0-9][\w-]*)", line)
        if m:
            flags.update(f for f in m.groups() if f)
    return flags


def on_baseline(row):
    """`row` run by the --baseline binary instead of --shootout."""
    def base(url, a, cpu):
        return row(url, argparse.Namespace(**{**vars(a), "shootout": a.baseline}), cpu)
    base.__name__ = f"base_{row.__name__}"
    return base


def add_baseline(tools: dict, url, a) -> list:
    """Adds "base-<row>" after every shootout row of `tools` whose flags the
    baseline accepts; returns the (row, reason) pairs of those it cannot run."""
    accepted = load_flags(a.baseline)
    rows, skipped = {}, []
    for name, row in tools.items():
        rows[name] = row
        argv = row_argv(row, url, a)
        if str(a.shootout) not in argv:
            continue  # not a shootout row
        flags = [t for t in argv[argv.index(str(a.shootout)) + 1:] if t.startswith("-")]
        missing = [f for f in flags if f not in accepted]
        if missing:
            skipped.append((name, f"its `load --help` lists no {', '.join(missing)}"))
        else:
            rows[f"base-{name}"] = on_baseline(row)
    tools.clear()
    tools.update(rows)
    return skipped


def print_baseline(tools: dict, cost: dict, rps: dict, skipped: list, a):
    """The "against the baseline" section: every base-<row> beside its row.

    Each base-<row> runs right after its row in every round, so the two see
    the same machine; the verdict reads the median of the per-round ratios,
    which cancels what drifts between rounds (on this shared machine one
    row's rounds range over 1.5x), beside the ratio of the two medians."""
    pairs = [t for t in tools if f"base-{t}" in tools]
    print(f"\nAgainst the baseline ({a.baseline}), same rounds: current / baseline\n")
    print("| row | µs CPU / request | baseline | ratio of medians | median of round ratios | req/s | baseline "
          "| req/s current / baseline | verdict |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    good = 0
    for t in pairs:
        b = f"base-{t}"
        cur, base = statistics.median(cost[t]), statistics.median(cost[b])
        paired = statistics.median(x / y for x, y in zip(cost[t], cost[b]))
        good += paired <= 1.0
        verdict = "at least as good" if paired <= 1.0 else f"slower by {(paired - 1) * 100:.1f}%"
        print(f"| {t} | {cur:.2f} | {base:.2f} | {cur / base:.3f}× | {paired:.3f}× | {rps[t]:.0f} | {rps[b]:.0f} | "
              f"{rps[t] / rps[b]:.3f}× | {verdict} |")
    print(f"\n{good} of {len(pairs)} rows at least as good as the baseline (median of round ratios, CPU per request)")
    for name, why in skipped:
        print(f"skipped {name}: the baseline cannot run it ({why})")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--duration", type=int, default=10)
    p.add_argument("--connections", type=int, default=50)
    p.add_argument("--shootout", type=Path, default=ROOT / "target/release/shootout")
    p.add_argument("--syscalls", action="store_true", help="also count system calls per request (needs perf)")
    p.add_argument("--baseline", type=Path, metavar="PATH",
                   help="an older shootout binary: its base-<row> beside every shootout row, in the same rounds "
                   "(issue #23: nothing slower than before)")
    p.add_argument("--only", metavar="ROWS",
                   help="run only these rows (comma-separated, e.g. shootout,expect-body); with --baseline "
                   "their base-<row> too; budgets print where both their rows ran")
    p.add_argument("--tls", action="store_true", help="measure HTTPS/1.1 against wrk instead")
    p.add_argument("--http2", action="store_true", help="measure HTTP/2 over TLS against h2load instead")
    a = p.parse_args()
    if os.cpu_count() < 2:
        sys.exit("needs at least 2 CPUs: one for nginx, one for the generators")
    needed = ("nginx", "wrk", "taskset") + (("perf",) if a.syscalls else ()) + (("h2load",) if a.http2 else ())
    missing = [t for t in needed if not shutil.which(t)]
    if missing:
        sys.exit(f"missing {', '.join(missing)}: apt-get install -y nginx wrk util-linux nghttp2-client")
    if not a.shootout.exists():
        sys.exit(f"{a.shootout} not found: run cargo build --release first")
    if a.baseline and not a.baseline.exists():
        sys.exit(f"--baseline {a.baseline} not found")
    if a.baseline and (a.tls or a.http2):
        sys.exit("--baseline compares the default section's rows only, not --tls or --http2")
    if a.tls or a.http2:
        return tls_main(a)
    tools = {"shootout": shootout, "expect-body": shootout_expect, "wrk": wrk,
             "pipelined": shootout_pipelined, "wrk-pipelined": wrk_pipelined,
             "shootout-uring": shootout_uring, "pipelined-uring": pipelined_uring,
             "shootout-t2": shootout_t2, "wrk-t2": wrk_t2}
    if shutil.which("oha"):
        tools["oha"] = oha
    else:
        print("oha not installed (cargo install oha): comparing with wrk only", file=sys.stderr)
    if a.only:
        keep = a.only.split(",")
        unknown = [k for k in keep if k not in tools]
        if unknown:
            sys.exit(f"--only: no row {', '.join(unknown)} (rows: {', '.join(tools)})")
        tools = {k: v for k, v in tools.items() if k in keep}

    tmp = a.tmp = Path(tempfile.mkdtemp(prefix="shootout-bench-"))
    port = free_port()
    (tmp / "nginx.conf").write_text(NGINX_CONF.format(dir=tmp, port=port, body=BODY))
    a.lua = tmp / "pipeline.lua"
    a.lua.write_text(WRK_PIPELINE_LUA.format(depth=PIPELINE))
    nginx = subprocess.Popen(["taskset", "-c", "0", "nginx", "-c", str(tmp / "nginx.conf"), "-p", str(tmp)])
    try:
        time.sleep(0.5)
        url = f"http://127.0.0.1:{port}/"
        skipped = add_baseline(tools, url, a) if a.baseline else []
        for name, why in skipped:
            print(f"--baseline: skipping base-{name}: {why}", file=sys.stderr)
        cost = {t: [] for t in tools}
        rate = {t: [] for t in tools}
        user = {t: [] for t in tools}
        width = max(15, *map(len, tools))  # the name column, wider for base-<row>
        for r in range(a.rounds):
            order = list(tools)[r % len(tools):] + list(tools)[:r % len(tools)]
            for name in order:
                n, cpu_s = tools[name](url, a, "1")
                cost[name].append(cpu_s * 1e6 / n)
                rate[name].append(n / a.duration)
                user[name].append(LAST_USER_SHARE[0])
                print(f"round {r + 1} {name:{width}} {n:>9} requests  {cpu_s:6.2f} CPU-s  "
                      f"{cost[name][-1]:5.2f} µs/request", file=sys.stderr)
        if a.syscalls:
            print_syscalls(url, a)
    finally:
        nginx.terminate()
        nginx.wait()
        shutil.rmtree(tmp, ignore_errors=True)

    med = {t: statistics.median(v) for t, v in cost.items()}
    rps = {t: statistics.median(v) for t, v in rate.items()}
    print(f"\nCPU per request, median of {a.rounds} rounds of {a.duration} s, c={a.connections}, "
          f"nginx on CPU 0, generator on CPU 1\n")
    print("| generator | µs CPU / request | req/s | user CPU | vs wrk (pipelined: vs wrk-pipelined; -t2: vs wrk-t2) "
          "| vs oha |")
    print("|---|---:|---:|---:|---:|---:|")
    for t in tools:
        vs_oha = f"{med[t] / med['oha']:.2f}×" if "oha" in med else "n/a"
        # The pipelined rows compare with pipelined wrk, the two-thread rows
        # with two-thread wrk (oha does neither here).
        wrk_row = "wrk-pipelined" if "pipelined" in t else "wrk-t2" if t.endswith("-t2") else "wrk"
        if wrk_row != "wrk":
            vs_oha = "n/a"
        vs_wrk = f"{med[t] / med[wrk_row]:.2f}×" if wrk_row in med else "n/a"
        print(f"| {t} | {med[t]:.2f} | {rps[t]:.0f} | {statistics.median(user[t]):.0%} | "
              f"{vs_wrk} | {vs_oha} |")
    print()
    within = []  # each budget whose rows ran (--only may leave some out)

    def budget(name, row, base, limit, digits=2):
        if row in med and base in med:
            r = med[row] / med[base]
            within.append(r <= limit)
            print(f"{name} = {r:.{digits}f} ({'within' if r <= limit else 'ABOVE'} the {limit}× budget)")
    budget("shootout / wrk", "shootout", "wrk", 1.0)
    budget("expect-body / shootout", "expect-body", "shootout", 1.05, 3)
    budget(f"pipelined (--pipeline {PIPELINE}) / wrk-pipelined (pipeline.lua, depth {PIPELINE})",
           "pipelined", "wrk-pipelined", 1.0)
    for row, base in (("shootout-uring", "shootout"), ("pipelined-uring", "pipelined")):
        if row in med and base in med:
            print(f"{row} / {base} (io_uring against epoll) = {med[row] / med[base]:.2f}")
    if all(r in med for r in ("shootout-t2", "wrk-t2", "shootout", "wrk")):
        print(f"shootout-t2 / wrk-t2 = {med['shootout-t2'] / med['wrk-t2']:.2f}; a second thread costs shootout "
              f"{med['shootout-t2'] / med['shootout']:.2f}× the CPU per request of one, wrk "
              f"{med['wrk-t2'] / med['wrk']:.2f}×")
    if a.baseline:
        print_baseline(tools, cost, rps, skipped, a)
    return 0 if all(within) else 1


if __name__ == "__main__":
    sys.exit(main())
