"""Live bot analysis, clocks and seats handed to bots, over real sockets on ephemeral ports."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from server_support import Client, FakeClock, create, running

HUMAN = {"kind": "human"}


async def _until(c: Client, kind: str, pred: Any = None, timeout: float = 30) -> dict[str, Any]:
    """The next message of type ``kind`` for which ``pred`` holds (others kept in inbox)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        m = await c.expect(kind, timeout=max(0.01, end - loop.time()))
        if pred is None or pred(m):
            return m


async def test_spectator_sees_the_bot_think(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        a, s = Client(url), Client(url)
        await a.connect("Ana")
        await s.connect("Spec")
        bot = {"kind": "bot", "level": "medium"}
        room, snap = await create(a, "connect4", [HUMAN, bot])
        assert snap["room_options"] == {"show_analysis": False, "clock": None,
                                        "abandon_to_bot_after_ms": None, "rated": False,
                                        "tournament_id": None, "unrated_reason": None}
        assert snap["clocks"] is None and snap["clock_running"] is None
        await s.request({"type": "spectate", "room_id": room}, "room")
        await a.send({"type": "move", "room_id": room, "ply": 0, "move": {"column": 3}})
        start = len(s.inbox)
        update = await _until(s, "update", lambda m: m["seat"] == 1, timeout=60)
        seen = [m for m in s.inbox[start:] if m["type"] == "analysis"]
        live = [m for m in seen if not m["final"]]
        final = [m for m in seen if m["final"]]
        assert live and live[0]["depth"] >= 1 and live[0]["pv"], seen
        assert all(m["room_id"] == room and m["ply"] == 1 and m["seat"] == 1 for m in seen)
        assert [m["depth"] for m in live] == sorted(m["depth"] for m in live)
        assert len(final) == 1 and seen[-1] is final[0]  # the decision comes last
        assert final[0]["pv"][0] and isinstance(final[0]["nodes"], int)
        assert update["ply"] == 2
        await _until(a, "update", lambda m: m["seat"] == 1, timeout=60)
        assert not [m for m in a.inbox if m["type"] == "analysis"]  # players: not by default

        # With show_analysis the players see it too.
        room3, snap3 = await _create_with(a, "connect4", [HUMAN, bot], show_analysis=True)
        assert snap3["room_options"]["show_analysis"] is True
        await a.send({"type": "move", "room_id": room3, "ply": 0, "move": {"column": 3}})
        await _until(a, "update", lambda m: m["seat"] == 1 and m["room_id"] == room3, 60)
        mine = [m for m in a.inbox if m["type"] == "analysis" and m["room_id"] == room3]
        assert mine and mine[-1]["final"] and any(m["depth"] >= 1 for m in mine)
        for c in (a, s):
            await c.close()


async def test_an_analysis_carries_its_proof_and_how_to_read_its_score(tmp_path: Path) -> None:
    """The proof a search found reaches the wire as ``proven`` and ``distance``, with the
    game's score unit and scale, so that no page needs the engine's numbers: Grundy's heap of
    7 is lost for the side to move (its Grundy value is 0), and the solver says in how many."""
    async with running(tmp_path / "t.db") as (_srv, url):
        a = Client(url)
        await a.connect("Ana")
        hard = {"kind": "bot", "level": "hard"}
        room, _ = await _create_with(a, "grundy", [hard, HUMAN], join_seat=1,
                                     show_analysis=True)
        final = await _until(a, "analysis", lambda m: m["final"], timeout=60)
        assert final["room_id"] == room and final["seat"] == 0 and final["ply"] == 0
        assert final["proven"] == "loss" and isinstance(final["distance"], int), final
        assert final["distance"] >= 3 and final["distance"] % 2 == 0  # the loser moves last
        assert (final["score_unit"], final["score_typical"]) == ("points", 150.0)
        # Bots on both seats (whoever wins the opening roll thinks), watched by their creator.
        medium = {"kind": "bot", "level": "medium"}
        created = await a.request({"type": "create_room", "game": "backgammon", "options": {},
                                   "seats": [medium, medium]}, "room_created")
        bg = created["room_id"]
        equity = await _until(a, "analysis", lambda m: m["room_id"] == bg, timeout=60)
        assert equity["score_unit"] == "equity" and equity["score_typical"] == 1.0
        assert equity["proven"] is None
        await a.close()


async def _create_with(c: Client, game: str, seats: list[dict[str, Any]], join_seat: int = 0,
                       **extra: Any) -> tuple[str, dict[str, Any]]:
    msg = {"type": "create_room", "game": game, "options": {}, "seats": seats,
           "join_seat": join_seat, **extra}
    created = await c.request(msg, "room_created")
    return created["room_id"], await c.expect("room")


async def test_room_options_are_validated(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        a = Client(url)
        await a.connect("Ana")
        base = {"type": "create_room", "game": "tictactoe", "options": {},
                "seats": [HUMAN, HUMAN]}
        for extra in ({"show_analysis": "yes"}, {"clock": {"base_ms": 0}},
                      {"clock": {"base_ms": 1000, "increment_ms": -1}},
                      {"clock": {"base_ms": "1000"}}, {"clock": {"base_ms": 1, "x": 1}},
                      {"abandon_to_bot_after_ms": 0}):
            err = await a.error({**base, **extra})
            assert err["code"] == "bad_request", (extra, err)
        err = await a.error({"type": "hand_to_bot", "room_id": "nope", "seat": 0})
        assert err["code"] == "unknown_room"
        await a.close()


async def test_clock_flags_and_a_late_move_is_refused(tmp_path: Path) -> None:
    now = FakeClock()
    async with running(tmp_path / "t.db", clock=now) as (_srv, url):
        a, b, s = Client(url), Client(url), Client(url)
        await a.connect("Ana")
        await b.connect("Bo")
        await s.connect("Spec")
        too_short = await a.error({"type": "create_room", "game": "tictactoe",
                                   "seats": [HUMAN, HUMAN], "clock": {"base_ms": 9_999}})
        assert too_short["code"] == "bad_request" and "10000 ms" in too_short["message"]
        room, snap = await _create_with(a, "tictactoe", [HUMAN, HUMAN],
                                        clock={"base_ms": 10_000, "increment_ms": 0})
        assert snap["clocks"] == [10_000, 10_000] and snap["clock_running"] is None
        joined = await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
        assert joined["clock_running"] == 0 and joined["clocks"][1] == 10_000
        assert joined["room_options"]["clock"] == {"base_ms": 10_000, "increment_ms": 0}
        now.t += 3
        u = await a.request({"type": "move", "room_id": room, "ply": 0, "move": {"cell": 4}},
                            "update")
        assert u["clock_running"] == 1 and u["clocks"] == [7_000, 10_000]
        now.t += 10.001
        # The move comes too late: refused, and the game is lost on time.
        err = await b.error({"type": "move", "room_id": room, "ply": 1, "move": {"cell": 0}})
        assert err["code"] == "game_over"
        end = await _until(a, "room", lambda m: m["status"] == "finished", timeout=10)
        assert end["result"] == {"winner": 0, "points": 1, "reason": "timeout"}
        assert end["clocks"] == [7_000, 0] and end["clock_running"] is None

        # Nobody moves: the room's timer flags the seat to move.
        room2, _ = await _create_with(a, "tictactoe", [HUMAN, HUMAN],
                                      clock={"base_ms": 10_000, "increment_ms": 0})
        await b.request({"type": "join", "room_id": room2, "seat": 1}, "room")
        now.t += 10.5
        await s.request({"type": "spectate", "room_id": room2}, "room")  # pokes the timer
        flagged = await _until(s, "room", lambda m: m["status"] == "finished", timeout=10)
        assert flagged["result"] == {"winner": 1, "points": 1, "reason": "timeout"}
        for c in (a, b, s):
            await c.close()
    async with running(tmp_path / "t.db") as (_srv, url):  # the end and its clocks persist
        c = Client(url)
        await c.connect("Cy")
        again = await c.request({"type": "spectate", "room_id": room}, "room")
        assert again["result"]["reason"] == "timeout" and again["clocks"] == end["clocks"]
        await c.close()


async def test_clocks_persist_and_the_bot_pays_its_thinking(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    bot = {"kind": "bot", "level": "easy"}
    async with running(db) as (_srv, url):
        a = Client(url)
        w = await a.connect("Ana")
        room, snap = await _create_with(a, "connect4", [HUMAN, bot],
                                        clock={"base_ms": 60_000, "increment_ms": 1000})
        assert snap["clock_running"] == 0
        view = snap
        for n, col in enumerate((3, 2), 1):
            await a.send({"type": "move", "room_id": room, "ply": view["ply"],
                          "move": {"column": col}})
            mine = await _until(a, "update", lambda m: m["seat"] == 0)
            # each action earns 1000 ms and costs the time it took (a little here)
            assert mine["clock_running"] == 1
            assert 60_000 + 1000 * n - 5000 <= mine["clocks"][0] <= 60_000 + 1000 * n
            view = await _until(a, "update", lambda m: m["seat"] == 1, timeout=60)
            assert view["clock_running"] == 0
            assert view["clocks"][1] < 60_000 + 1000 * n  # the bot's thinking is charged
        last = view["clocks"]
    async with running(db) as (_srv, url):
        a2 = Client(url)
        await a2.connect("Ana", token=w["token"])
        snap2 = await a2.request({"type": "join", "room_id": room}, "room")
        assert snap2["ply"] == 4 and snap2["clock_running"] == 0
        assert snap2["clocks"][1] == last[1]
        # Resumed, not reset: from the time left stored with the bot's move. ``last`` was
        # made after that move's fsync, so it can be a few ms below what the reload shows.
        con = sqlite3.connect(db)
        stored = con.execute("SELECT clock0_ms FROM moves WHERE room_id = ?"
                             " ORDER BY ply DESC LIMIT 1", (room,)).fetchone()[0]
        con.close()
        assert last[0] <= stored and stored - 2000 <= snap2["clocks"][0] <= stored
        await a2.close()


async def test_player_hands_the_seat_to_a_bot(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (srv, url):
        a, b, s = Client(url), Client(url), Client(url)
        await a.connect("Ana")
        wb = await b.connect("Bo")
        await s.connect("Spec")
        room, _ = await create(a, "tictactoe", [HUMAN, HUMAN])
        await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
        await s.request({"type": "spectate", "room_id": room}, "room")
        await a.request({"type": "move", "room_id": room, "ply": 0, "move": {"cell": 4}},
                        "update")
        err = await a.error({"type": "hand_to_bot", "room_id": room, "seat": 1})
        assert err["code"] == "not_seated"
        err = await s.error({"type": "hand_to_bot", "room_id": room, "seat": 0})
        assert err["code"] == "not_seated"
        snap = await b.request({"type": "hand_to_bot", "room_id": room, "seat": 1,
                                "level": "easy"}, "room")
        assert snap["seats"][1]["kind"] == "bot" and snap["seats"][1]["level"] == "easy"
        assert snap["your_seats"] == []
        for c in (a, s):
            seen = await _until(c, "room", lambda m: m["seats"][1]["kind"] == "bot")
            assert seen["status"] == "playing"
        bot_move = await _until(a, "update", lambda m: m["seat"] == 1, timeout=60)
        assert bot_move["ply"] == 2
        changes = await srv.store.seat_changes(room)
        assert [(c["seat"], c["from_player"], c["level"], c["reason"]) for c in changes] == [
            (1, wb["player_id"], "easy", "hand_to_bot")]
        record = await srv.store.load_room(room)
        assert record is not None and record.seats[1].kind == "bot"
        assert record.seats[1].player_id is None
        for c in (a, b, s):
            await c.close()


async def test_abandoned_seat_goes_to_a_bot(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (srv, url):
        a, b = Client(url), Client(url)
        await a.connect("Ana")
        await b.connect("Bo")
        room, _ = await _create_with(a, "connect4", [HUMAN, HUMAN],
                                     abandon_to_bot_after_ms=300)
        await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
        await a.request({"type": "move", "room_id": room, "ply": 0, "move": {"column": 3}},
                        "update")
        await b.close()
        away = await _until(a, "room", lambda m: not m["seats"][1]["connected"])
        assert away["seats"][1]["kind"] == "human"
        taken = await _until(a, "room", lambda m: m["seats"][1]["kind"] == "bot", timeout=10)
        assert taken["seats"][1]["level"] == "medium" and taken["status"] == "playing"
        bot_move = await _until(a, "update", lambda m: m["seat"] == 1, timeout=60)
        assert bot_move["ply"] == 2
        changes = await srv.store.seat_changes(room)
        assert [c["reason"] for c in changes] == ["abandoned"]
        await a.close()


async def test_many_rooms_write_at_once(tmp_path: Path) -> None:
    """One SQLite connection for every room: concurrent transactions must not interleave."""
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (srv, url):
        clients = [Client(url) for _ in range(8)]
        await asyncio.gather(*(c.connect(f"P{i}") for i, c in enumerate(clients)))

        async def play(c: Client) -> str:
            room, view = await create(c, "tictactoe", [HUMAN, HUMAN])
            await c.request({"type": "join", "room_id": room, "seat": 1}, "room")
            ply = 0
            while True:
                view = await c.request({"type": "spectate", "room_id": room}, "room")
                if view["status"] == "finished":
                    return room
                await c.request({"type": "move", "room_id": room, "ply": ply,
                                 "move": view["legal_moves"][0]}, "update")
                ply += 1

        rooms = await asyncio.gather(*(play(c) for c in clients))
        for room in rooms:
            record = await srv.store.load_room(room)
            assert record is not None and record.status == "finished"
            assert record.result is not None and len(record.actions) >= 5
        for c in clients:
            await c.close()
