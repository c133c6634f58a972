"""Fair rated play over a real socket (contract section 10): a rated game has a clock; abort
until each side has moved, and any earlier ending is an abort; a rated game is never
adjourned and an absent opponent's game may be claimed; house bots are anchors; a pair's
eleventh rated game in 24 hours is unrated from the moment it is paired; rooms per address.

The ratings expected are computed by the Glicko-2 steps written in test_server_ratings (the
paper's, independent of server/ratings.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pg_support import Backend, backend, pg_cluster  # noqa: F401
from server_support import Client, FakeClock, connect_from, running
from test_server_ratings import (
    CLOCK,
    HUMAN,
    NEW,
    X_WINS,
    after_game,
    anchor,
    close_to,
    first_moves,
    get,
    member,
    play,
    rated_room,
)

ABORTED = {"winner": None, "points": 0, "reason": "aborted"}
BOT = {"kind": "bot", "level": "random"}


async def ratings_of(url: str, player_id: str) -> dict[str, Any]:
    return dict((await get(url, f"/api/players/{player_id}"))["ratings"])


async def pair(url: str, ana: Client, bob: Client, **kw: Any) -> tuple[str, dict[str, Any]]:
    """A rated tic-tac-toe room, Ana in seat 0 and Bob in seat 1: its id and Bob's view."""
    room, _ = await rated_room(ana, "tictactoe", [HUMAN, HUMAN], **kw)
    snap = await bob.request({"type": "join", "room_id": room, "seat": 1}, "room")
    await ana.expect("room")
    return room, snap


async def away(c: Client, seat: int) -> dict[str, Any]:
    """The first snapshot ``c`` receives that shows ``seat``'s player away."""
    while True:
        snap = await c.expect("room")
        if snap["away_since_ms"][seat] is not None:
            return snap


async def test_a_rated_game_has_a_clock(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        ana, _ = await member(url, "Ana")
        e = await ana.error({"type": "create_room", "game": "tictactoe", "options": {},
                             "seats": [HUMAN, BOT], "join_seat": 0, "rated": True})
        assert e["code"] == "bad_request" and "clock" in e["message"]
        assert (await get(url, "/api/rooms"))["rooms"] == []  # nothing was made
        await ana.close()


async def test_abort_before_each_side_has_moved_and_not_after(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        ana, ana_id = await member(url, "Ana")
        bob, bob_id = await member(url, "Bob", "127.0.0.2")
        room, _ = await pair(url, ana, bob)
        # A spectator cannot abort; a seated player can, before each side has moved.
        watcher = Client(url)
        await watcher.connect("Wat")
        await watcher.request({"type": "spectate", "room_id": room}, "room")
        assert (await watcher.error({"type": "abort", "room_id": room}))["code"] == \
            "not_seated"
        await play([ana], room, [4])  # Ana has moved, Bob not yet: Bob may still abort
        final = await bob.request({"type": "abort", "room_id": room}, "room")
        assert final["status"] == "finished" and final["result"] == ABORTED
        assert (await ana.expect("room"))["result"] == ABORTED
        assert await ratings_of(url, ana_id) == {} and await ratings_of(url, bob_id) == {}
        assert (await bob.error({"type": "abort", "room_id": room}))["code"] == "game_over"

        # Once both have moved, abort is refused and changes nothing.
        room2, snap = await pair(url, ana, bob)
        assert snap["abortable"] is True
        assert (await play([ana], room2, [4]))["abortable"] is True
        view = await bob.request({"type": "move", "room_id": room2, "ply": 1,
                                  "move": {"cell": 0}}, "update")
        assert view["abortable"] is False
        e = await ana.error({"type": "abort", "room_id": room2})
        assert e["code"] == "bad_request" and "resign" in e["message"]
        snap = await get(url, f"/api/rooms/{room2}")
        assert snap["status"] == "playing" and snap["ply"] == 2 and snap["result"] is None

        # A waiting room is left, not aborted; an unrated game against a bot aborts too.
        room3, _ = await rated_room(ana, "tictactoe", [HUMAN, HUMAN])
        e = await ana.error({"type": "abort", "room_id": room3})
        assert e["code"] == "bad_request" and "leave" in e["message"]
        created = await ana.request({"type": "create_room", "game": "connect4", "options": {},
                                     "seats": [BOT, HUMAN], "join_seat": 1}, "room_created")
        await ana.expect("room")
        final = await ana.request({"type": "abort", "room_id": created["room_id"]}, "room")
        assert final["result"] == ABORTED
        for c in (ana, bob, watcher):
            await c.close()


async def test_resigning_before_each_side_has_moved_farms_nothing(tmp_path: Path) -> None:
    """The hostile run: a second account resigns at ply 0 again and again. Each game ends
    aborted and no rating moves; after each side has moved, a resignation is rated."""
    async with running(tmp_path / "t.db") as (_, url):
        ana, ana_id = await member(url, "Ana")
        mule, mule_id = await member(url, "Mule", "127.0.0.2")
        for _ in range(5):
            room, _ = await pair(url, ana, mule)
            final = await mule.request({"type": "resign", "room_id": room}, "room")
            assert final["result"] == ABORTED and final["rated"] is True
        for _ in range(2):  # after one move of Ana's only: still an abort
            room, _ = await pair(url, ana, mule)
            await play([ana], room, [4])
            assert (await mule.request({"type": "resign", "room_id": room}, "room"))[
                "result"] == ABORTED
        assert await ratings_of(url, ana_id) == {} and await ratings_of(url, mule_id) == {}
        # Against a bot likewise: resigning before the bot has moved is an abort.
        room, _ = await rated_room(ana, "connect4", [HUMAN, BOT])
        assert (await ana.request({"type": "resign", "room_id": room}, "room"))[
            "result"] == ABORTED
        bot = await get(url, "/api/players/bot:connect4:random")
        assert bot["ratings"]["connect4"]["games"] == 0
        # Played for real, the same resignation is rated exactly as Glicko-2 says.
        room, _ = await pair(url, ana, mule)
        await play([ana, mule], room, [4, 0])
        final = await mule.request({"type": "resign", "room_id": room}, "room")
        assert final["result"] == {"winner": 0, "points": 1, "reason": "resign"}
        a1, m1 = after_game(NEW, NEW, 1.0)
        close_to((await ratings_of(url, ana_id))["tictactoe"], a1, 1)
        close_to((await ratings_of(url, mule_id))["tictactoe"], m1, 1)
        for c in (ana, mule):
            await c.close()


async def test_claim_the_game_of_an_opponent_away_for_claim_after(tmp_path: Path) -> None:
    clock = FakeClock()
    async with running(tmp_path / "t.db", clock=clock, claim_after=30) as (_, url):
        ana, ana_id = await member(url, "Ana")
        bob, bob_id = await member(url, "Bob", "127.0.0.2")
        room, snap = await pair(url, ana, bob)
        assert snap["away_since_ms"] == [None, None]
        await play([ana, bob], room, [4, 0])
        e = await ana.error({"type": "claim_win", "room_id": room})
        assert e["code"] == "bad_request" and "here" in e["message"]  # Bob is present
        await bob.close()
        snap = await away(ana, 1)  # the snapshot after Bob left says since when
        assert snap["away_since_ms"] == [None, round(clock.t * 1000)]
        clock.t += 29
        e = await ana.error({"type": "claim_win", "room_id": room})
        assert e["code"] == "bad_request" and "30" in e["message"]
        assert (await get(url, f"/api/rooms/{room}"))["status"] == "playing"
        clock.t += 1
        final = await ana.request({"type": "claim_win", "room_id": room}, "room")
        assert final["result"] == {"winner": 0, "points": 1, "reason": "abandoned"}
        a1, b1 = after_game(NEW, NEW, 1.0)
        close_to((await ratings_of(url, ana_id))["tictactoe"], a1, 1)
        close_to((await ratings_of(url, bob_id))["tictactoe"], b1, 1)
        # A claim against a bot, or before each side has moved, is no win.
        room2, _ = await rated_room(ana, "tictactoe", [HUMAN, BOT])
        assert "bot" in (await ana.error({"type": "claim_win", "room_id": room2}))["message"]
        await ana.close()


async def test_a_claim_before_each_side_has_moved_is_an_abort(tmp_path: Path) -> None:
    clock = FakeClock()
    async with running(tmp_path / "t.db", clock=clock, claim_after=30) as (_, url):
        ana, _ = await member(url, "Ana")
        bob, bob_id = await member(url, "Bob", "127.0.0.2")
        room, _ = await pair(url, ana, bob)
        await play([ana], room, [4])
        await bob.close()
        await away(ana, 1)
        clock.t += 31
        final = await ana.request({"type": "claim_win", "room_id": room}, "room")
        assert final["result"] == ABORTED
        assert await ratings_of(url, bob_id) == {}
        await ana.close()


async def until_status(url: str, room: str, status: str, timeout: float = 10) -> dict[str, Any]:
    end = asyncio.get_running_loop().time() + timeout
    while True:
        snap: dict[str, Any] = await get(url, f"/api/rooms/{room}")
        if snap["status"] == status or asyncio.get_running_loop().time() > end:
            return snap
        await asyncio.sleep(0.05)


async def test_a_rated_game_is_never_adjourned_its_clock_runs(tmp_path: Path) -> None:
    """Both players gone: an unrated game is adjourned (section 6), a rated one plays on and
    the flag of the side to move falls, rated; also across a restart."""
    clock = FakeClock()
    db = tmp_path / "t.db"
    async with running(db, clock=clock, abandon_after=1) as (_, url):
        ana, ana_id = await member(url, "Ana")
        bob, bob_id = await member(url, "Bob", "127.0.0.2")
        rated, _ = await pair(url, ana, bob)
        await play([ana, bob], rated, [4, 0])
        free = (await ana.request({"type": "create_room", "game": "tictactoe", "options": {},
                                   "seats": [HUMAN, HUMAN], "join_seat": 0,
                                   "clock": CLOCK}, "room_created"))["room_id"]
        await bob.request({"type": "join", "room_id": free, "seat": 1}, "room")
        await play([ana, bob], free, [4, 0])
        watcher = Client(url)
        await watcher.connect("Wat")
        for room in (rated, free):
            await watcher.request({"type": "spectate", "room_id": room}, "room")
        await ana.close()
        await bob.close()
        gone: set[str] = set()
        while len(gone) < 2:  # the server has seen both leave both rooms
            snap = await watcher.expect("room")
            if None not in snap["away_since_ms"]:
                gone.add(snap["room_id"])
        clock.t += 5  # both absent for longer than abandon_after
        for room in (rated, free):  # poke both rooms: their timers look again
            await watcher.request({"type": "spectate", "room_id": room}, "room")
        assert (await until_status(url, free, "adjourned"))["status"] == "adjourned"
        snap = await get(url, f"/api/rooms/{rated}")
        assert snap["status"] == "playing" and snap["clock_running"] == 0
        assert snap["away_since_ms"][0] is not None and snap["away_since_ms"][1] is not None
        await watcher.close()
    # After a restart nobody comes back: the rated game is loaded and its clock runs on.
    async with running(db, clock=clock, abandon_after=1) as (_, url):
        await asyncio.sleep(1.5)  # the backlog is settled abandon_after after the start
        assert (await get(url, f"/api/rooms/{rated}"))["status"] == "playing"
        clock.t += CLOCK["base_ms"] / 1000
        watcher = Client(url)
        await watcher.connect("Wat")
        await watcher.request({"type": "spectate", "room_id": rated}, "room")
        final = await until_status(url, rated, "finished")
        assert final["result"] == {"winner": 1, "points": 1, "reason": "timeout"}
        b1, a1 = after_game(NEW, NEW, 1.0)
        close_to((await ratings_of(url, ana_id))["tictactoe"], a1, 1)
        close_to((await ratings_of(url, bob_id))["tictactoe"], b1, 1)
        await watcher.close()


async def test_closing_the_tab_does_not_escape_a_rated_loss(tmp_path: Path) -> None:
    """The hostile run: losing to the max bot, the player closes the tab. The room is not
    adjourned: the player's clock runs out and the loss is rated against the anchor."""
    clock = FakeClock()
    async with running(tmp_path / "t.db", clock=clock, abandon_after=1) as (_, url):
        ana, ana_id = await member(url, "Ana")
        room, snap = await rated_room(ana, "connect4", [HUMAN, {"kind": "bot", "level": "max"}])
        view = await first_moves(ana, room, snap)
        assert view["to_move"] == 0  # Ana's turn, her clock running
        watcher = Client(url)
        await watcher.connect("Wat")
        await watcher.request({"type": "spectate", "room_id": room}, "room")
        await ana.close()
        await away(watcher, 0)
        clock.t += 5  # absent, well past abandon_after: a game without a clock would adjourn
        await watcher.request({"type": "spectate", "room_id": room}, "room")
        await asyncio.sleep(0.3)
        assert (await get(url, f"/api/rooms/{room}"))["status"] == "playing"
        clock.t += CLOCK["base_ms"] / 1000
        await watcher.request({"type": "spectate", "room_id": room}, "room")
        final = await until_status(url, room, "finished")
        assert final["result"] == {"winner": 1, "points": 1, "reason": "timeout"}
        a1, _ = after_game(NEW, anchor("connect4", "max"), 0.0)
        close_to((await ratings_of(url, ana_id))["connect4"], a1, 1)
        await watcher.close()


async def test_the_eleventh_game_of_a_pair_is_unrated(backend: Backend) -> None:  # noqa: F811
    """Ten rated games between Ana and Bob change ratings; the eleventh within 24 hours is
    unrated from the moment it is paired, and changes nothing; a day later they are rated
    again. Against a bot level likewise, counting the games still being played."""
    clock = FakeClock()
    async with running(backend.where, clock=clock) as (_, url):
        ana, ana_id = await member(url, "Ana")
        bob, bob_id = await member(url, "Bob", "127.0.0.2")
        a, b = NEW, NEW
        for _ in range(10):
            room, snap = await pair(url, ana, bob)
            assert snap["rated"] is True
            await play([ana, bob], room, X_WINS)
            a, b = after_game(a, b, 1.0)
            clock.t += 60
        close_to((await ratings_of(url, ana_id))["tictactoe"], a, 10)
        room, _ = await rated_room(ana, "tictactoe", [HUMAN, HUMAN])
        snap = await bob.request({"type": "join", "room_id": room, "seat": 1}, "room")
        assert snap["rated"] is False and snap["room_options"]["rated"] is False
        assert (await get(url, f"/api/rooms/{room}"))["rated"] is False
        await play([ana, bob], room, X_WINS)
        close_to((await ratings_of(url, ana_id))["tictactoe"], a, 10)
        close_to((await ratings_of(url, bob_id))["tictactoe"], b, 10)
        # 24 hours after the first of the ten, one of them has left the window.
        clock.t += 86400 - 10 * 60 + 1
        room, snap = await pair(url, ana, bob)
        assert snap["rated"] is True
        await play([ana, bob], room, X_WINS)
        a, b = after_game(a, b, 1.0)
        close_to((await ratings_of(url, ana_id))["tictactoe"], a, 11)

        # A person and a bot level are a pair too; the rooms in play count.
        rooms = [await rated_room(ana, "connect4", [HUMAN, BOT]) for _ in range(10)]
        assert all(snap["rated"] for _, snap in rooms)
        eleventh, snap = await rated_room(ana, "connect4", [HUMAN, BOT])
        assert snap["rated"] is False
        assert (await get(url, f"/api/rooms/{eleventh}"))["rated"] is False
        # Another level is another pair.
        _, snap = await rated_room(ana, "connect4", [HUMAN, {"kind": "bot", "level": "easy"}])
        assert snap["rated"] is True
        for c in (ana, bob):
            await c.close()


async def test_a_game_that_finishes_past_the_cap_changes_nothing(
        backend: Backend) -> None:  # noqa: F811
    """The cap is checked again when a game ends: a rated game paired while the pair had no
    game in the window, that finishes once ten are in it (as two games paired at the same
    moment on two nodes would), leaves both ratings as they were. The window is moved with
    the rooms' clock: the ten games are played, the clock goes a day on (the window empty:
    the room is paired rated), then back, so that they are in the window when it ends."""
    clock = FakeClock()
    async with running(backend.where, clock=clock) as (_, url):
        (ana, ana_id) = await member(url, "Ana")
        (bob, bob_id) = await member(url, "Bob", "127.0.0.2")  # apart (section 16)
        for _ in range(10):
            room, _ = await pair(url, ana, bob)
            await play([ana, bob], room, X_WINS)
            clock.t += 1
        before = {pid: (await ratings_of(url, pid))["tictactoe"] for pid in (ana_id, bob_id)}
        clock.t += 86400 + 60
        late, snap = await pair(url, ana, bob)
        assert snap["rated"] is True  # paired with none of the ten in its window
        clock.t -= 86400
        await play([ana, bob], late, X_WINS)
        after = {pid: (await ratings_of(url, pid))["tictactoe"] for pid in (ana_id, bob_id)}
        assert after == before
        assert (await get(url, f"/api/rooms/{late}"))["unrated_reason"] == "pair_cap"
        for c in (ana, bob):
            await c.close()


async def test_a_house_bot_is_an_anchor(backend: Backend) -> None:  # noqa: F811
    """Whatever happens against it, a bot level's rating and RD stay its fixed ones; the
    person is rated against exactly them."""
    async with running(backend.where) as (_, url):
        ana, ana_id = await member(url, "Ana")
        fixed = anchor("connect4", "hard")
        a = NEW
        for n in range(1, 4):
            room, snap = await rated_room(ana, "connect4",
                                          [HUMAN, {"kind": "bot", "level": "hard"}])
            assert snap["seats"][1]["rating"] == round(fixed[0])
            await first_moves(ana, room, snap)
            await ana.request({"type": "resign", "room_id": room}, "room")
            a, _ = after_game(a, fixed, 0.0)
            close_to((await ratings_of(url, ana_id))["connect4"], a, n)
            close_to((await get(url, "/api/players/bot:connect4:hard"))["ratings"]["connect4"],
                     fixed, n)
        await ana.close()


async def test_rooms_per_address(tmp_path: Path) -> None:
    """One address opens at most max_rooms_per_address rooms waiting or in play, over all
    of its players; another address is not held back; a finished room frees its place."""
    async with running(tmp_path / "t.db", max_rooms_per_address=3) as (_, url):
        guests = [Client(url) for _ in range(2)]
        for i, g in enumerate(guests):
            await g.connect(f"Guest{i}")
        made = []
        for g in (guests[0], guests[0], guests[1]):
            created = await g.request({"type": "create_room", "game": "tictactoe",
                                       "seats": [HUMAN, HUMAN], "join_seat": 0}, "room_created")
            made.append(created["room_id"])
        before = await get(url, "/api/rooms")
        e = await guests[1].error({"type": "create_room", "game": "connect4",
                                   "seats": [HUMAN, BOT], "join_seat": 0})
        assert e["code"] == "rate_limited"
        assert await get(url, "/api/rooms") == before  # nothing was made
        other = Client(url)
        other.ws = await connect_from(url, "127.0.0.2")
        await other.send({"type": "hello", "name": "Far", "token": None})
        await other.expect("welcome")
        await other.request({"type": "create_room", "game": "tictactoe",
                             "seats": [HUMAN, BOT], "join_seat": 0}, "room_created")
        # A room that ends (its creator leaves it) frees a place.
        await guests[0].request({"type": "leave", "room_id": made[0]}, "left")
        await guests[1].request({"type": "create_room", "game": "tictactoe",
                                 "seats": [HUMAN, BOT], "join_seat": 0}, "room_created")
        for c in (*guests, other):
            await c.close()


@pytest.mark.parametrize("level", ["random", "max"])
def test_the_anchors_are_the_ladders(level: str) -> None:
    """The fixed ratings the project ships are the ones tools/anchors.py computes from the
    measured ladder (docs/ratings.md)."""
    from tablas.engine.search.profiles import PROFILES

    from tools.anchors import LADDER, anchors

    for game, ladder in LADDER.items():
        assert PROFILES[game].bot_ratings[level] == anchors(ladder)[level]  # type: ignore[index]
    assert set(LADDER) == set(PROFILES)
