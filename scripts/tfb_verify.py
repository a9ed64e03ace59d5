#!/usr/bin/env python3
"""Run TechEmpower's own verifier, unmodified, against shootout's targets.

A developer tool, not part of CI. It imports the test-type classes of a
TechEmpower/FrameworkBenchmarks checkout (toolset/test_types: json, plaintext,
db, query, fortune, update) and TFB's PostgreSQL helper
(toolset/databases/postgres), and calls each test type's verify() against a
running target, exactly as TFB's framework_test.verify_urls does, with TFB's
own query counting: siege at 512 concurrent requests, then pg_stat_statements.

Usage:

    python3 scripts/tfb_verify.py --tfb PATH_TO_FrameworkBenchmarks_checkout [targets...]

With no targets it verifies every folder in targets/ that has a target.toml.
Build the targets first (`shootout build`). Options:

    --tests json,plaintext,db,query,fortune,update   the test types to run
    --ci        apply TFB's CI margin (1.5 % on executed queries); without it
                the counts are held to TFB's real-run rule: no margin on
                queries, and failed siege transactions fail the test

Needs: siege (Debian: apt-get install -y siege), the Python packages
psycopg2-binary, requests and colorama, and PostgreSQL (initdb, pg_ctl; run as
root the cluster belongs to Debian's `postgres` user, as shootout does).

What the driver provides, since TFB normally runs in its own containers:

- A throwaway PostgreSQL cluster on a free port of 127.0.0.1 with shootout's
  settings (pg_stat_statements preloaded, synchronous_commit off) and schema
  (crates/servers/src/database/seed.sql), plus a copy of `world` named
  "World": TFB's schema holds both spellings, and TFB's
  get_current_world_table reads "World" first and returns nothing if it is
  missing, which would fail every update test.
- TFB's PostgreSQL helper connects to port 5432; the driver hands it a
  psycopg2 whose connect() goes to the throwaway cluster's port instead.
- TFB finds its databases and test types by globbing /FrameworkBenchmarks;
  the driver loads the same files from --tfb the way TFB's loaders do.

Each target is started as shootout starts it: `sh -c <run>` in its folder,
in its own process group, with PORT, HOST, DATABASE_URL and DB_POOL_SIZE
(4 per CPU, the runner's default), then polled on its `ready` path. It is
stopped with SIGTERM and, 5 s later, SIGKILL to the group.

The result is printed per test type (TFB's pass/warn/fail lines) and as a
Markdown table at the end. Exit status: 0 when every test passed, 1 when any
warned or failed, 2 on a usage or environment error.
"""

import argparse
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import types
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ROOT / "targets"
SEED_SQL = ROOT / "crates" / "servers" / "src" / "database" / "seed.sql"
TEST_TYPES = ["json", "plaintext", "db", "query", "fortune", "update"]
# The URLs TFB's benchmark_config.json would name for our routes.
URLS = {
    "json_url": "/json",
    "plaintext_url": "/plaintext",
    "db_url": "/db",
    "query_url": "/queries?queries=",
    "fortune_url": "/fortunes",
    "update_url": "/updates?queries=",
    "database": "postgres",
}
APP_USER, APP_PASSWORD, DB_NAME = "benchmarkdbuser", "benchmarkdbpass", "hello_world"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bin():
    """The newest Debian PostgreSQL bin folder, else initdb on PATH."""
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                      key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0)
    if versions:
        return versions[-1].parent
    found = shutil.which("initdb")
    if not found:
        sys.exit("tfb_verify: PostgreSQL's initdb was not found")
    return Path(found).parent


class Cluster:
    """A throwaway PostgreSQL cluster seeded with shootout's schema."""

    def __init__(self, pool_size):
        self.bin = pg_bin()
        self.dir = Path(tempfile.mkdtemp(prefix="tfb-verify-pg-"))
        self.port = free_port()
        self.owner = pwd.getpwnam("postgres") if os.geteuid() == 0 else None
        if self.owner:
            os.chown(self.dir, self.owner.pw_uid, self.owner.pw_gid)
        self.pool_size = pool_size
        self.started = False

    def tool(self, name, *args, **kw):
        cmd = [str(self.bin / name), *args]
        if self.owner:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=True, cwd=self.dir, capture_output=True, text=True, **kw)

    def start(self):
        data = self.dir / "data"
        self.tool("initdb", "-D", str(data), "-U", "postgres", "-E", "UTF8", "--locale=C",
                  "--no-sync", "--auth-local=trust", "--auth-host=scram-sha-256")
        # shootout's settings (crates/servers/src/database/settings.rs), with
        # room for siege's 512 clients queueing on the target's own pool.
        conf = {
            "listen_addresses": "127.0.0.1", "port": self.port,
            "unix_socket_directories": str(self.dir),
            "max_connections": self.pool_size + 20,
            "shared_preload_libraries": "pg_stat_statements",
            "pg_stat_statements.track": "all", "synchronous_commit": "off",
        }
        with open(data / "postgresql.auto.conf", "a") as f:
            f.writelines(f"{k} = '{v}'\n" for k, v in conf.items())
        self.tool("pg_ctl", "start", "-w", "-t", "60", "-D", str(data), "-l", str(self.dir / "server.log"))
        self.started = True
        self.seed()

    def psql(self, db, sql):
        self.tool("psql", "-v", "ON_ERROR_STOP=1", "-q", "-h", str(self.dir), "-p", str(self.port),
                  "-U", "postgres", "-d", db, input=sql)

    def seed(self):
        self.psql("postgres", f"CREATE ROLE {APP_USER} LOGIN PASSWORD '{APP_PASSWORD}';")
        self.psql("postgres", f"CREATE DATABASE {DB_NAME};")
        self.psql(DB_NAME, SEED_SQL.read_text())
        self.psql(DB_NAME, 'CREATE EXTENSION pg_stat_statements;\n'
                           'CREATE TABLE "World" AS SELECT * FROM world;\n'
                           'GRANT SELECT ON "World" TO benchmarkdbuser;\n')

    def app_url(self):
        return f"postgres://{APP_USER}:{APP_PASSWORD}@127.0.0.1:{self.port}/{DB_NAME}"

    def stop(self):
        if self.started:
            try:
                self.tool("pg_ctl", "stop", "-m", "fast", "-w", "-D", str(self.dir / "data"))
            except subprocess.CalledProcessError as e:
                print(f"tfb_verify: pg_ctl stop failed: {e.stderr}", file=sys.stderr)
        shutil.rmtree(self.dir, ignore_errors=True)


def load_file(name, path):
    """Loads one TFB module from its file, as TFB's own loaders do."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_tfb(tfb, db_port):
    """Imports TFB's toolset from the checkout: its databases and test types."""
    sys.path.insert(0, str(tfb))
    import psycopg2
    from toolset.databases import databases  # the dict verifications.py reads

    postgres = load_file("Database", tfb / "toolset/databases/postgres/postgres.py")

    def connect(*args, **kw):
        kw["port"] = str(db_port)  # TFB's helper names 5432; ours is elsewhere
        return psycopg2.connect(*args, **kw)

    postgres.psycopg2 = types.SimpleNamespace(connect=connect)
    databases["postgres"] = postgres.Database
    test_types = {}
    for name in TEST_TYPES:
        module = load_file("TestType", tfb / f"toolset/test_types/{name}/{name}.py")
        test_types[name] = module.TestType
    return test_types


def tfb_config(tfb, ci):
    """The attributes of TFB's BenchmarkConfig that the test types read."""
    return types.SimpleNamespace(
        concurrency_levels=[16, 32, 64, 128, 256, 512],
        pipeline_concurrency_levels=[256, 1024, 4096, 16384],
        query_levels=[1, 5, 10, 15, 20],
        cached_query_levels=[1, 10, 20, 50, 100],
        database_host="127.0.0.1",
        db_root=str(tfb / "toolset" / "databases"),
        is_ci=ci,
        duration=15,
        server_host="127.0.0.1",
    )


class Target:
    """One target started the way shootout starts it (process.rs)."""

    def __init__(self, name, cluster):
        self.name = name
        self.dir = TARGETS / name
        self.manifest = tomllib.loads((self.dir / "target.toml").read_text())
        self.port = free_port()
        self.cluster = cluster
        self.proc = None

    def start(self):
        env = dict(os.environ, PORT=str(self.port), HOST="127.0.0.1",
                   DATABASE_URL=self.cluster.app_url(), DB_POOL_SIZE=str(self.cluster.pool_size))
        self.log = open(tempfile.gettempdir() + f"/tfb-verify-{self.name}.log", "w")
        self.proc = subprocess.Popen(["sh", "-c", self.manifest["run"]], cwd=self.dir, env=env,
                                     stdout=self.log, stderr=subprocess.STDOUT, process_group=0)
        ready = f"http://127.0.0.1:{self.port}{self.manifest.get('ready', '/plaintext')}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode} (log: {self.log.name})")
            try:
                with urllib.request.urlopen(ready, timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.25)
        raise RuntimeError(f"{self.name} did not answer {ready} within 60 s (log: {self.log.name})")

    def stop(self):
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.log.close()


def run_test(test_type, config, base_url):
    """verify() as framework_test.verify_urls calls it: (state, results)."""
    import requests

    test = test_type(config).parse(URLS)
    try:
        results = test.verify(base_url)
    except requests.exceptions.ConnectionError:
        results = [("fail", "Server did not respond to request", base_url)]
    except requests.exceptions.Timeout:
        results = [("fail", "Connection to server timed out", base_url)]
    except Exception as e:  # TFB reports any exception as a failure too
        results = [("fail", f"Caused Exception in TFB: {e!r}", base_url)]
    if any(r == "fail" for r, _, _ in results):
        state = "fail"
    elif any(r == "warn" for r, _, _ in results):
        state = "warn"
    elif all(r == "pass" for r, _, _ in results):
        state = "pass"
    else:
        state = "fail"
    return state, results


def verify_target(name, cluster, test_types, config, tests):
    target = Target(name, cluster)
    states = {}
    try:
        target.start()
        base = f"http://127.0.0.1:{target.port}"
        for t in tests:
            state, results = run_test(test_types[t], config, base)
            states[t] = state
            print(f"== {name} {t}: {state.upper()}", flush=True)
            for result, reason, url in results:
                if result != "pass" or reason:
                    print(f"   {result.upper()} {url}: {reason}", flush=True)
    except RuntimeError as e:
        print(f"== {name}: {e}", flush=True)
        states = {t: "fail" for t in tests}
    finally:
        target.stop()
    return states


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tfb", required=True, type=Path, help="a TechEmpower/FrameworkBenchmarks checkout")
    ap.add_argument("--tests", default=",".join(TEST_TYPES))
    ap.add_argument("--ci", action="store_true", help="TFB's CI margin on executed queries")
    ap.add_argument("targets", nargs="*")
    args = ap.parse_args()
    tests = [t for t in args.tests.split(",") if t]
    if not (args.tfb / "toolset" / "test_types").is_dir() or set(tests) - set(TEST_TYPES):
        ap.error("--tfb must hold toolset/test_types; --tests names " + ",".join(TEST_TYPES))
    if not shutil.which("siege"):
        ap.error("siege is not on PATH (apt-get install -y siege)")
    names = args.targets or sorted(p.parent.name for p in TARGETS.glob("*/target.toml"))
    cluster = Cluster(pool_size=4 * (os.cpu_count() or 1))
    table = {}
    try:
        cluster.start()
        test_types = load_tfb(args.tfb.resolve(), cluster.port)
        config = tfb_config(args.tfb.resolve(), args.ci)
        for name in names:
            table[name] = verify_target(name, cluster, test_types, config, tests)
    finally:
        cluster.stop()
    print("\n| target | " + " | ".join(tests) + " |")
    print("|---|" + "---|" * len(tests))
    for name, states in table.items():
        print(f"| {name} | " + " | ".join(states.get(t, "-") for t in tests) + " |")
    ok = all(s == "pass" for states in table.values() for s in states.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
