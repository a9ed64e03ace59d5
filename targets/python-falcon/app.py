"""Falcon (WSGI) reference server for the shootout API contract (targets/SPEC.md).

Served by gunicorn with 3 sync workers; see target.toml. Falcon's default JSON
handler puts spaces after `,` and `:`, so both directions use a compact
json.dumps to keep bodies byte-exact. A body that Falcon cannot parse as JSON
answers 400 (MediaMalformedError); a missing or non-string payload answers 400.
"""

import csv
import functools
import json
import os
import time
from pathlib import Path

import bcrypt
import falcon
import falcon.media

DATA_DIR = Path(os.environ.get("DATA_DIR") or Path(__file__).resolve().parent.parent / "data")
CSV_PATH = DATA_DIR / "titanic.csv"


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
    return app


app = create_app()
