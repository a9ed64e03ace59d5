"""FastAPI reference server for the shootout API contract (targets/SPEC.md).

Served by uvicorn: python-fastapi runs it with `--loop asyncio --http h11`,
python-fastapi-uvloop runs this same module with `--loop uvloop --http httptools`.
Async endpoints sleep with asyncio.sleep; the bcrypt endpoint is a plain `def`,
so FastAPI runs it in its threadpool, off the event loop. The request body is a
Pydantic model, so malformed JSON or a missing/non-string payload answers 422.
"""

import asyncio
import csv
import os
from pathlib import Path

import bcrypt
from fastapi import FastAPI
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, StrictStr

DATA_DIR = Path(os.environ.get("DATA_DIR") or Path(__file__).resolve().parent.parent / "data")
CSV_PATH = DATA_DIR / "titanic.csv"

# No /docs, /redoc or /openapi.json: every path outside the contract is a 404.
app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)


class Payload(BaseModel):
    payload: StrictStr


@app.get("/plaintext", response_class=PlainTextResponse)
async def plaintext():
    return "Hello, World!"


@app.get("/json")
async def json_route():
    return {"message": "Hello, World!"}


@app.get("/file_read")
async def file_read():
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
