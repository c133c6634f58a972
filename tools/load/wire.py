"""The WebSocket by hand, for clients that must cost their process little: the handshake as
one canned request, client frames, and :class:`LightClient`."""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Any

from pydantic_core import from_json, to_json
from tablas.server.client import Refused

_WS_KEY = "dGhlIHNhbXBsZSBub25jZQ=="  # any 16 bytes in base64: the server only echoes a hash
# A WebSocket handshake by hand, and the same URL asked for without it (the server: 426).
UPGRADE_REQUEST = (
    "GET /ws HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    f"Sec-WebSocket-Key: {_WS_KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()
REFUSED_REQUEST = b"GET /ws HTTP/1.1\r\nHost: bench\r\n\r\n"
# A close frame (code 1000) as a client sends it: masked, here with a key of zeros.
CLOSE_FRAME = bytes([0x88, 0x82, 0, 0, 0, 0, 0x03, 0xE8])


def _client_frame(opcode: int, payload: bytes) -> bytes:
    """A client's frame, final, masked with a key of zeros (which leaves the payload as is)."""
    n = len(payload)
    if n < 126:
        head = bytes((0x80 | opcode, 0x80 | n))
    elif n < 1 << 16:
        head = bytes((0x80 | opcode, 0xFE)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, 0xFF)) + n.to_bytes(8, "big")
    return head + b"\0\0\0\0" + payload


# The start of an answer as the server writes it (``with_re``), enough to match a big one
# (the lobby, 55 kB with 200 rooms) to its request without parsing it.
_ANSWER_HEAD = re.compile(rb'\{"re":(\d+),"type":"(\w+)"')
BIG_FRAME = 4096


class LightClient:
    """A WebSocket client by hand: the handshake is one canned request, a request's answer is
    found by ``re`` (a frame without ``"re":`` is not even parsed, nor is a big answer past
    its head), pings are answered, and nothing else is kept. About a sixth of a
    :class:`~tablas.server.client.ProtocolClient`'s CPU per connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.n = 0
        self.waiters: dict[Any, asyncio.Future[dict[str, Any]]] = {}  # by id
        self.task = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, port: int) -> LightClient:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(UPGRADE_REQUEST)
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            writer.close()
            raise ConnectionError(head.split(b"\r\n", 1)[0].decode(errors="replace"))
        return cls(reader, writer)

    async def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Sends ``msg`` with a fresh ``id``; its answer (an ``error`` raises :class:`Refused`)."""
        if self.task.done():
            raise Refused(str(msg.get("type")), "closed")
        self.n += 1
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiters[self.n] = fut
        self.writer.write(_client_frame(0x1, to_json(dict(msg, id=self.n))))
        m = await fut
        if m.get("type") == "error":
            raise Refused(str(msg.get("type")), str(m.get("code")), str(m.get("message")))
        return m

    async def _read(self) -> None:
        read = self.reader.readexactly
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while True:
                b0, b1 = await read(2)
                n = b1 & 0x7F
                if n == 126:
                    n = int.from_bytes(await read(2), "big")
                elif n == 127:
                    n = int.from_bytes(await read(8), "big")
                payload = await read(n) if n else b""
                opcode = b0 & 0x0F
                if opcode == 0x9:  # ping: the server closes a connection that never pongs
                    self.writer.write(_client_frame(0xA, payload))
                elif opcode == 0x8:
                    break
                elif self.waiters and b'"re":' in payload:
                    head = _ANSWER_HEAD.match(payload) if len(payload) > BIG_FRAME else None
                    m: dict[str, Any] = ({"re": int(head[1]), "type": head[2].decode()}
                                         if head is not None else from_json(payload))
                    fut = self.waiters.pop(m.get("re"), None)
                    if fut is not None and not fut.done():
                        fut.set_result(m)
        for fut in self.waiters.values():
            if not fut.done():
                fut.set_exception(Refused("connection", "closed"))
        self.waiters.clear()

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            self.writer.write(CLOSE_FRAME)
            self.writer.close()
        self.task.cancel()


LIGHT_ERRORS = (OSError, EOFError, Refused)  # EOFError: asyncio.IncompleteReadError
