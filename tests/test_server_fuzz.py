"""Protocol fuzzing against a live in-process server (hypothesis).

The server runs in a background thread with its own event loop, so the hypothesis tests stay
synchronous (hypothesis cannot drive an ``async def`` test) while every example still goes
over a real WebSocket. Every example checks the same properties:

- no ``internal`` error and nothing logged at ERROR by the server (no handler crashed);
- a refused frame changes nothing: room snapshots in memory and row counts on disk are equal
  before and after;
- the connection stays usable: a valid ``list_rooms`` sent right after gets its answer
  (frames are handled in order, so every answer to the fuzzed frame has arrived by then);
- only an oversize frame closes the connection (code 1009), and a new connection then works.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_support import Client, running
from tablas.server import views
from tablas.server.app import TablasServer
from tablas.server.edge.websocket import MAX_FRAME
from websockets.exceptions import ConnectionClosed

T = TypeVar("T")
HUMAN = {"kind": "human"}
TABLES = ("players", "rooms", "seats", "moves", "results", "chat", "seat_changes")
# 80 examples a property by default (about 2 s in all); HYPOTHESIS_PROFILE=fuzz for more.
EXAMPLES = max(80, settings.default.max_examples)
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


class _Errors(logging.Handler):
    """Keeps every ERROR the server logs (``log.exception`` on an unexpected failure)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class Live:
    """A server, a fuzzing player ``a`` and its opponent ``b`` in two rooms, in one thread."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.srv: TablasServer
        self.url = ""
        self.a: Client
        self.b: Client
        self.rooms: list[str] = []
        self.ping = 0

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 20) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start(self) -> None:
        self.thread.start()
        self.stop_event = self.call(self._make_event())
        self._main = asyncio.run_coroutine_threadsafe(self._serve(), self.loop)
        assert self.ready.wait(30), "server did not start"
        self.call(self._setup())

    async def _make_event(self) -> asyncio.Event:
        return asyncio.Event()

    async def _serve(self) -> None:
        # The rate limit and the cap on waiting rooms are lifted: they are tested on their
        # own, and would refuse the fuzzer (whose create_room frames leave rooms waiting).
        async with running(self.db, workers=1, max_msgs_per_address=None,
                           max_waiting_rooms=None) as (srv, url):
            self.srv, self.url = srv, url
            self.ready.set()
            await self.stop_event.wait()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.stop_event.set)
        self._main.result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()

    async def _setup(self) -> None:
        self.a, self.b = Client(self.url), Client(self.url)
        await self.a.connect("Ana")
        await self.b.connect("Bo")
        for game in ("connect4", "backgammon"):
            self.rooms.append(await self._new_room(game))

    async def _new_room(self, game: str) -> str:
        created = await self.a.request({"type": "create_room", "game": game, "options": {},
                                        "seats": [HUMAN, HUMAN], "join_seat": 0},
                                       "room_created")
        room_id: str = created["room_id"]
        await self.b.request({"type": "join", "room_id": room_id, "seat": 1}, "room")
        await self._b_plays(room_id)
        return room_id

    async def _b_plays(self, room_id: str) -> None:
        """``b`` moves until ``a`` is to move (or the game is over)."""
        room = self.srv.hub.rooms[room_id].room
        while room.status == "playing" and room.to_move == 1:
            await self.b.request({"type": "move", "room_id": room_id, "ply": room.ply,
                                  "move": room.legal_moves()[0]}, "update")

    async def _settle(self) -> None:
        """Back to ``a`` to move in every room; a finished room is replaced (a fuzzed frame
        may be a legal move or a resignation: that is not a bug)."""
        for i, room_id in enumerate(self.rooms):
            await self._b_plays(room_id)
            room = self.srv.hub.rooms[room_id].room
            assert all(s.kind == "human" for s in room.seats), "a seat went to a bot"
            if room.status == "finished":
                self.rooms[i] = await self._new_room(room.game_id)
        self.a.inbox.clear()
        self.b.inbox.clear()

    def fingerprint(self) -> tuple[dict[str, str], dict[str, int]]:
        rooms = self.call(self._rooms())
        con = sqlite3.connect(self.db)
        try:
            counts = {t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}
        finally:
            con.close()
        return rooms, counts

    async def _rooms(self) -> dict[str, str]:
        return {rid: views.snapshot(e.room, None).to_json()
                for rid, e in self.srv.hub.rooms.items()}

    def send(self, frame: str | bytes, client: Client | None = None) -> list[dict[str, Any]]:
        """Sends ``frame``, then a sentinel request; every message received until the
        sentinel's answer (which must come)."""
        return self.call(self._send(client or self.a, frame))

    async def _send(self, c: Client, frame: str | bytes) -> list[dict[str, Any]]:
        self.ping += 1
        sentinel = f"sentinel-{self.ping}"
        await c.ws.send(frame)
        await c.ws.send(json.dumps({"type": "list_rooms", "id": sentinel}))
        got: list[dict[str, Any]] = []
        while True:
            m = await c.recv(10)
            if m.get("re") == sentinel:
                assert m["type"] == "rooms", m
                return got
            got.append(m)

    def check(self, frame: str | bytes, client: Client | None = None) -> list[dict[str, Any]]:
        """The fuzzing properties for one frame (see the module docstring)."""
        before = self.fingerprint()
        got = self.send(frame, client)
        assert not [m for m in got if m.get("code") == "internal"], (frame[:300], got)
        errors = [r.getMessage()[:300] for r in self.handler.records]
        assert not errors, errors
        if got and all(m.get("type") == "error" for m in got):
            assert self.fingerprint() == before, f"refused frame changed state: {frame[:300]!r}"
        self.call(self._settle())
        return got

    handler: _Errors


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    handler = _Errors()
    # ours, and websockets' (which logs a handler that died: "connection handler failed")
    loggers = [logging.getLogger("tablas"), logging.getLogger("websockets")]
    for logger in loggers:
        logger.addHandler(handler)
    server = Live(tmp_path_factory.mktemp("fuzz") / "fuzz.db")
    server.handler = handler
    server.start()
    try:
        yield server
    finally:
        server.stop()
        for logger in loggers:
            logger.removeHandler(handler)


# --- strategies -----------------------------------------------------------------------------

ODD_TEXT = st.sampled_from([
    "", " ", "\x00", "a\x00b", "\ud800", "\udfff", "x\ud83d", "\u202eevil\u202c", "\u200f",
    "\ufeff", "\uffff", "\U0010ffff", "𝕏𝕐", "é" * 200, "🂡" * 40, "\n\r\t", "null", "0",
    "x" * 129, "x" * 600, "../../etc/passwd", "'; DROP TABLE moves; --", "%s%s%n", "{}",
])
SCALARS = st.one_of(
    st.none(), st.booleans(),
    st.integers(), st.sampled_from([-1, 2, 7, 25, 2**31, 2**63, -(2**63) - 1, 10**30, 10**300]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20), ODD_TEXT,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(max_size=8) | ODD_TEXT, inner, max_size=4),
    max_leaves=12,
)
KEYS = st.sampled_from(["type", "id", "room_id", "ply", "move", "seat", "name", "token",
                        "game", "options", "seats", "join_seat", "text", "level", "clock",
                        "show_analysis", "abandon_to_bot_after_ms", "extra"])


def valid_messages(live: Live, room: int, ply_shift: int) -> list[dict[str, Any]]:
    """Valid messages of every client type, about one of the live rooms."""
    room_id = live.rooms[room]
    entry = live.srv.hub.rooms[room_id].room
    moves = entry.legal_moves() or [{"column": 3}]
    return [
        {"type": "move", "room_id": room_id, "ply": max(0, entry.ply + ply_shift),
         "move": moves[len(moves) // 2]},
        {"type": "join", "room_id": room_id, "seat": 1},
        {"type": "spectate", "room_id": room_id},
        {"type": "leave", "room_id": room_id},
        {"type": "list_rooms"},
        {"type": "resign", "room_id": room_id},
        {"type": "chat", "room_id": room_id, "text": "hi"},
        {"type": "rematch", "room_id": room_id},
        {"type": "hello", "name": "Ana", "token": None},
        {"type": "create_room", "game": "grundy", "options": {"heap": 7},
         "seats": [HUMAN, HUMAN], "join_seat": 0},
    ]


@st.composite
def mutated(draw: st.DrawFn, live: Live) -> dict[str, Any]:
    """A valid message with one field changed, removed or added (or the id made odd)."""
    room = draw(st.integers(0, len(live.rooms) - 1))
    shift = draw(st.sampled_from([0, 0, 1, -1, 1000]))
    base = draw(st.sampled_from(valid_messages(live, room, shift)))
    msg = dict(base, id=draw(st.integers(1, 10**6) | st.text(max_size=8)))
    how = draw(st.sampled_from(["replace", "replace", "delete", "add", "move_field"]))
    key = draw(st.sampled_from(sorted(msg)) if how != "add" else KEYS)
    if how == "delete":
        msg.pop(key)
    elif how == "move_field" and isinstance(msg.get("move"), dict) and msg["move"]:
        inner = draw(st.sampled_from(sorted(msg["move"])))
        msg["move"] = dict(msg["move"], **{inner: draw(VALUES)})
    else:
        msg[key] = draw(VALUES)
    return msg


def _dumps(obj: Any) -> str:
    # json.dumps escapes lone surrogates as \udXXX and writes NaN/Infinity, as a hostile
    # client may: the server's json.loads reads both.
    return json.dumps(obj)


# --- the properties -------------------------------------------------------------------------


@FUZZ
@given(data=st.data())
def test_mutated_valid_messages(live: Live, data: st.DataObject) -> None:
    msg = data.draw(mutated(live))
    live.check(_dumps(msg))


@FUZZ
@given(obj=VALUES)
def test_random_json_values(live: Live, obj: Any) -> None:
    got = live.check(_dumps(obj))
    if not isinstance(obj, dict):
        assert [m["code"] for m in got] == ["bad_request"]


@FUZZ
@given(frame=st.binary(max_size=200) | st.text(max_size=200)
       | st.builds(lambda o: _dumps(o).encode(), VALUES))
def test_random_text_and_binary_frames(live: Live, frame: str | bytes) -> None:
    live.check(frame)


@settings(FUZZ, max_examples=30)
@given(depth=st.sampled_from([10, 100, 500, 900, 999, 1000, 1500, 5000, 10000]),
       kind=st.sampled_from(["[", "{\"a\":"]), where=st.sampled_from(["top", "move", "id",
                                                                       "options"]))
def test_deep_nesting(live: Live, depth: int, kind: str, where: str) -> None:
    closer = "]" if kind == "[" else "}"
    nested = kind * depth + "1" + closer * depth
    room = live.rooms[0]
    frame = {
        "top": nested,
        "move": f'{{"type":"move","room_id":"{room}","ply":0,"move":{{"x":{nested}}}}}',
        "id": f'{{"type":"list_rooms","id":{nested}}}',
        "options": f'{{"type":"create_room","game":"grundy","options":{{"heap":{nested}}},'
                   f'"seats":[{{"kind":"human"}},{{"kind":"human"}}]}}',
    }[where]
    assume_small = len(frame.encode()) <= MAX_FRAME
    if assume_small:
        got = live.check(frame)
        assert got and got[-1]["type"] == "error"


def test_huge_numbers_and_odd_unicode(live: Live) -> None:
    room = live.rooms[0]
    nines = "9" * 5000  # past Python's 4300-digit int limit
    frames = [f.replace("ROOM", room) for f in [
        '{"type":"move","room_id":"ROOM","ply":' + nines + ',"move":{"column":3}}',
        '{"type":"move","room_id":"ROOM","ply":0,"move":{"column":' + nines[:4000] + '}}',
        '{"type":"move","room_id":"ROOM","ply":1e400,"move":{"column":3}}',
        '{"type":"move","room_id":"ROOM","ply":-0,"move":{"column":NaN}}',
        '{"type":"move","room_id":"ROOM","ply":0,"move":{"column":Infinity}}',
        '{"type":"chat","room_id":"ROOM","text":"\\ud800"}',
        '{"type":"chat","room_id":"ROOM","text":"a\\u0000b \u202e"}',
        '{"type":"spectate","room_id":"\\udfff"}',
        '{"type":"list_rooms","id":"\\ud800"}',
        '{"type":"list_rooms","id":' + "1" * 400 + '}',
        '{"type":"create_room","game":"\\ud800","options":{},"seats":[]}',
        '{"type":"create_room","game":"grundy","options":{"\\ud800":"\\udc00"},'
        '"seats":[{"kind":"human"},{"kind":"human"}]}',
        '{"type":"move","room_id":"ROOM","ply":0,"move":{"\\ud800":1}}',
        '{"type":"list_rooms","type":"hello"}',
        '\ufeff{"type":"list_rooms"}',
    ]]
    for frame in frames:
        live.check(frame)


def test_hello_fuzz_on_fresh_connections(live: Live) -> None:
    """Before ``hello``: odd names and tokens; the connection still takes a valid hello."""
    names: list[Any] = ["A\ud800", "\ud800", "B\x00", "\u202eRTL", "\ufeffZ", "x" * 33, 5,
                        None, ["a"], {"a": 1}, "  ", "ok"]
    tokens: list[Any] = [None, "\ud800", "x" * 129, 12, "", "nope"]

    async def one(name: Any, token: Any) -> None:
        c = Client(live.url)
        await c.open()
        try:
            await c.send_raw(_dumps({"type": "hello", "name": name, "token": token, "id": 1}))
            m = await c.recv(10)
            assert m.get("code") != "internal", (name, token, m)
            if m["type"] == "error":
                w = await c.request({"type": "hello", "name": "Fresh", "token": None},
                                    "welcome")
                assert w["name"] == "Fresh"
        finally:
            await c.close()

    for name in names:
        for token in tokens[:2] if name != "ok" else tokens:
            live.call(one(name, token))
    assert not live.handler.records, [r.getMessage() for r in live.handler.records]


def test_oversize_frame_closes_then_a_new_connection_works(live: Live) -> None:
    async def scenario() -> None:
        c = Client(live.url)
        await c.connect("Big")
        await c.send_raw(json.dumps({"type": "chat", "room_id": "x",
                                     "text": "y" * (MAX_FRAME + 10)}))
        with pytest.raises(ConnectionClosed) as closed:
            await c.recv(10)
        rcvd = closed.value.rcvd
        assert rcvd is not None and rcvd.code == 1009
        d = Client(live.url)
        await d.connect("After")
        await d.request({"type": "list_rooms"}, "rooms")
        await d.close()

    before = live.fingerprint()
    live.call(scenario())
    rooms, counts = live.fingerprint()
    assert rooms == before[0]
    # the two hellos added players, nothing else changed
    assert {k: v for k, v in counts.items() if k != "players"} == {
        k: v for k, v in before[1].items() if k != "players"}
