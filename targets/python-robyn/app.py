"""Robyn reference server for the shootout API contract (targets/SPEC.md).

Robyn with the process and worker counts of its own fast mode (`--fast` in
robyn/argument_parser.py, "the optimal values": (2 x CPUs) + 1 processes, 2
workers each), the processes taken from WEB_CONCURRENCY (see target.toml),
bound to $HOST:$PORT via app.start(). Handlers are async; waits use
asyncio.sleep, and file_read and bcrypt, which block, run in a thread
(asyncio.to_thread) so the event loop is never blocked. JSON routes
return dicts, which Robyn serialises itself (compact, application/json). Log
level is WARNING so nothing is logged per request, and the OpenAPI/docs routes
are off so every path outside the contract is a 404.

Database routes (SPEC.md, "Database routes"): one asyncpg pool per process of
max(1, DB_POOL_SIZE // processes) connections, opened by Robyn's startup handler and
closed by its shutdown handler; asyncpg prepares each statement per
connection. Fortunes render through Robyn's JinjaTemplate (autoescaping on
for .html) from templates/fortunes.html. Without DATABASE_URL no pool is
opened and the database routes answer 503.
"""

import signal
import sys


def _exit_on_sigterm(signum, frame):
    raise SystemExit(0)


# Robyn's actix-server core catches SIGTERM and stops serving, but the Python
# event loop behind it keeps the process alive. Its signal hook chains to the
# handler installed before it, so installing ours first makes SIGTERM exit.
signal.signal(signal.SIGTERM, _exit_on_sigterm)

# Robyn parses sys.argv (argparse) when it is imported and when a Config is
# built. The server is configured here, not on the command line, so hide any
# arguments from it.
_argv, sys.argv = sys.argv, sys.argv[:1]

import asyncio  # noqa: E402
import csv  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import socket  # noqa: E402
from pathlib import Path  # noqa: E402

import asyncpg  # noqa: E402
import bcrypt  # noqa: E402
from robyn import Request, Response, Robyn  # noqa: E402
from robyn.argument_parser import Config  # noqa: E402
from robyn.templating import JinjaTemplate  # noqa: E402

DATA_DIR = Path(os.environ.get("DATA_DIR") or Path(__file__).resolve().parent.parent / "data")
CSV_PATH = DATA_DIR / "titanic.csv"

JSON = {"Content-Type": "application/json"}  # for the 400 answers
TEXT = {"Content-Type": "text/plain; charset=utf-8"}

# Robyn's fast mode, with the CPUs the runner gives rather than os.cpu_count():
# target.toml computes (2 x CPUs) + 1 processes; fast mode's 2 workers each.
PROCESSES = max(1, int(os.environ.get("WEB_CONCURRENCY") or 1))

# SPEC.md "WebSocket": messages up to 1 MiB. Robyn's one limit on HTTP bodies
# and WebSocket frames is ROBYN_MAX_PAYLOAD_SIZE, default 1,000,000 bytes
# (Robyn docs, Environment Variables,
# https://robyn.tech/documentation/en/api_reference/robyn_env), read by its
# server at start; 1 MiB raises it by 48,576 bytes, beyond every HTTP body
# the contract sends.
os.environ["ROBYN_MAX_PAYLOAD_SIZE"] = str(1 << 20)

config = Config()
config.log_level = "WARNING"
config.disable_openapi = True
config.processes = PROCESSES
config.workers = 2
app = Robyn(__file__, config=config)
# SPEC.md: every response names the server. Robyn's global response headers
# go on every answer, its own 404s included; its actix core adds Date.
app.set_response_header("Server", "robyn")


DATABASE_URL = os.environ.get("DATABASE_URL") or None


def _pool_size():
    try:
        total = int(os.environ.get("DB_POOL_SIZE", ""))
    except ValueError:
        total = 4
    return max(1, total // PROCESSES)


POOL_SIZE = _pool_size()  # this process's share of DB_POOL_SIZE
pool = None

SELECT_WORLD = "SELECT id, randomnumber FROM world WHERE id = $1"
SELECT_FORTUNES = "SELECT id, message FROM fortune"
UPDATE_WORLDS = (
    "UPDATE world SET randomnumber = v.r "
    "FROM unnest($1::int[], $2::int[]) AS v(id, r) WHERE world.id = v.id"
)

templates = JinjaTemplate(str(Path(__file__).resolve().parent / "templates"))


def no_database():
    return Response(status_code=503, headers=JSON, description='{"error":"DATABASE_URL is not set"}')


@app.startup_handler
async def open_pool():
    global pool
    if DATABASE_URL is not None:
        pool = await asyncpg.create_pool(DATABASE_URL, min_size=POOL_SIZE, max_size=POOL_SIZE)


@app.shutdown_handler
async def close_pool():
    global pool
    if pool is not None:
        await pool.close()
        pool = None


def random_id():
    return random.randint(1, 10000)


def queries_param(request: Request):
    """The `queries` parameter clamped to 1..500; missing or not an integer is 1."""
    try:
        q = int(request.query_params.get("queries", "") or "")
    except ValueError:
        return 1
    return min(max(q, 1), 500)


def bad_request(msg):
    return Response(status_code=400, headers=JSON, description=json.dumps({"error": msg}, separators=(",", ":")))


def read_payload(request: Request):
    """The string `payload` of a JSON body, or None if the body is not that."""
    try:
        data = json.loads(request.body)
    except (ValueError, TypeError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("payload"), str):
        return None
    return data["payload"]


@app.get("/plaintext")
async def plaintext(request: Request):
    return Response(status_code=200, headers=TEXT, description="Hello, World!")


@app.get("/json")
async def json_route(request: Request):
    return {"message": "Hello, World!"}


@app.get("/file_read")
async def file_read(request: Request):
    return {"message": "file_read", "rows": await asyncio.to_thread(count_rows)}


def count_rows():
    """Opens and parses the CSV (blocking: run it off the event loop)."""
    with open(CSV_PATH, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        next(reader)  # header
        return sum(1 for _ in reader)


@app.get("/wait_time")
async def wait_time(request: Request):
    await asyncio.sleep(1)
    return {"message": "time_sleep"}


@app.post("/test/simple")
async def simple(request: Request):
    payload = read_payload(request)
    if payload is None:
        return bad_request("body must be a JSON object with a string payload")
    return {"payload": "Hello, " + payload}


@app.post("/test/timed")
async def timed(request: Request):
    payload = read_payload(request)
    if payload is None:
        return bad_request("body must be a JSON object with a string payload")
    await asyncio.sleep(0.02)
    return {"payload": "Hello, " + payload}


def _hash(payload: str) -> str:
    return bcrypt.hashpw(payload.encode("utf-8"), bcrypt.gensalt(rounds=10)).decode("ascii")


@app.post("/test/bcrypt")
async def bcrypt_route(request: Request):
    payload = read_payload(request)
    if payload is None:
        return bad_request("body must be a JSON object with a string payload")
    return {"payload": await asyncio.to_thread(_hash, payload)}


@app.get("/db")
async def db(request: Request):
    if pool is None:
        return no_database()
    async with pool.acquire() as conn:
        id_, number = await conn.fetchrow(SELECT_WORLD, random_id())
    return {"id": id_, "randomNumber": number}


@app.get("/queries")
async def queries(request: Request):
    if pool is None:
        return no_database()
    worlds = []
    async with pool.acquire() as conn:
        stmt = await conn.prepare(SELECT_WORLD)
        for _ in range(queries_param(request)):
            id_, number = await stmt.fetchrow(random_id())
            worlds.append({"id": id_, "randomNumber": number})
    return worlds


@app.get("/fortunes")
async def fortunes(request: Request):
    if pool is None:
        return no_database()
    async with pool.acquire() as conn:
        rows = [tuple(r) for r in await conn.fetch(SELECT_FORTUNES)]
    rows.append((0, "Additional fortune added at request time."))
    rows.sort(key=lambda f: f[1])
    return templates.render_template("fortunes.html", fortunes=rows)


@app.get("/updates")
async def updates(request: Request):
    if pool is None:
        return no_database()
    # Distinct ids, so every answered row carries the value finally written.
    ids = sorted(random.sample(range(1, 10001), queries_param(request)))
    worlds = []
    async with pool.acquire() as conn:
        stmt = await conn.prepare(SELECT_WORLD)
        for i in ids:
            id_, _ = await stmt.fetchrow(i)
            worlds.append({"id": id_, "randomNumber": random_id()})
        await conn.execute(UPDATE_WORLDS, [w["id"] for w in worlds], [w["randomNumber"] for w in worlds])
    return worlds


# WebSocket echo at /ws (targets/SPEC.md "WebSocket") through Robyn's own
# @app.websocket (Robyn docs, WebSockets,
# https://robyn.tech/documentation/en/api_reference/websockets). NOT claimed in
# target.toml's protocols: Robyn 0.88's actix handler (src/websockets/mod.rs)
# drops continuation frames, so a fragmented message is never delivered; it
# answers a close frame by dropping the TCP connection without a close frame;
# and it ignores protocol errors (an unmasked frame leaves the connection open
# and silent), none of which a handler can change. Unfragmented text and
# binary messages up to 1 MiB and pings are served.
@app.websocket("/ws")
async def ws_echo(websocket):
    while True:
        # The documented receive_text()/receive_bytes() convert a message to
        # the type asked for (a binary one decoded as UTF-8, a text one
        # encoded); _receive(), on which both are built, returns str for a
        # text message and bytes for a binary one, so the echo keeps the type.
        message = await websocket._receive()
        if isinstance(message, str):
            await websocket.send_text(message)
        else:
            await websocket.send_bytes(bytes(message))


def _port_is_free(host: str, port: int) -> bool:
    """Robyn's own socket uses SO_REUSEPORT, so on a busy port it would quietly
    share it with whatever listens there; a plain bind tells us first."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


if __name__ == "__main__":
    port = os.environ.get("PORT")
    if not port:
        sys.exit("PORT is required")
    host = os.environ.get("HOST") or "127.0.0.1"
    # Robyn's socket wants an IP address; resolve a name such as "localhost".
    host = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)[0][4][0]
    if not _port_is_free(host, int(port)):
        sys.exit(f"cannot bind {host}:{port}: address already in use")
    # _check_port=False: on a busy port Robyn would otherwise prompt on stdin.
    app.start(host=host, port=int(port), _check_port=False)
