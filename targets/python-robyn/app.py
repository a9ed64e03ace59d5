"""Robyn reference server for the shootout API contract (targets/SPEC.md).

Robyn with its default process/worker counts, bound to $HOST:$PORT via
app.start(). Handlers are async; waits use asyncio.sleep and bcrypt runs in a
thread (asyncio.to_thread) so the event loop is never blocked. JSON routes
return dicts, which Robyn serialises itself (compact, application/json). Log
level is WARNING so nothing is logged per request, and the OpenAPI/docs routes
are off so every path outside the contract is a 404.
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
# arguments from it: its defaults are what this target measures.
_argv, sys.argv = sys.argv, sys.argv[:1]

import asyncio  # noqa: E402
import csv  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402
from pathlib import Path  # noqa: E402

import bcrypt  # noqa: E402
from robyn import Request, Response, Robyn  # noqa: E402
from robyn.argument_parser import Config  # noqa: E402

DATA_DIR = Path(os.environ.get("DATA_DIR") or Path(__file__).resolve().parent.parent / "data")
CSV_PATH = DATA_DIR / "titanic.csv"

JSON = {"Content-Type": "application/json"}  # for the 400 answers
TEXT = {"Content-Type": "text/plain; charset=utf-8"}

config = Config()
config.log_level = "WARNING"
config.disable_openapi = True
app = Robyn(__file__, config=config)


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
    with open(CSV_PATH, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        next(reader)  # header
        rows = sum(1 for _ in reader)
    return {"message": "file_read", "rows": rows}


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
