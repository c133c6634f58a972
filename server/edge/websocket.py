"""The WebSocket at ``/ws`` (websockets ≥ 13), and the HTTP requests on the same port.

What happens here and nowhere else: the handshake's checks (``--allow-origin``, connections
per address), each connection's message rate, parsing a frame into a message
(:func:`server.protocol.parse_client`), the ``hello``-first rule, handing the message to its
handler, and turning a refusal into the contract's ``error`` answer. What a message does is
the handler's business (``server.app`` wires the table of handlers).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from server.connections import Conn, Presence
from server.edge.http import Http, response
from server.errors import ProtocolError, Refused
from server.protocol import (
    AnyClientMessage,
    Error,
    Hello,
    parse_client,
    peek_id,
)

log = logging.getLogger("tablas.server")

MAX_FRAME = 64 * 1024
# The kernel's send buffer per connection. Left to itself Linux grows it up to tcp_wmem's
# maximum (4 MiB) for a peer that stops reading, so a slow client would hold megabytes and
# stay connected long after Conn's OUT_BUFFER should have dropped it. Fixed, it bounds a
# connection to about 2 × SEND_BUFFER in the kernel + OUT_BUFFER + one message.
SEND_BUFFER = 64 * 1024
RATE = 20.0  # messages a second, per connection
BURST = 40.0
MAX_CONNS_PER_ADDRESS = 64
TOO_MANY_CONNS = "too many connections from this address"

Handler = Callable[[Conn, Any], Awaitable[None]]


def _loggable(raw: str | bytes) -> str | bytes:
    """The start of a frame, for the log, with any token blanked out: a token is a secret
    and logs are read by more people than the database is."""
    with contextlib.suppress(ValueError, RecursionError):
        obj = json.loads(raw)
        if isinstance(obj, dict) and "token" in obj:
            obj["token"] = "<redacted>"
            return json.dumps(obj)[:200]
    if b"token" in (raw.encode(errors="replace") if isinstance(raw, str) else raw):
        return "<a frame mentioning a token, not logged>"
    return raw[:200]


def _peer(ws: ServerConnection) -> str:
    """The peer's address without its port: the unit of the cap on connections."""
    address = ws.remote_address
    return str(address[0]) if address else ""


class TokenBucket:
    def __init__(self, rate: float = RATE, burst: float = BURST,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self.clock = rate, burst, clock
        self.tokens = burst
        self.at = clock()

    def take(self) -> bool:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


class _Connection(ServerConnection):
    """websockets' server connection, which also breaks the reference cycles its protocol is
    left in once the connection is lost. The sans-I/O protocol's parser is a generator of
    its own that stays suspended after its last step, its frame holding the protocol: a
    cycle for every connection, cleanly closed or not. And it keeps the exception that broke
    its handshake or its parser (for ``close_exc`` and for inspection), whose traceback holds
    the parser's frames: more cycles for every connection that ends badly (a reset, a
    handshake refused or broken off, a frame too large). Only a pass over the older
    generations frees a cycle that outlived a young collection, and ``tablas serve`` makes
    one every hour, or once memory has grown by half (``server.loop.quiet_collector``):
    until then a client could pile them up by the hundred thousand (docs/server.md, "The
    garbage collector")."""

    def connection_lost(self, exc: Exception | None) -> None:
        # Whatever broke the connection has been parsed by now (the end of the stream
        # included); nothing steps the parser after this, and nothing needs the exceptions
        # but ``close_exc``'s cause.
        super().connection_lost(exc)
        self._break_cycles()

    def _break_cycles(self) -> None:
        # Without their tracebacks the exceptions hold no frame (a refused handshake's
        # exception is also kept by the handshake's request, which its traceback's frames
        # hold: a cycle of its own, without the connection).
        seen: set[int] = set()
        chained: list[BaseException | None] = [self.protocol.handshake_exc,
                                               self.protocol.parser_exc]
        while chained:
            e = chained.pop()
            if e is not None and id(e) not in seen:
                seen.add(id(e))
                e.__traceback__ = None
                chained += [e.__cause__, e.__context__]
        self.protocol.handshake_exc = None
        self.protocol.parser_exc = None
        self.protocol.parser.close()


class Edge:
    """Listens, admits connections, reads their frames and hands each message over."""

    def __init__(
        self,
        handlers: Mapping[type[Any], Handler],
        presence: Presence,
        goodbye: Callable[[Conn], Awaitable[None]],
        http: Http,
        *,
        rate: float = RATE,
        burst: float = BURST,
        allow_origins: Sequence[str] | None = None,
        max_conns_per_address: int | None = MAX_CONNS_PER_ADDRESS,
    ) -> None:
        """``handlers``: per message type, what it does; ``goodbye``: what a closed
        connection leaves behind. ``allow_origins`` None: any; ``max_conns_per_address``
        None: no cap."""
        self.handlers = handlers
        self.presence = presence
        self.goodbye = goodbye
        self.http = http
        self.rate, self.burst = rate, burst
        # Stored without a trailing slash and in lower case, as browsers send it.
        self.allow_origins = (
            None if allow_origins is None
            else frozenset(o.rstrip("/").lower() for o in allow_origins)
        )
        self.max_conns_per_address = max_conns_per_address
        self.per_address: dict[str, int] = {}  # open WebSockets per peer address
        self.server: Server | None = None

    async def start(self, host: str, port: int) -> int:
        """Listens on ``host:port`` (0: any free port); the port actually bound."""
        self.server = await serve(
            self.handler,
            host,
            port,
            process_request=self.process_request,
            max_size=MAX_FRAME,
            max_queue=32,
            # Frames are a few hundred bytes: permessage-deflate saves little bandwidth and
            # cost ~8% of the server's CPU under load (docs/benchmarks.md).
            compression=None,
            server_header="tablas",
            create_connection=_Connection,
        )
        sock = next(iter(self.server.sockets))
        bound: int = sock.getsockname()[1]
        log.info("tablas listening on ws://%s:%d/ws", host, bound)
        return bound

    async def close(self) -> None:
        """Stops listening and closes every connection with a reason (1001), at once."""
        if self.server is not None:
            self.server.close(close_connections=False)
        # All at once: one by one, every client that does not answer the close frame
        # would add its own timeout to the shutdown (4 of them took 16 s).
        await asyncio.gather(*(self._say_goodbye(c) for c in list(self.presence.conns)))
        if self.server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.wait_closed(), 5)

    @staticmethod
    async def _say_goodbye(conn: Conn) -> None:
        conn.closing = True
        try:
            await asyncio.wait_for(conn.ws.close(1001, "server shutting down"), 2)
        except Exception:
            # No answer to the close frame in time (the peer does not read): drop the TCP
            # connection, or its handler would hold server.wait_closed() up too.
            conn.ws.transport.abort()

    # --- admission -----------------------------------------------------------------------

    async def process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        if urlsplit(request.path).path != "/ws":
            return await self.http.answer(request)
        if not self._origin_allowed(request.headers):
            log.warning("refused a WebSocket from origin %r", request.headers.get("Origin"))
            return response(HTTPStatus.FORBIDDEN, b"origin not allowed\n", "text/plain")
        if self._too_many_from(_peer(connection), 1):
            return response(HTTPStatus.TOO_MANY_REQUESTS, TOO_MANY_CONNS.encode() + b"\n",
                            "text/plain")
        return None

    def _origin_allowed(self, headers: Headers) -> bool:
        """The ``--allow-origin`` check (cross-site WebSocket hijacking): a browser always
        sends ``Origin``; a request without one is not from a web page (a bot, a script) and
        is let through, and so is a page served by this very server (same host)."""
        if self.allow_origins is None:
            return True
        origins = headers.get_all("Origin")
        if not origins:
            return True
        if len(origins) > 1:
            return False
        origin = origins[0].rstrip("/").lower()
        host = headers.get("Host", "").lower()
        return origin in self.allow_origins or origin in (f"http://{host}", f"https://{host}")

    def _too_many_from(self, address: str, extra: int) -> bool:
        """Whether ``address`` holds more than the cap allows, counting ``extra`` beyond
        its open WebSockets."""
        cap = self.max_conns_per_address
        return cap is not None and self.per_address.get(address, 0) + extra > cap

    # --- a connection's life -------------------------------------------------------------

    async def handler(self, ws: ServerConnection) -> None:
        address = _peer(ws)
        self.per_address[address] = self.per_address.get(address, 0) + 1
        try:
            # process_request refused most; handshakes that passed it together are
            # counted here, once each, and the ones past the cap are closed.
            if self._too_many_from(address, 0):
                log.warning("closing a WebSocket from %s: %s", address, TOO_MANY_CONNS)
                await ws.close(1008, TOO_MANY_CONNS)
                return
            await self._serve(ws)
        finally:
            left = self.per_address[address] - 1
            if left:
                self.per_address[address] = left
            else:
                del self.per_address[address]

    async def _serve(self, ws: ServerConnection) -> None:
        sock = ws.transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        conn = Conn(ws)
        bucket = TokenBucket(self.rate, self.burst)
        self.presence.conns.add(conn)
        try:
            async for raw in ws:
                if bucket.take():
                    await self._on_frame(conn, raw)
                else:
                    conn.send(Error(re=peek_id(raw), code="rate_limited",
                                    message=f"more than {self.rate:g} messages a second"))
        except ConnectionClosed:
            pass
        finally:
            conn.closing = True
            await self.goodbye(conn)

    async def _on_frame(self, conn: Conn, raw: str | bytes) -> None:
        msg: AnyClientMessage | None = None
        try:
            msg = parse_client(raw)
            if conn.player is None and not isinstance(msg, Hello):
                raise ProtocolError("not_authenticated", "send hello first", msg.id)
            await self.handlers[type(msg)](conn, msg)
        except Refused as e:
            re = e.re if e.re is not None else msg.id if msg is not None else None
            conn.send(Error(re=re, code=e.code, message=e.message))
        except Exception:
            log.exception(
                "internal error: player %s, frame %r", conn.player_id, _loggable(raw)
            )
            conn.send(Error(re=msg.id if msg else peek_id(raw), code="internal",
                            message="internal server error"))
