"""Falcon (ASGI) WebSocket echo at /ws for python-falcon (targets/SPEC.md, "WebSocket").

Falcon's WebSocket support exists only in its ASGI flavour, falcon.asgi.App
(Falcon docs, "WebSocket (ASGI Only)",
https://falcon.readthedocs.io/en/stable/api/websocket.html), while every HTTP
route of python-falcon is the WSGI app in app.py on gunicorn. So /ws is this
second app, served by uvicorn on WS_PORT beside gunicorn (target.toml's run
line, ../python/tls.sh); it has no other route and no database.

Falcon's WebSocket object receives a text or a binary message only through
receive_text() / receive_data() (each rejecting the other type) or through
receive_media(), which picks the media handler by the message's type. The
echo uses the latter with pass-through handlers (the "Media Handlers" section
of that page): a text message comes back as the same str, a binary one as the
same bytes, each sent back with its own type. The limits are uvicorn's
defaults with the pinned `websockets` package: messages up to 16 MiB
(ws_max_size), a ping every 20 s, pings answered, close frames echoed, a
protocol error closed with 1002.
"""

import falcon
import falcon.asgi
import falcon.media


class PassThroughText(falcon.media.TextBaseHandlerWS):
    def serialize(self, media):
        return media

    def deserialize(self, payload):
        return payload


class PassThroughBinary(falcon.media.BinaryBaseHandlerWS):
    def serialize(self, media):
        return media

    def deserialize(self, payload):
        return payload


class Echo:
    async def on_websocket(self, req, ws):
        await ws.accept()
        while True:
            try:
                message = await ws.receive_media()
            except falcon.WebSocketDisconnected:
                return
            if isinstance(message, (bytes, bytearray)):
                await ws.send_media(message, falcon.WebSocketPayloadType.BINARY)
            else:
                await ws.send_media(message, falcon.WebSocketPayloadType.TEXT)


app = falcon.asgi.App()
app.ws_options.media_handlers[falcon.WebSocketPayloadType.TEXT] = PassThroughText()
app.ws_options.media_handlers[falcon.WebSocketPayloadType.BINARY] = PassThroughBinary()
app.add_route("/ws", Echo())
