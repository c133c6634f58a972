"""Backgammon match play over a real socket against a real server (contract section 8).

One person holds both seats of a match to 3 and plays it by script: a double dropped ends a
game for one point, so the score climbs until a side is 1 away; the next game is the
Crawford game, where "double" is never listed and is refused with ``illegal_move``; after it
doubling is back. ``ply`` counts on across the games, every roll (the openings of later games
included) is the contract's derivation, and the room's RESULT is the match's. A real
``tablas serve`` killed with ``kill -9`` mid-match comes back with the same score and
Crawford state. A clock is per match: it runs on across games. Bad ``match_to`` values are
refused with ``bad_request``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from server_support import Client, FakeClock, Subprocess, connected, contract_roll, running
from test_server_records import get, get_json, review

DOUBLE, DROP, TAKE = {"action": "double"}, {"action": "drop"}, {"action": "take"}


async def both_seats(c: Client, options: dict[str, Any],
                     clock: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    msg: dict[str, Any] = {"type": "create_room", "game": "backgammon", "options": options,
                           "seats": [{"kind": "human"}, {"kind": "human"}], "join_seat": 0}
    if clock is not None:
        msg["clock"] = clock
    created = await c.request(msg, "room_created")
    await c.expect("room")
    view = await c.request({"type": "join", "room_id": created["room_id"], "seat": 1}, "room")
    return created["room_id"], view


async def act(c: Client, room: str, view: dict[str, Any], move: dict[str, Any]
              ) -> dict[str, Any]:
    assert move in view["legal_moves"], (move, view["legal_moves"])
    update = await c.request({"type": "move", "room_id": room, "ply": view["ply"],
                              "move": move}, "update")
    assert update["ply"] == view["ply"] + 1
    return update


def pick(view: dict[str, Any]) -> dict[str, Any]:
    """Double whenever it is allowed and drop every double (one point a game); otherwise
    the first legal play (so in the Crawford game, plays only)."""
    legal = view["legal_moves"]
    if DROP in legal:
        return DROP
    if DOUBLE in legal:
        return DOUBLE
    return legal[0]


async def test_a_match_to_3_reaches_the_crawford_game_and_ends_as_a_match(tmp_path: Path
                                                                          ) -> None:
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        (a,) = await connected(url, "Ana")
        room, view = await both_seats(a, {"match_to": 3})
        state = view["state"]
        assert (state["match_to"], state["score"], state["crawford"]) == (3, [0, 0], False)
        assert view["options"] == {"match_to": 3}
        crawford_seen = refused = False
        scores: list[list[int]] = [[0, 0]]
        games_seen = {1}
        while view["status"] == "playing":
            s = view["state"]
            if s["crawford"]:
                crawford_seen = True
                assert 2 in s["score"]
                assert DOUBLE not in view["legal_moves"]
                if not refused:  # "double" is refused there, and changes nothing
                    err = await a.error({"type": "move", "room_id": room, "ply": view["ply"],
                                         "move": DOUBLE})
                    assert err["code"] == "illegal_move"
                    again = await a.request({"type": "join", "room_id": room, "seat": 0},
                                            "room")
                    assert again["ply"] == view["ply"] and again["state"] == s
                    refused = True
            if s["score"] != scores[-1]:
                scores.append(s["score"])
                assert s["last_game"] is not None
            games_seen.add(s["game_number"])
            view = await act(a, room, view, pick(view))
        assert crawford_seen and refused
        final = await a.request({"type": "join", "room_id": room, "seat": 0}, "room")
        result = final["result"]
        assert result["reason"] == "match" and result["points"] >= 3
        assert final["state"]["score"][result["winner"]] == result["points"]
        # the deciding game: a drop after the Crawford game, or the Crawford game itself
        assert final["state"]["last_game"]["reason"] in ("drop", "single", "gammon",
                                                         "backgammon")
        assert len(games_seen) >= 3  # two one-point games at least, then the Crawford game
        # ply counts on across the games: one history, one ply, every roll derivable.
        assert final["ply"] == len(final["history"])
        check_rolls(final)
        openings = [r for r in final["rolls"] if r["ply"] > 0 and r["dice"][0] != r["dice"][1]]
        assert len(final["rolls"]) > 4 and openings


def check_rolls(snap: dict[str, Any]) -> None:
    """Every roll of the room is the contract's derivation at its ``ply``; an opening roll (of
    the first game, or where a game of the match starts) re-rolls ties with the next attempt."""
    seed = bytes.fromhex(snap["dice_seed"])
    assert hashlib.sha256(seed).hexdigest() == snap["dice_commitment"]
    seeds = snap["seeds"]
    for r in snap["rolls"]:
        d = contract_roll(seed, snap["room_id"], r["ply"], 0, seeds)
        attempt = 0
        while list(d) != r["dice"] and d[0] == d[1] and attempt < 50:
            attempt += 1  # a tie at an opening roll: the next attempt
            d = contract_roll(seed, snap["room_id"], r["ply"], attempt, seeds)
        assert list(d) == r["dice"], r


@pytest.mark.parametrize("bad", [0, 26, True, "3", 2.5])
async def test_bad_match_to_is_refused(tmp_path: Path, bad: Any) -> None:
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        (a,) = await connected(url, "Ana")
        err = await a.error({"type": "create_room", "game": "backgammon",
                             "options": {"match_to": bad},
                             "seats": [{"kind": "human"}, {"kind": "human"}]})
        assert err["code"] == "bad_request" and "match_to" in err["message"]
        rooms = await a.request({"type": "list_rooms"}, "rooms")
        assert rooms["rooms"] == []


async def test_resigning_a_match_gives_the_match(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        (a,) = await connected(url, "Ana")
        room, view = await both_seats(a, {"match_to": 5})
        view = await act(a, room, view, view["legal_moves"][0])
        view = await act(a, room, view, DOUBLE)
        view = await act(a, room, view, DROP)  # 1 point: game 2
        assert sorted(view["state"]["score"]) == [0, 1]
        await a.send({"type": "resign", "room_id": room})
        snap = await a.expect("room")
        assert snap["status"] == "finished"
        assert snap["result"]["points"] == 5 and snap["result"]["reason"] == "resign"


async def test_a_clock_runs_across_the_games_of_a_match(tmp_path: Path) -> None:
    """A clock is per match: the time a seat spent in game 1 is not given back in game 2."""
    clock = FakeClock()
    async with running(tmp_path / "t.db", clock=clock, max_msgs_per_address=None) as (_srv, url):
        (a,) = await connected(url, "Ana")
        room, view = await both_seats(a, {"match_to": 3},
                                      {"base_ms": 60_000, "increment_ms": 0})
        mover = view["to_move"]
        clock.t += 5
        view = await act(a, room, view, view["legal_moves"][0])
        doubler = view["to_move"]
        clock.t += 3
        view = await act(a, room, view, DOUBLE)
        clock.t += 2
        view = await act(a, room, view, DROP)  # game 2 starts
        assert view["state"]["game_number"] == 2
        snap = await a.request({"type": "join", "room_id": room, "seat": 0}, "room")
        spent = [0, 0]
        spent[mover] += 5000
        spent[doubler] += 3000
        spent[1 - doubler] += 2000
        assert snap["clocks"] == [60_000 - spent[0], 60_000 - spent[1]]


async def test_kill9_mid_match_restores_score_and_crawford(tmp_path: Path) -> None:
    srv = Subprocess(tmp_path / "t.db", tmp_path / "server.log",
                     args=["--max-msgs-per-address", "0"])
    srv.start()
    try:
        a = Client(srv.url)
        welcome = await a.connect("Ana")
        room, view = await both_seats(a, {"match_to": 2})
        # One double dropped: 1-0 in a match to 2, the next game is the Crawford game.
        while not view["state"]["crawford"]:
            view = await act(a, room, view, pick(view))
        view = await act(a, room, view, view["legal_moves"][0])
        before = view
        srv.kill9()
        await a.close()
        srv.start()
        b = Client(srv.url)
        await b.connect("Ana", welcome["token"])
        snap = await b.request({"type": "join", "room_id": room, "seat": 0}, "room")
        assert snap["ply"] == before["ply"] and snap["state"] == before["state"]
        assert snap["state"]["crawford"] and 1 in snap["state"]["score"]
        assert DOUBLE not in snap["legal_moves"]
        # and the match plays on to its end
        while snap["status"] == "playing":
            snap = await act(b, room, snap, snap["legal_moves"][0])
        assert snap["result"]["reason"] == "match" and snap["result"]["points"] >= 2
        await b.close()
    finally:
        srv.kill9()


async def test_spectators_see_the_score(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        a, w = await connected(url, "Ana", "Watcher")
        room, view = await both_seats(a, {"match_to": 7})
        spec = await w.request({"type": "spectate", "room_id": room}, "room")
        assert spec["state"]["match_to"] == 7 and spec["legal_moves"] == []
        view = await act(a, room, view, view["legal_moves"][0])
        view = await act(a, room, view, DOUBLE)
        view = await act(a, room, view, DROP)
        seen = [await w.expect("update") for _ in range(3)][-1]
        assert sorted(seen["state"]["score"]) == [0, 1]
        assert seen["status"] == "playing" and seen["result"] is None
        await asyncio.sleep(0)
        lobby = await w.request({"type": "list_rooms"}, "rooms")
        assert [r["room_id"] for r in lobby["rooms"]] == [room]


async def test_a_finished_match_has_its_review_and_exports(tmp_path: Path) -> None:
    """A match to 2: a double dropped (1-0), two plays of the Crawford game, a resignation.
    The review has one entry per action of both games, the cube's judged by match equity;
    the JSON export holds every action; the .mat holds both games."""
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        (a,) = await connected(url, "Ana")
        room, view = await both_seats(a, {"match_to": 2})
        view = await act(a, room, view, view["legal_moves"][0])
        view = await act(a, room, view, DOUBLE)
        view = await act(a, room, view, DROP)
        assert view["state"]["crawford"]
        for _ in range(2):
            view = await act(a, room, view, view["legal_moves"][0])
        await a.send({"type": "resign", "room_id": room})
        snap = await a.expect("room")
        assert snap["result"]["points"] == 2
        code, _headers, body = await review(url, room)
        assert code == 200
        moves = json.loads(body)["moves"]
        assert [m["ply"] for m in moves] == list(range(snap["ply"]))
        assert [m["move_text"] for m in moves][1:3] == ["double", "drop"]
        assert all(m["verdict"] in ("best", "good", "inaccuracy", "mistake", "blunder")
                   for m in moves)
        record = await get_json(url, f"/api/rooms/{room}/export?format=json")
        assert [x["move"] for x in record["actions"]] == snap["history"]
        code, _headers, mat = await get(url, f"/api/rooms/{room}/export?format=mat")
        text = mat.decode()
        assert code == 200 and " 2 point match" in text.splitlines()
        assert " Game 1" in text and " Game 2" in text and "Drops" in text
