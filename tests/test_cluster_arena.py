"""An arena on two nodes (contract sections 9 and 19): players on both nodes, each on an
address of their own; the arena's owner node is killed with SIGKILL in the middle, with a
berserk game unfinished on it; the other node takes the arena and its rooms over, pairing goes
on, and the arena ends with every game counted once, the berserk clock and point kept, the
standings those of its games (tests/arena_support.py computes them apart from the server).
After the takeover a player leaves (in the middle of a game of hers), is not paired while
away, and joins again."""

from __future__ import annotations

import asyncio
from pathlib import Path

from arena_support import Book, check_standings, p90, watch_over
from redis_support import RedisServer
from test_cluster import nodes, owner_of
from test_server_arena import arena, check_berserk_clocks, check_results, enter, players, start
from test_server_ratings import get


async def test_an_arena_whose_owner_node_is_killed_goes_on_on_the_other(
        tmp_path: Path, pg_url: str, redis_server: RedisServer) -> None:
    async with nodes(tmp_path, pg_url, redis_server, "ab", lease_s=1.0,
                     args=["--arena-minute-s", "2.5"]) as n:
        book = Book()
        on_a = await players(n["a"].url, ["Ana", "Bob"], book)
        on_b = await players(n["b"].url, ["Cy", "Dee"], book)
        people = on_a + on_b
        names = {p.player_id: p.name for p in people}
        for p in people:
            p.names = names
        ana = people[0]
        tid = await arena(ana)
        assert (await owner_of(pg_url, f"tour:{tid}"))[0] == "a"
        for p in people:
            await enter(p, tid)
        book.holds[("Ana", 1)] = asyncio.Event()  # her berserk game waits for the kill
        await start(ana, tid)
        for p in people:
            p.play(tid)
        while sum(p.played for p in people) < 6 or not book.berserked:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        delays = list(book.delays)
        before = await get(n["b"].url, f"/api/tournaments/{tid}")
        n["a"].kill9()
        for p in on_a:
            await p.stop()
        book.holds[("Ana", 1)].set()
        for p in on_a:
            await p.reconnect(n["b"].url)
            p.play(tid)
        # Dee leaves during her next game, on node b, now the arena's owner.
        dee = people[3]
        nth = dee.played + 1
        book.holds[("Dee", nth)] = asyncio.Event()
        while dee.played < nth or dee.player_id not in book.busy:
            await asyncio.sleep(0.05)
        await dee.ok({"type": "leave_tournament", "tournament_id": tid}, "tournament_left")
        book.holds[("Dee", nth)].set()
        while dee.player_id in book.busy:
            await asyncio.sleep(0.05)
        await asyncio.sleep(2.0)
        away = await get(n["b"].url, f"/api/tournaments/{tid}")
        assert dee.played == nth
        assert sum(dee.player_id in g["players"] for g in away["pairings"]) == nth
        assert next(s for s in away["standings"] if s["player_id"] == dee.player_id
                    )["active"] is False
        await enter(dee, tid)
        detail = await watch_over(n["b"].url, tid, book, seconds=180)
        assert dee.played > nth
        assert (await owner_of(pg_url, f"tour:{tid}"))[0] == "b"
        assert detail["ends_at_ms"] == before["ends_at_ms"]
        assert [g["room_id"] for g in detail["pairings"][:len(before["pairings"])]] == \
            [g["room_id"] for g in before["pairings"]]
        check_standings(detail)
        check_results(detail, names)
        check_berserk_clocks(book)
        assert book.restored and all(again <= then for then, again in book.restored)
        for p in people:
            mine = [g for g in detail["pairings"] if p.player_id in g["players"]]
            assert len(mine) == p.played, (p.name, len(mine), p.played)
        assert p90(delays) <= 2.0, sorted(delays)
        for p in people:
            await p.stop()
