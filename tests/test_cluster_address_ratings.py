"""Ratings that one address cannot farm (contract section 16) on two nodes of a cluster: real
``tablas serve`` processes on one PostgreSQL and one Redis (the fixtures). The farmer plays
on node a, the helper on node b (the bot account on a): the address hashes are the shared
database's, so one address still farms nothing whichever way they meet; three addresses are
rated as Glicko-2 says; ``--shared-address-ok`` exempts a network; a helper who logs in on
node b from the farmer's address mid-game unrates the game its owner ends on node a."""

from __future__ import annotations

from pathlib import Path

from redis_support import RedisServer
from test_cluster import nodes
from test_server_address_ratings import (
    account,
    check_farmed_nothing,
    check_rated_as_glicko2_says,
    close_all,
    farm,
    farmer_wins,
    log_in,
    meet,
    rating,
)
from test_server_ratings import get


async def test_one_address_on_two_nodes_farms_nothing_three_are_rated(
        tmp_path: Path, pg_url: str, redis_server: RedisServer) -> None:
    async with nodes(tmp_path, pg_url, redis_server, "ab") as n:
        a, b = n["a"].url, n["b"].url
        f = await farm((a, b, a), ("127.0.0.2",) * 3)
        await check_farmed_nothing(b, f)
        await close_all(f)
        # Other players, on three addresses: the same games are rated.
        names = ("Grower", "Partner", "Robota")
        g = await farm((a, b, a), ("127.0.0.3", "127.0.0.4", "127.0.0.5"), names)
        await check_rated_as_glicko2_says(a, g)
        await close_all(g)


async def test_a_helper_at_the_farmers_address_on_the_other_node_mid_game(
        tmp_path: Path, pg_url: str, redis_server: RedisServer) -> None:
    async with nodes(tmp_path, pg_url, redis_server, "ab") as n:
        a, b = n["a"].url, n["b"].url
        farmer, farmer_id = await account(a, "Farmer", "127.0.0.2")
        helper, helper_id = await account(b, "Helper", "127.0.0.3")
        room, seat, first = await meet("room", farmer, helper, "Helper")
        assert (first["rated"], first["unrated_reason"]) == (True, None)
        await (await log_in(b, "Helper", "127.0.0.2")).close()
        end = await farmer_wins(farmer, helper, room, seat)
        assert (end["rated"], end["unrated_reason"]) == (False, "shared_address")
        stored = await get(b, f"/api/rooms/{room}")
        assert (stored["rated"], stored["unrated_reason"]) == (False, "shared_address")
        assert await rating(a, farmer_id) is None and await rating(b, helper_id) is None
        for c in (farmer, helper):
            await c.close()


async def test_the_exemption_on_two_nodes(
        tmp_path: Path, pg_url: str, redis_server: RedisServer) -> None:
    async with nodes(tmp_path, pg_url, redis_server, "ab",
                     args=["--shared-address-ok", "127.0.0.0/8"]) as n:
        a, b = n["a"].url, n["b"].url
        f = await farm((a, b, a), ("127.0.0.2",) * 3)
        await check_rated_as_glicko2_says(b, f)
        await close_all(f)
