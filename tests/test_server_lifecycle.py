"""Rooms that end (contract section 6), over real sockets: a game whose player is absent is won
by the present one or adjourned, a waiting room whose creator is absent is closed, adjourned
games come back when their players join and expire when nobody does, and a restart loads
nothing of the past.

``abandon_after`` is a fraction of a second here, in real time: absence is measured from the
moment a player's last connection closes."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from typing import Any

from server_support import Client, connected, create, running
from tablas.server.room import SeatState
from tablas.server.store import Store

HUMAN = {"kind": "human"}
BOT = {"kind": "bot", "level": "random"}
AWAY = 0.3  # abandon_after, seconds


async def _room_until(c: Client, status: str, timeout: float = 10) -> dict[str, Any]:
    """The next ``room`` snapshot ``c`` receives with ``status``."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        m = await c.expect("room", timeout=max(0.01, end - loop.time()))
        if m["status"] == status:
            return m


def _status(db: Path, room: str) -> tuple[str, Any]:
    with sqlite3.connect(db) as c:
        row = c.execute("SELECT status, (SELECT reason FROM results WHERE room_id = ?)"
                        " FROM rooms WHERE id = ?", (room, room)).fetchone()
    return row[0], row[1]


async def _game(a: Client, b: Client, game: str = "tictactoe") -> str:
    room, _ = await create(a, game, [HUMAN, HUMAN])
    await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
    await a.expect("room")
    return room


async def test_the_present_player_wins_when_the_other_is_absent(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    async with running(db, abandon_after=AWAY) as (_srv, url):
        a, b = await connected(url, "Ana", "Bo")
        room = await _game(a, b)
        await a.request({"type": "move", "room_id": room, "ply": 0, "move": {"cell": 4}},
                        "update")
        gone = time.monotonic()
        await b.close()
        end = await _room_until(a, "finished")
        assert time.monotonic() - gone >= AWAY
        assert end["result"] == {"winner": 0, "points": 1, "reason": "abandoned"}
        assert _status(db, room) == ("finished", "abandoned")
        lobby = await a.request({"type": "list_rooms"}, "rooms")
        assert room not in [r["room_id"] for r in lobby["rooms"]]


async def test_coming_back_in_time_keeps_the_game(tmp_path: Path) -> None:
    """Absence is measured from the last connection: a player who reconnects before
    ``abandon_after`` keeps their seat and the game goes on."""
    async with running(tmp_path / "t.db", abandon_after=1.0) as (srv, url):
        a = Client(url)
        await a.connect("Ana")
        b = Client(url)
        token = (await b.connect("Bo"))["token"]
        room = await _game(a, b)
        await b.close()
        await asyncio.sleep(0.5)
        b = Client(url)
        await b.connect("Bo", token)
        await asyncio.sleep(0.8)  # past the first absence's deadline
        assert srv.hub.rooms[room].room.status == "playing"
        snap = await b.request({"type": "join", "room_id": room}, "room")
        assert snap["status"] == "playing" and snap["your_seats"] == [1]


async def test_a_game_with_nobody_present_is_adjourned_then_resumed(tmp_path: Path) -> None:
    """Against a bot, the absent player's game is adjourned: out of the lobby, out of memory,
    listed in the player's ``welcome.seats``; a move is refused until a ``join`` resumes it,
    and it goes on where it was."""
    db = tmp_path / "t.db"
    async with running(db, abandon_after=AWAY, sweep_every=0.05, evict_idle_after=0.0) as (
            srv, url):
        a, s = Client(url), Client(url)
        token = (await a.connect("Ana"))["token"]
        await s.connect("Spec")
        room, _snap = await create(a, "connect4", [HUMAN, BOT])
        view = await a.request({"type": "move", "room_id": room, "ply": 0,
                                "move": {"column": 3}}, "update")
        await a.expect("update")  # the bot's answer
        await s.request({"type": "spectate", "room_id": room}, "room")
        await a.close()
        adjourned = await _room_until(s, "adjourned")
        assert adjourned["ply"] == 2 and adjourned["result"] is None
        assert adjourned["to_move"] is None and adjourned["legal_moves"] == []
        assert _status(db, room) == ("adjourned", None)
        lobby = await s.request({"type": "list_rooms"}, "rooms")
        assert room not in [r["room_id"] for r in lobby["rooms"]]
        await s.request({"type": "leave", "room_id": room}, "left")
        loop = asyncio.get_running_loop()
        end = loop.time() + 5
        while room in srv.hub.rooms:  # nobody follows it: it leaves memory
            assert loop.time() < end
            await asyncio.sleep(0.02)

        a = Client(url)
        welcome = await a.connect("Ana", token)
        assert welcome["seats"] == [{"room_id": room, "seat": 0, "status": "adjourned"}]
        assert room not in srv.hub.rooms  # adjourned games wait on disk until joined
        e = await a.error({"type": "move", "room_id": room, "ply": 2, "move": {"column": 3}})
        assert e["code"] == "bad_request" and "adjourned" in e["message"]
        back = await a.request({"type": "join", "room_id": room}, "room")
        assert back["status"] == "playing" and back["ply"] == 2 and back["legal_moves"]
        assert back["history"] == adjourned["history"]
        assert _status(db, room) == ("playing", None)
        view = await a.request({"type": "move", "room_id": room, "ply": 2,
                                "move": {"column": 3}}, "update")
        assert view["ply"] == 3


async def test_both_players_gone_adjourns_and_a_late_return_wins(tmp_path: Path) -> None:
    """Both absent: adjourned, nobody wins. One absent while the other is away but not yet
    absent: nothing happens until the other comes back (and wins) or is absent too."""
    db = tmp_path / "t.db"
    async with running(db, abandon_after=0.6) as (srv, url):
        a, b = Client(url), Client(url)
        tokens = [(await a.connect("Ana"))["token"], (await b.connect("Bo"))["token"]]
        both = await _game(a, b)
        other = await _game(a, b)
        await b.close()
        await asyncio.sleep(0.3)
        await a.close()
        await asyncio.sleep(0.45)  # b absent, a away for 0.45 s: not yet
        assert srv.hub.rooms[both].room.status == "playing"
        a = Client(url)
        await a.connect("Ana", tokens[0])  # a is back: the games with absent b are a's
        await asyncio.sleep(0.1)
        assert srv.hub.rooms[both].room.result is not None
        assert srv.hub.rooms[both].room.result.reason == "abandoned"
        assert srv.hub.rooms[both].room.result.winner == 0
        assert _status(db, other) == ("finished", "abandoned")

        b = Client(url)
        await b.connect("Bo", tokens[1])
        third = await _game(a, b)
        await a.close()
        await b.close()
        await asyncio.sleep(0.9)
        assert _status(db, third) == ("adjourned", None)


async def test_a_waiting_room_whose_creator_is_absent_closes(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    async with running(db, abandon_after=AWAY) as (srv, url):
        srv.lobby.max_age = 0  # the lobby is read right after each change
        a, c = await connected(url, "Ana", "Cy")
        seated, _ = await create(a, "tictactoe", [HUMAN, HUMAN])
        hosted, _ = await create(a, "connect4", [HUMAN, HUMAN], join_seat=None)
        await c.request({"type": "spectate", "room_id": seated}, "room")
        ids = [r["room_id"] for r in (await c.request({"type": "list_rooms"}, "rooms"))["rooms"]]
        assert {seated, hosted} <= set(ids)
        await a.close()
        closed = await _room_until(c, "closed")
        assert closed["room_id"] == seated and closed["result"] is None
        await asyncio.sleep(0.2)
        assert _status(db, seated) == ("closed", None) and _status(db, hosted) == ("closed", None)
        ids = [r["room_id"] for r in (await c.request({"type": "list_rooms"}, "rooms"))["rooms"]]
        assert not {seated, hosted} & set(ids)
        e = await c.error({"type": "join", "room_id": hosted, "seat": 0})
        assert e["code"] == "game_over" and "closed" in e["message"]


async def test_adjourned_games_expire(tmp_path: Path) -> None:
    """After ``keep_adjourned`` an adjourned game ends without a winner (``expired``), on
    disk or, when someone watches it, through its owner, who tells the watcher."""
    db = tmp_path / "t.db"
    async with running(db, abandon_after=AWAY, keep_adjourned=0.5) as (srv, url):
        a, s = await connected(url, "Ana", "Spec")
        on_disk, _ = await create(a, "tictactoe", [HUMAN, BOT])
        watched, _ = await create(a, "tictactoe", [HUMAN, BOT])
        await s.request({"type": "spectate", "room_id": watched}, "room")
        await a.close()
        await _room_until(s, "adjourned")
        await asyncio.sleep(0.1)
        assert _status(db, on_disk) == ("adjourned", None)
        srv.hub.rooms.pop(on_disk)  # as if it had left memory
        assert await srv.sweeps.expire_adjourned() == 0  # not yet
        await asyncio.sleep(0.6)
        assert await srv.sweeps.expire_adjourned() == 2
        end = await _room_until(s, "finished")
        assert end["result"] == {"winner": None, "points": 0, "reason": "expired"}
        assert _status(db, on_disk) == ("finished", "expired")
        assert _status(db, watched) == ("finished", "expired")


async def test_a_restart_loads_nothing_and_settles_the_rooms_nobody_comes_back_to(
    tmp_path: Path,
) -> None:
    """A starting server answers before it loads any room; the games that play on by
    themselves are loaded in the background, and ``abandon_after`` after the start the live
    rooms nobody named are adjourned (games) or closed (waiting rooms) on disk, while a
    player who came back keeps theirs."""
    db = tmp_path / "t.db"
    async with running(db, abandon_after=None, bot_pause=60) as (srv, url):
        a, b = Client(url), Client(url)
        token_a = (await a.connect("Ana"))["token"]
        await b.connect("Bo")
        waiting, _ = await create(a, "tictactoe", [HUMAN, HUMAN])
        game = await _game(a, b)
        returns = await _game(b, a)
        bots, _ = await create(a, "connect4", [{"kind": "bot", "level": "easy"}] * 2,
                               join_seat=None)
        finished = await _game(a, b)
        await a.request({"type": "resign", "room_id": finished}, "room")
    async with running(db, abandon_after=0.5) as (srv, url):
        loop = asyncio.get_running_loop()
        end = loop.time() + 5
        while bots not in srv.hub.rooms:  # bot against bot goes on by itself
            assert loop.time() < end
            await asyncio.sleep(0.02)
        assert set(srv.hub.rooms) == {bots}
        a = Client(url)
        await a.connect("Ana", token_a)  # a is back: a's live rooms are loaded, and timed
        assert {waiting, game, returns} <= set(srv.hub.rooms)
        await asyncio.sleep(0.8)
        assert _status(db, waiting) == ("waiting", None)  # a, its creator, is present
        assert _status(db, game)[0] == "finished"  # b absent, a present: a won
        assert _status(db, finished) == ("finished", "resign")


async def test_rooms_on_disk_nobody_names_are_settled_in_one_write(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    store = await Store.open(db)
    try:
        await store.create_player("p", "Ana", "tok")
        for i, status in enumerate(("waiting", "playing", "playing")):
            seats = [SeatState("human", None, "p", "Ana"),
                     SeatState("bot", "random") if i == 2 else SeatState("human")]
            await store.create_room(f"r{i}", "tictactoe", {}, seats, status, None, [],
                                    float(i), created_by="p")
    finally:
        await store.close()
    async with running(db, abandon_after=0.3) as (srv, url):
        assert not srv.hub.rooms
        await asyncio.sleep(0.6)
        assert [_status(db, f"r{i}")[0] for i in range(3)] == ["closed", "adjourned", "adjourned"]
        (c,) = await connected(url, "Cy")
        snap = await c.request({"type": "spectate", "room_id": "r1"}, "room")
        assert snap["status"] == "adjourned"
