"""Views of the python-django target: plain sync views for gunicorn's sync workers.

JSON answers go through JsonResponse with compact separators, so bodies are
byte-exact per targets/SPEC.md. The POST views are csrf_exempt, as JSON APIs
are; a body that is not a JSON object with a string `payload` answers 400.
"""

import csv
import json
import time

import bcrypt
from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

COMPACT = {"separators": (",", ":")}


def compact_json(data, status=200):
    return JsonResponse(data, status=status, json_dumps_params=COMPACT)


@require_GET
def plaintext(request):
    return HttpResponse("Hello, World!", content_type="text/plain; charset=utf-8")


@require_GET
def json_view(request):
    return compact_json({"message": "Hello, World!"})


@require_GET
def file_read(request):
    with open(settings.DATA_DIR / "titanic.csv", newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        next(reader)  # header
        rows = sum(1 for _ in reader)
    return compact_json({"message": "file_read", "rows": rows})


@require_GET
def wait_time(request):
    time.sleep(1)
    return compact_json({"message": "time_sleep"})


def read_payload(request):
    """The string `payload` of the JSON body, or None if the body is not that."""
    try:
        data = json.loads(request.body)
    except ValueError:  # includes JSONDecodeError and UnicodeDecodeError
        return None
    if not isinstance(data, dict) or not isinstance(data.get("payload"), str):
        return None
    return data["payload"]


def bad_request():
    return compact_json({"error": "body must be a JSON object with a string payload"}, status=400)


@csrf_exempt
@require_POST
def simple(request):
    payload = read_payload(request)
    if payload is None:
        return bad_request()
    return compact_json({"payload": "Hello, " + payload})


@csrf_exempt
@require_POST
def timed(request):
    payload = read_payload(request)
    if payload is None:
        return bad_request()
    time.sleep(0.02)
    return compact_json({"payload": "Hello, " + payload})


@csrf_exempt
@require_POST
def bcrypt_view(request):
    payload = read_payload(request)
    if payload is None:
        return bad_request()
    hashed = bcrypt.hashpw(payload.encode("utf-8"), bcrypt.gensalt(rounds=10))
    return compact_json({"payload": hashed.decode("ascii")})
