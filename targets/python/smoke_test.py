"""Hand check of one target against targets/SPEC.md (stdlib only, no load).

Usage: python3 targets/python/smoke_test.py targets/python-fastapi [PORT]

Reads the folder's target.toml, starts `run` in its own process group with
PORT set, waits for `ready`, checks every route (status, content type,
framing, exact bytes), bcrypt cost and validity (if the bcrypt module is
importable), timings, 10 concurrent wait_time requests, 404 and bad JSON, then
sends SIGTERM to the group and reports any process still alive after 5 s.
A light stand-in for `shootout verify` while it does not exist yet.

Database routes: with DATABASE_URL (and DB_POOL_SIZE) in the environment the
server gets them and /db, /queries (clamping: 2, 0, foo, 501, empty, missing),
/fortunes (13 rows, order, escaping, content type) and /updates are checked
for shape over HTTP; values against the table, persistence, query counts and
connection counts need the database itself (shootout verify). Without
DATABASE_URL the four routes must answer 503.
"""

import http.client
import json
import math
import os
import random
import re
import signal
import socket
import string
import subprocess
import sys
import threading
import time
import tomllib

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def request(port, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp, data


def framed(resp):
    return resp.getheader("Content-Length") is not None or (
        (resp.getheader("Transfer-Encoding") or "").lower() == "chunked"
    )


def media(resp):
    return (resp.getheader("Content-Type") or "").split(";")[0].strip().lower()


def route(port, method, path, want_status, want_type, want_body=None, body=None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    t0 = time.monotonic()
    resp, data = request(port, method, path, body, headers)
    took = time.monotonic() - t0
    desc = f"{method} {path} -> {resp.status} {resp.getheader('Content-Type')} {data[:80]!r}"
    ok = resp.status == want_status and framed(resp)
    if want_type:
        ok = ok and media(resp) == want_type
    if want_body is not None:
        ok = ok and data == want_body
    check(ok, desc)
    return data, took


def keepalive(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    bodies = []
    for _ in range(3):
        conn.request("GET", "/json")
        bodies.append(conn.getresponse().read())
    conn.close()
    check(all(b == b'{"message":"Hello, World!"}' for b in bodies), "3 requests on one keep-alive client")
    resp, data = request(port, "GET", "/plaintext", headers={"Connection": "close"})
    check(resp.status == 200 and data == b"Hello, World!", "Connection: close")


def alive_in_group(pgid):
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[2]) == pgid and fields[0] != "Z":
                    pids.append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return pids


def main():
    folder = os.path.abspath(sys.argv[1])
    port = int(sys.argv[2]) if len(sys.argv) > 2 else free_port()
    with open(os.path.join(folder, "target.toml"), "rb") as f:
        manifest = tomllib.load(f)
    sync_workers = manifest.get("sync_workers")
    env = dict(os.environ, PORT=str(port))
    env.pop("HOST", None)
    proc = subprocess.Popen(["sh", "-c", manifest["run"]], cwd=folder, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                resp, _ = request(port, "GET", manifest["ready"])
                if resp.status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                check(False, "server became ready")
                return
            time.sleep(0.2)
        run_checks(port, sync_workers)
    finally:
        pgid = proc.pid
        os.killpg(pgid, signal.SIGTERM)
        t0 = time.monotonic()
        while alive_in_group(pgid) and time.monotonic() - t0 < 5:
            time.sleep(0.1)
        left = alive_in_group(pgid)
        check(not left, f"SIGTERM stopped the process group in {time.monotonic() - t0:.2f}s (left: {left})")
        if left:
            os.killpg(pgid, signal.SIGKILL)
        proc.wait()
    print("FAILED: %d" % len(failures) if failures else "ALL OK")


def run_checks(port, sync_workers):
    route(port, "GET", "/plaintext", 200, "text/plain", b"Hello, World!")
    route(port, "GET", "/json", 200, "application/json", b'{"message":"Hello, World!"}')
    route(port, "GET", "/file_read", 200, "application/json", b'{"message":"file_read","rows":418}')
    _, took = route(port, "GET", "/wait_time", 200, "application/json", b'{"message":"time_sleep"}')
    check(took >= 1.0, f"wait_time took {took:.3f}s >= 1s")
    s = "".join(random.choices(string.ascii_letters + string.digits, k=random.randint(16, 32)))
    body = json.dumps({"payload": s}).encode()
    want = json.dumps({"payload": "Hello, " + s}, separators=(",", ":")).encode()
    route(port, "POST", "/test/simple", 200, "application/json", want, body)
    _, took = route(port, "POST", "/test/timed", 200, "application/json", want, body)
    check(took >= 0.02, f"timed took {took * 1000:.1f}ms >= 20ms")
    data, _ = route(port, "POST", "/test/bcrypt", 200, "application/json", None, body)
    try:
        h = json.loads(data)["payload"]
        check(h[:7] in ("$2a$10$", "$2b$10$", "$2y$10$") and data == json.dumps({"payload": h}, separators=(",", ":")).encode(),
              f"bcrypt hash shape {h}")
        try:
            import bcrypt
            check(bcrypt.checkpw(s.encode(), h.encode()), "bcrypt hash verifies")
        except ImportError:
            print("skip bcrypt verify (module not importable)")
    except (ValueError, KeyError, TypeError):
        check(False, "bcrypt body is JSON with payload")
    route(port, "GET", "/no/such/path", 404, None)
    route(port, "GET", "/plaintext2", 404, None)
    for path in ("/test/simple", "/test/timed", "/test/bcrypt"):
        for bad in (b'{"payload":', b"not json", b"{}", b'{"payload":5}', b"[]", b""):
            resp, data = request(port, "POST", path, bad, {"Content-Type": "application/json"})
            check(400 <= resp.status < 500, f"POST {path} {bad!r} -> {resp.status} {data[:60]!r}")
    keepalive(port)
    db_checks(port)
    results = []

    def one():
        try:
            resp, data = request(port, "GET", "/wait_time")
            results.append(resp.status == 200 and data == b'{"message":"time_sleep"}')
        except OSError:
            results.append(False)

    limit = math.ceil(10 / sync_workers) + 1 if sync_workers else 2
    t0 = time.monotonic()
    threads = [threading.Thread(target=one) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - t0
    check(all(results) and len(results) == 10 and took < limit, f"10 concurrent wait_time in {took:.2f}s < {limit}s")


WORLD = re.compile(rb'\{"id":([0-9]+),"randomNumber":([0-9]+)\}')
FORTUNE_ROW = re.compile(r"<tr><td>([0-9]+)</td><td>(.*?)</td></tr>", re.S)


def worlds_ok(data, n):
    if not (data.startswith(b"[") and data.endswith(b"]")):
        return False
    rows = WORLD.findall(data)
    if len(rows) != n or data != b"[" + b",".join(b'{"id":%s,"randomNumber":%s}' % r for r in rows) + b"]":
        return False
    return all(1 <= int(i) <= 10000 and 1 <= int(v) <= 10000 for i, v in rows)


def db_checks(port):
    if not os.environ.get("DATABASE_URL"):
        for path in ("/db", "/queries?queries=2", "/fortunes", "/updates?queries=2"):
            route(port, "GET", path, 503, None)
        return
    data, _ = route(port, "GET", "/db", 200, "application/json")
    m = WORLD.fullmatch(data)
    check(bool(m) and 1 <= int(m[1]) <= 10000 and 1 <= int(m[2]) <= 10000, f"/db row {data!r}")
    for base in ("/queries", "/updates"):
        for q, n in (("2", 2), ("0", 1), ("foo", 1), ("501", 500), ("", 1), (None, 1), ("20", 20)):
            path = base if q is None else f"{base}?queries={q}"
            data, _ = route(port, "GET", path, 200, "application/json")
            check(worlds_ok(data, n), f"{path} answers {n} rows")
    resp, data = request(port, "GET", "/fortunes")
    text = data.decode("utf-8", "replace")
    ctype = (resp.getheader("Content-Type") or "").replace(" ", "").lower()
    check(resp.status == 200 and framed(resp) and ctype == "text/html;charset=utf-8", f"/fortunes -> {resp.status} {ctype}")
    rows = FORTUNE_ROW.findall(text)
    unescape = lambda m: m.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&#34;", '"').replace("&#x27;", "'").replace("&#39;", "'").replace("&amp;", "&")
    messages = [unescape(m) for _, m in rows]
    check(len(rows) == 13 and messages == sorted(messages), f"/fortunes has 13 rows in code point order ({len(rows)})")
    check(("0", "Additional fortune added at request time.") in rows, "/fortunes has the added row 0")
    check("<script>" not in text and "&lt;script&gt;" in text, "/fortunes escapes the <script> row")
    check(text.startswith("<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>")
          and text.rstrip().endswith("</table></body></html>"), "/fortunes page frame")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    main()
    sys.exit(1 if failures else 0)
