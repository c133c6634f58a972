"""A live room's bounded inbox (server/live_room.py, docs/server.md "A room's life"), over
real sockets: while the room is held (the test holds its lock, as a slow write would), at
most ``RoomServices.inbox`` players' commands wait for it; one more is refused at once with
``rate_limited`` and changes nothing; those accepted are applied in the order they came; the
room's own commands (its timer's tick) are never refused."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from server_support import Client, FakeClock, connected, running
from tablas.server.app import TablasServer
from tablas.server.live_room import BUSY, INBOX, LiveRoom

HUMAN = {"kind": "human"}
BOUND = 4  # a small inbox for the test (the server's is INBOX)


async def _until(check: Callable[[], bool], timeout: float = 20) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not check():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.01)


async def _queue(live: LiveRoom, c: Client, msg: dict[str, Any]) -> int:
    """Sends ``msg`` and waits until it waits in the room's inbox; its id."""
    before = live.waiting
    rid = await c.send(msg)
    await _until(lambda: live.waiting == before + 1)
    return rid


async def _refused(c: Client, msg: dict[str, Any]) -> None:
    """``msg`` is refused at once: the answer comes while the room is still held."""
    err = await asyncio.wait_for(c.error(msg), 5)
    assert err["code"] == "rate_limited" and err["message"] == BUSY


async def _answer(c: Client, rid: int) -> dict[str, Any]:
    """The message answering ``rid``: an update."""
    while True:
        m = await c.recv(10)
        if m.get("re") == rid:
            assert m["type"] == "update", m
            return m


async def _seen(c: Client, n: int) -> list[tuple[str, Any]]:
    """The next ``n`` updates, chat lines and snapshots ``c`` receives, in order."""
    out: list[tuple[str, Any]] = []
    while len(out) < n:
        m = await c.expect("update", "chat", "room", timeout=10)
        out.append({"update": ("update", m.get("ply")), "chat": ("chat", m.get("text")),
                    "room": ("room", m.get("status"))}[m["type"]])
    return out


async def _table(srv: TablasServer, url: str, bound: int, clock: dict[str, int] | None = None
                 ) -> tuple[LiveRoom, str, list[Client]]:
    """A tic-tac-toe game between Ana and Bo (with ``clock``), watched by four spectators;
    the inbox holds ``bound`` players' commands."""
    assert INBOX == srv.services.inbox == 64  # the server's own bound, until the test's
    srv.services.inbox = bound
    clients = await connected(url, "Ana", "Bo", "S1", "S2", "S3", "S4")
    a, b, *specs = clients
    room = (await a.request({"type": "create_room", "game": "tictactoe", "options": {},
                             "seats": [HUMAN, HUMAN], "join_seat": 0, "clock": clock},
                            "room_created"))["room_id"]
    await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
    for s in specs:
        await s.request({"type": "spectate", "room_id": room}, "room")
    for c in clients:
        c.inbox.clear()
    return srv.hub.rooms[room], room, clients


async def test_a_full_inbox_refuses_players_and_applies_the_rest_in_order(
        tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (srv, url):
        live, room, (a, b, s1, s2, s3, s4) = await _table(srv, url, BOUND)
        async with live.lock:  # the room is busy (a write that takes its time)
            ma = await _queue(live, a, {"type": "move", "room_id": room, "ply": 0,
                                        "move": {"cell": 4}})
            mb = await _queue(live, b, {"type": "move", "room_id": room, "ply": 1,
                                        "move": {"cell": 0}})
            await _queue(live, s1, {"type": "chat", "room_id": room, "text": "one"})
            await _queue(live, s2, {"type": "chat", "room_id": room, "text": "two"})
            assert live.waiting == BOUND
            await _refused(s3, {"type": "chat", "room_id": room, "text": "three"})
            await _refused(s4, {"type": "spectate", "room_id": room})
            assert live.waiting == BOUND and live.room.ply == 0  # nothing changed
        # Released: what waited runs in the order it came (b's move needs a's first).
        assert (await _answer(a, ma))["ply"] == 1
        assert (await _answer(b, mb))["ply"] == 2
        assert await _seen(s4, 4) == [("update", 1), ("update", 2), ("chat", "one"),
                                      ("chat", "two")]
        lines = await srv.store.chat_lines(room, 10)
        assert [line["text"] for line in lines] == ["one", "two"]  # "three" never written
        # Nothing is left counted: the next command waits no more and is run.
        assert live.waiting == 0
        again = await s3.request({"type": "chat", "room_id": room, "text": "three"}, "chat")
        assert again["text"] == "three"
        for c in (a, b, s1, s2, s3, s4):
            await c.close()


async def test_the_rooms_own_tick_passes_a_full_inbox(tmp_path: Path) -> None:
    """The room's timer is never refused: its tick waits past a full inbox, and the flag
    falls once the room is free."""
    now = FakeClock()
    async with running(tmp_path / "t.db", clock=now) as (srv, url):
        live, room, (a, b, s1, s2, s3, s4) = await _table(srv, url, 2, {"base_ms": 10_000})
        assert live.room.clocks.running == 0
        async with live.lock:
            await _queue(live, s1, {"type": "chat", "room_id": room, "text": "one"})
            await _queue(live, s2, {"type": "chat", "room_id": room, "text": "two"})
            await _refused(s3, {"type": "chat", "room_id": room, "text": "three"})
            now.t += 10.5  # Ana's flag falls...
            live.reschedule()  # ...and her room's timer looks again (a command would)
            await _until(lambda: live.waiting == 3)  # its tick waits too
            assert live.room.status == "playing"
        assert await _seen(s4, 3) == [("chat", "one"), ("chat", "two"), ("room", "finished")]
        assert live.room.result is not None and live.room.result.reason == "timeout"
        assert live.waiting == 0
        for c in (a, b, s1, s2, s3, s4):
            await c.close()
