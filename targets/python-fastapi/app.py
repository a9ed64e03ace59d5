"""FastAPI reference server for the shootout API contract (targets/SPEC.md).

Served by uvicorn: python-fastapi runs it with `--loop asyncio --http h11`,
python-fastapi-uvloop runs this same module with `--loop uvloop --http httptools`.
Async endpoints sleep with asyncio.sleep; the file_read and bcrypt endpoints
block (file I/O, hashing), so they are plain `def`s, which FastAPI runs in its
threadpool, off the event loop ("Concurrency and async / await" in FastAPI's
docs). uvicorn runs one worker process per CPU (WEB_CONCURRENCY, see
target.toml). The request body is a
Pydantic model, so malformed JSON or a missing/non-string payload answers 422.

Database routes (SPEC.md, "Database routes"): one asyncpg pool per worker
process of max(1, DB_POOL_SIZE // WEB_CONCURRENCY) connections, opened in the lifespan handler and closed on
shutdown; asyncpg prepares (and caches) each statement per connection. Fortunes
render through Starlette's Jinja2Templates with HTML autoescaping. Without
DATABASE_URL no pool is opened and the database routes answer 503.

WebSocket (SPEC.md, "WebSocket"): /ws echoes each text or binary message
with the same type through Starlette's WebSocket (FastAPI docs, "WebSockets",
https://fastapi.tiangolo.com/advanced/websockets/). uvicorn speaks the
protocol through the pinned `websockets` package (its --ws auto picks it):
its defaults hold messages up to 16 MiB (ws_max_size), ping every 20 s,
answer pings and close frames, and close with 1002 on a protocol error.
"""

import asyncio
import contextlib
import csv
import os
import random
from pathlib import Path

import asyncpg
import bcrypt
import jinja2
from fastapi import FastAPI, HTTPException, Request, WebSocket
from fastapi.responses import PlainTextResponse
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, StrictStr

DATA_DIR = Path(os.environ.get("DATA_DIR") or Path(__file__).resolve().parent.parent / "data")
CSV_PATH = DATA_DIR / "titanic.csv"

DATABASE_URL = os.environ.get("DATABASE_URL") or None


# uvicorn's worker processes (its --workers defaults to WEB_CONCURRENCY too).
WORKERS = max(1, int(os.environ.get("WEB_CONCURRENCY") or 1))


def _pool_size():
    try:
        total = int(os.environ.get("DB_POOL_SIZE", ""))
    except ValueError:
        total = 4
    return max(1, total // WORKERS)


POOL_SIZE = _pool_size()  # this process's share of DB_POOL_SIZE
pool = None


@contextlib.asynccontextmanager
async def lifespan(app):
    global pool
    if DATABASE_URL is not None:
        pool = await asyncpg.create_pool(DATABASE_URL, min_size=POOL_SIZE, max_size=POOL_SIZE)
    try:
        yield
    finally:
        if pool is not None:
            await pool.close()
            pool = None


# No /docs, /redoc or /openapi.json: every path outside the contract is a 404.
app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None, lifespan=lifespan)

SELECT_WORLD = "SELECT id, randomnumber FROM world WHERE id = $1"
SELECT_FORTUNES = "SELECT id, message FROM fortune"
UPDATE_WORLDS = (
    "UPDATE world SET randomnumber = v.r "
    "FROM unnest($1::int[], $2::int[]) AS v(id, r) WHERE world.id = v.id"
)

templates = Jinja2Templates(
    env=jinja2.Environment(
        loader=jinja2.DictLoader({
            "fortunes.html": (
                "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>"
                "<tr><th>id</th><th>message</th></tr>"
                "{% for id, message in fortunes %}<tr><td>{{ id }}</td><td>{{ message }}</td></tr>{% endfor %}"
                "</table></body></html>"
            ),
        }),
        autoescape=True,
    )
)


class Payload(BaseModel):
    payload: StrictStr


@app.get("/plaintext", response_class=PlainTextResponse)
async def plaintext():
    return "Hello, World!"


@app.get("/json")
async def json_route():
    return {"message": "Hello, World!"}


@app.get("/file_read")
def file_read():
    with open(CSV_PATH, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        next(reader)  # header
        rows = sum(1 for _ in reader)
    return {"message": "file_read", "rows": rows}


@app.get("/wait_time")
async def wait_time():
    await asyncio.sleep(1)
    return {"message": "time_sleep"}


@app.post("/test/simple")
async def simple(body: Payload):
    return {"payload": "Hello, " + body.payload}


@app.post("/test/timed")
async def timed(body: Payload):
    await asyncio.sleep(0.02)
    return {"payload": "Hello, " + body.payload}


@app.post("/test/bcrypt")
def bcrypt_route(body: Payload):
    hashed = bcrypt.hashpw(body.payload.encode("utf-8"), bcrypt.gensalt(rounds=10))
    return {"payload": hashed.decode("ascii")}


def db_pool():
    if pool is None:
        raise HTTPException(status_code=503, detail="DATABASE_URL is not set")
    return pool


def random_id():
    return random.randint(1, 10000)


def clamp_queries(queries):
    """The `queries` parameter clamped to 1..500; missing or not an integer is 1."""
    try:
        q = int(queries)
    except (TypeError, ValueError):
        return 1
    return min(max(q, 1), 500)


@app.get("/db")
async def db():
    async with db_pool().acquire() as conn:
        id_, number = await conn.fetchrow(SELECT_WORLD, random_id())
    return {"id": id_, "randomNumber": number}


@app.get("/queries")
async def queries(queries: str = ""):
    q = clamp_queries(queries)
    worlds = []
    async with db_pool().acquire() as conn:
        stmt = await conn.prepare(SELECT_WORLD)
        for _ in range(q):
            id_, number = await stmt.fetchrow(random_id())
            worlds.append({"id": id_, "randomNumber": number})
    return worlds


@app.get("/fortunes")
async def fortunes(request: Request):
    async with db_pool().acquire() as conn:
        rows = [tuple(r) for r in await conn.fetch(SELECT_FORTUNES)]
    rows.append((0, "Additional fortune added at request time."))
    rows.sort(key=lambda f: f[1])
    return templates.TemplateResponse(request, "fortunes.html", {"fortunes": rows})


@app.get("/updates")
async def updates(queries: str = ""):
    q = clamp_queries(queries)
    # Distinct ids, so every answered row carries the value finally written.
    ids = sorted(random.sample(range(1, 10001), q))
    worlds = []
    async with db_pool().acquire() as conn:
        stmt = await conn.prepare(SELECT_WORLD)
        for i in ids:
            id_, _ = await stmt.fetchrow(i)
            worlds.append({"id": id_, "randomNumber": random_id()})
        await conn.execute(UPDATE_WORLDS, [w["id"] for w in worlds], [w["randomNumber"] for w in worlds])
    return worlds


@app.websocket("/ws")
async def ws_echo(websocket: WebSocket):
    await websocket.accept()
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        if message.get("text") is not None:
            await websocket.send_text(message["text"])
        else:
            await websocket.send_bytes(message["bytes"])
