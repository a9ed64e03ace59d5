"""Views of the python-django target: plain sync views for gunicorn's sync workers.

JSON answers go through JsonResponse with compact separators, so bodies are
byte-exact per targets/SPEC.md. The POST views are csrf_exempt, as JSON APIs
are; a body that is not a JSON object with a string `payload` answers 400.

The database views use the ORM (models.py): one `get` per row, all fortunes
in one query, and one `bulk_update` (a single UPDATE) for the updates. Without
DATABASE_URL (settings.DATABASE_URL is None) they answer 503.
"""

import csv
import functools
import json
import random
import time

import bcrypt
from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from .models import Fortune, World

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


def needs_database(view):
    @functools.wraps(view)
    def wrapper(request):
        if settings.DATABASE_URL is None:
            return compact_json({"error": "DATABASE_URL is not set"}, status=503)
        return view(request)

    return wrapper


def random_id():
    return random.randint(1, 10000)


def queries_param(request):
    """The `queries` parameter clamped to 1..500; missing or not an integer is 1."""
    try:
        q = int(request.GET.get("queries", ""))
    except ValueError:
        return 1
    return min(max(q, 1), 500)


def world_json(world):
    return {"id": world.id, "randomNumber": world.randomnumber}


@require_GET
@needs_database
def db(request):
    return compact_json(world_json(World.objects.get(id=random_id())))


@require_GET
@needs_database
def queries(request):
    worlds = [World.objects.get(id=random_id()) for _ in range(queries_param(request))]
    return JsonResponse([world_json(w) for w in worlds], safe=False, json_dumps_params=COMPACT)


@require_GET
@needs_database
def fortunes(request):
    fortunes = list(Fortune.objects.all())
    fortunes.append(Fortune(id=0, message="Additional fortune added at request time."))
    fortunes.sort(key=lambda f: f.message)
    return render(request, "fortunes.html", {"fortunes": fortunes})


@require_GET
@needs_database
def updates(request):
    # Distinct ids, sorted, so every answered row carries the value finally
    # written and concurrent updates lock rows in the same order.
    ids = sorted(random.sample(range(1, 10001), queries_param(request)))
    worlds = [World.objects.get(id=i) for i in ids]
    for world in worlds:
        world.randomnumber = random_id()
    World.objects.bulk_update(worlds, ["randomnumber"])
    return JsonResponse([world_json(w) for w in worlds], safe=False, json_dumps_params=COMPACT)
