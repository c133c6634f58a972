"""Commit-reveal dice, the committed protocol schema, and HTTP on the WebSocket's port."""

from __future__ import annotations

import hashlib
import json
import random
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from server_support import Client, contract_roll, create, http_base, running
from tablas.engine.games import GAME_IDS, all_games
from tablas.engine.search.decision import LEVELS
from tablas.server import views
from tablas.server.dice import CommitRevealDice, FixedDice, dice_from_seed
from tablas.server.protocol import (
    SCHEMA_PATH,
    ChatMessage,
    RoomOptions,
    RoomSnapshot,
    Update,
    json_text,
    schema_text,
    with_re,
)
from tablas.server.room import Room, SeatState


def test_dice_recipe_is_uniform_and_matches() -> None:
    seed = bytes(range(32))
    counts = [0] * 7
    for ply in range(3000):
        a, b = dice_from_seed(seed, "room", ply)
        assert (a, b) == contract_roll(seed, "room", ply, 0)
        counts[a] += 1
        counts[b] += 1
    assert all(800 < c < 1200 for c in counts[1:])
    assert dice_from_seed(seed, "room", 5, 1) == contract_roll(seed, "room", 5, 1)
    for seeds in (None, ("a", ""), ("", "Zz9")):
        assert dice_from_seed(seed, "room", 5, 1, seeds) == contract_roll(seed, "room", 5, 1, seeds)


def test_room_rolls_follow_the_commitment() -> None:
    seed = b"\x07" * 32
    room = Room("r1", "backgammon", {}, [SeatState("bot", "random"), SeatState("bot", "random")],
                seed=seed, clock=lambda: 0.0)
    assert views.commitment(room) == hashlib.sha256(seed).hexdigest()
    room.start()
    n = 0
    while room.status == "playing" and n < 300:
        moves = room.legal_moves()
        seat = room.to_move
        assert seat is not None
        room.commit(room.prepare_move(None, room.ply, moves[-1], bot_seat=seat))
        n += 1
    assert views.revealed_seed(room) == (seed.hex() if room.status == "finished" else None)
    # every recorded roll is the first attempt the game accepts at its ply
    for roll in views.snapshot(room, None).rolls:
        attempt = 0
        while True:
            d = contract_roll(seed, "r1", roll.ply, attempt)
            if roll.ply > 0 or d[0] != d[1]:
                break
            attempt += 1
        assert list(d) == roll.dice


def test_fixed_dice_can_be_injected() -> None:
    room = Room("r", "backgammon", {}, [SeatState("bot", "random"), SeatState("bot", "random")],
                dice=FixedDice([(3, 3), (6, 1), (2, 2)]))
    room.start()  # 3-3 is a tie: re-rolled to 6-1, seat 0 starts with 6-1
    assert room.opening_rolls == ((6, 1),) and room.to_move == 0


async def test_seed_revealed_over_the_socket(tmp_path: Path) -> None:
    seed = bytes(32)
    async with running(tmp_path / "t.db", seed_factory=lambda: seed) as (_srv, url):
        a = Client(url)
        await a.connect("Ana")
        room, snap = await create(a, "backgammon", [{"kind": "human"},
                                                    {"kind": "bot", "level": "random"}])
        assert snap["dice_commitment"] == hashlib.sha256(seed).hexdigest()
        assert snap["dice_seed"] is None
        snap = await a.request({"type": "resign", "room_id": room}, "room")
        assert snap["dice_seed"] == seed.hex()
        assert bytes.fromhex(snap["dice_seed"]) == seed
        for roll in snap["rolls"]:
            attempt = 0
            while True:
                d = contract_roll(seed, room, roll["ply"], attempt)
                if roll["ply"] > 0 or d[0] != d[1]:
                    break
                attempt += 1
            assert list(d) == roll["dice"]
        assert CommitRevealDice(room, seed).roll(0, 0) == contract_roll(seed, room, 0, 0)


def test_protocol_schema_is_current() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text(), (
        "docs/protocol.schema.json is stale: run python -m server.protocol")


_SHARED_WITH_SNAPSHOT = ("room_id", "ply", "state", "to_move", "legal_moves", "status", "result",
                         "clocks", "clock_running")


@pytest.mark.parametrize("clocked", [False, True])
@pytest.mark.parametrize("game_id", [g.id for g in all_games()])
def test_message_data_is_the_models(game_id: str, clocked: bool) -> None:
    """The ``update`` and ``room`` messages the server writes from plain data (no model built
    per message) are their models' own texts, byte for byte (no field missing, none extra,
    none out of order), and the update says what the snapshot after it says, for every
    viewer at every ply of seeded random games of every game, with and without clocks, with
    a bot seat or not, from the waiting room to the result."""
    rng = random.Random(f"{game_id}-{clocked}")
    ropts = RoomOptions.model_validate(
        {"clock": {"base_ms": 60_000, "increment_ms": 500}} if clocked else {})
    seen_result = False
    t = [1000.0]

    def check_snapshots(room: Room) -> None:
        for viewer in ("a", "b", None):
            text = json_text(views.snapshot_data(room, viewer, lambda p: p == "a", 3))
            assert RoomSnapshot.model_validate_json(text).to_json() == text

    for game_no in range(3):
        second = SeatState("bot", "easy") if game_no == 2 else SeatState("human", None, "b", "B")
        room = Room(f"r{game_no}", game_id, {}, [SeatState("human", None, "a", "A"), second],
                    clock=lambda: t[0], seed=bytes([game_no]) * 32, room_options=ropts)
        check_snapshots(room)
        room.start()
        while room.status == "playing" and room.ply < 400:
            seat = room.to_move
            assert seat is not None
            t[0] += rng.random()
            move = rng.choice(room.legal_moves())
            bot = seat if room.seats[seat].kind == "bot" else None
            action = room.commit(room.prepare_move("ab"[seat], room.ply, move, bot_seat=bot))
            for viewer in ("a", "b", None):
                text = json_text(views.update_data(room, action, room.legal_for(viewer)))
                assert Update.model_validate_json(text).to_json() == text
                # the values: the wiring of the room's answers, against the snapshot's
                got, snap = json.loads(text), views.snapshot(room, viewer).model_dump(mode="json")
                assert {k: got[k] for k in _SHARED_WITH_SNAPSHOT} == {
                    k: snap[k] for k in _SHARED_WITH_SNAPSHOT}
                assert (got["move"], got["seat"]) == (snap["history"][-1], seat)
                rolled = [r["dice"] for r in snap["rolls"] if r["ply"] == action.index + 1]
                assert got["dice"] == (rolled[-1] if rolled else None)
            check_snapshots(room)
        seen_result = seen_result or room.result is not None
    assert seen_result


def test_server_messages_as_text() -> None:
    """One update serialised once, its answer spliced with ``re``: the same JSON as the model
    says, ``re`` absent when null; a chat line pydantic cannot write (a lone surrogate) is
    still sent, escaped."""
    room = Room("r1", "connect4", {}, [SeatState("human", None, "a", "A"),
                                       SeatState("human", None, "b", "B")])
    room.start()
    action = room.commit(room.prepare_move("a", 0, {"column": 3}))
    update = views.update(room, action, "b")
    text = update.to_json()
    assert json.loads(text) == {k: v for k, v in update.model_dump(mode="json").items()
                                if k != "re"}
    for re in (7, "x\"y", "\ud800"):
        assert json.loads(with_re(text, re)) == json.loads(update.model_copy(
            update={"re": re}).to_json()) == {"re": re, **json.loads(text)}
    assert Update.model_validate_json(text) == update
    chat = ChatMessage(room_id="r1", player_id="a", name="A", text="a\ud800b", time=1.5)
    assert json.loads(chat.to_json())["text"] == "a\ud800b"


def _get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


@pytest.mark.parametrize("path", ["/../pyproject.toml", "/%2e%2e/pyproject.toml",
                                  "/..%2fpyproject.toml", "/nope.js"])
async def test_http_no_escape(tmp_path: Path, path: str) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        base = http_base(url)
        import asyncio

        status, _, body = await asyncio.to_thread(_get, base + path)
        assert status == 404 and b"[project]" not in body


async def test_http_endpoints(tmp_path: Path) -> None:
    import asyncio

    async with running(tmp_path / "t.db") as (_srv, url):
        base = http_base(url)
        status, ctype, body = await asyncio.to_thread(_get, base + "/healthz")
        assert status == 200 and json.loads(body)["status"] == "ok"
        assert ctype == "application/json"
        status, ctype, body = await asyncio.to_thread(_get, base + "/")
        assert status == 200 and ctype.startswith("text/html") and b"<" in body
        # The games and levels a page offers come from the engine's own lists, with how to
        # read each game's scores.
        status, ctype, body = await asyncio.to_thread(_get, base + "/api/games")
        games = json.loads(body)
        assert status == 200 and ctype == "application/json"
        assert games["levels"] == list(LEVELS)
        assert [g["game"] for g in games["games"]] == list(GAME_IDS)
        units = {g["game"]: (g["score_unit"], g["score_typical"]) for g in games["games"]}
        assert units["backgammon"] == ("equity", 1.0) and units["connect4"] == ("points", 150.0)
        # And the formats each game's export has (the review page links them).
        formats = {g["game"]: g["formats"] for g in games["games"]}
        assert formats["backgammon"] == ["json", "mat"] and formats["tictactoe"] == [
            "json", "moves"] and formats["grundy"] == ["json"]
        a = Client(url)
        ana = (await a.connect("Ana"))["player_id"]
        room, _ = await create(a, "grundy", [{"kind": "human"}, {"kind": "human"}],
                               options={"heap": 9})
        status, _, body = await asyncio.to_thread(_get, base + "/api/rooms")
        rooms = json.loads(body)["rooms"]
        assert rooms == [{"room_id": room, "game": "grundy", "status": "waiting",
                          "seats": [{"seat": 0, "kind": "human", "name": "Ana", "level": None,
                                     "player_id": ana, "rating": None, "bot": False},
                                    {"seat": 1, "kind": "human", "name": None, "level": None,
                                     "player_id": None, "rating": None, "bot": False}],
                          "spectators": 0,
                          "room_options": {"show_analysis": False, "clock": None,
                                           "abandon_to_bot_after_ms": None, "rated": False,
                                           "tournament_id": None, "unrated_reason": None},
                          "rated": False}]
