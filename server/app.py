"""The thin asyncio layer: WebSocket at ``/ws`` and HTTP on the same port (websockets ≥ 13).

Handlers only parse (:mod:`server.protocol`), call the room (:mod:`server.room`), persist
(:mod:`server.store`) and broadcast. A room's commands run under its lock, in this order:
check → commit to SQLite → change the room in memory → enqueue the messages; so every message
anyone receives describes a state already on disk, and every connection sees a room's
messages in order.

Timers: a room with a clock or ``abandon_to_bot_after_ms`` has a timer task that sleeps until
the next flag fall or handover is due (woken up whenever a move, a connection or a handover
changes that), then checks it against the injected clock under the room's lock.

Memory: a room that nobody is connected to, and whose players are gone (it is finished, or
waiting with nobody seated, or every player seated in it is offline), is dropped from
``rooms`` once it has not been used for ``evict_idle_after`` seconds (of the injected clock),
or sooner, least recently used first, when more than ``max_idle_rooms`` such rooms wait for
it; the store still has it, and the next handler that names it loads it again (a starting
server does not load vacant rooms either). A player's ``hello`` lists the seats held on disk
and brings that player's waiting rooms back. Whenever a connection subscribes to a room, it
stops following all but the last ``max_finished_followed`` finished rooms it subscribed to
(each let go of with an unprompted ``left``): a client that never sends ``leave`` would
otherwise hold every room it ever played in memory until it hangs up.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import mimetypes
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from engine.core import Outcome
from server.bots import BotPool, random_move
from server.loop import quiet_collector
from server.protocol import (
    Analysis,
    AnyClientMessage,
    BotSeat,
    Chat,
    ChatMessage,
    CreateRoom,
    Error,
    HandToBot,
    Hello,
    Join,
    Leave,
    Left,
    ListRooms,
    Move,
    ProtocolError,
    Rematch,
    Resign,
    RoomCreated,
    RoomOptions,
    Rooms,
    ServerMessage,
    Spectate,
    Welcome,
    json_text,
    parse_client,
    peek_id,
    with_re,
)
from server.room import (
    Action,
    BotJob,
    Flagged,
    Pending,
    Room,
    RoomError,
    SeatState,
    game_for,
)
from server.store import Store

log = logging.getLogger("tablas.server")

MAX_FRAME = 64 * 1024
# What a connection may have written and not yet sent (websockets' transport buffer): past
# it the reader is too slow and is dropped. Messages are written the moment they are made
# (Conn.send), so this buffer is the only outgoing queue a connection has.
OUT_BUFFER = 256 * 1024
# The kernel's send buffer per connection. Left to itself Linux grows it up to tcp_wmem's
# maximum (4 MiB) for a peer that stops reading, so a slow client would hold megabytes and
# stay connected long after OUT_BUFFER should have dropped it. Fixed, it bounds a connection
# to about 2 × SEND_BUFFER in the kernel + OUT_BUFFER + one message.
SEND_BUFFER = 64 * 1024
RATE = 20.0
BURST = 40.0
EVICT_IDLE_AFTER = 600.0  # seconds a finished or vacant room nobody is in stays in memory
MAX_IDLE_ROOMS = 1000  # such rooms kept in memory at most (the lobby shows 200 rooms)
MAX_FINISHED_FOLLOWED = 2  # finished rooms one connection follows at most
# How often (real seconds) idle rooms are looked at for eviction: a scan of the rooms in
# memory (~5 ms for 8,000), between two of which a server finishing 350 games a second (the
# load generator's saturation) gathers 1,750 more.
SWEEP_EVERY = 5.0
MAX_WAITING_ROOMS = 20  # per player
MAX_CONNS_PER_ADDRESS = 64
TOO_MANY_CONNS = "too many connections from this address"
CLIENT_DIR = Path(str(resources.files("server") / "web"))
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
    ".wasm": "application/wasm",
}


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
    """The peer's address without its port: the unit of MAX_CONNS_PER_ADDRESS."""
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


@dataclass(eq=False)
class Player:
    id: str
    name: str


@dataclass(eq=False)
class Conn:
    ws: ServerConnection
    player: Player | None = None
    # The rooms it follows, in the order it subscribed to them (a dict: ordered).
    rooms: dict[str, None] = field(default_factory=dict)
    bucket: TokenBucket = field(default_factory=TokenBucket)
    closing: bool = False

    @property
    def player_id(self) -> str | None:
        return self.player.id if self.player else None

    def send(self, msg: ServerMessage | str) -> None:
        """Writes a message now, in the order of the calls; a client that has let
        ``OUT_BUFFER`` bytes pile up unread is disconnected instead (1008)."""
        if self.closing:
            return
        if self.ws.transport.get_write_buffer_size() > OUT_BUFFER:
            self.closing = True
            log.warning("closing %s: %d bytes unread", self.ws.remote_address,
                        self.ws.transport.get_write_buffer_size())
            asyncio.get_running_loop().create_task(self.ws.close(1008, "too slow"))
            return
        # websockets' broadcast() is its synchronous send: no writer task to wake per
        # message, no waiting in drain() (the bound above replaces that back-pressure), and
        # a connection already closing is skipped.
        broadcast((self.ws,), msg if isinstance(msg, str) else msg.to_json())


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


@dataclass(eq=False)
class RoomEntry:
    room: Room
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    conns: set[Conn] = field(default_factory=set)
    spectators: set[Conn] = field(default_factory=set)
    bot_task: asyncio.Task[None] | None = None
    timer_task: asyncio.Task[None] | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    final_analysis_ply: int | None = None  # no more live analysis for this ply
    # The injected clock's time of the room's last use: the grace period before eviction
    # runs from it.
    touched: float = 0.0
    # The creator of a room created without a seat for them, until someone takes a seat:
    # the room counts against their MAX_WAITING_ROOMS meanwhile (not persisted).
    host: str | None = None


class TablasServer:
    """The whole server: rooms in memory, the store on disk, the bot pool, the sockets."""

    def __init__(
        self,
        store: Store,
        bot_workers: int | None = None,
        *,
        clock: Callable[[], float] = time.time,
        seed_factory: Callable[[], bytes] | None = None,
        client_dir: Path = CLIENT_DIR,
        bot_pause: float = 0.0,
        rate: float = RATE,
        burst: float = BURST,
        allow_origins: Sequence[str] | None = None,
        evict_idle_after: float = EVICT_IDLE_AFTER,
        sweep_every: float = SWEEP_EVERY,
        max_idle_rooms: int = MAX_IDLE_ROOMS,
        max_finished_followed: int = MAX_FINISHED_FOLLOWED,
        max_waiting_rooms: int | None = MAX_WAITING_ROOMS,
        max_conns_per_address: int | None = MAX_CONNS_PER_ADDRESS,
    ) -> None:
        """``max_waiting_rooms`` and ``max_conns_per_address``: None lifts the limit."""
        self.store = store
        self.bots = BotPool(bot_workers)
        self.clock = clock
        self.seed_factory = seed_factory
        self.client_dir = client_dir.resolve()
        self.bot_pause = bot_pause
        self.rate, self.burst = rate, burst
        # None: any Origin (as before the option existed). Stored without a trailing slash
        # and in lower case, as browsers send it.
        self.allow_origins = (
            None if allow_origins is None
            else frozenset(o.rstrip("/").lower() for o in allow_origins)
        )
        self.evict_idle_after = evict_idle_after
        self.sweep_every = sweep_every
        self.max_idle_rooms = max_idle_rooms
        self.max_finished_followed = max_finished_followed
        self.max_waiting_rooms = max_waiting_rooms
        self.max_conns_per_address = max_conns_per_address
        self.rooms: dict[str, RoomEntry] = {}
        # Ids of the rooms that were waiting when last looked at (a room never waits again
        # once it starts): the cap on waiting rooms looks at these, not at every room.
        self._waiting: set[str] = set()
        self.online: dict[str, set[Conn]] = {}
        # For each player online, the ids of the rooms they may hold a seat in: read at their
        # hello, grown by every room they take a seat in (it is subscribed to as theirs). A
        # superset (``seats_of`` decides), so that going offline touches these rooms only.
        self._rooms_of: dict[str, set[str]] = {}
        self.conns: set[Conn] = set()
        self.per_address: dict[str, int] = {}  # open WebSockets per peer address
        self.server: Server | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._closing = False
        self._handlers: dict[type[Any], Callable[[Conn, Any], Awaitable[None]]] = {
            Hello: self._hello,
            CreateRoom: self._create_room,
            Join: self._join,
            Spectate: self._spectate,
            Leave: self._leave,
            ListRooms: self._list_rooms,
            Move: self._move,
            Resign: self._resign,
            Chat: self._chat,
            Rematch: self._rematch,
            HandToBot: self._hand_to_bot,
        }

    # --- life cycle ----------------------------------------------------------------------

    async def load_rooms(self) -> int:
        """Reloads every game in play and every waiting room someone sits in, replaying its
        moves; bot seats think again."""
        n = 0
        for room_id in await self.store.rooms_to_resume():
            n += await self._reload(room_id)
        return n

    async def _reload(self, room_id: str) -> bool:
        """Loads a room someone holds a seat in, if it is not in memory; one that cannot be
        rebuilt is logged and left on disk (whoever names it then gets an error), so it
        stops neither a starting server nor its player's ``hello``."""
        try:
            return room_id in self.rooms or await self._load(room_id) is not None
        except Exception:
            log.exception("room %s could not be reloaded; it stays on disk", room_id)
            return False

    async def start(self, host: str, port: int) -> int:
        """Listens on ``host:port`` (0: any free port); the port actually bound."""
        await self.load_rooms()
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
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep_loop())
        sock = next(iter(self.server.sockets))
        bound: int = sock.getsockname()[1]
        log.info("tablas listening on ws://%s:%d/ws", host, bound)
        return bound

    async def close(self) -> None:
        """Graceful shutdown: stop bots, close sockets with a reason, finish the writes."""
        self._closing = True
        if self._sweeper is not None:
            self._sweeper.cancel()
        for entry in self.rooms.values():
            if entry.bot_task is not None:
                entry.bot_task.cancel()
            if entry.timer_task is not None:
                entry.timer_task.cancel()
        if self.server is not None:
            self.server.close(close_connections=False)
        # All at once: one by one, every client that does not answer the close frame
        # would add its own timeout to the shutdown (4 of them took 16 s).
        await asyncio.gather(*(self._say_goodbye(c) for c in list(self.conns)))
        if self.server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.wait_closed(), 5)
        for entry in self.rooms.values():  # wait for writes in progress
            async with entry.lock:
                pass
            if entry.bot_task is not None:
                with contextlib.suppress(BaseException):
                    await entry.bot_task
        self.bots.shutdown()
        await self.store.close()

    @staticmethod
    async def _say_goodbye(conn: Conn) -> None:
        conn.closing = True
        try:
            await asyncio.wait_for(conn.ws.close(1001, "server shutting down"), 2)
        except Exception:
            # No answer to the close frame in time (the peer does not read): drop the TCP
            # connection, or its handler would hold server.wait_closed() up too.
            conn.ws.transport.abort()

    # --- HTTP ----------------------------------------------------------------------------

    async def process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        path = urlsplit(request.path).path
        if path == "/ws":
            if not self._origin_allowed(request.headers):
                log.warning("refused a WebSocket from origin %r",
                            request.headers.get("Origin"))
                return self._response(HTTPStatus.FORBIDDEN, b"origin not allowed\n",
                                      "text/plain")
            if self._too_many_from(_peer(connection), 1):
                return self._response(HTTPStatus.TOO_MANY_REQUESTS,
                                      TOO_MANY_CONNS.encode() + b"\n", "text/plain")
            return None
        if path == "/healthz":
            return self._json(HTTPStatus.OK, {"status": "ok"})
        if path == "/api/rooms":
            return self._json(HTTPStatus.OK, {"rooms": self._room_list()})
        if path == "/api/explain":
            from engine.explain import explain_query

            from engine.errors import TablasError

            query = dict(parse_qsl(urlsplit(request.path).query))
            try:
                tree = await asyncio.to_thread(explain_query, query)
            except TablasError as e:
                return self._json(HTTPStatus.BAD_REQUEST, {"error": str(e)})
            return self._json(HTTPStatus.OK, tree)
        if path == "/explain":
            return await self._static("/explain.html")
        return await self._static(path)

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

    @staticmethod
    def _response(status: HTTPStatus, body: bytes, content_type: str) -> Response:
        headers = Headers(
            [
                ("Content-Type", content_type),
                ("Content-Length", str(len(body))),
                ("Cache-Control", "no-cache"),
                ("X-Content-Type-Options", "nosniff"),
            ]
        )
        return Response(status.value, status.phrase, headers, body)

    def _json(self, status: HTTPStatus, obj: Any) -> Response:
        return self._response(status, json.dumps(obj).encode(), "application/json")

    async def _static(self, path: str) -> Response:
        rel = unquote(path).lstrip("/") or "index.html"
        not_found = self._response(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain")
        try:
            target = (self.client_dir / rel).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_relative_to(self.client_dir) or not target.is_file():
                return not_found
        except (ValueError, OSError):  # a NUL byte, a name too long: no such file either
            return not_found
        ctype = _TYPES.get(target.suffix.lower()) or (
            mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        )
        body = await asyncio.to_thread(target.read_bytes)
        return self._response(HTTPStatus.OK, body, ctype)

    def _room_list(self) -> list[dict[str, Any]]:
        order = {"waiting": 0, "playing": 1, "finished": 2}
        entries = sorted(
            self.rooms.values(),
            key=lambda e: (order[e.room.status], -e.room.created_at),
        )[:200]
        return [e.room.summary(len(e.spectators)).model_dump(mode="json") for e in entries]

    # --- WebSocket -----------------------------------------------------------------------

    def _too_many_from(self, address: str, extra: int) -> bool:
        """Whether ``address`` holds more than the cap allows, counting ``extra`` beyond
        its open WebSockets."""
        cap = self.max_conns_per_address
        return cap is not None and self.per_address.get(address, 0) + extra > cap

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
        conn = Conn(ws, bucket=TokenBucket(self.rate, self.burst))
        self.conns.add(conn)
        try:
            async for raw in ws:
                await self._on_frame(conn, raw)
        except ConnectionClosed:
            pass
        finally:
            self.conns.discard(conn)
            conn.closing = True
            await self._disconnect(conn)

    async def _on_frame(self, conn: Conn, raw: str | bytes) -> None:
        if not conn.bucket.take():
            conn.send(Error(re=peek_id(raw), code="rate_limited",
                            message=f"more than {self.rate:g} messages a second"))
            return
        msg: AnyClientMessage | None = None
        try:
            msg = parse_client(raw)
            if conn.player is None and not isinstance(msg, Hello):
                raise ProtocolError("not_authenticated", "send hello first", msg.id)
            await self._dispatch(conn, msg)
        except ProtocolError as e:
            conn.send(Error(re=e.re, code=e.code, message=e.message))
        except RoomError as e:
            conn.send(Error(re=msg.id if msg else None, code=e.code, message=e.message))
        except Exception:
            log.exception(
                "internal error: player %s, frame %r", conn.player_id, _loggable(raw)
            )
            conn.send(Error(re=msg.id if msg else peek_id(raw), code="internal",
                            message="internal server error"))

    async def _dispatch(self, conn: Conn, msg: AnyClientMessage) -> None:
        await self._handlers[type(msg)](conn, msg)

    # --- identity ------------------------------------------------------------------------

    async def _hello(self, conn: Conn, msg: Hello) -> None:
        if conn.player is not None:
            raise ProtocolError("bad_request", "hello was already said on this connection",
                                msg.id)
        if msg.token is None:
            token = secrets.token_urlsafe(16)  # 128 random bits
            player = Player(secrets.token_hex(8), msg.name)
            await self.store.create_player(player.id, player.name, token)
        else:
            found = await self.store.player_by_token(msg.token)
            if found is None:
                raise ProtocolError("not_authenticated", "unknown token", msg.id)
            token = msg.token
            player = Player(found[0], msg.name)
            if found[1] != msg.name:
                await self.store.touch_player(player.id, player.name)
        held = [] if msg.token is None else await self.store.seats_held(player.id)
        # The rooms of a player who was away may have left memory (evict_idle_rooms). The
        # waiting ones come back at once: they are the player's open tables in the lobby,
        # and they count for the player's cap on waiting rooms. Games in play are loaded
        # when named.
        for room_id in dict.fromkeys(r for r, _, status in held if status == "waiting"):
            await self._reload(room_id)
        held_ids = {r for r, _, _ in held}
        seated_in = self._in_memory(held_ids)
        for entry in seated_in:
            entry.room.rename(player.id, player.name)
        conn.player = player
        first = not self.online.get(player.id)
        self.online.setdefault(player.id, set()).add(conn)
        self._rooms_of.setdefault(player.id, set()).update(held_ids)
        conn.send(Welcome(re=msg.id, player_id=player.id, name=player.name, token=token,
                          seats=[{"room_id": r, "seat": seat} for r, seat, _ in held]))
        if first:
            self._presence_changed(player.id, seated_in)

    async def _disconnect(self, conn: Conn) -> None:
        for room_id in list(conn.rooms):
            entry = self.rooms.get(room_id)
            if entry is not None:
                self._unsubscribe(entry, conn)
        pid = conn.player_id
        if pid is not None:
            conns = self.online.get(pid, set())
            conns.discard(conn)
            if not conns:
                self.online.pop(pid, None)
                rooms = self._rooms_of.pop(pid, set())
                if not self._closing:
                    self._presence_changed(pid, self._in_memory(rooms))

    def _in_memory(self, room_ids: Iterable[str]) -> list[RoomEntry]:
        """The entries of those of ``room_ids`` that are in memory."""
        return [e for r in room_ids if (e := self.rooms.get(r)) is not None]

    def _presence_changed(self, player_id: str, entries: Iterable[RoomEntry]) -> None:
        """A seated player came or went: the rooms see a fresh ``connected`` flag, and the
        grace period before a room whose players are all away leaves memory starts now.
        ``entries``: the rooms the player may sit in (``hello`` reads them from the database,
        ``_rooms_of`` has them when the player goes), not every room in memory (which took
        1.7 ms for 5,000 rooms)."""
        for entry in entries:
            if entry.room.status != "finished" and entry.room.seats_of(player_id):
                entry.touched = self.clock()
                self._broadcast_snapshot(entry)
                self._arm_timer(entry)

    def _connected(self, player_id: str) -> bool:
        return bool(self.online.get(player_id))

    # --- rooms ---------------------------------------------------------------------------

    async def _load(self, room_id: str) -> RoomEntry | None:
        record = await self.store.load_room(room_id)
        if record is None:
            return None
        if room_id in self.rooms:  # loaded by another handler meanwhile
            return self.rooms[room_id]
        entry = RoomEntry(record.to_room(self.clock), touched=self.clock())
        self._add(entry)
        # As at startup: a bot to move thinks, a clock or an absence is timed again.
        self._kick_bot(entry)
        self._arm_timer(entry)
        return entry

    def _add(self, entry: RoomEntry) -> None:
        room_id = entry.room.room_id
        self.rooms[room_id] = entry
        if entry.room.status == "waiting":
            self._waiting.add(room_id)

    async def _entry(self, room_id: str) -> RoomEntry:
        entry = self.rooms.get(room_id)
        if entry is None:
            entry = await self._load(room_id)
        if entry is None:
            raise RoomError("unknown_room", f"no room {room_id!r}")
        # A handler holds the entry from here on, perhaps waiting for its lock: used now,
        # it is not evicted for a whole grace period.
        entry.touched = self.clock()
        return entry

    # --- eviction of idle rooms ------------------------------------------------------------

    async def _sweep_loop(self) -> None:
        while not self._closing:
            await asyncio.sleep(self.sweep_every)
            try:
                dropped = self.evict_idle_rooms()
            except Exception:
                log.exception("evicting idle rooms failed")
                continue
            if dropped:
                log.debug("evicted %d idle rooms from memory", len(dropped))

    def evict_idle_rooms(self) -> list[str]:
        """Drops from memory every room that nobody is connected to, whose players are all
        away or gone (finished, vacant, or its seat holders offline) and that nobody has
        used for ``evict_idle_after`` seconds, then, while more than ``max_idle_rooms`` such
        rooms are left, the least recently used of them; the ids dropped (the store keeps
        them, and the next handler that names one loads it again)."""
        now = self.clock()
        idle = sorted((e.touched, room_id) for room_id, e in self.rooms.items()
                      if self._evictable(e))
        over = max(0, len(idle) - self.max_idle_rooms)
        dropped = [room_id for i, (touched, room_id) in enumerate(idle)
                   if i < over or now - touched >= self.evict_idle_after]
        for room_id in dropped:
            del self.rooms[room_id]
        return dropped

    def _evictable(self, entry: RoomEntry) -> bool:
        room = entry.room
        if entry.conns or entry.spectators:
            return False
        # A game or a waiting table whose players all went away (closed the page, never came
        # back) is not kept for them in memory: that would grow with every abandoned game.
        # Its seats stay theirs on disk; their next hello lists them.
        if room.status != "finished" and any(
                s.player_id is not None and self._connected(s.player_id) for s in room.seats):
            return False
        # A held lock is a write in progress; a task still running holds the entry and
        # would go on with a room nobody can reach any more.
        return not entry.lock.locked() and all(
            t is None or t.done() for t in (entry.bot_task, entry.timer_task))

    # --- the cap on waiting rooms ----------------------------------------------------------

    @staticmethod
    def _waits_for(entry: RoomEntry, player_id: str) -> bool:
        return entry.host == player_id or bool(entry.room.seats_of(player_id))

    def _check_waiting_rooms(self, player_id: str) -> None:
        """Refuses one more waiting room for ``player_id`` past ``max_waiting_rooms``
        (a waiting room someone sits in is never evicted, so all of those are in memory; a
        vacant one counts for its host until it is evicted)."""
        cap = self.max_waiting_rooms
        if cap is None:
            return
        n = 0
        for room_id in list(self._waiting):
            e = self.rooms.get(room_id)
            if e is None or e.room.status != "waiting":
                self._waiting.discard(room_id)
            elif self._waits_for(e, player_id):
                n += 1
        if n >= cap:
            raise RoomError("bad_request", (
                f"{n} rooms of yours are waiting for an opponent (at most {cap}): leave one"
                " or let it start before you open or join another"))

    async def _reload_after_failure(self, entry: RoomEntry) -> None:
        """The disk is the truth: after a failed write, the room is rebuilt from it."""
        room_id = entry.room.room_id
        with contextlib.suppress(Exception):
            record = await self.store.load_room(room_id)
            if record is not None:
                entry.room = record.to_room(self.clock)

    def _snapshot_text(self, entry: RoomEntry, viewer: str | None) -> str:
        return json_text(entry.room.snapshot_data(viewer, self._connected,
                                                  len(entry.spectators)))

    def _snapshot_for(self, entry: RoomEntry, conn: Conn, re: str | int | None = None) -> str:
        return with_re(self._snapshot_text(entry, conn.player_id), re)

    def _broadcast_snapshot(
        self, entry: RoomEntry, answer: Conn | None = None, re: str | int | None = None
    ) -> None:
        room = entry.room
        # Everyone without a seat here sees the same snapshot: written once for them all.
        texts: dict[str | None, str] = {}
        for c in entry.conns:
            viewer = c.player_id if room.seats_of(c.player_id) else None
            text = texts.get(viewer)
            if text is None:
                text = texts[viewer] = self._snapshot_text(entry, viewer)
            c.send(with_re(text, re) if c is answer else text)

    def _broadcast_update(
        self, entry: RoomEntry, action: Action, answer: Conn | None, re: str | int | None
    ) -> None:
        room = entry.room
        texts: dict[bool, str] = {}  # serialised once: with the legal moves, and without
        for c in entry.conns:
            legal = room.legal_for(c.player_id)
            text = texts.get(bool(legal))
            if text is None:
                text = texts[bool(legal)] = json_text(room.update_data(action, legal))
            c.send(with_re(text, re) if c is answer else text)

    def _subscribe(self, entry: RoomEntry, conn: Conn, spectator: bool) -> None:
        room_id = entry.room.room_id
        entry.conns.add(conn)
        conn.rooms.pop(room_id, None)  # the latest subscription goes last
        conn.rooms[room_id] = None
        if spectator:
            entry.spectators.add(conn)
        else:
            entry.spectators.discard(conn)
            if (rooms := self._rooms_of.get(conn.player_id or "")) is not None:
                rooms.add(room_id)
        self._let_go_of_finished(conn)

    def _unsubscribe(self, entry: RoomEntry, conn: Conn) -> None:
        entry.conns.discard(conn)
        entry.spectators.discard(conn)
        conn.rooms.pop(entry.room.room_id, None)
        entry.touched = self.clock()  # the grace period before eviction starts now

    def _let_go_of_finished(self, conn: Conn) -> None:
        """Past ``max_finished_followed`` finished rooms, ``conn`` stops following the ones
        it subscribed to first, and is told so by a ``left`` (a finished room has only its
        chat left to send)."""
        finished = [e for room_id in conn.rooms if (e := self.rooms.get(room_id)) is not None
                    and e.room.status == "finished"]
        for entry in finished[:max(0, len(finished) - self.max_finished_followed)]:
            self._unsubscribe(entry, conn)
            conn.send(Left(room_id=entry.room.room_id))

    def _new_room_id(self) -> str:
        """The second it is made (8 hex digits), then 32 random bits from :mod:`secrets`.
        Rooms made about the same time sort together, so the rows of the games being
        played (every table is keyed by room id) share a few pages of each index, and a
        commit writes those pages once for all its moves; with ids wholly random, each move
        dirtied a page of its own (docs/benchmarks.md, "Messages written from plain data,
        room ids in time order": 1.33 pages a move against 0.60)."""
        while True:
            room_id = f"{int(self.clock()) & 0xFFFF_FFFF:08x}{secrets.token_hex(4)}"
            if room_id not in self.rooms:
                return room_id

    async def _open_room(
        self,
        conn: Conn,
        game_id: str,
        options: dict[str, Any],
        seats: list[SeatState],
        join_seat: int | None,
        re: str | int | None,
        room_options: RoomOptions,
    ) -> None:
        assert conn.player is not None
        game_for(game_id)  # unknown_game before anything else
        room_id = self._new_room_id()
        seed = self.seed_factory() if self.seed_factory is not None else None
        room = Room(room_id, game_id, options, seats, clock=self.clock, seed=seed,
                    room_options=room_options)
        if join_seat is not None:
            if room.seats[join_seat].kind != "human":
                raise RoomError("seat_taken", f"seat {join_seat} is a bot's")
            room.join(conn.player.id, conn.player.name, join_seat)
        if room.ready:
            room.start()
        if room.status == "waiting":
            self._check_waiting_rooms(conn.player.id)
        await self.store.create_room(
            room_id, room.game_id, room.options, room.seats, room.status, room.seed,
            room.opening_rolls, room.created_at, room.room_options,
        )
        entry = RoomEntry(room, touched=self.clock(),
                          host=None if room.seats_of(conn.player.id) else conn.player.id)
        self._add(entry)
        self._subscribe(entry, conn, spectator=not room.seats_of(conn.player_id))
        conn.send(RoomCreated(re=re, room_id=room_id))
        conn.send(self._snapshot_for(entry, conn, re))
        self._kick_bot(entry)
        self._arm_timer(entry)

    async def _create_room(self, conn: Conn, msg: CreateRoom) -> None:
        seats = [
            SeatState("bot", s.level) if isinstance(s, BotSeat) else SeatState("human")
            for s in msg.seats
        ]
        await self._open_room(conn, msg.game, dict(msg.options), seats, msg.join_seat, msg.id,
                              msg.room_options())

    async def _rematch(self, conn: Conn, msg: Rematch) -> None:
        entry = await self._entry(msg.room_id)
        old = entry.room
        held = old.seats_of(conn.player_id)
        if not held:
            raise RoomError("not_seated", "only a player of the room can ask for a rematch")
        if old.status != "finished":
            raise RoomError("bad_request", "the game is not over yet")
        seats = [SeatState(s.kind, s.level) for s in reversed(old.seats)]
        await self._open_room(conn, old.game_id, old.options, seats, 1 - held[0], msg.id,
                              old.room_options)

    async def _join(self, conn: Conn, msg: Join) -> None:
        assert conn.player is not None
        entry = await self._entry(msg.room_id)
        async with entry.lock:
            room = entry.room
            if (room.status == "waiting" and room.open_seats > 1
                    and not self._waits_for(entry, conn.player.id)):
                self._check_waiting_rooms(conn.player.id)  # the room goes on waiting
            changed = room.join(conn.player.id, conn.player.name, msg.seat)
            if changed:
                entry.host = None
                try:
                    if room.ready:
                        room.start()
                    await self.store.save_seats(
                        room.room_id, room.seats, room.status, room.opening_rolls
                    )
                except BaseException:
                    await self._reload_after_failure(entry)
                    raise
            self._subscribe(entry, conn, spectator=False)
            if changed:
                self._broadcast_snapshot(entry, conn, msg.id)
            else:
                conn.send(self._snapshot_for(entry, conn, msg.id))
        self._kick_bot(entry)
        self._arm_timer(entry)

    async def _spectate(self, conn: Conn, msg: Spectate) -> None:
        entry = await self._entry(msg.room_id)
        async with entry.lock:
            self._subscribe(entry, conn, spectator=not entry.room.seats_of(conn.player_id))
            conn.send(self._snapshot_for(entry, conn, msg.id))

    async def _leave(self, conn: Conn, msg: Leave) -> None:
        assert conn.player is not None
        entry = await self._entry(msg.room_id)
        async with entry.lock:
            room = entry.room
            self._unsubscribe(entry, conn)
            if room.leave(conn.player.id):
                try:
                    await self.store.save_seats(
                        room.room_id, room.seats, room.status, room.opening_rolls
                    )
                except BaseException:
                    await self._reload_after_failure(entry)
                    raise
                self._broadcast_snapshot(entry)
            conn.send(Left(re=msg.id, room_id=room.room_id))

    async def _list_rooms(self, conn: Conn, msg: ListRooms) -> None:
        rooms = Rooms.model_validate({"re": msg.id, "rooms": self._room_list()})
        conn.send(rooms)

    # --- play ----------------------------------------------------------------------------

    async def _apply(
        self, entry: RoomEntry, pending: Pending, answer: Conn | None, re: str | int | None
    ) -> None:
        """Persist, then commit in memory, then broadcast (caller holds the room's lock)."""
        room = entry.room
        try:
            await self.store.record_move(room.room_id, pending.action, pending.outcome)
        except BaseException:
            await self._reload_after_failure(entry)
            raise
        action = room.commit(pending)
        self._broadcast_update(entry, action, answer, re)
        if room.status == "finished":
            self._game_over(entry)
            self._broadcast_snapshot(entry)
        self._arm_timer(entry)

    def _game_over(self, entry: RoomEntry) -> None:
        """The game in ``entry`` has just ended: the grace period before it may leave memory
        starts, and its players' comings and goings no longer concern it (``_rooms_of``
        would otherwise grow with every game a connection plays)."""
        entry.touched = self.clock()
        for seat in entry.room.seats:
            if seat.player_id is not None:
                self._rooms_of.get(seat.player_id, set()).discard(entry.room.room_id)

    async def _end(
        self,
        entry: RoomEntry,
        outcome: Outcome,
        clocks: list[int] | None,
        answer: Conn | None = None,
        re: str | int | None = None,
    ) -> None:
        """Ends the game without a move (resignation, timeout): persist, change, broadcast
        (caller holds the room's lock)."""
        room = entry.room
        await self.store.record_result(room.room_id, outcome, clocks, self.clock())
        room.finish(outcome, clocks)
        self._game_over(entry)
        if answer is not None and answer not in entry.conns:
            answer.send(self._snapshot_for(entry, answer, re))
        self._broadcast_snapshot(entry, answer, re)
        self._arm_timer(entry)

    async def _move(self, conn: Conn, msg: Move) -> None:
        entry = await self._entry(msg.room_id)
        async with entry.lock:
            try:
                pending = entry.room.prepare_move(conn.player_id, msg.ply, dict(msg.move))
            except Flagged as f:  # the move came too late: the game is lost on time
                await self._end(entry, f.outcome, f.clocks)
                raise
            await self._apply(entry, pending, conn, msg.id)
        self._kick_bot(entry)

    async def _resign(self, conn: Conn, msg: Resign) -> None:
        entry = await self._entry(msg.room_id)
        async with entry.lock:
            room = entry.room
            outcome: Outcome = room.prepare_resign(conn.player_id or "")
            await self._end(entry, outcome, room.live_clocks(), conn, msg.id)

    async def _hand_to_bot(self, conn: Conn, msg: HandToBot) -> None:
        entry = await self._entry(msg.room_id)
        async with entry.lock:
            entry.room.check_hand_to_bot(conn.player_id, msg.seat)
            await self._hand_over(entry, msg.seat, msg.level, "hand_to_bot", conn, msg.id)
        self._kick_bot(entry)

    async def _hand_over(
        self,
        entry: RoomEntry,
        seat: int,
        level: str,
        reason: str,
        answer: Conn | None = None,
        re: str | int | None = None,
    ) -> None:
        """Seat ``seat`` becomes a bot's: persist, broadcast a snapshot (caller holds the
        lock). The former holder's connections stay in the room, as spectators."""
        room = entry.room
        former = room.seats[seat].player_id
        room.hand_to_bot(seat, level)
        try:
            await self.store.hand_seat_to_bot(
                room.room_id, seat, level, room.ply, former, reason, self.clock(),
                room.status, room.opening_rolls,
            )
        except BaseException:
            await self._reload_after_failure(entry)
            raise
        for c in entry.conns:
            if c.player_id == former and not room.seats_of(former):
                entry.spectators.add(c)
        if answer is not None and answer not in entry.conns:
            answer.send(self._snapshot_for(entry, answer, re))
        self._broadcast_snapshot(entry, answer, re)
        self._arm_timer(entry)

    # --- timers: flag falls, seats abandoned ---------------------------------------------

    def _arm_timer(self, entry: RoomEntry) -> None:
        """(Re)computes when the room's timer must fire; starts its task if needed."""
        if self._closing:
            return
        room = entry.room
        room.sync_presence(self._connected)
        entry.wake.set()
        if room.status != "playing" or (
            room.remaining is None and room.room_options.abandon_to_bot_after_ms is None
        ):
            return
        if entry.timer_task is None or entry.timer_task.done():
            entry.timer_task = asyncio.get_running_loop().create_task(self._timer_loop(entry))

    async def _timer_loop(self, entry: RoomEntry) -> None:
        try:
            while not self._closing:
                room = entry.room
                waits = [w for w in (room.seconds_to_flag(), room.seconds_to_abandon())
                         if w is not None]
                if room.status != "playing" or not waits:
                    return
                entry.wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(entry.wake.wait(), min(waits) + 0.001)
                    continue  # something changed: compute again
                await self._on_timer(entry)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("timer of room %s failed", entry.room.room_id)

    async def _on_timer(self, entry: RoomEntry) -> None:
        async with entry.lock:
            room = entry.room
            if room.status != "playing":
                return
            flagged = room.flag_fall()
            if flagged is not None:
                await self._end(entry, *flagged)
                return
            room.sync_presence(self._connected)
            for seat in room.abandoned():
                await self._hand_over(entry, seat, "medium", "abandoned")
        self._kick_bot(entry)

    async def _chat(self, conn: Conn, msg: Chat) -> None:
        assert conn.player is not None
        entry = await self._entry(msg.room_id)
        if conn not in entry.conns:
            raise RoomError("not_seated", "join or spectate the room to chat in it")
        text = msg.text.strip()
        if not text:
            raise RoomError("bad_request", "empty chat line")
        now = self.clock()
        await self.store.record_chat(entry.room.room_id, conn.player.id, text, now)
        line = ChatMessage(room_id=entry.room.room_id, player_id=conn.player.id,
                           name=conn.player.name, text=text, time=now)
        for c in entry.conns:
            line.re = msg.id if c is conn else None
            c.send(line.to_json())

    # --- bots ----------------------------------------------------------------------------

    def _kick_bot(self, entry: RoomEntry) -> None:
        if self._closing or entry.room.bot_to_move() is None:
            return
        if entry.bot_task is not None and not entry.bot_task.done():
            return
        entry.bot_task = asyncio.get_running_loop().create_task(self._bot_loop(entry))

    async def _bot_loop(self, entry: RoomEntry) -> None:
        """Plays the bots' turns while a bot is to move (both seats, for bot against bot)."""
        try:
            while not self._closing:
                job = entry.room.bot_job()
                if job is None:
                    return

                def progress(info: dict[str, Any], job: BotJob = job) -> None:
                    self._send_analysis(entry, job, info, final=False)

                decision = await self.bots.decide(job, progress)
                if self.bot_pause:
                    await asyncio.sleep(self.bot_pause)
                async with entry.lock:
                    room = entry.room
                    if room.ply != job.ply or room.bot_to_move() != job.seat:
                        continue
                    pending = None
                    try:
                        if decision is not None:
                            move = decision.get("move")
                            try:
                                pending = room.prepare_move(None, job.ply, move,
                                                            bot_seat=job.seat)
                                self._send_analysis(entry, job, decision, final=True)
                            except Flagged:
                                raise
                            except RoomError as e:
                                log.warning("bot move %s refused in room %s: %s", move,
                                            room.room_id, e.message)
                        if pending is None:  # no answer in time, or a bad one: random
                            fallback = random_move(room.game, room.state, job.seed)
                            pending = room.prepare_move(None, job.ply, fallback,
                                                        bot_seat=job.seat)
                    except Flagged as f:  # the bot's own clock ran out
                        await self._end(entry, f.outcome, f.clocks)
                        continue
                    await self._apply(entry, pending, None, None)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("bot loop of room %s failed", entry.room.room_id)


    def _send_analysis(
        self, entry: RoomEntry, job: BotJob, info: dict[str, Any], *, final: bool
    ) -> None:
        """A bot's thoughts to the spectators (and the players, with ``show_analysis``);
        never for a ply the room has left, never live after the final one."""
        room = entry.room
        if (room.status != "playing" or room.ply != job.ply or room.bot_to_move() != job.seat
                or entry.final_analysis_ply == job.ply):
            return
        if final:
            entry.final_analysis_ply = job.ply
        targets = entry.conns if room.room_options.show_analysis else entry.spectators
        if not targets:
            return
        score = info.get("score")
        msg = Analysis(
            room_id=room.room_id,
            ply=job.ply,
            seat=job.seat,
            depth=int(info.get("depth") or 0),
            score=score if isinstance(score, int | float) else None,
            pv=[str(t) for t in info.get("pv") or []],
            nodes=int(info.get("nodes") or 0),
            final=final,
        ).to_json()
        for c in targets:
            c.send(msg)


async def run(host: str, port: int, db: str, bot_workers: int | None,
              allow_origins: Sequence[str] | None = None,
              max_conns_per_address: int | None = MAX_CONNS_PER_ADDRESS) -> None:
    """``tablas serve``: runs until SIGTERM/SIGINT, then shuts down gracefully (with the
    garbage collector as :func:`server.loop.quiet_collector` sets it for serving)."""
    import signal

    async with quiet_collector():
        store = await Store.open(db)
        server = TablasServer(store, bot_workers, allow_origins=allow_origins,
                              max_conns_per_address=max_conns_per_address)
        try:
            await server.start(host, port)
        except BaseException:
            await server.close()
            raise
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        log.info("shutting down")
        await server.close()
