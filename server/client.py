"""A scripted client of the WebSocket protocol (contract section 3), for programs that play or
watch: ``tablas bench``, the load generator in ``tools/``, a third-party bot.

One task reads the socket. An answer (``re``) goes to the :meth:`ProtocolClient.request` that
waits for it; any other message goes to the :meth:`ProtocolClient.next_of` that waits for one
like it, else to the inbox (a spectator that only counts what it gets keeps nothing), and to
``on_message`` first, with the time it arrived. It is written to cost its host little, since a
benchmark's clients share the machine with the server they measure: no task or timer per
message, JSON by pydantic-core, frames written at once.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections.abc import Callable
from typing import Any

import websockets
from pydantic_core import from_json, to_json
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.connection import broadcast

Message = dict[str, Any]
OnMessage = Callable[[Message, float], None]


class Refused(Exception):
    """The server answered a request with an ``error`` (or the connection closed first):
    ``code`` is the contract's error code (``closed`` for the latter)."""

    def __init__(self, request: str, code: str, message: str = "") -> None:
        super().__init__(f"{request}: {code} {message}".rstrip())
        self.code = code


class ProtocolClient:
    """One connection to a Tablas server (or to anything that answers frames by ``answer_key``,
    as an echo server does by ``id``)."""

    def __init__(self, ws: ClientConnection, *, on_message: OnMessage | None = None,
                 keep: bool = True, answer_key: str = "re") -> None:
        self.ws = ws
        self.on_message = on_message
        self.keep = keep
        self.answer_key = answer_key
        self.welcome: Message | None = None
        self.n = 0
        self._waiters: dict[int, asyncio.Future[Message]] = {}
        self._wanted: tuple[Callable[[Message], bool], asyncio.Future[Message]] | None = None
        self.inbox: collections.deque[Message] = collections.deque()
        self.reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, url: str, name: str | None = None, token: str | None = None, *,
                   on_message: OnMessage | None = None, keep: bool = True,
                   answer_key: str = "re", open_timeout: float = 60) -> ProtocolClient:
        """Connects to ``url`` (``ws://HOST:PORT/ws``) and, given a ``name``, says ``hello``
        (with ``token``, to come back as the same player); the ``welcome`` is kept."""
        ws = await websockets.connect(url, max_size=2**22, open_timeout=open_timeout,
                                      compression=None)
        client = cls(ws, on_message=on_message, keep=keep, answer_key=answer_key)
        if name is not None:
            client.welcome = await client.request(
                {"type": "hello", "name": name, "token": token})
        return client

    async def _read(self) -> None:
        key = self.answer_key
        with contextlib.suppress(websockets.ConnectionClosed):
            async for raw in self.ws:
                t = time.perf_counter()
                m: Message = from_json(raw)
                rid = m.get(key)
                fut = self._waiters.pop(rid, None) if rid is not None else None
                if fut is not None:
                    if not fut.done():
                        fut.set_result(m)
                    continue
                if self.on_message is not None:
                    self.on_message(m, t)
                wanted = self._wanted
                if wanted is not None and wanted[0](m):
                    self._wanted = None
                    if not wanted[1].done():
                        wanted[1].set_result(m)
                elif self.keep:
                    self.inbox.append(m)
        closed = Refused("connection", "closed")
        for fut in [*self._waiters.values(), *([self._wanted[1]] if self._wanted else [])]:
            if not fut.done():
                fut.set_exception(closed)

    async def request(self, msg: Message) -> Message:
        """Sends ``msg`` (with a fresh ``id``) and returns the answer to it; an ``error``
        answer raises :class:`Refused`."""
        if self.reader.done():
            raise Refused(str(msg.get("type")), "closed")
        self.n += 1
        msg = dict(msg, id=self.n)
        fut = asyncio.get_running_loop().create_future()
        self._waiters[self.n] = fut
        # websockets' synchronous send (its broadcast): a scripted client sends one frame
        # and waits for the answer, it has nothing to pace.
        broadcast((self.ws,), to_json(msg), text=True)
        m: Message = await fut
        if m.get("type") == "error":
            raise Refused(str(msg.get("type")), str(m.get("code")), str(m.get("message")))
        return m

    def send(self, msg: Message) -> int:
        """Sends ``msg`` with a fresh ``id`` (returned) and waits for nothing: its answer, an
        error included, goes to ``on_message`` (or the inbox) like any other message."""
        self.n += 1
        broadcast((self.ws,), to_json(dict(msg, id=self.n)), text=True)
        return self.n

    async def next_of(self, pred: Callable[[Message], bool]) -> Message:
        """The next message (not an answer) that ``pred`` accepts; the kept ones before it
        are dropped."""
        while self.inbox:
            m = self.inbox.popleft()
            if pred(m):
                return m
        if self.reader.done():
            raise Refused("next message", "closed")
        fut: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._wanted = (pred, fut)
        return await fut

    async def next_type(self, kind: str) -> Message:
        """The next message of type ``kind``."""
        return await self.next_of(lambda m: m.get("type") == kind)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.ws.close()
        self.reader.cancel()
