"""Tournaments for bots (contract section 17): a class round robin of three bot accounts and
one house level, invite-only, driven by three ``tablas bot --tournament ID`` adapters (real
processes, each with a real engine process per game), plays to the end with no forfeit, on
one node and on two (PostgreSQL and Redis). The invitation is honoured (an uninvited player's
``join_tournament`` is refused, and changes nothing, until the creator invites them), and the
crosstable (``GET /api/tournaments/{id}/crosstable``, JSON and CSV) agrees with the games."""

from __future__ import annotations

import asyncio
import csv
import io
import urllib.request
from pathlib import Path
from typing import Any

from bot_support import Adapter, engine_command, write_engine
from redis_support import RedisServer
from server_support import Subprocess, http_base
from test_bot_adapter import server  # noqa: F401
from test_cluster import nodes
from test_server_ratings import get, member
from test_server_tournaments import check_standings, finished

CLOCK = {"base_ms": 60_000, "increment_ms": 1_000}
STUDENTS = ("Ada", "Bea", "Cyd")  # the class's bot accounts
GAME_ENDS = {"three_in_a_row", "board_full"}  # tic-tac-toe's own ends: no forfeit


async def text(url: str, path: str) -> tuple[int, str, str]:
    def fetch() -> tuple[int, str, str]:
        try:
            with urllib.request.urlopen(http_base(url) + path, timeout=10) as r:
                return r.status, r.headers["Content-Type"], r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers["Content-Type"], e.read().decode()
    return await asyncio.to_thread(fetch)


async def entrants(url: str, tid: str, n: int, timeout: float = 60) -> list[str]:
    """The entrants' names once there are ``n``."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        detail = await get(url, f"/api/tournaments/{tid}")
        names = [s["name"] for s in detail["standings"]]
        if len(names) >= n or loop.time() > end:
            return names
        await asyncio.sleep(0.2)


async def class_round_robin(teacher_url: str, urls: list[str], tmp_path: Path) -> None:
    """The teacher (on the first URL) makes the tournament; the three adapters (on ``urls``
    in turn) enter it and play it to the end; then everything is checked."""
    teacher, _ = await member(teacher_url, "Teacher")
    eve, _ = await member(urls[-1], "Eve")
    made = await teacher.request({
        "type": "create_tournament", "game": "tictactoe", "clock": CLOCK,
        "format": "round_robin", "house_bots": ["easy"], "entry": "invite",
        "invited": list(STUDENTS)}, "tournament_created")
    tid = made["tournament_id"]
    engine, logs = write_engine(tmp_path)
    bots = [await Adapter(urls[i % len(urls)], name, engine_command(engine, logs),
                          "--games", "tictactoe", "--accept", "none", "--tournament", tid,
                          stderr=tmp_path / f"{name}.err").start()
            for i, name in enumerate(STUDENTS)]
    try:
        names = await entrants(teacher_url, tid, 4)
        assert sorted(names) == sorted(["bot (easy)", *STUDENTS]), names
        # Eve is not invited: refused, nothing changed; invited by the creator, she may.
        refused = await eve.request({"type": "join_tournament", "tournament_id": tid},
                                    "error")
        assert refused["code"] == "bad_request"
        assert len((await get(teacher_url, f"/api/tournaments/{tid}"))["standings"]) == 4
        not_hers = await eve.request({"type": "invite_tournament", "tournament_id": tid,
                                      "names": ["Eve"]}, "error")
        assert not_hers["code"] == "bad_request"
        await teacher.request({"type": "invite_tournament", "tournament_id": tid,
                               "names": ["eve"]}, "tournament_invited")
        await eve.request({"type": "join_tournament", "tournament_id": tid},
                          "tournament_joined")
        await eve.request({"type": "leave_tournament", "tournament_id": tid},
                          "tournament_left")
        await teacher.request({"type": "start_tournament", "tournament_id": tid},
                              "tournament_started")
        detail = await finished(teacher_url, tid, seconds=240)
        games = [g for rnd in detail["pairings"] for g in rnd]
        assert len(games) == 6 and all(g["players"][1] is not None for g in games)
        for g in games:
            assert g["result"] is not None and g["result"]["reason"] in GAME_ENDS, g
        check_standings(detail)
        # Each adapter printed the start and the end of each of its three games.
        ids = {s["name"]: s["player_id"] for s in detail["standings"]}
        for name, bot in zip(STUDENTS, bots, strict=True):
            mine = [g["room_id"] for g in games if ids[name] in g["players"]]
            assert len(mine) == 3
            for room in mine:
                words = await bot.finished(room)
                assert words[3] in ("WIN", "LOSS", "DRAW") and words[4] in GAME_ENDS
        await check_crosstable(teacher_url, tid, detail)
        for bot in bots:
            assert "resign" not in bot.err_text()
    finally:
        for bot in bots:
            await bot.stop()
        await teacher.close()
        await eve.close()


async def check_crosstable(url: str, tid: str, detail: dict[str, Any]) -> None:
    cross = await get(url, f"/api/tournaments/{tid}/crosstable?format=json")
    standing = {s["player_id"]: s for s in detail["standings"]}
    assert [e["player_id"] for e in cross["entrants"]] == \
        [s["player_id"] for s in detail["standings"]]
    for e in cross["entrants"]:
        s = standing[e["player_id"]]
        assert (e["points"], e["tiebreak"], e["rank"]) == (s["points"], s["tiebreak"],
                                                            s["rank"])
        # Its results, against each other entrant, are those of the pairings.
        for other, scores in e["results"].items():
            expected = []
            for rnd in detail["pairings"]:
                for g in rnd:
                    if set(g["players"]) == {e["player_id"], other}:
                        w = g["result"]["winner"]
                        seat = g["players"].index(e["player_id"])
                        expected.append(0.5 if w is None else float(w == seat))
            assert scores == expected
        assert sum(sum(x for x in v if x is not None) for v in e["results"].values()) == \
            e["points"]
    status, kind, body = await text(url, f"/api/tournaments/{tid}/crosstable?format=csv")
    assert status == 200 and kind.startswith("text/csv")
    rows = list(csv.reader(io.StringIO(body)))
    names = [e["name"] for e in cross["entrants"]]
    assert rows[0] == ["rank", "name", *names, "points", "tiebreak"]
    for i, (row, e) in enumerate(zip(rows[1:], cross["entrants"], strict=True)):
        assert row[1] == e["name"] and row[2 + i] == "x"
        assert float(row[-2]) == e["points"]
    status, _, _ = await text(url, f"/api/tournaments/{tid}/crosstable?format=xml")
    assert status == 400
    status, _, _ = await text(url, "/api/tournaments/nosuch/crosstable?format=csv")
    assert status == 404


async def test_a_class_round_robin_of_bots_on_one_node(
        server: Subprocess, tmp_path: Path) -> None:  # noqa: F811
    await class_round_robin(server.url, [server.url], tmp_path)


async def test_a_class_round_robin_of_bots_on_two_nodes(
        tmp_path: Path, pg_url: str, redis_server: RedisServer) -> None:
    async with nodes(tmp_path, pg_url, redis_server, "ab") as n:
        await class_round_robin(n["a"].url, [n["a"].url, n["b"].url], tmp_path)


async def test_invitations_are_checked_before_anything_is_written(
        server: Subprocess) -> None:  # noqa: F811
    teacher, _ = await member(server.url, "Teacher")
    for bad in ({"entry": "open", "invited": ["Ada"]}, {"entry": "invite", "invited": [""]},
                {"entry": "closed"}):
        refused = await teacher.request({
            "type": "create_tournament", "game": "tictactoe", "clock": CLOCK,
            "format": "round_robin", **bad}, "error")
        assert refused["code"] == "bad_request", bad
    assert (await get(server.url, "/api/tournaments"))["tournaments"] == []
    tid = (await teacher.request({"type": "create_tournament", "game": "tictactoe",
                                  "clock": CLOCK, "format": "round_robin"},
                                 "tournament_created"))["tournament_id"]
    open_one = await teacher.request({"type": "invite_tournament", "tournament_id": tid,
                                      "names": ["Ada"]}, "error")
    assert open_one["code"] == "bad_request"  # an open tournament needs no invitation
    await teacher.close()
