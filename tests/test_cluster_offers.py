"""Draws, takebacks and who is online on two nodes (contract sections 7, 8 and 9): real
``tablas serve`` processes on one PostgreSQL and one Redis started by the fixtures. A
takeback asked on the node that does not own the room reaches its owner and every follower,
and what it deleted stays deleted for the next owner; ``/api/online`` is the cluster's."""

from __future__ import annotations

import asyncio
from pathlib import Path

from redis_support import RedisServer
from server_support import Client
from test_cluster import nodes
from test_server_ratings import get, member

HUMANS = [{"kind": "human"}, {"kind": "human"}]


async def test_a_takeback_and_a_draw_across_two_nodes(
        tmp_path: Path, pg_url: str, redis_server: RedisServer) -> None:
    async with nodes(tmp_path, pg_url, redis_server, "ab") as n:
        ana, bob = Client(n["a"].url), Client(n["b"].url)
        await ana.connect("Ana")
        await bob.connect("Bob")
        room = (await ana.request({"type": "create_room", "game": "connect4", "options": {},
                                   "seats": HUMANS, "join_seat": 0}, "room_created"))["room_id"]
        await bob.request({"type": "join", "room_id": room, "seat": 1}, "room")
        for ply, (mover, other) in enumerate(((ana, bob), (bob, ana), (ana, bob))):
            await mover.request({"type": "move", "room_id": room, "ply": ply,
                                 "move": {"column": 3}}, "update")
            assert (await other.expect("update"))["ply"] == ply + 1
        # Bob, on node b, asks; Ana, on the owner's node, accepts.
        await bob.request({"type": "takeback", "room_id": room}, "takeback_offer")
        assert (await ana.expect("takeback_offer"))["seat"] == 1
        update = await ana.request({"type": "accept_takeback", "room_id": room}, "update")
        assert (update["takeback"], update["ply"]) == (2, 1)
        seen = await bob.expect("update")
        assert (seen["takeback"], seen["ply"], seen["to_move"]) == (2, 1, 1)
        assert seen["legal_moves"]  # Bob's turn again, on his node
        # A draw offered from node b, accepted on node a.
        await bob.request({"type": "offer_draw", "room_id": room}, "draw_offer")
        await ana.expect("draw_offer")
        await ana.request({"type": "accept_draw", "room_id": room}, "room")
        final = await bob.expect("room")
        assert final["result"] == {"winner": None, "points": 0, "reason": "agreement"}
        stored = await get(n["b"].url, f"/api/rooms/{room}")
        assert stored["history"] == [{"column": 3}] and stored["ply"] == 1
        for c in (ana, bob):
            await c.close()


async def test_who_is_online_is_the_clusters(
        tmp_path: Path, pg_url: str, redis_server: RedisServer) -> None:
    async with nodes(tmp_path, pg_url, redis_server, "ab") as n:
        ana, ana_id = await member(n["a"].url, "Ana")
        bob, bob_id = await member(n["b"].url, "Bob")
        guest = Client(n["b"].url)
        await guest.connect("Gus")
        for url in (n["a"].url, n["b"].url):
            listed = (await get(url, "/api/online"))["players"]
            assert [p["player_id"] for p in listed] == [ana_id, bob_id]  # by name
        await bob.close()
        for _ in range(50):
            listed = (await get(n["a"].url, "/api/online"))["players"]
            if [p["player_id"] for p in listed] == [ana_id]:
                break
            await asyncio.sleep(0.1)
        assert [p["player_id"] for p in listed] == [ana_id]
        for c in (ana, guest):
            await c.close()
