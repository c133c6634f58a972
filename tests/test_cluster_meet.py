"""Meeting an opponent on several nodes (contract sections 9 and 11): real ``tablas serve``
processes on one PostgreSQL and one Redis started by the fixtures. A seek made on one node
pairs with one made on another, never twice; a challenge reaches its target's connections on
every node and an answer from any of them is decided once; ``/api/stats`` is the cluster's;
the seeks of a node killed with SIGKILL go."""

from __future__ import annotations

import asyncio
from pathlib import Path

from redis_support import RedisServer
from server_support import Client
from test_cluster import nodes
from test_server_meet import SEEK, login, paired, seek
from test_server_ratings import PASSWORD, get, member


async def test_seeks_on_two_nodes_pair_and_the_game_plays_across(
        tmp_path: Path, pg_url: str, redis_server: RedisServer) -> None:
    async with nodes(tmp_path, pg_url, redis_server, "ab") as n:
        ana, bob = Client(n["a"].url), Client(n["b"].url)
        await ana.connect("Ana")
        await bob.connect("Bob")
        mine = await seek(ana, game="connect4")
        # Node b lists node a's seek.
        assert [s["seek_id"] for s in (await get(n["b"].url, "/api/seeks"))["seeks"]] == [mine]
        await seek(bob, game="connect4")
        (pa, sa), (pb, sb) = await asyncio.gather(paired(ana), paired(bob))
        assert pa["room_id"] == pb["room_id"] and {pa["seat"], pb["seat"]} == {0, 1}
        assert sa["status"] == sb["status"] == "playing"
        assert sa["room_id"] == sb["room_id"]
        room = pa["room_id"]
        order = [ana, bob] if pa["seat"] == 0 else [bob, ana]
        for ply, column in enumerate((3, 3, 4)):
            mover, other = order[ply % 2], order[1 - ply % 2]
            await mover.request({"type": "move", "room_id": room, "ply": ply,
                                 "move": {"column": column}}, "update")
            assert (await other.expect("update"))["ply"] == ply + 1
        for url in (n["a"].url, n["b"].url):
            assert (await get(url, "/api/stats")) == {"online": 2, "playing": 1, "seeks": 0}
        for c in (ana, bob):
            await c.close()


async def test_forty_guests_on_two_nodes_are_paired_exactly_once_each(
        tmp_path: Path, pg_url: str, redis_server: RedisServer) -> None:
    async with nodes(tmp_path, pg_url, redis_server, "ab") as n:
        clients = [Client(n["ab"[i % 2]].url) for i in range(40)]
        for i, c in enumerate(clients):
            await c.connect(f"G{i}")
        answers = await asyncio.gather(*(c.request(SEEK, "seeking") for c in clients))
        got = await asyncio.gather(*(paired(c) for c in clients))
        rooms: dict[str, list[int]] = {}
        for (p, _), answer in zip(got, answers, strict=True):
            assert p["seek_id"] == answer["seek_id"]
            rooms.setdefault(p["room_id"], []).append(p["seat"])
        assert len(rooms) == 20 and all(sorted(s) == [0, 1] for s in rooms.values())
        await asyncio.sleep(0.3)
        assert sum(m["type"] == "paired" for c in clients for m in c.inbox) == 40
        assert (await get(n["a"].url, "/api/seeks"))["seeks"] == []
        assert (await get(n["b"].url, "/api/stats")) == {"online": 40, "playing": 20,
                                                          "seeks": 0}
        for c in clients:
            await c.close()


async def test_a_challenge_reaches_the_target_on_every_node(
        tmp_path: Path, pg_url: str, redis_server: RedisServer) -> None:
    async with nodes(tmp_path, pg_url, redis_server, "abc") as n:
        ana = (await member(n["a"].url, "Ana"))[0]
        bob_b = (await member(n["b"].url, "Bob"))[0]
        bob_c = await login(n["c"].url, "Bob")
        terms = {"type": "challenge", "to": "bob", "game": "tictactoe"}
        first = (await ana.request(terms, "challenge_sent"))["challenge_id"]
        for c in (bob_b, bob_c):
            offer = await c.expect("challenge")
            assert offer["challenge_id"] == first and offer["from"]["name"] == "Ana"
        # Canceled on node a: every connection of Bob's hears it.
        await ana.request({"type": "cancel_challenge", "challenge_id": first},
                          "challenge_canceled")
        for c in (bob_b, bob_c):
            assert (await c.expect("challenge_canceled"))["challenge_id"] == first
        # Accepted on node c: both are seated, whichever node owns the room.
        second = (await ana.request(terms, "challenge_sent"))["challenge_id"]
        await bob_b.expect("challenge")
        await bob_c.expect("challenge")
        await bob_c.send({"type": "accept_challenge", "challenge_id": second})
        (pa, _), (pc, snap) = await asyncio.gather(paired(ana), paired(bob_c))
        assert pa["room_id"] == pc["room_id"] and {pa["seat"], pc["seat"]} == {0, 1}
        assert pc["challenge_id"] == second and snap["status"] == "playing"
        # A second answer, from node b, is refused by the owner.
        e = await bob_b.error({"type": "accept_challenge", "challenge_id": second})
        assert e["code"] == "bad_request"
        # Declined on node c: the challenger on node a hears it, and waits a minute before
        # asking Bob again (contract section 15).
        third = (await ana.request(terms, "challenge_sent"))["challenge_id"]
        await bob_b.expect("challenge")
        await bob_c.expect("challenge")
        await bob_c.send({"type": "decline_challenge", "challenge_id": third})
        assert (await ana.expect("challenge_declined"))["challenge_id"] == third
        assert (await ana.error(terms))["code"] == "rate_limited"
        # Bob gone from every node: unknown_player.
        for c in (bob_b, bob_c):
            await c.close()
        for _ in range(100):
            if (await get(n["a"].url, "/api/stats"))["online"] == 1:
                break
            await asyncio.sleep(0.05)
        assert (await ana.error(terms))["code"] == "unknown_player"
        await ana.close()


async def test_a_bot_account_on_another_node_is_seated_as_one(
        tmp_path: Path, pg_url: str, redis_server: RedisServer) -> None:
    """Contract section 12 across nodes: the nodes' messages carry no bot flag, so the node
    that seats a bot account answering from another node reads it from the database."""
    async with nodes(tmp_path, pg_url, redis_server, "ab") as n:
        ana = (await member(n["a"].url, "Ana"))[0]
        robo = Client(n["b"].url)
        robo_id = (await robo.connect("Robo"))["player_id"]
        await robo.request({"type": "register", "password": PASSWORD, "bot": True},
                           "registered")
        sent = await ana.request({"type": "challenge", "to": "Robo", "game": "connect4",
                                  "clock": {"base_ms": 60_000, "increment_ms": 0}},
                                 "challenge_sent")
        offer = await robo.expect("challenge")
        assert offer["from"]["bot"] is False and offer["from"]["registered"] is True
        await robo.send({"type": "accept_challenge", "challenge_id": sent["challenge_id"]})
        (pa, sa), (pr, sr) = await asyncio.gather(paired(ana), paired(robo))
        for snap in (sa, sr):
            assert {s["player_id"]: s["bot"] for s in snap["seats"]} == {
                robo_id: True, snap["seats"][pa["seat"]]["player_id"]: False}
        assert pr["room_id"] == pa["room_id"]
        for c in (ana, robo):
            await c.close()


async def test_the_seeks_of_a_killed_node_go_and_never_pair(
        tmp_path: Path, pg_url: str, redis_server: RedisServer) -> None:
    async with nodes(tmp_path, pg_url, redis_server, "ab", lease_s=1.0) as n:
        ana = Client(n["b"].url)
        await ana.connect("Ana")
        await seek(ana, game="boom")
        assert len((await get(n["a"].url, "/api/seeks"))["seeks"]) == 1
        assert (await get(n["a"].url, "/api/stats"))["online"] == 1
        n["b"].kill9()
        for _ in range(100):
            if not (await get(n["a"].url, "/api/seeks"))["seeks"]:
                break
            await asyncio.sleep(0.1)
        assert (await get(n["a"].url, "/api/seeks"))["seeks"] == []
        assert (await get(n["a"].url, "/api/stats"))["online"] == 0
        bob = Client(n["a"].url)
        await bob.connect("Bob")
        await seek(bob, game="boom")
        await asyncio.sleep(0.5)
        assert not [m for m in bob.inbox if m["type"] == "paired"]
        await bob.close()
