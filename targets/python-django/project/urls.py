"""URL routes of the python-django target (targets/SPEC.md)."""

from django.urls import path

from . import views

urlpatterns = [
    path("plaintext", views.plaintext),
    path("json", views.json_view),
    path("file_read", views.file_read),
    path("wait_time", views.wait_time),
    path("test/simple", views.simple),
    path("test/timed", views.timed),
    path("test/bcrypt", views.bcrypt_view),
    path("db", views.db),
    path("queries", views.queries),
    path("fortunes", views.fortunes),
    path("updates", views.updates),
]
