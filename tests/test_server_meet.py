"""Meeting an opponent over a real socket (contract section 11): seeks pair by the rules and
never twice, challenges reach every connection of the challenged player, the caps, the
errors, ``GET /api/seeks`` and ``GET /api/stats``.

Which seeks should pair is decided in the tests by the contract's words
(:func:`compatible`), written here apart from the server's SQL."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from server_support import Client, running
from test_server_ratings import CLOCK, get, member

SEEK = {"type": "seek", "game": "tictactoe", "options": {}, "clock": None, "rated": False,
        "rating_range": None}


def compatible(a: dict[str, Any], b: dict[str, Any], ra: float, rb: float) -> bool:
    """Contract section 11: same game, options, clock and rated, each player's rating in
    the other's range."""
    def inside(r: float, rng: list[float] | None) -> bool:
        return rng is None or rng[0] <= r <= rng[1]

    return all(a.get(k) == b.get(k) for k in ("game", "options", "clock", "rated")) and \
        inside(ra, b.get("rating_range")) and inside(rb, a.get("rating_range"))


async def seek(c: Client, **kw: Any) -> str:
    answer = await c.request(dict(SEEK, **kw), "seeking")
    return str(answer["seek_id"])


async def paired(c: Client) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``paired`` message and the room snapshot right after it."""
    p = await c.expect("paired")
    snap = await c.expect("room")
    assert snap["room_id"] == p["room_id"]
    return p, snap


async def test_two_compatible_seeks_pair_at_once_into_a_started_room(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        ana, bob = Client(url), Client(url)
        ana_id = (await ana.connect("Ana"))["player_id"]
        bob_id = (await bob.connect("Bob"))["player_id"]
        first = await seek(ana)
        shown = (await get(url, "/api/seeks"))["seeks"]
        assert shown == [{"seek_id": first, "game": "tictactoe", "options": {}, "clock": None,
                          "rated": False, "rating_range": None,
                          "player": {"player_id": ana_id, "name": "Ana", "rating": 1500,
                                     "bot": False}}]
        second = await seek(bob)
        (pa, sa), (pb, _) = await asyncio.gather(paired(ana), paired(bob))
        assert (pa["seek_id"], pb["seek_id"]) == (first, second)
        assert pa["room_id"] == pb["room_id"] and {pa["seat"], pb["seat"]} == {0, 1}
        assert sa["status"] == "playing"
        seats = {s["player_id"]: i for i, s in enumerate(sa["seats"])}
        assert seats == {ana_id: pa["seat"], bob_id: pb["seat"]}
        assert (await get(url, "/api/seeks"))["seeks"] == []
        # The game is on: the seat to move plays, the other sees it.
        mover, other = (ana, bob) if pa["seat"] == 0 else (bob, ana)
        await mover.request({"type": "move", "room_id": pa["room_id"], "ply": 0,
                             "move": {"cell": 4}}, "update")
        assert (await other.expect("update"))["ply"] == 1
        for c in (ana, bob):
            await c.close()


async def test_seats_are_drawn_at_random(tmp_path: Path) -> None:
    """Over 16 pairings the one who sought first got seat 0 sometimes and seat 1 sometimes
    (a fixed seat fails with probability 1; a fair draw passes with 1 - 2/2^16)."""
    firsts = set()
    async with running(tmp_path / "t.db") as (_, url):
        for i in range(16):
            ana, bob = Client(url), Client(url)
            await ana.connect(f"Ana{i}")
            await bob.connect(f"Bob{i}")
            await seek(ana)
            await seek(bob)
            firsts.add((await ana.expect("paired"))["seat"])
            await bob.expect("paired")
            for c in (ana, bob):
                await c.close()
    assert firsts == {0, 1}


async def test_incompatible_seeks_never_pair(tmp_path: Path) -> None:
    """Each pair differs in one thing the contract compares (or the ranges exclude a
    rating): both stay open; the same pair made compatible pairs."""
    variants: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"game": "tictactoe"}, {"game": "connect4"}),
        ({"game": "grundy", "options": {"heap": 7}}, {"game": "grundy", "options": {"heap": 9}}),
        ({"clock": CLOCK}, {"clock": None}),
        ({"clock": CLOCK}, {"clock": {"base_ms": 600_000, "increment_ms": 2000}}),
        ({"rating_range": [1600, 2000]}, {}),
        ({}, {"rating_range": [1000, 1400]}),
    ]
    async with running(tmp_path / "t.db") as (_, url):
        for i, (a, b) in enumerate(variants):
            assert not compatible(dict(SEEK, **a), dict(SEEK, **b), 1500, 1500)
            ana, bob = Client(url), Client(url)
            await ana.connect(f"Ana{i}")
            await bob.connect(f"Bob{i}")
            sa, sb = await seek(ana, **a), await seek(bob, **b)
            ids = {s["seek_id"] for s in (await get(url, "/api/seeks"))["seeks"]}
            assert {sa, sb} <= ids, (a, b)
            for c in (ana, bob):
                await c.close()
        # Rated against casual: two registered players.
        ana, _ = await member(url, "Rina")
        bob, _ = await member(url, "Rob")
        await seek(ana, clock=CLOCK, rated=True)
        await seek(bob, clock=CLOCK, rated=False)
        await asyncio.sleep(0.2)
        assert not [m for c in (ana, bob) for m in c.inbox if m["type"] == "paired"]
        # A player's own seeks never pair with each other.
        solo = Client(url)
        await solo.connect("Solo")
        await seek(solo, game="boom")
        await seek(solo, game="boom")
        assert sum(s["game"] == "boom" for s in (await get(url, "/api/seeks"))["seeks"]) == 2
        # Ranges that admit each other do pair.
        await seek(ana, clock=CLOCK, rated=False, rating_range=[1400, 1600])
        await paired(bob)
        for c in (ana, bob, solo):
            await c.close()


async def test_a_rated_seek_pairs_registered_players_into_a_rated_room(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        ana, _ = await member(url, "Ana")
        bob, _ = await member(url, "Bob", "127.0.0.2")
        await seek(ana, game="connect4", clock=CLOCK, rated=True)
        await seek(bob, game="connect4", clock=CLOCK, rated=True)
        (_, snap), _ = await asyncio.gather(paired(ana), paired(bob))
        assert snap["rated"] is True and snap["room_options"]["clock"] == CLOCK
        for c in (ana, bob):
            await c.close()


async def test_bad_seeks_are_refused_and_change_nothing(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        guest = Client(url)
        await guest.connect("Gus")
        cases = [
            ({"rated": True, "clock": CLOCK}, "not_authenticated"),
            ({"rated": True}, "bad_request"),  # rated needs a clock
            ({"game": "chess"}, "unknown_game"),
            ({"game": "grundy", "options": {"heap": -3}}, "bad_request"),
            ({"rating_range": [2000, 1000]}, "bad_request"),
            ({"rating_range": [1000]}, "bad_request"),
            ({"clock": {"base_ms": 5}}, "bad_request"),
            ({"game": 7}, "bad_request"),
            ({"colour": "white"}, "bad_request"),
        ]
        for extra, code in cases:
            e = await guest.error(dict(SEEK, **extra))
            assert e["code"] == code, (extra, e)
        assert (await guest.error({"type": "cancel_seek", "seek_id": "nope"}))["code"] == \
            "bad_request"
        assert (await guest.error({"type": "accept_seek", "seek_id": "nope"}))["code"] == \
            "bad_request"
        assert (await get(url, "/api/seeks"))["seeks"] == []
        await guest.close()


async def test_cancel_close_and_the_cap_of_three(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        ana, bob = Client(url), Client(url)
        await ana.connect("Ana")
        await bob.connect("Bob")
        ids = [await seek(ana, game=g) for g in ("tictactoe", "connect4", "boom")]
        assert (await ana.error(dict(SEEK, game="grundy")))["code"] == "rate_limited"
        # Another player may not cancel it.
        assert (await bob.error({"type": "cancel_seek", "seek_id": ids[0]}))["code"] == \
            "bad_request"
        done = await ana.request({"type": "cancel_seek", "seek_id": ids[0]}, "seek_canceled")
        assert done["seek_id"] == ids[0]
        await seek(ana, game="grundy")  # room for one more now
        assert len((await get(url, "/api/seeks"))["seeks"]) == 4 - 1 + 0
        await ana.close()
        for _ in range(100):
            if not (await get(url, "/api/seeks"))["seeks"]:
                break
            await asyncio.sleep(0.05)
        assert (await get(url, "/api/seeks"))["seeks"] == []
        # Nothing of Ana's is left to pair with.
        await seek(bob)
        await asyncio.sleep(0.2)
        assert not [m for m in bob.inbox if m["type"] == "paired"]
        await bob.close()


async def test_open_seeks_per_address_are_capped(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", max_rooms_per_address=2) as (_, url):
        clients = []
        for i, game in enumerate(("tictactoe", "connect4", "boom")):
            c = Client(url)
            await c.connect(f"P{i}")
            clients.append(c)
            if i < 2:
                await seek(c, game=game)
            else:
                assert (await c.error(dict(SEEK, game=game)))["code"] == "rate_limited"
        for c in clients:
            await c.close()


async def test_accept_seek_by_hand(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        ana, bob, gus = Client(url), Client(url), Client(url)
        await ana.connect("Ana")
        await bob.connect("Bob")
        await gus.connect("Gus")
        narrow = await seek(ana, rating_range=[1600, 1700])
        e = await bob.error({"type": "accept_seek", "seek_id": narrow})
        assert e["code"] == "bad_request" and "range" in e["message"]
        assert (await ana.error({"type": "accept_seek", "seek_id": narrow}))["code"] == \
            "bad_request"  # one's own
        wide = await seek(ana, game="connect4")
        await bob.send({"type": "accept_seek", "seek_id": wide})
        (pa, _), (pb, _) = await asyncio.gather(paired(ana), paired(bob))
        assert pa["seek_id"] == wide and pa["room_id"] == pb["room_id"]
        # Taken: nobody else gets it; the narrow one is still open.
        assert (await gus.error({"type": "accept_seek", "seek_id": wide}))["code"] == \
            "bad_request"
        assert [s["seek_id"] for s in (await get(url, "/api/seeks"))["seeks"]] == [narrow]
        # A rated seek cannot be taken by a guest.
        rina, _ = await member(url, "Rina")
        rated = await seek(rina, clock=CLOCK, rated=True)
        assert (await gus.error({"type": "accept_seek", "seek_id": rated}))["code"] == \
            "bad_request"
        for c in (ana, bob, gus, rina):
            await c.close()


async def test_forty_guests_seeking_at_once_are_paired_exactly_once_each(
        tmp_path: Path) -> None:
    # All 40 connect from 127.0.0.1: the per-address budgets are lifted for it.
    async with running(tmp_path / "t.db", max_msgs_per_address=None,
                       max_conns_per_address=None) as (_, url):
        clients = [Client(url) for _ in range(40)]
        for i, c in enumerate(clients):
            await c.connect(f"G{i}")
        answers = await asyncio.gather(*(c.request(SEEK, "seeking") for c in clients))
        got = await asyncio.gather(*(paired(c) for c in clients))
        rooms: dict[str, list[int]] = {}
        for (p, snap), answer in zip(got, answers, strict=True):
            assert p["seek_id"] == answer["seek_id"]
            rooms.setdefault(p["room_id"], []).append(p["seat"])
            assert snap["status"] == "playing"
        assert len(rooms) == 20 and all(sorted(s) == [0, 1] for s in rooms.values())
        await asyncio.sleep(0.2)
        assert sum(m["type"] == "paired" for c in clients for m in c.inbox) == 40
        assert (await get(url, "/api/seeks"))["seeks"] == []
        assert (await get(url, "/api/stats")) == {"online": 40, "playing": 20, "seeks": 0}
        for c in clients:
            await c.close()


async def test_a_challenge_reaches_every_connection_and_an_accept_seats_both(
        tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        ana, ana_id = await member(url, "Ana")
        bob, bob_id = await member(url, "Bob")
        bob2 = await _second_connection(url, bob)
        sent = await ana.request({"type": "challenge", "to": "BOB", "game": "connect4",
                                  "options": {}, "clock": None, "rated": False},
                                 "challenge_sent")
        offers = await asyncio.gather(bob.expect("challenge"), bob2.expect("challenge"))
        for o in offers:
            assert o["challenge_id"] == sent["challenge_id"]
            assert o["from"] == {"player_id": ana_id, "name": "Ana", "rating": 1500,
                                 "bot": False, "registered": True}
            assert (o["game"], o["options"], o["clock"], o["rated"]) == \
                ("connect4", {}, None, False)
        await bob2.send({"type": "accept_challenge", "challenge_id": sent["challenge_id"]})
        (pa, snap), (pb, _) = await asyncio.gather(paired(ana), paired(bob2))
        assert pa["room_id"] == pb["room_id"] and {pa["seat"], pb["seat"]} == {0, 1}
        assert pa["challenge_id"] == sent["challenge_id"]
        assert {s["player_id"] for s in snap["seats"]} == {ana_id, bob_id}
        # Answered: a second answer is refused.
        e = await bob.error({"type": "accept_challenge", "challenge_id": sent["challenge_id"]})
        assert e["code"] == "bad_request"
        for c in (ana, bob, bob2):
            await c.close()


async def login(url: str, name: str) -> Client:
    """A connection of the registered player ``name`` (``member``'s password), logged in."""
    from test_server_ratings import PASSWORD

    c = Client(url)
    await c.open()
    await c.send({"type": "hello", "name": name, "password": PASSWORD})
    await c.expect("welcome")
    return c


async def _second_connection(url: str, c: Client) -> Client:
    """Another connection of ``c``'s registered player (a login by name and password)."""
    return await login(url, next(m["name"] for m in c.inbox if m["type"] == "registered"))


async def test_decline_cancel_expiry_and_a_challenger_who_leaves(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", challenge_expiry=1.0) as (_, url):
        ana, _ = await member(url, "Ana")
        bob, _ = await member(url, "Bob")
        cy, _ = await member(url, "Cy")
        terms = {"type": "challenge", "to": "Bob", "game": "tictactoe"}
        first = (await cy.request(terms, "challenge_sent"))["challenge_id"]
        await bob.expect("challenge")
        await bob.send({"type": "decline_challenge", "challenge_id": first})
        assert (await cy.expect("challenge_declined"))["challenge_id"] == first
        # A declined challenger waits a minute before asking the same player again
        # (contract section 15); anyone else may ask at once.
        assert (await cy.error(terms))["code"] == "rate_limited"
        second = (await ana.request(terms, "challenge_sent"))["challenge_id"]
        await bob.expect("challenge")
        done = await ana.request({"type": "cancel_challenge", "challenge_id": second},
                                 "challenge_canceled")
        assert done["challenge_id"] == second
        assert (await bob.expect("challenge_canceled"))["challenge_id"] == second
        third = (await ana.request(terms, "challenge_sent"))["challenge_id"]
        await bob.expect("challenge")
        for c in (ana, bob):  # unanswered for the (shortened) minute
            assert (await c.expect("challenge_canceled", timeout=5))["challenge_id"] == third
        fourth = (await ana.request(terms, "challenge_sent"))["challenge_id"]
        await bob.expect("challenge")
        await ana.close()
        assert (await bob.expect("challenge_canceled"))["challenge_id"] == fourth
        e = await bob.error({"type": "accept_challenge", "challenge_id": fourth})
        assert e["code"] == "bad_request"
        await bob.close()
        await cy.close()


async def test_challenge_refusals(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        ana, _ = await member(url, "Ana")
        bob, _ = await member(url, "Bob")
        away, _ = await member(url, "Away")
        await away.close()
        guest = Client(url)
        await guest.connect("Gus")
        base = {"type": "challenge", "game": "tictactoe"}
        for to, code in (("Nobody", "unknown_player"), ("Away", "unknown_player"),
                         ("Gus", "unknown_player"), ("Ana", "bad_request")):
            assert (await ana.error(dict(base, to=to)))["code"] == code, to
        assert (await guest.error(dict(base, to="Bob", rated=True, clock=CLOCK)))["code"] == \
            "not_authenticated"
        assert (await ana.error(dict(base, to="Bob", game="go")))["code"] == "unknown_game"
        assert (await ana.error(dict(base, to="Bob", rated=True)))["code"] == "bad_request"
        for _ in range(3):
            await ana.request(dict(base, to="Bob"), "challenge_sent")
        assert (await ana.error(dict(base, to="Bob")))["code"] == "rate_limited"
        for _ in range(3):
            assert (await bob.expect("challenge"))["from"]["name"] == "Ana"
        for c in (ana, bob, guest):
            await c.close()


async def test_a_house_bot_accepts_a_challenge_at_once(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        gus = Client(url)
        gus_id = (await gus.connect("Gus"))["player_id"]
        sent = await gus.request({"type": "challenge", "to": "bot (easy)", "game": "connect4"},
                                 "challenge_sent")
        p, snap = await paired(gus)
        assert p["challenge_id"] == sent["challenge_id"] and snap["status"] == "playing"
        mine = snap["seats"][p["seat"]]
        theirs = snap["seats"][1 - p["seat"]]
        assert mine["player_id"] == gus_id
        assert theirs["kind"] == "bot" and theirs["level"] == "easy"
        e = await gus.error({"type": "challenge", "to": "bot (grandmaster)",
                             "game": "connect4"})
        assert e["code"] == "unknown_player"
        await gus.close()


async def test_stats_count_players_games_and_seeks(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        assert await get(url, "/api/stats") == {"online": 0, "playing": 0, "seeks": 0}
        ana, bob, cy = Client(url), Client(url), Client(url)
        await ana.connect("Ana")
        await bob.connect("Bob")
        await cy.connect("Cy")
        await seek(ana)
        await seek(bob)
        await paired(ana)
        await seek(cy, game="boom")
        ana2 = await _second_connection_guest(url, ana)
        assert await get(url, "/api/stats") == {"online": 3, "playing": 1, "seeks": 1}
        await cy.close()
        for _ in range(100):
            if (await get(url, "/api/stats"))["online"] == 2:
                break
            await asyncio.sleep(0.05)
        assert await get(url, "/api/stats") == {"online": 2, "playing": 1, "seeks": 0}
        for c in (ana, ana2, bob):
            await c.close()


async def _second_connection_guest(url: str, c: Client) -> Client:
    """Another connection of ``c``'s guest (its token): one player, not two."""
    welcome = next(m for m in c.inbox if m["type"] == "welcome")
    other = Client(url)
    await other.connect(welcome["name"], token=welcome["token"])
    return other


async def test_rooms_made_by_meeting_count_against_the_rooms_per_address(
        tmp_path: Path) -> None:
    """A house bot's challenge and a pairing open rooms as create_room does: past
    --max-rooms-per-address rooms live from one address, the next is refused
    (rate_limited) and nothing is opened."""
    async with running(tmp_path / "t.db", max_rooms_per_address=2) as (_, url):
        gus = Client(url)
        await gus.connect("Gus")
        bot = {"type": "challenge", "to": "bot (easy)", "game": "connect4"}
        for _ in range(2):
            await gus.request(bot, "challenge_sent")
            await paired(gus)
        assert (await gus.error(bot))["code"] == "rate_limited"
        ana = Client(url)
        await ana.connect("Ana")
        assert (await ana.error(SEEK))["code"] == "rate_limited"
        assert (await get(url, "/api/seeks"))["seeks"] == []
        assert (await get(url, "/api/stats"))["playing"] == 2
        for c in (gus, ana):
            await c.close()
