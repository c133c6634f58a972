"""Ratings that one address cannot farm (contract section 16), over real sockets, each client on
an address of its own in 127.0.0.0/8 (all loopback on Linux): a farmer whose helpers share
their address gains nothing, whichever way they meet (a room joined, seeks, a challenge, a
tournament, a bot account); the same games between addresses are rated as Glicko-2 says (the
implementation in tests/test_server_ratings.py, written apart from server/ratings.py); an
address seen once taints the pair for 30 days, mid-game too; ``--shared-address-ok`` exempts a
network. The same on two nodes of a cluster: tests/test_cluster_address_ratings.py."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot_support import Adapter, engine_command, until_online, write_engine
from server_support import Client, FakeClock, Subprocess, running
from test_bot_adapter import play_rooms
from test_server_meet import paired, seek
from test_server_ratings import (
    CLOCK,
    NEW,
    PASSWORD,
    after_game,
    close_to,
    get,
    play,
)
from test_server_tournaments import enter, tournament

HUMAN = {"kind": "human"}
X_WINS = [0, 3, 1, 4, 2]  # seat 0 (X) takes the top row
O_WINS = [0, 3, 1, 4, 8, 5]  # seat 1 (O) takes the middle row
DAY = 86400.0
WAYS = ("room", "seek", "challenge", "tournament", "bot_account")


def score_of_seat(result: dict[str, Any], seat: int) -> float:
    """The seat's score in a RESULT: 1 a win, 0 a loss, 0.5 a draw."""
    winner = result["winner"]
    return 0.5 if winner is None else float(winner == seat)


async def account(url: str, name: str, source: str, *, bot: bool = False
                  ) -> tuple[Client, str]:
    """A registered player (``bot``: a bot account) connected from ``source``."""
    c = Client(url, source)
    pid = (await c.connect(name))["player_id"]
    await c.request({"type": "register", "password": PASSWORD, "bot": bot}, "registered")
    return c, pid


async def log_in(url: str, name: str, source: str) -> Client:
    """Another connection of the registered ``name``, from ``source``."""
    c = Client(url, source)
    await c.open()
    await c.send({"type": "hello", "name": name, "password": PASSWORD})
    await c.expect("welcome")
    return c


async def final(c: Client, room: str) -> dict[str, Any]:
    """The room's snapshot once finished, as ``c`` (following it) receives it."""
    while True:
        snap = await c.expect("room")
        if snap["room_id"] == room and snap["status"] == "finished":
            return snap


async def started(c: Client, room: str) -> dict[str, Any]:
    """The room's snapshot once its game has started, as ``c`` (following it) receives it."""
    while True:
        snap = await c.expect("room")
        if snap["room_id"] == room and snap["status"] == "playing":
            return snap


async def farmer_wins(farmer: Client, other: Client, room: str, farmer_seat: int
                      ) -> dict[str, Any]:
    """The farmer wins the started tic-tac-toe game in ``room``; its final snapshot."""
    movers, cells = ([farmer, other], X_WINS) if farmer_seat == 0 else ([other, farmer], O_WINS)
    await play(movers, room, cells)
    return await final(farmer, room)


async def meet(way: str, farmer: Client, other: Client, other_name: str
               ) -> tuple[str, int, dict[str, Any]]:
    """``farmer`` and ``other`` meet for one rated game ``way``: the room, the farmer's seat
    and the farmer's first snapshot of it (rated or not from its pairing on)."""
    terms = {"game": "tictactoe", "options": {}, "clock": CLOCK, "rated": True}
    if way == "room":
        created = await farmer.request({"type": "create_room", "seats": [HUMAN, HUMAN],
                                        "join_seat": 0, **terms}, "room_created")
        await farmer.expect("room")
        room = created["room_id"]
        await other.request({"type": "join", "room_id": room}, "room")
        snap = await farmer.expect("room")
        assert snap["status"] == "playing"
        return room, 0, snap
    if way == "seek":
        await seek(farmer, **terms, rating_range=None)
        await seek(other, **terms, rating_range=None)
        (p, snap), _ = await asyncio.gather(paired(farmer), paired(other))
        return p["room_id"], p["seat"], snap
    if way in ("challenge", "bot_account"):
        sent = await farmer.request({"type": "challenge", "to": other_name, **terms},
                                    "challenge_sent")
        await other.expect("challenge")
        await other.send({"type": "accept_challenge", "challenge_id": sent["challenge_id"]})
        (p, snap), _ = await asyncio.gather(paired(farmer), paired(other))
        return p["room_id"], p["seat"], snap
    assert way == "tournament"
    tid = await tournament(farmer, rated=True)
    await enter(farmer, tid)
    await enter(other, tid)
    await farmer.request({"type": "start_tournament", "tournament_id": tid},
                         "tournament_started")
    g, _ = await asyncio.gather(farmer.expect("tournament_game"),
                                other.expect("tournament_game"))
    room = g["room_id"]
    await other.request({"type": "join", "room_id": room}, "room")
    snap = await farmer.request({"type": "join", "room_id": room}, "room")
    return room, g["seat"], snap


@dataclass
class Farm:
    """A farmer, a helper and a bot account, each on the node and address given; the games
    the farmer won and what each showed."""

    farmer: tuple[Client, str]
    helper: tuple[Client, str]
    bot: tuple[Client, str]
    shown: list[tuple[str, dict[str, Any], dict[str, Any]]] = field(default_factory=list)


async def farm(urls: tuple[str, str, str], sources: tuple[str, str, str],
               names: tuple[str, str, str] = ("Farmer", "Helper", "Botty")) -> Farm:
    """The farmer (``urls[0]``, ``sources[0]``, ``names[0]``) beats the helper and the bot
    account once each way, in the order of :data:`WAYS`; every game asked rated."""
    f = Farm(await account(urls[0], names[0], sources[0]),
             await account(urls[1], names[1], sources[1]),
             await account(urls[2], names[2], sources[2], bot=True))
    farmer = f.farmer[0]
    for way in WAYS:
        other, other_name = (f.bot[0], names[2]) if way == "bot_account" else \
            (f.helper[0], names[1])
        room, seat, first = await meet(way, farmer, other, other_name)
        end = await farmer_wins(farmer, other, room, seat)
        assert end["result"]["winner"] == seat, (way, end["result"])
        f.shown.append((way, first, end))
    return f


async def rating(url: str, player_id: str) -> dict[str, Any] | None:
    ratings: dict[str, Any] = (await get(url, f"/api/players/{player_id}"))["ratings"]
    return ratings.get("tictactoe")


async def check_farmed_nothing(url: str, f: Farm) -> None:
    """Every game unrated for sharing an address, from its pairing on; no rating moved."""
    for way, first, end in f.shown:
        for snap in (first, end):
            assert (snap["rated"], snap["unrated_reason"]) == (False, "shared_address"), way
    for _, pid in (f.farmer, f.helper, f.bot):
        assert await rating(url, pid) is None


async def check_rated_as_glicko2_says(url: str, f: Farm) -> None:
    """Every game rated, from its pairing on; each rating as one Glicko-2 period per game,
    in the order they were played."""
    r = {pid: NEW for _, pid in (f.farmer, f.helper, f.bot)}
    games = dict.fromkeys(r, 0)
    farmer = f.farmer[1]
    for way, first, end in f.shown:
        for snap in (first, end):
            assert (snap["rated"], snap["unrated_reason"]) == (True, None), way
        other = f.bot[1] if way == "bot_account" else f.helper[1]
        r[farmer], r[other] = after_game(r[farmer], r[other], 1.0)
        games[farmer] += 1
        games[other] += 1
    for pid, expected in r.items():
        shown = await rating(url, pid)
        assert shown is not None
        close_to(shown, expected, games[pid])
    assert r[farmer][0] > 1700  # what one address no longer gets


async def close_all(f: Farm) -> None:
    for c, _ in (f.farmer, f.helper, f.bot):
        await c.close()


# --- the tests ------------------------------------------------------------------------------

async def test_from_one_address_every_way_of_meeting_farms_nothing(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        f = await farm((url, url, url), ("127.0.0.2",) * 3)
        await check_farmed_nothing(url, f)
        await close_all(f)


async def test_from_three_addresses_the_same_games_are_rated(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        f = await farm((url, url, url), ("127.0.0.2", "127.0.0.3", "127.0.0.4"))
        await check_rated_as_glicko2_says(url, f)
        await close_all(f)


async def test_a_network_the_operator_vouches_for_is_rated(tmp_path: Path) -> None:
    """``--shared-address-ok 127.0.0.0/8``: every connection is an address of its own."""
    async with running(tmp_path / "t.db", shared_address_ok=["127.0.0.0/8"]) as (srv, url):
        f = await farm((url, url, url), ("127.0.0.2",) * 3)
        await check_rated_as_glicko2_says(url, f)
        # Nothing of the exempt network was kept.
        for _, pid in (f.farmer, f.helper, f.bot):
            assert await srv.store.addresses.hashes_of(pid) == []
        await close_all(f)


async def test_an_address_seen_once_taints_the_pair_for_30_days(tmp_path: Path) -> None:
    clock = FakeClock()
    async with running(tmp_path / "t.db", clock=clock) as (srv, url):
        farmer, farmer_id = await account(url, "Farmer", "127.0.0.2")
        helper, helper_id = await account(url, "Helper", "127.0.0.3")
        # The helper logs in once from the farmer's address, then never again.
        await (await log_in(url, "Helper", "127.0.0.2")).close()
        room, seat, first = await meet("room", farmer, helper, "Helper")
        assert (first["rated"], first["unrated_reason"]) == (False, "shared_address")
        end = await farmer_wins(farmer, helper, room, seat)
        assert (end["rated"], end["unrated_reason"]) == (False, "shared_address")
        # 30 days later to the second, the pair is still tainted (the farmer came back
        # meanwhile, so only the helper's one sight counts).
        clock.t += 30 * DAY - 1
        farmer = await log_in(url, "Farmer", "127.0.0.2")
        helper = await log_in(url, "Helper", "127.0.0.3")
        room, seat, first = await meet("room", farmer, helper, "Helper")
        assert (first["rated"], first["unrated_reason"]) == (False, "shared_address")
        await farmer_wins(farmer, helper, room, seat)
        assert await srv.address_book.forget_old() == 0
        # Past 30 days it is forgotten: the rematch of that game (asked rated, as it was) is
        # rated, and the sweep deletes the old hash.
        clock.t += 2
        room = (await farmer.request({"type": "rematch", "room_id": room}, "room_created"))[
            "room_id"]
        seat = 1 - seat
        await helper.request({"type": "join", "room_id": room}, "room")
        first = await started(farmer, room)
        assert (first["rated"], first["unrated_reason"]) == (True, None)
        end = await farmer_wins(farmer, helper, room, seat)
        assert (end["rated"], end["unrated_reason"]) == (True, None)
        before = len(await srv.store.addresses.hashes_of(helper_id))
        assert await srv.address_book.forget_old() == 1
        assert len(await srv.store.addresses.hashes_of(helper_id)) == before - 1 == 1
        expected = after_game(NEW, NEW, 1.0)
        close_to(await rating(url, farmer_id) or {}, expected[0], 1)
        close_to(await rating(url, helper_id) or {}, expected[1], 1)
        for c in (farmer, helper):
            await c.close()


async def test_a_helper_who_comes_to_the_farmers_address_mid_game_rates_nothing(
        tmp_path: Path) -> None:
    """Rated when paired, the game is unrated at its end if its players shared an address
    meanwhile: the final snapshot says so, and no rating moves."""
    async with running(tmp_path / "t.db") as (_, url):
        farmer, farmer_id = await account(url, "Farmer", "127.0.0.2")
        helper, helper_id = await account(url, "Helper", "127.0.0.3")
        room, seat, first = await meet("challenge", farmer, helper, "Helper")
        assert (first["rated"], first["unrated_reason"]) == (True, None)
        # A second connection of the helper's, from the farmer's address.
        await (await log_in(url, "Helper", "127.0.0.2")).close()
        end = await farmer_wins(farmer, helper, room, seat)
        assert (end["rated"], end["unrated_reason"]) == (False, "shared_address")
        stored = await get(url, f"/api/rooms/{room}")
        assert (stored["rated"], stored["unrated_reason"]) == (False, "shared_address")
        # Their next game is unrated from its pairing on.
        room, seat, first = await meet("room", farmer, helper, "Helper")
        assert (first["rated"], first["unrated_reason"]) == (False, "shared_address")
        await farmer_wins(farmer, helper, room, seat)
        assert await rating(url, farmer_id) is None and await rating(url, helper_id) is None
        for c in (farmer, helper):
            await c.close()


async def test_the_pair_cap_says_why(tmp_path: Path) -> None:
    """The eleventh game of a pair within a day is unrated with ``"pair_cap"``."""
    async with running(tmp_path / "t.db") as (_, url):
        farmer, _ = await account(url, "Farmer", "127.0.0.2")
        helper, _ = await account(url, "Helper", "127.0.0.3")
        for n in range(11):
            room, seat, first = await meet("room", farmer, helper, "Helper")
            reason = "pair_cap" if n == 10 else None
            assert (first["rated"], first["unrated_reason"]) == (reason is None, reason)
            await farmer_wins(farmer, helper, room, seat)
        for c in (farmer, helper):
            await c.close()



async def test_a_bot_account_counts_the_address_its_adapter_came_from(tmp_path: Path) -> None:
    """``tablas bot`` (a real adapter and engine, on a real ``tablas serve``) connects from
    127.0.0.1: a person of that address plays its bot account unrated, one of another address
    rated."""
    srv = Subprocess(tmp_path / "t.db", tmp_path / "server.log")
    await asyncio.to_thread(srv.start)
    engine, logs = write_engine(tmp_path)
    bot = await Adapter(srv.url, "Robo", engine_command(engine, logs),
                        stderr=tmp_path / "robo.err").start()
    try:
        ends: dict[str, tuple[str, int, dict[str, Any]]] = {}
        for name, source in (("Near", "127.0.0.1"), ("Far", "127.0.0.2")):
            person, pid = await account(srv.url, name, source)
            p = await until_online(person, "Robo", rated=True, clock=CLOCK)
            room = p["room_id"]
            await play_rooms(person, {room: p["seat"]})
            end = await get(srv.url, f"/api/rooms/{room}")
            ends[name] = (pid, p["seat"], end)
            await person.close()
        near_id, _, near = ends["Near"]
        assert (near["rated"], near["unrated_reason"]) == (False, "shared_address")
        assert await rating(srv.url, near_id) is None
        far_id, far_seat, far = ends["Far"]
        assert (far["rated"], far["unrated_reason"]) == (True, None)
        robo_id = far["seats"][1 - far_seat]["player_id"]
        mine, robo = after_game(NEW, NEW, score_of_seat(far["result"], far_seat))
        close_to(await rating(srv.url, far_id) or {}, mine, 1)
        close_to(await rating(srv.url, robo_id) or {}, robo, 1)  # its game with Near: none
    finally:
        await bot.stop()
        srv.terminate()


async def test_only_keyed_hashes_of_addresses_are_kept(tmp_path: Path) -> None:
    """What the database holds of a player's address: HMAC-SHA256 under the server's own key
    (read back from the database), computed here with the standard library; the address
    itself appears nowhere in the file."""
    db = tmp_path / "t.db"
    async with running(db) as (srv, url):
        ana, ana_id = await account(url, "Ana", "127.0.0.2")
        await (await log_in(url, "Ana", "127.0.0.3")).close()
        await ana.close()
        assert len(await srv.store.addresses.hashes_of(ana_id)) == 2
    with sqlite3.connect(db) as con:
        (key_hex,) = con.execute("SELECT value FROM server_secrets").fetchone()
        rows = con.execute("SELECT player_id, address_hash FROM address_seen").fetchall()
    key = bytes.fromhex(key_hex)
    assert len(key) == 32
    assert sorted(rows) == sorted(
        (ana_id, hmac.new(key, a.encode(), hashlib.sha256).hexdigest())
        for a in ("127.0.0.2", "127.0.0.3"))
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("t.db*"))
    assert b"127.0.0.2" not in raw and b"127.0.0.3" not in raw
