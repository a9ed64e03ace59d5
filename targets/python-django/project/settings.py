"""Django settings for the python-django target (the only settings module).

Production-style: DEBUG off, the middleware list `startproject` generates.
Served by gunicorn with (2 x CPUs) + 1 sync workers, at most DB_POOL_SIZE;
see ../target.toml.

Database (SPEC.md, "Database routes"): PostgreSQL from DATABASE_URL through the
Django ORM on psycopg 3 with Django's defaults (client-side parameter binding),
and persistent connections (CONN_MAX_AGE=None): each sync worker serves one
request at a time and holds one connection, within its share
max(1, DB_POOL_SIZE // workers), which is 1 or more because the worker count
never exceeds DB_POOL_SIZE. Without DATABASE_URL there is no database and the
database views answer 503. The fortunes template is a Django template
(autoescaping on) in project/templates.
"""

import os
from pathlib import Path
from urllib.parse import unquote, urlsplit

BASE_DIR = Path(__file__).resolve().parent.parent

# A benchmark fixture bound to localhost; nothing here is signed or secret.
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "shootout-reference-server-not-a-secret")
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "project",  # the World and Fortune models and the fortunes template
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "project.urls"
WSGI_APPLICATION = "project.wsgi.application"



def _database(url):
    parts = urlsplit(url)
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
        "CONN_MAX_AGE": None,  # one persistent connection per worker
    }


DATABASE_URL = os.environ.get("DATABASE_URL") or None
DATABASES = {"default": _database(DATABASE_URL)} if DATABASE_URL else {}

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
    },
]

USE_TZ = True
USE_I18N = False

DATA_DIR = Path(os.environ.get("DATA_DIR") or BASE_DIR.parent / "data")
