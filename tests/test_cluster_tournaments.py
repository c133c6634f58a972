"""A tournament on two nodes (contract sections 9 and 13): its owner node is killed with
SIGKILL in the middle of round 2; the other node takes the tournament over (and the rooms of
the round), the round goes on, and the tournament finishes with every pair met once and the
standings those of its games."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from redis_support import RedisServer
from server_support import Client
from test_cluster import nodes, owner_of
from test_server_ratings import get
from test_server_tournaments import check_standings, enter, finished, play_out, tournament


async def test_the_owner_node_killed_mid_round_and_another_takes_over(
        tmp_path: Path, pg_url: str, redis_server: RedisServer) -> None:
    async with nodes(tmp_path, pg_url, redis_server, "ab", lease_s=1.0) as n:
        org = Client(n["a"].url)
        await org.connect("Org")
        await org.request({"type": "register", "password": "the organiser"}, "registered")
        ana = Client(n["b"].url)
        await ana.connect("Ana")
        await ana.request({"type": "register", "password": "ana's password"}, "registered")
        bob = Client(n["b"].url)
        await bob.connect("Bob")
        await bob.request({"type": "register", "password": "bob's password"}, "registered")
        # House bots are at most half of the entrants (contract section 15): Bob plays too.
        tid = await tournament(org, house_bots=["random", "easy"])
        assert (await owner_of(pg_url, f"tour:{tid}"))[0] == "a"
        await enter(ana, tid)
        await enter(bob, tid)
        await org.request({"type": "start_tournament", "tournament_id": tid},
                          "tournament_started")
        bob_plays = asyncio.create_task(play_out(bob, n["b"].url, tid))
        first = await ana.expect("tournament_game")
        await ana.send({"type": "resign", "room_id": first["room_id"]})
        second = await ana.expect("tournament_game")
        assert second["round"] == 2
        n["a"].kill9()
        # Bob's resignation of his round-2 game may have been sent to the dying node and
        # lost: he comes back, as a client does, and is told his games again.
        bob_plays.cancel()
        await bob.close()
        bob = Client(n["b"].url)
        await bob.open()
        await bob.send({"type": "hello", "name": "Bob", "password": "bob's password"})
        await bob.expect("welcome")
        bob_plays = asyncio.create_task(play_out(bob, n["b"].url, tid))
        await ana.send({"type": "resign", "room_id": second["room_id"]})
        await play_out(ana, n["b"].url, tid)
        detail = await finished(n["b"].url, tid, seconds=90)
        assert (await owner_of(pg_url, f"tour:{tid}"))[0] == "b"
        rooms = [g["room_id"] for rnd in detail["pairings"] for g in rnd]
        assert len(rooms) == len(set(rooms)) == 6
        pairs = Counter(frozenset(g["players"]) for rnd in detail["pairings"] for g in rnd)
        assert len(pairs) == 6 and set(pairs.values()) == {1}
        assert all(g["result"] is not None for rnd in detail["pairings"] for g in rnd)
        check_standings(detail)
        assert (await get(n["b"].url, f"/api/tournaments/{tid}"))["status"] == "finished"
        await bob_plays
        for c in (ana, bob):
            await c.close()
