"""Rooms' records over real HTTP (contract section 7): ``GET /api/rooms/{id}`` for rooms of
every status, from memory and from the store, with the chat; ``/export`` in each format; the
refusals, each a JSON error that changes nothing."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from server_support import Client, connected, create, http_base, running
from tablas.engine.games.tictactoe import cell_name

HUMAN = {"kind": "human"}
BOT = {"kind": "bot", "level": "random"}
AWAY = 0.3  # abandon_after, seconds


def _fetch(url: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method),
                                    timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


async def get(url: str, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    base = http_base(url)
    return await asyncio.to_thread(_fetch, base + path, method)


async def get_json(url: str, path: str, status: int = 200) -> Any:
    code, headers, body = await get(url, path)
    assert code == status, (path, code, body)
    assert headers["Content-Type"] == "application/json"
    return json.loads(body)


async def _tictactoe(a: Client, b: Client) -> str:
    room, _ = await create(a, "tictactoe", [HUMAN, HUMAN])
    await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
    await a.expect("room")
    return room


async def _play(a: Client, b: Client, room: str, cells: list[int]) -> dict[str, Any]:
    """Plays ``cells`` in turn (a is X) and returns a's last update."""
    view: dict[str, Any] = {}
    for ply, cell in enumerate(cells):
        mover = a if ply % 2 == 0 else b
        view = await mover.request({"type": "move", "room_id": room, "ply": ply,
                                    "move": {"cell": cell}}, "update")
    return view


async def _until(cond: Any, timeout: float = 10) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.02)


def _without(d: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in keys}


async def test_a_room_of_every_status_reads_as_a_spectator_sees_it(tmp_path: Path) -> None:
    """Waiting, playing, finished, closed, adjourned: the record is the ``room`` snapshot a
    spectator gets, from the room's owner while it is in memory and from the store once it
    has left, and reading it does not load it back."""
    db = tmp_path / "t.db"
    async with running(db, abandon_after=AWAY, sweep_every=0.05, evict_idle_after=0.0) as (
            srv, url):
        a, b, s, c = await connected(url, "Ana", "Bo", "Spec", "Cy")
        waiting, _ = await create(a, "grundy", [HUMAN, HUMAN], options={"heap": 9})
        playing = await _tictactoe(a, b)
        await _play(a, b, playing, [4])
        finished = await _tictactoe(a, b)
        await _play(a, b, finished, [0, 3, 1, 4, 2])
        closed, _ = await create(a, "connect4", [HUMAN, HUMAN])
        await a.request({"type": "leave", "room_id": closed}, "left")
        adjourned, _ = await create(c, "connect4", [HUMAN, BOT])
        await c.request({"type": "move", "room_id": adjourned, "ply": 0,
                         "move": {"column": 3}}, "update")
        await c.expect("update")  # the bot's answer
        await c.close()  # the only person of the game: adjourned once absent
        # With no grace the adjourned room may leave memory at once; a live room never
        # does while absences are counted, so gone means adjourned (the spectate checks it).
        await _until(lambda: (live := srv.hub.rooms.get(adjourned)) is None
                     or live.room.status == "adjourned")

        rooms = {"waiting": waiting, "playing": playing, "finished": finished,
                 "closed": closed, "adjourned": adjourned}
        for status, room in rooms.items():
            seen = _without(await s.request({"type": "spectate", "room_id": room}, "room"),
                            "re")
            assert seen["status"] == status
            record = await get_json(url, f"/api/rooms/{room}")
            assert _without(record, "chat") == seen
            assert record["chat"] == [] and record["legal_moves"] == []
            await s.request({"type": "leave", "room_id": room}, "left")

        # The rooms whose people are gone leave memory; their records come from the store,
        # the same but for the spectators now watching, and they stay on disk.
        gone = [finished, closed, adjourned]
        for room in (finished, playing):
            for who in (a, b):
                await who.request({"type": "leave", "room_id": room}, "left")
        await _until(lambda: not any(r in srv.hub.rooms for r in gone))
        for room in gone:
            record = await get_json(url, f"/api/rooms/{room}")
            seen = _without(await s.request({"type": "spectate", "room_id": room}, "room"),
                            "re")
            assert _without(record, "chat") == dict(seen, spectators=0)
            await s.request({"type": "leave", "room_id": room}, "left")
            await _until(lambda room=room: room not in srv.hub.rooms)
            await get_json(url, f"/api/rooms/{room}")
            assert room not in srv.hub.rooms  # a record read loads nothing into memory


async def test_the_chat_backlog_is_the_last_100_lines_oldest_first(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        a, b = await connected(url, "Ana", "Bo")
        room = await _tictactoe(a, b)
        sent = []
        for i in range(103):
            who = (a, b)[i % 3 == 2]
            line = await who.request({"type": "chat", "room_id": room, "text": f"line {i}\nok"},
                                     "chat")
            sent.append(_without(line, "type", "room_id", "re"))
        record = await get_json(url, f"/api/rooms/{room}")
        assert record["chat"] == sent[-100:]
        assert record["chat"][0]["text"] == "line 3\nok"
        assert {m["name"] for m in record["chat"]} == {"Ana", "Bo"}
        # Another room's lines are not in it.
        other = await _tictactoe(a, b)
        assert (await get_json(url, f"/api/rooms/{other}"))["chat"] == []
    # The backlog is read through an index, newest first, not by scanning the chat.
    with sqlite3.connect(tmp_path / "t.db") as con:
        plan = " ".join(str(r) for r in con.execute(
            "EXPLAIN QUERY PLAN SELECT c.player_id, p.name, c.text, c.created_at FROM chat c"
            " JOIN players p ON p.id = c.player_id WHERE c.room_id = ?"
            " ORDER BY c.id DESC LIMIT ?", (room, 100)))
    assert "chat_by_room" in plan and "TEMP B-TREE" not in plan


async def test_unknown_and_malformed_rooms_are_json_errors(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (srv, url):
        (a,) = await connected(url, "Ana")
        room, _ = await create(a, "tictactoe", [HUMAN, BOT])
        for path in ("/api/rooms/0123456789abcdef", "/api/rooms/nosuchroom/export"):
            err = await get_json(url, path, 404)
            assert "no room" in err["error"]
        for path in ("/api/rooms/a%2Fb", "/api/rooms/" + "a" * 65, "/api/rooms/..",
                     "/api/rooms/%00/export"):
            err = await get_json(url, path, 400)
            assert "room id" in err["error"]
        for path in (f"/api/rooms/{room}/", f"/api/rooms/{room}/nope", "/api/rooms/x/y/z"):
            err = await get_json(url, path, 404)
            assert "no such endpoint" in err["error"]
        before = (await get_json(url, f"/api/rooms/{room}"))
        for query in ("format=pgn", "format=", "format=json&format=moves", "format=mat"):
            err = await get_json(url, f"/api/rooms/{room}/export?{query}", 400)
            assert err["error"]
        assert await get_json(url, f"/api/rooms/{room}") == before
        assert len(srv.hub.rooms) == 1


async def test_exports_of_a_finished_game(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        a, b = await connected(url, "Ana", "Bo")
        room = await _tictactoe(a, b)
        cells = [0, 3, 1, 4, 2]
        await _play(a, b, room, cells)
        record = await get_json(url, f"/api/rooms/{room}/export?format=json")
        assert record == await get_json(url, f"/api/rooms/{room}/export")  # json by default
        snap = await get_json(url, f"/api/rooms/{room}")
        assert record["version"] == 1 and record["room_id"] == room
        assert (record["game"], record["title"]) == ("tictactoe", "Tic-tac-toe")
        assert record["status"] == "finished"
        assert record["result"] == {"winner": 0, "points": 1, "reason": "three_in_a_row"}
        assert record["seats"] == [{k: v for k, v in s.items() if k != "connected"}
                                   for s in snap["seats"]]
        assert [s["name"] for s in record["seats"]] == ["Ana", "Bo"]
        assert record["options"] == {} and record["room_options"] == snap["room_options"]
        assert record["position"] == "XXXOO...." == snap["state"]["notation"]
        assert [(x["ply"], x["seat"], x["move"], x["move_text"], x["dice"])
                for x in record["actions"]] == [
            (i, i % 2, {"cell": c}, cell_name(c), []) for i, c in enumerate(cells)]
        assert all(isinstance(x["time"], float) and x["clocks"] is None
                   for x in record["actions"])
        assert record["opening_rolls"] == [] and record["dice_commitment"] is None
        assert record["dice_seed"] is None and isinstance(record["created_at"], float)

        code, headers, body = await get(url, f"/api/rooms/{room}/export?format=moves")
        assert code == 200 and body == b"XXXOO....\n"
        assert headers["Content-Type"] == "text/plain; charset=utf-8"
        assert headers["Content-Disposition"] == f'attachment; filename="tablas-{room}.txt"'
        code, headers, body = await get(url, f"/api/rooms/{room}/export?format=moves", "HEAD")
        assert code == 200 and body == b"" and headers["Content-Length"] == "10"

        err = await get_json(url, f"/api/rooms/{room}/export?format=mat", 400)
        assert err["formats"] == ["json", "moves"] and "json, moves" in err["error"]


@pytest.mark.parametrize(("game", "options", "formats"), [
    ("grundy", {"heap": 7}, ["json"]),
    ("connect4", {}, ["json", "moves"]),
    ("boom", {}, ["json", "moves"]),
    ("backgammon", {}, ["json", "mat"]),
])
async def test_each_game_has_its_formats(tmp_path: Path, game: str, options: dict[str, Any],
                                         formats: list[str]) -> None:
    """A format a game does not have is a 400 naming those it has; the ones it has answer,
    for a game still being played too (the game so far)."""
    async with running(tmp_path / "t.db") as (_srv, url):
        (a,) = await connected(url, "Ana")
        room, snap = await create(a, game, [HUMAN, BOT], options=options)
        for fmt in ("moves", "mat"):
            if fmt not in formats:
                err = await get_json(url, f"/api/rooms/{room}/export?format={fmt}", 400)
                assert err["formats"] == formats
        code, _, body = await get(url, f"/api/rooms/{room}/export?format={formats[-1]}")
        assert code == 200
        if "moves" in formats:
            assert body.decode() == snap["state"]["notation"] + "\n"


async def test_a_backgammon_record_has_every_roll_and_reveals_the_seed_at_the_end(
        tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        (a,) = await connected(url, "Ana")
        room, snap = await create(a, "backgammon", [HUMAN, BOT])
        rolls = snap["rolls"]
        view = snap
        while view["to_move"] != 0:
            view = await a.expect("update", "room")
        playing = await get_json(url, f"/api/rooms/{room}/export")
        assert playing["status"] == "playing" and playing["dice_seed"] is None
        assert playing["opening_rolls"] == [r["dice"] for r in rolls if r["ply"] == 0]
        assert len(playing["opening_rolls"]) == 1
        for x in playing["actions"]:
            assert x["move_text"]
        await a.request({"type": "resign", "room_id": room}, "room")
        done = await get_json(url, f"/api/rooms/{room}/export")
        final = await get_json(url, f"/api/rooms/{room}")
        assert done["status"] == "finished" and done["result"]["reason"] == "resign"
        assert done["dice_seed"] == final["dice_seed"]
        assert hashlib.sha256(bytes.fromhex(done["dice_seed"])).hexdigest() == \
            done["dice_commitment"]
        # Every roll of the room, in the order the snapshot lists them.
        assert [r["dice"] for r in final["rolls"]] == done["opening_rolls"] + [
            d for x in done["actions"] for d in x["dice"]]
        assert [x["move"] for x in done["actions"]] == final["history"]
        assert done["position"] == final["state"]["notation"]


async def test_nothing_private_is_in_a_record(tmp_path: Path) -> None:
    """No token (nor its hash) in any answer about a room: player ids are public, as in every
    snapshot."""
    db = tmp_path / "t.db"
    async with running(db) as (_srv, url):
        a, b = Client(url), Client(url)
        tokens = [(await a.connect("Ana"))["token"], (await b.connect("Bo"))["token"]]
        room = await _tictactoe(a, b)
        await a.request({"type": "chat", "room_id": room, "text": "hi"}, "chat")
        await _play(a, b, room, [0, 3, 1, 4, 2])
        answers = [await get(url, path) for path in (
            f"/api/rooms/{room}", f"/api/rooms/{room}/export",
            f"/api/rooms/{room}/export?format=moves")]
        assert [code for code, _, _ in answers] == [200] * 3
        bodies = [body for _, _, body in answers]
        assert bodies[0].count(b'"player_id"') >= 3  # two seats and a chat line
    with sqlite3.connect(db) as con:
        hashes = [h for (h,) in con.execute("SELECT token_hash FROM players")]
    for body in bodies:
        for secret in [*tokens, *hashes]:
            assert secret.encode() not in body


# --- reviews ------------------------------------------------------------------------------


class Counted:
    """Counts the jobs the bot pool computes for a review asked for (``compute_for``, not in
    the background class), and lets each through."""

    def __init__(self, srv: Any) -> None:
        self.calls = 0
        self.inner = srv.bots.compute_for
        srv.bots.compute_for = self

    async def __call__(self, share: str, fn: Any, **kwargs: Any) -> Any:
        if not kwargs.get("background"):
            self.calls += 1
        return await self.inner(share, fn, **kwargs)


async def review(url: str, room: str, timeout: float = 120) -> tuple[int, dict[str, str], bytes]:
    """``GET …/review``, asked again while it answers 202 (being computed)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        code, headers, body = await get(url, f"/api/rooms/{room}/review")
        if code != 202:
            return code, headers, body
        assert json.loads(body) == {"room_id": room, "status": "computing", "retry_after": 2}
        assert headers["Retry-After"] == "2" and loop.time() < end
        await asyncio.sleep(0.1)


def _reviews(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as con:
        return list(con.execute("SELECT room_id, json FROM reviews"))


async def test_a_review_finds_the_blunder_and_is_computed_once(tmp_path: Path) -> None:
    """Tic-tac-toe: O answers X's centre on an edge (ply 1), which loses (a corner draws):
    the review says ``blunder`` there, proven draw before and loss after. Asked for three
    times at once, it is computed once in the bot pool, stored, then served from the store."""
    db = tmp_path / "t.db"
    async with running(db, review_ahead=False) as (srv, url):
        a, b = await connected(url, "Ana", "Bo")
        room = await _tictactoe(a, b)
        cells = [4, 1, 0, 8, 6, 3, 2]  # X forks with 0 and 6, and wins on 2-4-6
        end = await _play(a, b, room, cells)
        assert end["status"] == "finished" and end["result"]["winner"] == 0
        counted = Counted(srv)
        answers = await asyncio.gather(*(review(url, room) for _ in range(3)))
        assert counted.calls == 1
        assert [code for code, _, _ in answers] == [200] * 3
        assert len({body for _, _, body in answers}) == 1
        reviewed = json.loads(answers[0][2])
        assert answers[0][1]["Content-Type"] == "application/json"
        assert (reviewed["room_id"], reviewed["game"]) == (room, "tictactoe")
        moves = reviewed["moves"]
        assert [(m["ply"], m["seat"], m["move_text"]) for m in moves] == [
            (i, i % 2, cell_name(c)) for i, c in enumerate(cells)]
        blunder = moves[1]
        assert blunder["verdict"] == "blunder" and blunder["loss"] > 0
        assert (blunder["proven_before"], blunder["proven_after"]) == ("draw", "loss")
        assert blunder["best_move_text"] in ("a3", "c3", "a1", "c1")  # a corner
        assert moves[0]["verdict"] == "best" and moves[0]["proven_before"] == "draw"
        assert [m["verdict"] for m in moves if m["seat"] == 0] == ["best"] * 4
        assert {"ply", "seat", "move_text", "best_move_text", "loss", "verdict",
                "proven_before", "proven_after"} <= set(moves[0])
        # Stored before it was served; served from the store after.
        assert _reviews(db) == [(room, answers[0][2].decode())]
        again = await get(url, f"/api/rooms/{room}/review")
        assert again[0] == 200 and again[2] == answers[0][2]
        assert counted.calls == 1
    # And after a restart, from the store: the pool is not asked.
    async with running(db, review_ahead=False) as (srv, url):
        counted = Counted(srv)
        code, _, body = await get(url, f"/api/rooms/{room}/review")
        assert code == 200 and body == answers[0][2] and counted.calls == 0
        assert room not in srv.hub.rooms


async def test_only_a_finished_game_has_a_review(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    async with running(db, review_ahead=False) as (srv, url):
        a, b = await connected(url, "Ana", "Bo")
        waiting, _ = await create(a, "tictactoe", [HUMAN, HUMAN])
        playing = await _tictactoe(a, b)
        await _play(a, b, playing, [4])
        counted = Counted(srv)
        for room, status in ((waiting, "waiting"), (playing, "playing")):
            err = await get_json(url, f"/api/rooms/{room}/review", 409)
            assert status in err["error"] and "finished" in err["error"]
        assert (await get_json(url, "/api/rooms/0123456789abcdef/review", 404))["error"]
        assert (await get_json(url, "/api/rooms/a.b/review", 400))["error"]
        assert counted.calls == 0 and _reviews(db) == []


async def test_reviews_past_the_cap_are_refused_not_queued(tmp_path: Path) -> None:
    """With ``MAX_REVIEWS`` reviews under way (none allowed here), one more is a 503 with
    ``Retry-After``, nothing is computed nor stored; once there is room, it is."""
    db = tmp_path / "t.db"
    async with running(db, review_ahead=False) as (srv, url):
        a, b = await connected(url, "Ana", "Bo")
        room = await _tictactoe(a, b)
        await _play(a, b, room, [0, 3, 1, 4, 2])
        counted = Counted(srv)
        srv.records.max_reviews = 0
        code, headers, body = await get(url, f"/api/rooms/{room}/review")
        assert code == 503 and headers["Retry-After"] == "60"
        assert "reviews are being computed" in json.loads(body)["error"]
        assert counted.calls == 0 and _reviews(db) == []
        srv.records.max_reviews = 1
        code, _, body = await review(url, room)
        assert code == 200 and len(json.loads(body)["moves"]) == 5
        assert counted.calls == 1


async def test_a_long_review_is_answered_202_until_it_is_done(tmp_path: Path) -> None:
    """A request does not wait for a long review (websockets gives a request 10 s): past
    ``review_wait`` it is answered 202 "computing" with ``Retry-After``, the computation goes
    on, and a later request gets the review, computed once."""
    db = tmp_path / "t.db"
    async with running(db, review_ahead=False) as (srv, url):
        a, b = await connected(url, "Ana", "Bo")
        room = await _tictactoe(a, b)
        await _play(a, b, room, [0, 3, 1, 4, 2])
        counted = Counted(srv)
        srv.records.review_wait = 0.0
        code, headers, body = await get(url, f"/api/rooms/{room}/review")
        assert code == 202 and headers["Retry-After"] == "2"
        assert json.loads(body) == {"room_id": room, "status": "computing", "retry_after": 2}
        code, _, body = await review(url, room)
        assert code == 200 and len(json.loads(body)["moves"]) == 5
        assert counted.calls == 1 and _reviews(db) == [(room, body.decode())]


async def test_the_games_that_end_are_the_lobbys_recent_ones(tmp_path: Path) -> None:
    """Each game that ends heads the lobby's ``recent`` (``list_rooms`` and ``/api/rooms``
    alike), as it was at its end, the last ``RECENT_SIZE`` of them; a game in play is not
    among them, a game resigned is."""
    from tablas.server.lobby import RECENT_SIZE

    async with running(tmp_path / "t.db") as (srv, url):
        srv.lobby.max_age = 0  # every answer built afresh
        a, b = await connected(url, "Ana", "Bob")
        ended = []
        for _ in range(RECENT_SIZE):
            room = await _tictactoe(a, b)
            await _play(a, b, room, [0, 3, 1, 4, 2])  # X's top row
            ended.append(room)
        resigned = await _tictactoe(a, b)
        await b.request({"type": "resign", "room_id": resigned}, "room")
        ended.append(resigned)
        playing = await _tictactoe(a, b)
        listed = await a.request({"type": "list_rooms"}, "rooms")
        assert [r["room_id"] for r in listed["recent"]] == ended[::-1][:RECENT_SIZE]
        assert [r["room_id"] for r in listed["rooms"]] == [playing]
        assert (await get_json(url, "/api/rooms"))["recent"] == listed["recent"]
        first, second = listed["recent"][:2]
        assert _without(first, "ended_at", "seats") == {
            "room_id": resigned, "game": "tictactoe", "plies": 0,
            "result": {"winner": 0, "points": 1, "reason": "resign"}}
        assert [(s["seat"], s["name"], s["kind"]) for s in first["seats"]] == [
            (0, "Ana", "human"), (1, "Bob", "human")]
        assert second["plies"] == 5 and second["result"]["winner"] == 0
        assert first["ended_at"] >= second["ended_at"] > 0
        await a.close()
        await b.close()
