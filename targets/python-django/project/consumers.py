"""The WebSocket echo consumer of the python-django target (project.asgi).

A Channels AsyncWebsocketConsumer (Channels docs, Consumers, "WebsocketConsumer"
and "AsyncWebsocketConsumer",
https://channels.readthedocs.io/en/latest/topics/consumers.html#websocketconsumer):
its default connect() accepts; receive() gets either text_data (a text
message) or bytes_data (a binary one) and sends it back with the same type.
Limits, pings and close handshakes are uvicorn's with the pinned
`websockets` package: messages up to 16 MiB (ws_max_size), a ping every
20 s, pings answered, close frames echoed, a protocol error closed with 1002.
"""

from channels.generic.websocket import AsyncWebsocketConsumer


class EchoConsumer(AsyncWebsocketConsumer):
    async def receive(self, text_data=None, bytes_data=None):
        if text_data is not None:
            await self.send(text_data=text_data)
        else:
            await self.send(bytes_data=bytes_data)
