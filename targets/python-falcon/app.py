"""Falcon (WSGI) reference server for the shootout API contract (targets/SPEC.md).

Served by gunicorn with (2 x CPUs) + 1 sync workers (WEB_CONCURRENCY); see
target.toml. Falcon's default JSON
handler puts spaces after `,` and `:`, so both directions use a compact
json.dumps to keep bodies byte-exact. A body that Falcon cannot parse as JSON
answers 400 (MediaMalformedError); a missing or non-string payload answers 400.

Database routes (SPEC.md, "Database routes"): psycopg 3 with a
psycopg_pool.ConnectionPool per gunicorn worker of
max(1, DB_POOL_SIZE // WEB_CONCURRENCY) connections in autocommit mode, opened lazily in the worker (after the fork)
on its first database request. Fortunes render through Jinja2 with HTML
autoescaping. Without DATABASE_URL the database routes answer 503.
"""

import csv
import functools
import json
import os
import random
import threading
import time
from pathlib import Path

import bcrypt
import falcon
import falcon.media
import jinja2
import psycopg_pool

DATA_DIR = Path(os.environ.get("DATA_DIR") or Path(__file__).resolve().parent.parent / "data")
CSV_PATH = DATA_DIR / "titanic.csv"

# gunicorn's worker count, which target.toml exports (gunicorn's --workers
# defaults to WEB_CONCURRENCY too): DB_POOL_SIZE is the total.
GUNICORN_WORKERS = max(1, int(os.environ.get("WEB_CONCURRENCY") or 1))
DATABASE_URL = os.environ.get("DATABASE_URL") or None


def _pool_size():
    try:
        total = int(os.environ.get("DB_POOL_SIZE", ""))
    except ValueError:
        total = GUNICORN_WORKERS
    return max(1, total // GUNICORN_WORKERS)


POOL_SIZE = _pool_size()
_pool = None
_pool_pid = None
_pool_lock = threading.Lock()


def get_pool():
    """This worker's pool, opened on first use so it never crosses a fork."""
    global _pool, _pool_pid
    if _pool is None or _pool_pid != os.getpid():
        with _pool_lock:
            if _pool is None or _pool_pid != os.getpid():
                _pool = psycopg_pool.ConnectionPool(
                    DATABASE_URL,
                    min_size=POOL_SIZE,
                    max_size=POOL_SIZE,
                    kwargs={"autocommit": True},
                    open=True,
                )
                _pool_pid = os.getpid()
    return _pool


def need_db():
    if DATABASE_URL is None:
        raise falcon.HTTPServiceUnavailable(description="DATABASE_URL is not set")
    return get_pool()


SELECT_WORLD = "SELECT id, randomnumber FROM world WHERE id = %s"
SELECT_FORTUNES = "SELECT id, message FROM fortune"
UPDATE_WORLDS = (
    "UPDATE world SET randomnumber = v.r "
    "FROM unnest(%s::int[], %s::int[]) AS v(id, r) WHERE world.id = v.id"
)

FORTUNES = jinja2.Environment(autoescape=True).from_string(
    "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>"
    "<tr><th>id</th><th>message</th></tr>"
    "{% for id, message in fortunes %}<tr><td>{{ id }}</td><td>{{ message }}</td></tr>{% endfor %}"
    "</table></body></html>"
)


def random_id():
    return random.randint(1, 10000)


def queries_param(req):
    """The `queries` parameter clamped to 1..500; missing or not an integer is 1."""
    try:
        q = int(req.get_param("queries") or "")
    except ValueError:
        return 1
    return min(max(q, 1), 500)


def payload_of(req):
    data = req.get_media()  # raises a 400 for a missing or malformed body
    if not isinstance(data, dict) or not isinstance(data.get("payload"), str):
        raise falcon.HTTPBadRequest(description="body must be a JSON object with a string payload")
    return data["payload"]


class Plaintext:
    def on_get(self, req, resp):
        resp.content_type = falcon.MEDIA_TEXT
        resp.text = "Hello, World!"


class Json:
    def on_get(self, req, resp):
        resp.media = {"message": "Hello, World!"}


class FileRead:
    def on_get(self, req, resp):
        with open(CSV_PATH, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            next(reader)  # header
            rows = sum(1 for _ in reader)
        resp.media = {"message": "file_read", "rows": rows}


class WaitTime:
    def on_get(self, req, resp):
        time.sleep(1)
        resp.media = {"message": "time_sleep"}


class Simple:
    def on_post(self, req, resp):
        resp.media = {"payload": "Hello, " + payload_of(req)}


class Timed:
    def on_post(self, req, resp):
        payload = payload_of(req)
        time.sleep(0.02)
        resp.media = {"payload": "Hello, " + payload}


class Bcrypt:
    def on_post(self, req, resp):
        hashed = bcrypt.hashpw(payload_of(req).encode("utf-8"), bcrypt.gensalt(rounds=10))
        resp.media = {"payload": hashed.decode("ascii")}


class Db:
    def on_get(self, req, resp):
        with need_db().connection() as conn:
            id_, number = conn.execute(SELECT_WORLD, (random_id(),)).fetchone()
        resp.media = {"id": id_, "randomNumber": number}


class Queries:
    def on_get(self, req, resp):
        q = queries_param(req)
        with need_db().connection() as conn:
            cur = conn.cursor()
            rows = [cur.execute(SELECT_WORLD, (random_id(),)).fetchone() for _ in range(q)]
        resp.media = [{"id": id_, "randomNumber": number} for id_, number in rows]


class Fortunes:
    def on_get(self, req, resp):
        with need_db().connection() as conn:
            fortunes = conn.execute(SELECT_FORTUNES).fetchall()
        fortunes.append((0, "Additional fortune added at request time."))
        fortunes.sort(key=lambda f: f[1])
        resp.content_type = "text/html; charset=utf-8"
        resp.text = FORTUNES.render(fortunes=fortunes)


class Updates:
    def on_get(self, req, resp):
        q = queries_param(req)
        # Distinct ids, so every answered row carries the value finally written.
        ids = sorted(random.sample(range(1, 10001), q))
        with need_db().connection() as conn:
            cur = conn.cursor()
            rows = [cur.execute(SELECT_WORLD, (i,)).fetchone() for i in ids]
            worlds = [{"id": id_, "randomNumber": random_id()} for id_, _ in rows]
            cur.execute(UPDATE_WORLDS, ([w["id"] for w in worlds], [w["randomNumber"] for w in worlds]))
        resp.media = worlds


def create_app():
    app = falcon.App()
    json_handler = falcon.media.JSONHandler(
        dumps=functools.partial(json.dumps, separators=(",", ":")),
        loads=json.loads,
    )
    app.req_options.media_handlers[falcon.MEDIA_JSON] = json_handler
    app.resp_options.media_handlers[falcon.MEDIA_JSON] = json_handler
    app.add_route("/plaintext", Plaintext())
    app.add_route("/json", Json())
    app.add_route("/file_read", FileRead())
    app.add_route("/wait_time", WaitTime())
    app.add_route("/test/simple", Simple())
    app.add_route("/test/timed", Timed())
    app.add_route("/test/bcrypt", Bcrypt())
    app.add_route("/db", Db())
    app.add_route("/queries", Queries())
    app.add_route("/fortunes", Fortunes())
    app.add_route("/updates", Updates())
    return app


app = create_app()
