"""ASGI entry point of the python-django target: the WebSocket echo at /ws.

Every HTTP route is the WSGI app (project.wsgi) on gunicorn. /ws
(targets/SPEC.md, "WebSocket") is Django Channels on an ASGI server on
WS_PORT beside it: Channels' deployment docs allow keeping "standard HTTP
requests through a WSGI server" and using an ASGI server "only for things
WSGI cannot do, like HTTP long-polling and WebSockets" (Deploying, "HTTP and
WebSocket", https://channels.readthedocs.io/en/latest/deploying.html). The
server is uvicorn, which the same page lists under "Alternative Web Servers",
rather than Daphne: uvicorn starts one process per CPU itself (--workers),
where several Daphnes on one port need a supervisor passing them the socket.
The router is the root application of that page's asgi.py example: Django's
ASGI app for "http" (unused: nothing sends HTTP to WS_PORT) and a URLRouter
for "websocket" (https://channels.readthedocs.io/en/latest/topics/routing.html),
without the session/auth middleware or the Origin check an echo does not
need. No channel layer (CHANNEL_LAYERS unset); the consumer opens no
database connection.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

# Set up Django (apps, settings) before importing anything that uses models.
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path  # noqa: E402

from project.consumers import EchoConsumer  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": URLRouter([path("ws", EchoConsumer.as_asgi())]),
    }
)
