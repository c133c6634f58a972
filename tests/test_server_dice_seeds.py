"""Seat seeds in the dice (contract section 8, docs/dice.md): each seat's seed joins the roll
message, over a real socket against a real server; refusals change nothing, in memory or on
disk; a room stored before seat seeds still replays and verifies; docs/dice.md's snippet is
the recipe."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import urllib.request
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from server_support import Client, contract_roll, create, http_base, running
from tablas.engine.core import Outcome
from tablas.server import views
from tablas.server.room import Room, SeatState
from tablas.server.store import Store

ROOT = Path(__file__).resolve().parent.parent
SEAT_SEEDS = st.text(alphabet="0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                     max_size=64)


def expected_roll(server_seed: bytes, room_id: str, ply: int, seeds: list[str] | None,
                  shown: list[int] | None = None) -> list[int]:
    """The roll shown at ``ply``: an opening roll re-rolls ties (the next attempt). Openings
    are at ply 0, and in a match where a game starts: there a tie computed where another
    roll is ``shown`` was refused (any other roll accepts a double)."""
    attempt = 0
    while True:
        d = contract_roll(server_seed, room_id, ply, attempt, seeds)
        opening = ply == 0 or (shown is not None and shown[0] != shown[1])
        if d[0] != d[1] or not opening:
            return list(d)
        attempt += 1


def check_rolls(snap: dict[str, Any]) -> None:
    """The revealed seed matches the commitment, and every roll is the derivation's."""
    seed = bytes.fromhex(snap["dice_seed"])
    assert hashlib.sha256(seed).hexdigest() == snap["dice_commitment"]
    assert snap["rolls"]
    for r in snap["rolls"]:
        assert expected_roll(seed, snap["room_id"], r["ply"], snap["seeds"], r["dice"]) \
            == r["dice"], r


async def seeded_game(db: Path, plies: int = 40) -> dict[str, Any]:
    """Ana (seed given with create_room, then changed by a ``seed`` message) and Bob (seed
    with his join) play backgammon for ``plies`` actions (first legal move each), then Ana
    resigns (unless the game ended before); the final snapshot."""
    async with running(db) as (_srv, url):
        ana, bob = Client(url), Client(url)
        await ana.connect("Ana")
        await bob.connect("Bob")
        room, snap = await create(ana, "backgammon", [{"kind": "human"}, {"kind": "human"}])
        assert snap["seeds"] == ["", ""]
        created = await ana.request({"type": "create_room", "game": "backgammon",
                                     "seats": [{"kind": "human"}, {"kind": "human"}],
                                     "join_seat": 0, "seed": "AnaFirst1"}, "room_created")
        room = created["room_id"]
        snap = await ana.expect("room")
        assert snap["seeds"] == ["AnaFirst1", ""] and snap["status"] == "waiting"
        snap = await ana.request({"type": "seed", "room_id": room, "seed": "Ana2"}, "room")
        assert snap["seeds"] == ["Ana2", ""]
        views = {1: await bob.request({"type": "join", "room_id": room, "seed": "b0b"}, "room")}
        views[0] = await ana.expect("room")
        assert views[0]["status"] == views[1]["status"] == "playing"
        assert views[0]["seeds"] == views[1]["seeds"] == ["Ana2", "b0b"]
        clients = {0: ana, 1: bob}
        for _ in range(plies):
            if views[0]["status"] != "playing":
                break
            seat = views[0]["to_move"]
            view = views[seat]
            await clients[seat].send({"type": "move", "room_id": room, "ply": view["ply"],
                                      "move": view["legal_moves"][0]})
            for s, c in clients.items():
                views[s] = await c.expect("update")
        if views[0]["status"] == "playing":
            final = await ana.request({"type": "resign", "room_id": room}, "room")
        else:
            final = await ana.expect("room")
        assert final["status"] == "finished" and final["dice_seed"] is not None
        for c in clients.values():
            await c.close()
        return final


async def test_two_seeded_seats_play_and_every_roll_verifies(tmp_path: Path) -> None:
    final = await seeded_game(tmp_path / "t.db")
    assert final["seeds"] == ["Ana2", "b0b"]
    assert len(final["rolls"]) > 5
    check_rolls(final)
    # the seeds count: without them (or with others) the rolls would differ
    seed = bytes.fromhex(final["dice_seed"])
    for other in (["", ""], ["Ana2", "b0c"], None):
        assert [expected_roll(seed, final["room_id"], r["ply"], other)
                for r in final["rolls"]] != [r["dice"] for r in final["rolls"]]
    # after a restart, from disk: the same seeds and rolls
    async with running(tmp_path / "t.db") as (_srv, url):
        c = Client(url)
        await c.connect("Cid")
        again = await c.request({"type": "spectate", "room_id": final["room_id"]}, "room")
        assert (again["seeds"], again["rolls"], again["dice_seed"]) == (
            final["seeds"], final["rolls"], final["dice_seed"])
        await c.close()
        # the JSON record carries the seeds too
        base = http_base(url)
        record = await asyncio.to_thread(
            lambda: json.load(urllib.request.urlopen(
                f"{base}/api/rooms/{final['room_id']}/export?format=json", timeout=5)))
        assert record["seeds"] == ["Ana2", "b0b"]
        assert record["dice_seed"] == final["dice_seed"]


def doc_snippet() -> str:
    text = (ROOT / "docs" / "dice.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "docs/dice.md should have one python block"
    return blocks[0]


async def test_the_docs_snippet_verifies_a_real_game(tmp_path: Path) -> None:
    code = doc_snippet()
    assert len(code.strip().splitlines()) <= 10
    scope: dict[str, Any] = {}
    exec(code, scope)  # the documented recipe, run as a reader would
    roll = scope["roll"]
    final = await seeded_game(tmp_path / "t.db", plies=20)
    s0, s1 = final["seeds"]
    for r in final["rolls"]:
        attempt = 0
        while True:
            d = roll(final["dice_seed"], final["room_id"], r["ply"], s0, s1, attempt)
            if r["ply"] > 0 or d[0] != d[1]:
                break
            attempt += 1
        assert d == r["dice"]
    # the worked example of docs/dice.md
    example = "00" * 31 + "2a"
    assert hashlib.sha256(bytes.fromhex(example)).hexdigest() == (
        "0a28e9ffef0073f9a6a674cf57ee77307f38f0f1bebb087888d9011ed0eeefdf")
    assert [roll(example, "65f1c0de9a3b7c21", 0, "ana", "bob", a) for a in range(3)] == [
        [4, 4], [1, 1], [3, 4]]
    assert roll(example, "65f1c0de9a3b7c21", 1, "ana", "bob") == [2, 4]


async def test_refused_seeds_change_nothing(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    async with running(db) as (_srv, url):
        ana, bob, cid = Client(url), Client(url), Client(url)
        await ana.connect("Ana")
        await bob.connect("Bob")
        await cid.connect("Cid")
        # a seed without join_seat, with bad characters, too long, in a game without dice
        for msg, code in [
            ({"join_seat": None, "seed": "abc"}, "bad_request"),
            ({"seed": "a:b"}, "bad_request"),
            ({"seed": "x" * 65}, "bad_request"),
        ]:
            base: dict[str, Any] = {"type": "create_room", "game": "backgammon",
                                    "seats": [{"kind": "human"}, {"kind": "human"}],
                                    "join_seat": 0}
            base.update(msg)
            if base["join_seat"] is None:
                del base["join_seat"]
            assert (await ana.error(base))["code"] == code
        # a game without dice ignores a join's seed (a client need not know the game)
        await ana.request({"type": "create_room", "game": "connect4", "join_seat": 0,
                           "seats": [{"kind": "human"}, {"kind": "human"}], "seed": "abc"},
                          "room_created")
        assert (await ana.expect("room"))["seeds"] is None
        room, snap = await create(ana, "backgammon", [{"kind": "human"}, {"kind": "human"}])
        waiting = snap
        # not seated; bad seeds from the seat holder
        e = await cid.error({"type": "seed", "room_id": room, "seed": "mine"})
        assert e["code"] == "not_seated"
        for bad in ("a b", "é", "x" * 65, "a#1"):
            e = await ana.error({"type": "seed", "room_id": room, "seed": bad})
            assert e["code"] == "bad_request"
            e = await bob.error({"type": "join", "room_id": room, "seed": bad})
            assert e["code"] == "bad_request"
        snap = await cid.request({"type": "spectate", "room_id": room}, "room")
        assert snap["seeds"] == ["", ""] and snap["status"] == "waiting"
        assert snap["seats"] == waiting["seats"]
        # the game starts when Bob joins: the seeds are fixed
        started = await bob.request({"type": "join", "room_id": room, "seed": "B"}, "room")
        assert started["status"] == "playing" and started["seeds"] == ["", "B"]
        for who in (ana, bob):
            e = await who.error({"type": "seed", "room_id": room, "seed": "late"})
            assert e["code"] == "bad_request" and "fixed at the first roll" in e["message"]
        # a join of the held seat after the start (a reconnection) keeps the fixed seed
        again = await bob.request({"type": "join", "room_id": room, "seed": "other"}, "room")
        assert again["seeds"] == ["", "B"] and again["rolls"] == started["rolls"]
        # a game without dice takes no seed message; a join's seed is ignored there
        c4, _ = await create(ana, "connect4", [{"kind": "human"}, {"kind": "human"}])
        e = await ana.error({"type": "seed", "room_id": c4, "seed": "x"})
        assert e["code"] == "bad_request"
        c4snap = await bob.request({"type": "join", "room_id": c4, "seed": "x"}, "room")
        assert c4snap["seeds"] is None and c4snap["status"] == "playing"
        snap = await ana.request({"type": "spectate", "room_id": room}, "room")
        assert snap["seeds"] == ["", "B"] and snap["rolls"] == started["rolls"]
        for c in (ana, bob, cid):
            await c.close()
    # and on disk
    store = await Store.open(db)
    try:
        record = await store.load_room(room)
        assert record is not None and record.seeds == ("", "B")
        assert [list(r) for r in record.opening_rolls] == [r["dice"] for r in started["rolls"]]
    finally:
        await store.close()


async def test_an_old_style_room_still_replays_and_verifies(tmp_path: Path) -> None:
    """A room written by a store before migration 0007 (no seeds column): its rolls came from
    the message without seeds; after the migration it loads with ``seeds: null`` and its
    rolls still check against that message."""
    db = tmp_path / "old.db"
    server_seed = bytes(range(32))
    room = Room("0123456789abcdef", "backgammon", {},
                [SeatState("bot", "random"), SeatState("bot", "random")], seed=server_seed,
                seeds=None, clock=lambda: 1000.0)
    room.start()
    while room.status == "playing" and room.ply < 30:
        seat = room.to_move
        assert seat is not None
        room.commit(room.prepare_move(None, room.ply, room.legal_moves()[0], bot_seat=seat))
    store = await Store.open(db, upto=6)
    try:
        await store.create_room(room.room_id, "backgammon", {}, room.seats, "playing",
                                server_seed, room.opening_rolls, room.created_at)
        for action in room.history:
            await store.record_move(room.room_id, action, None)
        await store.record_result(room.room_id, Outcome(0, 1, "resign"), None, 2000.0)
    finally:
        await store.close()
    async with running(db) as (_srv, url):
        c = Client(url)
        await c.connect("Cid")
        snap = await c.request({"type": "spectate", "room_id": room.room_id}, "room")
        await c.close()
    assert snap["seeds"] is None and snap["status"] == "finished"
    assert snap["history"] == [a.move for a in room.history]
    assert snap["rolls"] == views.roll_data(room)
    check_rolls(snap)
    # the new message would not give these rolls
    assert [expected_roll(server_seed, room.room_id, r["ply"], ["", ""])
            for r in snap["rolls"]] != [r["dice"] for r in snap["rolls"]]


@settings(max_examples=40, deadline=None)
@given(SEAT_SEEDS, SEAT_SEEDS, SEAT_SEEDS)
def test_a_changed_seed_changes_the_rolls(s0: str, s1: str, other: str) -> None:
    """The room's rolls are the derivation's with both seeds, and another seed for either
    seat gives other rolls (ten rolls: equal by chance with probability 36^-10)."""
    server_seed = b"\x05" * 32

    def rolls(seeds: tuple[str, str]) -> list[tuple[int, int]]:
        room = Room("r", "backgammon", {}, [SeatState("bot", "random"),
                                            SeatState("bot", "random")],
                    seed=server_seed, seeds=seeds, clock=lambda: 0.0)
        assert room.dice is not None
        return [room.dice.roll(ply, 0) for ply in range(10)]

    mine = rolls((s0, s1))
    assert mine == [contract_roll(server_seed, "r", p, 0, [s0, s1]) for p in range(10)]
    if other != s0:
        assert rolls((other, s1)) != mine
    if other != s1:
        assert rolls((s0, other)) != mine
