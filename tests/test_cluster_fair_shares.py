"""Fair shares on a cluster (contract section 15): real ``tablas serve`` nodes on one
PostgreSQL and one Redis. The tournament caps count every node's tournaments (the database
keeps each one's creator and address); a block made on one node stops a challenge sent from
another; and each node shares its own bot workers by address."""

from __future__ import annotations

import asyncio
from pathlib import Path

from redis_support import RedisServer
from server_support import Client, http_exchange
from test_cluster import nodes
from test_server_fair_shares import (
    TOURNAMENT,
    _bot_replies,
    _hog,
    guest_at,
    member_at,
)


async def _bot_queue(url: str) -> float:
    port = int(url.split(":")[2].split("/")[0])
    _, body = await http_exchange(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
                                        b"Connection: close\r\n\r\n")
    line = next(x for x in body.decode().splitlines() if x.startswith("tablas_bot_queue"))
    return float(line.split()[-1])


async def test_caps_and_blocks_hold_across_nodes(
        tmp_path: Path, pg_url: str, redis_server: RedisServer) -> None:
    async with nodes(tmp_path, pg_url, redis_server, "ab") as n:
        a, b = n["a"].url, n["b"].url
        ana, _ = await member_at(a, "Ana", "127.0.0.2")
        alba, _ = await member_at(b, "Alba", "127.0.0.2")
        aldo, _ = await member_at(a, "Aldo", "127.0.0.2")
        await ana.request(TOURNAMENT, "tournament_created")
        ana_b = Client(b, source="127.0.0.2")
        await ana_b.open()
        await ana_b.send({"type": "hello", "name": "Ana", "password": "correct horse battery"})
        await ana_b.expect("welcome")
        await ana_b.request(TOURNAMENT, "tournament_created")
        assert (await ana_b.error(TOURNAMENT))["code"] == "rate_limited"  # Ana's third
        await alba.request(TOURNAMENT, "tournament_created")
        await alba.request(TOURNAMENT, "tournament_created")
        assert (await aldo.error(TOURNAMENT))["code"] == "rate_limited"  # the address's fifth
        bob, _ = await member_at(b, "Bob", "127.0.0.3")
        await bob.request(TOURNAMENT, "tournament_created")  # another address: as usual
        # Ana blocks Bob on node a; Bob's challenge from node b reaches nobody.
        await ana.request({"type": "block", "name": "Bob"}, "blocked")
        e = await bob.error({"type": "challenge", "to": "Ana", "game": "tictactoe"})
        assert e["code"] == "unknown_player"
        for c in (ana, ana_b, alba, aldo, bob):
            await c.close()


async def test_each_node_shares_its_bot_workers_by_address(
        tmp_path: Path, pg_url: str, redis_server: RedisServer) -> None:
    """A node with one worker: the hog's decisions wait in its own line, and another
    address's easy bot waits behind at most the one decision running."""
    async with nodes(tmp_path, pg_url, redis_server, "ab") as n:
        a = n["a"].url
        hog = await guest_at(a, "Hog", "127.0.0.2")
        for _ in range(8):
            await hog.request({"type": "create_room", "game": "boom", "seats": [
                {"kind": "human"}, {"kind": "bot", "level": "hard"}], "join_seat": 0},
                "room_created")
        hogging = asyncio.create_task(_hog(hog))
        for _ in range(150):
            if await _bot_queue(a) >= 5:
                break
            await asyncio.sleep(0.1)
        assert await _bot_queue(a) >= 5
        me = await guest_at(a, "Me", "127.0.0.3")
        room = (await me.request({"type": "create_room", "game": "connect4", "seats": [
            {"kind": "human"}, {"kind": "bot", "level": "easy"}], "join_seat": 0},
            "room_created"))["room_id"]
        replies = await _bot_replies(me, room, 3)
        # Behind at most one hard decision (2 s), never behind the hog's line (8 of them).
        assert len(replies) == 3 and max(replies) < 4.0, replies
        assert await _bot_queue(a) >= 3
        hogging.cancel()
        for c in (hog, me):
            await c.close()
