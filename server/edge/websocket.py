"""The WebSocket at ``/ws`` (websockets ≥ 13), and the HTTP requests on the same port.

What happens here and nowhere else: the handshake's checks (a well-formed request,
``--allow-origin``, connections per address), each address's message budget (handshakes
included, :class:`AddressBudget`), parsing a frame into a message
(:func:`tablas.server.protocol.parse_client`), the ``hello``-first rule, handing the message to its
handler, and turning a refusal into the contract's ``error`` answer. What a message does is
the handler's business (``tablas.server.app`` wires the table of handlers).
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

from tablas.server.connections import Conn, Presence
from tablas.server.edge.http import (
    SAFE_HEADERS,
    Http,
    bad_request,
    malformed,
    response,
    split_target,
    starting,
)
from tablas.server.edge.limits import AddressBudget
from tablas.server.edge.networks import AddressKeys
from tablas.server.errors import ErrorCode, ProtocolError, Refused
from tablas.server.metrics import Metrics
from tablas.server.protocol import (
    AnyClientMessage,
    Error,
    Hello,
    parse_client,
    peek_id,
)
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed, InvalidMessage
from websockets.http11 import Request, Response
from websockets.server import ServerProtocol
from websockets.typing import StatusLike

log = logging.getLogger("tablas.server")

MAX_FRAME = 64 * 1024
# The kernel's send buffer per connection. Left to itself Linux grows it up to tcp_wmem's
# maximum (4 MiB) for a peer that stops reading, so a slow client would hold megabytes and
# stay connected long after Conn's OUT_BUFFER should have dropped it. Fixed, it bounds a
# connection to about 2 × SEND_BUFFER in the kernel + OUT_BUFFER + one message.
SEND_BUFFER = 64 * 1024
# Connections the kernel holds, handshake done, until the event loop accepts them (the
# listen backlog; Linux caps it at net.core.somaxconn). Past it a new connection's SYN is
# dropped and the client sends it again a second later (then 3 s, 7 s…). asyncio's default,
# 100, is overrun when a rush of 1,000 connections a second meets a loop stalled 100 ms (a
# full collection, a burst of work): this holds a second of such a rush.
LISTEN_BACKLOG = 1024
MAX_MSGS_PER_ADDRESS = 100.0  # messages a second, handshakes included, per client address
MAX_CONNS_PER_ADDRESS = 64
TOO_MANY_CONNS = "too many connections from this address"
TOO_MANY_MSGS = "too many messages from this address"

Handler = Callable[[Conn, Any], Awaitable[None]]


_SECRETS = ("token", "password")


def _loggable(raw: str | bytes) -> str | bytes:
    """The start of a frame, for the log, with any token or password blanked out: they are
    secrets, and logs are read by more people than the database is."""
    with contextlib.suppress(ValueError, RecursionError):
        obj = json.loads(raw)
        if isinstance(obj, dict) and any(k in obj for k in _SECRETS):
            for k in _SECRETS:
                if k in obj:
                    obj[k] = "<redacted>"
            return json.dumps(obj)[:200]
    data = raw.encode(errors="replace") if isinstance(raw, str) else raw
    if any(k.encode() in data for k in _SECRETS):
        return "<a frame mentioning a token or password, not logged>"
    return raw[:200]


def _peer(ws: ServerConnection) -> str:
    """The peer's address without its port: the unit of the caps on connections and
    messages."""
    address = ws.remote_address
    return str(address[0]) if address else ""


def _too_many(why: str) -> Response:
    return response(HTTPStatus.TOO_MANY_REQUESTS, why.encode() + b"\n", "text/plain")


class _HeadedProtocol(ServerProtocol):
    """websockets' server protocol, whose own refusals (414 for a long target, 431 for too
    many headers, 426 without Upgrade) carry the headers every answer of this server
    carries (contract section 15)."""

    def reject(self, status: StatusLike, text: str) -> Response:
        answer = super().reject(status, text)
        for name, value in SAFE_HEADERS:
            if name not in answer.headers:
                answer.headers[name] = value
        return answer


class _Connection(ServerConnection):
    """websockets' server connection, which answers 400 to a request it cannot parse, and
    breaks the reference cycles its protocol is left in once the connection is lost. The
    sans-I/O protocol's parser is a generator of its own that stays suspended after its last
    step, its frame holding the protocol: a cycle for every connection, cleanly closed or
    not. And it keeps the exception that broke
    its handshake or its parser (for ``close_exc`` and for inspection), whose traceback holds
    the parser's frames: more cycles for every connection that ends badly (a reset, a
    handshake refused or broken off, a frame too large). Only a pass over the older
    generations frees a cycle that outlived a young collection, and ``tablas serve`` makes
    one every hour, or once memory has grown by half and 256 MiB
    (``tablas.server.loop.quiet_collector``): until then a client could pile them up by the
    hundred thousand (docs/server.md, "The garbage collector")."""

    answered_bad_request = False
    metrics: Metrics | None = None  # set on the class each Edge makes (_counted_by)

    def __init__(self, protocol: ServerProtocol, *args: Any, **kwargs: Any) -> None:
        # websockets makes the protocol before the connection and takes no class for it: it
        # becomes the subclass here, whose reject() adds the headers (a method bound on the
        # instance instead would tie it to itself in a reference cycle).
        protocol.__class__ = _HeadedProtocol
        super().__init__(protocol, *args, **kwargs)

    def send_data(self) -> None:
        # A request websockets cannot parse as HTTP (a junk request line, a body, a header
        # without a colon, a target that is not ASCII) ends its parser with no answer but
        # the end of the stream. HTTP (and the contract, section 6) want a 400 first.
        if (self.request is None and not self.answered_bad_request
                and type(self.protocol.handshake_exc) is InvalidMessage):
            self.answered_bad_request = True
            bad = bad_request("not an HTTP/1.1 request this server reads")
            bad.headers["Connection"] = "close"
            self.transport.write(bad.serialize())
            if self.metrics is not None:
                self.metrics.http(bad.status_code)
        super().send_data()

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


def _counted_by(metrics: Metrics) -> type[_Connection]:
    """The connection class of one edge: its 400s to what websockets cannot parse are
    counted in ``metrics`` (websockets makes the connections; one class per server keeps
    several servers in one process apart)."""

    class Counted(_Connection):
        pass

    Counted.metrics = metrics
    return Counted


class Edge:
    """Listens, admits connections, reads their frames and hands each message over."""

    def __init__(
        self,
        handlers: Mapping[type[Any], Handler],
        presence: Presence,
        goodbye: Callable[[Conn], Awaitable[None]],
        http: Http,
        *,
        metrics: Metrics,
        allow_origins: Sequence[str] | None = None,
        max_conns_per_address: int | None = MAX_CONNS_PER_ADDRESS,
        max_msgs_per_address: float | None = MAX_MSGS_PER_ADDRESS,
        addresses: AddressKeys | None = None,
    ) -> None:
        """``handlers``: per message type, what it does; ``goodbye``: what a closed
        connection leaves behind; ``metrics``: where the edge counts what it sends (HTTP
        answers, errors) and times the moves. ``allow_origins`` None: any;
        ``max_conns_per_address`` and ``max_msgs_per_address`` (a second) None or 0: no
        cap. ``addresses``: what counts as one address (default: each IP address, an
        IPv6 /64, no network vouched for)."""
        self.addresses = addresses or AddressKeys()
        self.handlers = handlers
        self.metrics = metrics
        self._connection = _counted_by(metrics)
        self.presence = presence
        self.goodbye = goodbye
        self.http = http
        self.budget = AddressBudget(max_msgs_per_address) if max_msgs_per_address else None
        # Stored without a trailing slash and in lower case, as browsers send it.
        self.allow_origins = (
            None if allow_origins is None
            else frozenset(o.rstrip("/").lower() for o in allow_origins)
        )
        self.max_conns_per_address = max_conns_per_address or None
        self.per_address: dict[str, int] = {}  # open WebSockets per peer address
        self.server: Server | None = None

    async def start(self, host: str, port: int) -> int:
        """Listens on ``host:port`` (0: any free port); the port actually bound."""
        self.server = await serve(
            self.handler,
            host,
            port,
            process_request=self.process_request,
            process_response=self.process_response,
            max_size=MAX_FRAME,
            max_queue=32,
            backlog=LISTEN_BACKLOG,
            # Frames are a few hundred bytes: permessage-deflate saves little bandwidth and
            # cost ~8% of the server's CPU under load (docs/benchmarks.md).
            compression=None,
            server_header="tablas",
            create_connection=self._connection,
        )
        sock = next(iter(self.server.sockets))
        bound: int = sock.getsockname()[1]
        log.info("serving http://%s:%d/ (the WebSocket at /ws)", host, bound)
        return bound

    async def close(self) -> None:
        """Stops listening and closes every connection with a reason (1001), at once."""
        if self.server is not None:
            self.server.close(close_connections=False)
        # All at once: one by one, every client that does not answer the close frame
        # would add its own timeout to the shutdown (4 of them took 16 s).
        await asyncio.gather(*(self._say_goodbye(c) for c in list(self.presence.conns.values())))
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
        answer = await self._admit(connection, request)
        if answer is not None:
            # websockets closes the connection after any answer but a 101: say so, or a
            # client that keeps connections alive learns it only from the end of the stream.
            answer.headers["Connection"] = "close"
        return answer

    def process_response(self, connection: ServerConnection, request: Request,
                         answer: Response) -> None:
        """Counts every answer to a request websockets parsed: this edge's, the HTTP
        answers, a WebSocket accepted (``101``) or refused by websockets' own checks."""
        self.metrics.http(answer.status_code)

    async def _admit(self, connection: ServerConnection, request: Request) -> Response | None:
        """None to go on with the WebSocket's handshake, or the answer to send instead."""
        refused = malformed(request)
        if refused is not None:
            return refused
        target = split_target(request.path)
        address = self.addresses.key(_peer(connection), id(connection))
        if target is None or target[0] != "/ws":
            return await self.http.answer(request, address)
        if not self.http.readiness.started:
            return starting()
        if self.budget is not None and not self.budget.take(address):
            refused = _too_many(TOO_MANY_MSGS)
            refused.headers["Retry-After"] = "1"  # a token comes back within the second
            return refused
        if not self._origin_allowed(request.headers):
            log.warning("refused a WebSocket from origin %r", request.headers.get("Origin"))
            return response(HTTPStatus.FORBIDDEN, b"origin not allowed\n", "text/plain")
        if self._too_many_from(address, 1):
            return _too_many(TOO_MANY_CONNS)
        return None

    def _origin_allowed(self, headers: Headers) -> bool:
        """The ``--allow-origin`` check (cross-site WebSocket hijacking): a browser always
        sends ``Origin``; a request without one is not from a web page (a bot, a script) and
        is let through, and so is a page served by this very server (same host). Two
        ``Origin`` or ``Host`` headers were refused before (:func:`malformed`)."""
        if self.allow_origins is None:
            return True
        origin = headers.get("Origin")
        if origin is None:
            return True
        origin = origin.rstrip("/").lower()
        host = headers.get("Host", "").lower()
        return origin in self.allow_origins or origin in (f"http://{host}", f"https://{host}")

    def _too_many_from(self, address: str, extra: int) -> bool:
        """Whether ``address`` holds more than the cap allows, counting ``extra`` beyond
        its open WebSockets."""
        cap = self.max_conns_per_address
        return cap is not None and self.per_address.get(address, 0) + extra > cap

    # --- a connection's life -------------------------------------------------------------

    async def handler(self, ws: ServerConnection) -> None:
        address = self.addresses.key(_peer(ws), id(ws))
        self.per_address[address] = self.per_address.get(address, 0) + 1
        try:
            # process_request refused most; handshakes that passed it together are
            # counted here, once each, and the ones past the cap are closed.
            if self._too_many_from(address, 0):
                log.warning("closing a WebSocket from %s: %s", address, TOO_MANY_CONNS)
                await ws.close(1008, TOO_MANY_CONNS)
                return
            await self._serve(ws, address)
        finally:
            left = self.per_address[address] - 1
            if left:
                self.per_address[address] = left
            else:
                del self.per_address[address]

    async def _serve(self, ws: ServerConnection, address: str) -> None:
        sock = ws.transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        conn = Conn(ws, address=address)
        budget = self.budget
        self.presence.opened(conn)
        try:
            async for raw in ws:
                if budget is None or budget.take(address):
                    await self._on_frame(conn, raw)
                else:
                    self._refuse(conn, peek_id(raw), "rate_limited",
                                 f"more than {budget.rate:g} messages a second from your "
                                 "address")
        except ConnectionClosed:
            pass
        finally:
            conn.closing = True
            await self.goodbye(conn)

    async def _on_frame(self, conn: Conn, raw: str | bytes) -> None:
        # A move's receipt: its update to the mover is timed from here (server.live_room).
        conn.received = time.perf_counter()
        msg: AnyClientMessage | None = None
        try:
            msg = parse_client(raw)
            if conn.player is None and not isinstance(msg, Hello):
                raise ProtocolError("not_authenticated", "send hello first", msg.id)
            await self.handlers[type(msg)](conn, msg)
        except Refused as e:
            re = e.re if e.re is not None else msg.id if msg is not None else None
            conn.send(Error.of(e, re))
            self.metrics.error(e.code)
        except Exception:
            log.exception(
                "internal error: player %s, frame %r", conn.player_id, _loggable(raw)
            )
            self._refuse(conn, msg.id if msg else peek_id(raw), "internal",
                         "internal server error")

    def _refuse(self, conn: Conn, re: str | int | None, code: ErrorCode, message: str) -> None:
        """Sends the contract's ``error`` and counts it (``tablas_errors_total``)."""
        conn.send(Error(re=re, code=code, message=message))
        self.metrics.error(code)
