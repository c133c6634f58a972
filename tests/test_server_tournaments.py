"""Tournaments over real sockets (contract section 13): round robins and a Swiss played to
the end by people (test clients) and house bots; the pairings checked against the rules and
the standings against a computation written here, apart from the server's
(server/tournaments/pairing.py); kill -9 of the server in round 2.

People in these tests resign their games (a bot always wins against them; between two
people the one in seat 1 resigns), so every game ends quickly and the results are known."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from pathlib import Path
from typing import Any

from server_support import Client, Subprocess, running
from test_server_ratings import CLOCK, get, member

TOURNAMENT = {"type": "create_tournament", "game": "tictactoe", "clock": CLOCK,
              "format": "round_robin"}


# --- the standings, computed here -----------------------------------------------------------

def table(detail: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """Each entrant's (points, tie-break) from the pairings' results: a win 1, a draw ½, a
    bye 1; Sonneborn–Berger in a round robin, Buchholz in a Swiss."""
    points: Counter[str] = Counter({s["player_id"]: 0 for s in detail["standings"]})
    games = [g for rnd in detail["pairings"] for g in rnd]
    for g in games:
        a, b = g["players"]
        if b is None:
            points[a] += 1
        elif g["result"] is not None and g["result"]["reason"] != "aborted":
            w = g["result"]["winner"]
            if w is None:
                points[a] += 0.5
                points[b] += 0.5
            else:
                points[(a, b)[w]] += 1
    tie: Counter[str] = Counter({p: 0 for p in points})
    for g in games:
        a, b = g["players"]
        if b is None or g["result"] is None:
            continue
        w = g["result"]["winner"]
        for me, other, seat in ((a, b, 0), (b, a, 1)):
            if detail["format"] == "swiss":
                tie[me] += points[other]
            elif w is None:
                tie[me] += points[other] / 2
            elif w == seat:
                tie[me] += points[other]
    return {p: (float(points[p]), float(tie[p])) for p in points}


def check_standings(detail: dict[str, Any]) -> None:
    mine = table(detail)
    theirs = {s["player_id"]: (s["points"], s["tiebreak"]) for s in detail["standings"]}
    assert theirs == mine
    ranked = [(s["points"], s["tiebreak"]) for s in detail["standings"]]
    assert ranked == sorted(ranked, reverse=True)
    for s, t in zip(detail["standings"], detail["standings"][1:]):
        assert (t["rank"] == s["rank"]) == ((t["points"], t["tiebreak"]) ==
                                            (s["points"], s["tiebreak"]))


# --- people who play their tournament games ------------------------------------------------

async def play_out(c: Client, url: str, tid: str) -> None:
    """``c`` answers each tournament game: resigns against a bot, and against a person
    when it holds seat 1; until the tournament is over."""
    while True:
        detail = await get(url, f"/api/tournaments/{tid}")
        if detail["status"] == "finished":
            return
        try:
            g = await c.expect("tournament_game", timeout=0.5)
        except TimeoutError:
            continue
        room = await get(url, f"/api/rooms/{g['room_id']}")
        other = room["seats"][1 - g["seat"]]
        if other["kind"] == "bot" or g["seat"] == 1:
            await c.send({"type": "join", "room_id": g["room_id"]})
            await c.send({"type": "resign", "room_id": g["room_id"]})


async def finished(url: str, tid: str, seconds: float = 60) -> dict[str, Any]:
    for _ in range(int(seconds * 10)):
        detail: dict[str, Any] = await get(url, f"/api/tournaments/{tid}")
        if detail["status"] == "finished":
            return detail
        await asyncio.sleep(0.1)
    raise AssertionError(f"not finished: {detail}")


async def tournament(c: Client, **kw: Any) -> str:
    return str((await c.request(dict(TOURNAMENT, **kw), "tournament_created"))["tournament_id"])


async def enter(c: Client, tid: str) -> None:
    await c.request({"type": "join_tournament", "tournament_id": tid}, "tournament_joined")


# --- the tests ------------------------------------------------------------------------------

async def test_a_round_robin_of_four_two_people_two_bots_two_games_a_pair(
        tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        ana, ana_id = await member(url, "Ana")
        bob, bob_id = await member(url, "Bob")
        tid = await tournament(ana, games_per_pairing=2, house_bots=["random", "easy"])
        await enter(ana, tid)
        await enter(bob, tid)
        listed = (await get(url, "/api/tournaments"))["tournaments"]
        assert [(t["tournament_id"], t["status"], t["players"]) for t in listed] == \
            [(tid, "waiting", 4)]
        await ana.request({"type": "start_tournament", "tournament_id": tid},
                          "tournament_started")
        await asyncio.gather(play_out(ana, url, tid), play_out(bob, url, tid))
        detail = await finished(url, tid)
        assert (detail["round"], detail["rounds"], len(detail["pairings"])) == (6, 6, 6)
        seats = Counter(tuple(g["players"]) for rnd in detail["pairings"] for g in rnd)
        everyone = [ana_id, bob_id, "bot:tictactoe:random", "bot:tictactoe:easy"]
        # Every pair met twice, once from each seat; nobody sat out; one game a round each.
        assert seats == {(a, b): 1 for a, b in itertools.permutations(everyone, 2)}
        for rnd in detail["pairings"]:
            assert sorted(p for g in rnd for p in g["players"]) == sorted(everyone)
            assert all(g["result"] is not None for g in rnd)
        rooms = [g["room_id"] for rnd in detail["pairings"] for g in rnd]
        assert len(set(rooms)) == 12
        check_standings(detail)
        # Ana beat Bob once (Bob resigned in seat 1) and Bob beat Ana once; both lost to bots.
        points = {s["name"]: s["points"] for s in detail["standings"]}
        assert points["Ana"] == points["Bob"] == 1
        for c in (ana, bob):
            await c.close()


async def test_a_round_robin_of_five_gives_each_one_bye(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        ana, ana_id = await member(url, "Ana")
        bob, _ = await member(url, "Bob")
        cy, _ = await member(url, "Cy")
        tid = await tournament(ana, house_bots=["random", "easy"])
        for c in (ana, bob, cy):
            await enter(c, tid)
        await ana.request({"type": "start_tournament", "tournament_id": tid},
                          "tournament_started")
        await asyncio.gather(*(play_out(c, url, tid) for c in (ana, bob, cy)))
        detail = await finished(url, tid)
        assert detail["rounds"] == 5 and len(detail["pairings"]) == 5
        byes = Counter(g["players"][0] for rnd in detail["pairings"] for g in rnd
                       if g["players"][1] is None)
        assert sorted(byes.values()) == [1] * 5 and len(byes) == 5
        pairs = Counter(frozenset(g["players"]) for rnd in detail["pairings"] for g in rnd
                        if g["players"][1] is not None)
        assert len(pairs) == 10 and set(pairs.values()) == {1}
        check_standings(detail)
        me = next(s for s in detail["standings"] if s["player_id"] == ana_id)
        # Four games and the bye; both bots beat her.
        assert me["wins"] + me["draws"] + me["losses"] == 4 and me["losses"] >= 2
        assert me["points"] == 1.0 + me["wins"] + me["draws"] / 2
        for c in (ana, bob, cy):
            await c.close()


def _least_spread(players: list[str], points: dict[str, float], met: set[frozenset[str]]
                  ) -> float:
    """The smallest sum of squared point differences over the pairings of ``players`` with
    no pair that met before (every perfect matching, tried)."""
    if not players:
        return 0.0
    first, rest = players[0], players[1:]
    best = float("inf")
    for other in rest:
        if frozenset((first, other)) in met:
            continue
        left = [p for p in rest if p != other]
        best = min(best, (points[first] - points[other]) ** 2 +
                   _least_spread(left, points, met))
    return best


async def test_a_swiss_of_six_over_three_rounds(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        people = [(await member(url, name))[0] for name in ("Ana", "Bob", "Cy")]
        ana = people[0]
        tid = await tournament(ana, format="swiss", rounds=3,
                               house_bots=["random", "easy", "medium"])
        for c in people:
            await enter(c, tid)
        await ana.request({"type": "start_tournament", "tournament_id": tid},
                          "tournament_started")
        await asyncio.gather(*(play_out(c, url, tid) for c in people))
        detail = await finished(url, tid)
        assert detail["rounds"] == 3 and len(detail["pairings"]) == 3
        everyone = [s["player_id"] for s in detail["standings"]]
        met: set[frozenset[str]] = set()
        done: list[list[dict[str, Any]]] = []
        seat0: Counter[str] = Counter()
        for rnd in detail["pairings"]:
            assert len(rnd) == 3 and all(g["players"][1] is not None for g in rnd)
            pairs = {frozenset(g["players"]) for g in rnd}
            assert not pairs & met, "a pair met twice"
            # Score groups: the round's pairing spreads points as little as any could.
            before = table({**detail, "pairings": done})
            points = {p: before[p][0] for p in everyone}
            spread = sum((points[g["players"][0]] - points[g["players"][1]]) ** 2 for g in rnd)
            assert spread == _least_spread(everyone, points, met)
            met |= pairs
            done.append(rnd)
            seat0.update(g["players"][0] for g in rnd)
        assert max(seat0[p] for p in everyone) <= 2  # seats balanced: 3 games, 1 or 2 first
        check_standings(detail)
        for c in people:
            await c.close()


async def test_bad_tournament_commands_are_refused_and_change_nothing(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        ana, _ = await member(url, "Ana")
        bob, _ = await member(url, "Bob")
        gus = Client(url)
        await gus.connect("Gus")
        assert (await gus.error(TOURNAMENT))["code"] == "not_authenticated"
        for bad in ({"format": "swiss"}, {"format": "knockout"}, {"clock": None},
                    {"max_players": 65}, {"house_bots": ["easy", "easy"]},
                    {"house_bots": ["genius"]}, {"games_per_pairing": 3},
                    {"clock": {"base_ms": 1000}}):
            assert (await ana.error(dict(TOURNAMENT, **bad)))["code"] == "bad_request", bad
        assert (await ana.error(dict(TOURNAMENT, game="chess")))["code"] == "unknown_game"
        assert (await get(url, "/api/tournaments"))["tournaments"] == []
        tid = await tournament(ana, max_players=2)
        unknown = {"type": "join_tournament", "tournament_id": "nope"}
        assert (await ana.error(unknown))["code"] == "bad_request"
        start = {"type": "start_tournament", "tournament_id": tid}
        await enter(ana, tid)
        assert (await ana.error(start))["code"] == "bad_request"  # one entrant
        assert (await ana.error({"type": "join_tournament", "tournament_id": tid}))["code"] \
            == "bad_request"  # twice
        await enter(bob, tid)
        assert (await gus.error({"type": "join_tournament", "tournament_id": tid}))["code"] \
            == "not_authenticated"  # a guest (contract section 15)
        cy, _ = await member(url, "Cy")
        assert (await cy.error({"type": "join_tournament", "tournament_id": tid}))["code"] \
            == "rate_limited"  # full
        assert (await bob.error(start))["code"] == "bad_request"  # not its creator
        await bob.request({"type": "leave_tournament", "tournament_id": tid},
                          "tournament_left")
        await enter(bob, tid)
        await ana.request(start, "tournament_started")
        assert (await bob.error({"type": "leave_tournament", "tournament_id": tid}))["code"] \
            == "bad_request"  # started
        assert (await get(url, "/api/tournaments/nope", status=404))["error"]
        for c in (ana, bob, gus, cy):
            await c.close()


async def test_kill_9_in_round_two_and_the_tournament_finishes(tmp_path: Path) -> None:
    srv = Subprocess(tmp_path / "t.db", tmp_path / "server.log", workers=1)
    srv.start()
    try:
        ana = Client(srv.url)
        welcome = await ana.connect("Ana")
        await ana.request({"type": "register", "password": "a fine password"}, "registered")
        bob = Client(srv.url)
        bob_welcome = await bob.connect("Bob")
        await bob.request({"type": "register", "password": "a fine password"}, "registered")
        # House bots are at most half of the entrants (contract section 15): Bob plays too.
        tid = await tournament(ana, house_bots=["random", "easy"])
        await enter(ana, tid)
        await enter(bob, tid)
        await ana.request({"type": "start_tournament", "tournament_id": tid},
                          "tournament_started")
        bob_plays = asyncio.create_task(play_out(bob, srv.url, tid))
        first = await ana.expect("tournament_game")
        assert first["round"] == 1
        await ana.send({"type": "resign", "room_id": first["room_id"]})
        second = await ana.expect("tournament_game")
        assert second["round"] == 2
        before = await get(srv.url, f"/api/tournaments/{tid}")
        bob_plays.cancel()
        srv.kill9()
        srv.start()
        bob = Client(srv.url)
        await bob.connect("Bob", token=bob_welcome["token"])
        bob_plays = asyncio.create_task(play_out(bob, srv.url, tid))
        ana = Client(srv.url)
        await ana.connect("Ana", token=welcome["token"])
        again = await ana.expect("tournament_game")  # told again on its hello
        assert (again["room_id"], again["round"]) == (second["room_id"], 2)
        after = await get(srv.url, f"/api/tournaments/{tid}")
        assert after["pairings"][:2] == [
            [dict(g, result=a["result"]) for g, a in zip(rnd, after["pairings"][i])]
            for i, rnd in enumerate(before["pairings"][:2])]
        await ana.send({"type": "join", "room_id": again["room_id"]})
        await ana.send({"type": "resign", "room_id": again["room_id"]})
        await play_out(ana, srv.url, tid)
        detail = await finished(srv.url, tid)
        rooms = [g["room_id"] for rnd in detail["pairings"] for g in rnd]
        assert len(rooms) == len(set(rooms)) == 6
        pairs = Counter(frozenset(g["players"]) for rnd in detail["pairings"] for g in rnd)
        assert len(pairs) == 6 and set(pairs.values()) == {1}
        check_standings(detail)
        await bob_plays
        await ana.close()
        await bob.close()
    finally:
        srv.terminate()
