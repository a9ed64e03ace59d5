"""Django settings for the python-django target (the only settings module).

Production-style: DEBUG off, the middleware list `startproject` generates, no
database (nothing here queries one), no templates. Served by gunicorn with 3
sync workers; see ../target.toml.
"""

import os
from pathlib import Path

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

DATABASES = {}
TEMPLATES = []

USE_TZ = True
USE_I18N = False

DATA_DIR = Path(os.environ.get("DATA_DIR") or BASE_DIR.parent / "data")
