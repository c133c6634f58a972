"""Fair shares over real sockets (contract section 15): what one address may take from
everyone. Clients sit on distinct loopback addresses (127.0.0.2, .3, …: each is a client
address of its own to the server). Every refusal is checked to change nothing."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from server_support import Client, http_exchange, running
from test_server_ratings import CLOCK, PASSWORD, get

SHORT = {"base_ms": 10_000, "increment_ms": 0}  # the shortest clock a room may have
CASUAL_SEEK = {"type": "seek", "game": "tictactoe", "options": {}, "clock": None,
               "rated": False, "rating_range": None}


async def member_at(url: str, name: str, source: str) -> tuple[Client, str]:
    """A registered player connected from ``source``."""
    c = Client(url, source=source)
    pid = (await c.connect(name))["player_id"]
    await c.request({"type": "register", "password": PASSWORD}, "registered")
    return c, pid


async def guest_at(url: str, name: str, source: str) -> Client:
    c = Client(url, source=source)
    await c.connect(name)
    return c


async def nothing_of(c: Client, kind: str, wait: float = 0.3) -> None:
    """``c`` gets no message of type ``kind`` within ``wait`` seconds."""
    await asyncio.sleep(wait)
    while True:
        try:
            m = await c.recv(timeout=0.05)
        except TimeoutError:
            break
        assert m["type"] != kind, m


# --- blocking --------------------------------------------------------------------------------

async def test_a_block_stops_challenges_pairing_and_chat_and_is_kept(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    async with running(db) as (_, url):
        ana, _ = await member_at(url, "Ana", "127.0.0.2")
        bob, _ = await member_at(url, "Bob", "127.0.0.3")
        cy = await guest_at(url, "Cy", "127.0.0.4")
        # What cannot be blocked, refused, nothing changed.
        assert (await cy.error({"type": "block", "name": "Bob"}))["code"] == \
            "not_authenticated"
        assert (await ana.error({"type": "block", "name": "Nobody"}))["code"] == \
            "unknown_player"
        assert (await ana.error({"type": "block", "name": "ana"}))["code"] == "bad_request"
        assert (await ana.error({"type": "unblock", "name": "Bob"}))["code"] == "bad_request"
        assert (await ana.request({"type": "blocks"}, "blocks"))["names"] == []
        done = await ana.request({"type": "block", "name": "BOB"}, "blocked")
        assert done["name"] == "Bob"  # the name as its player holds it
        assert (await ana.request({"type": "blocks"}, "blocks"))["names"] == ["Bob"]
        # Challenges: Bob's reach nobody; Ana's to Bob neither (one of them blocked the other).
        terms = {"type": "challenge", "game": "tictactoe", "clock": None, "rated": False}
        assert (await bob.error(dict(terms, to="Ana")))["code"] == "unknown_player"
        assert (await ana.error(dict(terms, to="Bob")))["code"] == "unknown_player"
        # Seeks: never paired together, by the pool or by hand.
        theirs = (await bob.request(CASUAL_SEEK, "seeking"))["seek_id"]
        mine = (await ana.request(CASUAL_SEEK, "seeking"))["seek_id"]
        assert {s["seek_id"] for s in (await get(url, "/api/seeks"))["seeks"]} == {theirs, mine}
        assert (await ana.error({"type": "accept_seek", "seek_id": theirs}))["code"] == \
            "bad_request"
        # A third player pairs with the oldest open seek as before.
        dan = await guest_at(url, "Dan", "127.0.0.5")
        await dan.request(CASUAL_SEEK, "seeking")
        assert (await dan.expect("paired"))["room_id"]
        assert (await bob.expect("paired"))["room_id"]
        await ana.request({"type": "cancel_seek", "seek_id": mine}, "seek_canceled")
        # Chat: Bob's lines are not delivered to Ana; Cy, who blocked nobody, gets them.
        room = (await ana.request({"type": "create_room", "game": "tictactoe", "seats": [
            {"kind": "human"}, {"kind": "human"}], "join_seat": 0}, "room_created"))["room_id"]
        await bob.request({"type": "spectate", "room_id": room}, "room")
        await cy.request({"type": "spectate", "room_id": room}, "room")
        await bob.request({"type": "chat", "room_id": room, "text": "psst"}, "chat")
        heard = await cy.expect("chat")
        assert (heard["text"], heard["audience"]) == ("psst", "spectators")
        await nothing_of(ana, "chat")
        await ana.request({"type": "unblock", "name": "bob"}, "unblocked")
        await bob.request({"type": "chat", "room_id": room, "text": "hi again"}, "chat")
        assert (await ana.expect("chat"))["text"] == "hi again"
        await ana.request({"type": "block", "name": "Bob"}, "blocked")
        for c in (ana, bob, cy, dan):
            await c.close()
    async with running(db) as (_, url):  # kept with the account, across a restart
        ana = Client(url)
        await ana.open()
        await ana.send({"type": "hello", "name": "Ana", "password": PASSWORD})
        await ana.expect("welcome")
        assert (await ana.request({"type": "blocks"}, "blocks"))["names"] == ["Bob"]
        bob = Client(url, source="127.0.0.3")
        await bob.open()
        await bob.send({"type": "hello", "name": "Bob", "password": PASSWORD})
        await bob.expect("welcome")
        assert (await bob.error({"type": "challenge", "to": "Ana", "game": "tictactoe"}))[
            "code"] == "unknown_player"
        for c in (ana, bob):
            await c.close()


# --- challenges ------------------------------------------------------------------------------

async def test_at_most_five_challenges_wait_for_one_player(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        victim, _ = await member_at(url, "Victim", "127.0.0.2")
        senders = [await guest_at(url, f"S{i}", f"127.0.1.{i}") for i in range(6)]
        terms = {"type": "challenge", "to": "Victim", "game": "tictactoe"}
        for s in senders[:5]:
            await s.request(terms, "challenge_sent")
        e = await senders[5].error(terms)
        assert e["code"] == "rate_limited" and "5" in e["message"]
        offers = [await victim.expect("challenge") for _ in range(5)]
        await nothing_of(victim, "challenge")
        # One answered: there is room for one more.
        await victim.send({"type": "decline_challenge",
                           "challenge_id": offers[0]["challenge_id"]})
        await senders[0].expect("challenge_declined")
        await senders[5].request(terms, "challenge_sent")
        for c in (victim, *senders):
            await c.close()


# --- two chats -------------------------------------------------------------------------------

async def test_spectators_do_not_whisper_to_the_players_of_a_rated_game(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        ana, _ = await member_at(url, "Ana", "127.0.0.2")
        bob, _ = await member_at(url, "Bob", "127.0.0.3")
        room = (await ana.request({"type": "create_room", "game": "connect4", "seats": [
            {"kind": "human"}, {"kind": "human"}], "join_seat": 0, "rated": True,
            "clock": CLOCK}, "room_created"))["room_id"]
        await bob.request({"type": "join", "room_id": room}, "room")
        cy = await guest_at(url, "Cy", "127.0.0.4")
        dan = await guest_at(url, "Dan", "127.0.0.5")
        for c in (cy, dan):
            await c.request({"type": "spectate", "room_id": room}, "room")
        mine = await cy.request({"type": "chat", "room_id": room, "text": "play 4"}, "chat")
        assert mine["audience"] == "spectators"
        assert (await dan.expect("chat"))["audience"] == "spectators"
        said = await ana.request({"type": "chat", "room_id": room, "text": "good luck"}, "chat")
        assert said["audience"] == "players"
        for c in (bob, cy, dan):
            line = await c.expect("chat")
            assert (line["text"], line["audience"]) == ("good luck", "players")
        await nothing_of(ana, "chat")
        assert not [m for m in ana.inbox if m["type"] == "chat" and m["text"] == "play 4"]
        assert not [m for m in bob.inbox if m["type"] == "chat" and m["text"] == "play 4"]
        # Nor over HTTP while it is played; both chats, marked, once it has finished.
        record = await get(url, f"/api/rooms/{room}")
        assert [(x["text"], x["audience"]) for x in record["chat"]] == [
            ("good luck", "players")]
        await ana.request({"type": "resign", "room_id": room}, "room")
        record = await get(url, f"/api/rooms/{room}")
        assert [(x["text"], x["audience"]) for x in record["chat"]] == [
            ("play 4", "spectators"), ("good luck", "players")]
        # A casual game's players hear the spectators as before.
        casual = (await ana.request({"type": "create_room", "game": "tictactoe", "seats": [
            {"kind": "human"}, {"kind": "human"}], "join_seat": 0}, "room_created"))["room_id"]
        await cy.request({"type": "spectate", "room_id": casual}, "room")
        await cy.request({"type": "chat", "room_id": casual, "text": "hello"}, "chat")
        line = await ana.expect("chat")
        assert (line["text"], line["audience"]) == ("hello", "spectators")
        for c in (ana, bob, cy, dan):
            await c.close()


# --- tournaments ------------------------------------------------------------------------------

TOURNAMENT = {"type": "create_tournament", "game": "tictactoe", "clock": SHORT,
              "format": "round_robin"}


async def test_tournament_caps_bots_listing_and_no_adjournment(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", abandon_after=0.5) as (_, url):
        # One address, three players: two tournaments each at most, four for the address.
        a1, _ = await member_at(url, "Ana", "127.0.0.2")
        a2, _ = await member_at(url, "Alba", "127.0.0.2")
        a3, _ = await member_at(url, "Aldo", "127.0.0.2")
        bob, _ = await member_at(url, "Bob", "127.0.0.3")
        made = []
        for c in (a1, a1, a2, a2):
            made.append((await c.request(TOURNAMENT, "tournament_created"))["tournament_id"])
        assert (await a1.error(TOURNAMENT))["code"] == "rate_limited"  # a third of Ana's
        assert (await a3.error(TOURNAMENT))["code"] == "rate_limited"  # a fifth of the address
        assert len((await get(url, "/api/tournaments"))["tournaments"]) == 4
        # House bots at most half of the entrants.
        mixed = (await bob.request(dict(TOURNAMENT, house_bots=["random", "easy"]),
                                   "tournament_created"))["tournament_id"]
        await bob.request({"type": "join_tournament", "tournament_id": mixed},
                          "tournament_joined")
        start = {"type": "start_tournament", "tournament_id": mixed}
        assert (await bob.error(start))["code"] == "bad_request"
        await a3.request({"type": "join_tournament", "tournament_id": mixed},
                         "tournament_joined")
        await bob.request(start, "tournament_started")
        # The playing one first, then the waiting ones, newest first.
        listed = [t["tournament_id"] for t in (await get(url, "/api/tournaments"))["tournaments"]]
        assert listed == [mixed, *reversed(made)]
        # Its games are never adjourned: Bob and Aldo leave, the clocks run on (a casual
        # room with no person present would be adjourned after --abandon-after).
        rooms = {(await c.expect("tournament_game"))["room_id"] for c in (bob, a3)}
        for c in (bob, a3):
            await c.close()
        await asyncio.sleep(2.0)  # four times --abandon-after
        for room_id in rooms:
            room = await get(url, f"/api/rooms/{room_id}")
            assert room["status"] == "playing", room
        for c in (a1, a2):
            await c.close()


# --- bot accounts ----------------------------------------------------------------------------

async def test_a_bot_account_plays_clocked_games_two_at_once_per_address(
        tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        robo = Client(url, source="127.0.0.2")
        await robo.connect("Robo")
        await robo.request({"type": "register", "password": PASSWORD, "bot": True},
                           "registered")
        gus = await guest_at(url, "Gus", "127.0.0.3")
        terms = {"type": "challenge", "to": "Robo", "game": "tictactoe"}
        assert (await gus.error(terms))["code"] == "bad_request"  # no clock
        assert (await robo.error(CASUAL_SEEK))["code"] == "bad_request"
        theirs = (await gus.request(CASUAL_SEEK, "seeking"))["seek_id"]
        assert (await robo.error({"type": "accept_seek", "seek_id": theirs}))["code"] == \
            "bad_request"
        await gus.request({"type": "cancel_seek", "seek_id": theirs}, "seek_canceled")
        clocked = dict(terms, clock=SHORT)
        for _ in range(2):
            sent = await gus.request(clocked, "challenge_sent")
            offer = await robo.expect("challenge")
            assert offer["challenge_id"] == sent["challenge_id"]
            await robo.send({"type": "accept_challenge", "challenge_id": offer["challenge_id"]})
            await gus.expect("paired")
        # A third from the same address, by another guest there: refused.
        gil = await guest_at(url, "Gil", "127.0.0.3")
        assert (await gil.error(clocked))["code"] == "rate_limited"
        # From another address: as usual.
        eve = await guest_at(url, "Eve", "127.0.0.4")
        await eve.request(clocked, "challenge_sent")
        for c in (robo, gus, gil, eve):
            await c.close()


# --- names and headers -----------------------------------------------------------------------

async def test_names_that_read_as_a_house_bot_or_differ_by_marks_are_refused(
        tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        victim, _ = await member_at(url, "victim", "127.0.0.2")
        for i, name in enumerate(("b\u0336ot (max)", "bot [max]", "house bot max", "maxbot",
                                  "vi\u0107tim", "v\u0336ictim")):
            c = Client(url, source=f"127.0.0.{10 + i}")
            await c.open()
            await c.send({"type": "hello", "name": name, "token": None})
            e = await c.expect("error")
            assert e["code"] == "bad_request", (name, e)
            await c.close()
        await victim.close()


async def test_every_http_answer_carries_the_pages_headers(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", max_api_per_address=1.0) as (srv, _):
        port = srv.port
        answers = [
            b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",  # 414
            b"GET / HTTP/1.1\r\nHost: x\r\n" + b"".join(
                b"X-%d: y\r\n" % i for i in range(300)) + b"\r\n",  # 431
            b"GET /ws HTTP/1.1\r\nHost: x\r\n\r\n",  # 426: no Upgrade
            b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n",  # 404
            b"GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",  # 400
        ] + [b"GET /api/rooms HTTP/1.1\r\nHost: x\r\n\r\n"] * 4  # a 429 among them
        codes = set()
        for raw in answers:
            head, _ = await http_exchange(port, raw, source="127.0.0.7")
            lines = head.decode().split("\r\n")
            codes.add(int(lines[0].split()[1]))
            headers = {k.lower(): v for k, _, v in (x.partition(": ") for x in lines[1:])}
            assert headers.get("x-content-type-options") == "nosniff", head
            csp = headers.get("content-security-policy", "")
            assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp, head
        assert {414, 431, 426, 404, 400, 429} <= codes


# --- the bot workers --------------------------------------------------------------------------

async def _bot_replies(c: Client, room: str, moves: int) -> list[float]:
    """Plays ``moves`` moves of Connect-4 in ``room`` (seat 0, against a house bot): the
    seconds from each move sent to the bot's reply."""
    view = await c.request({"type": "join", "room_id": room}, "room")
    replies = []
    while len(replies) < moves and view["status"] == "playing":
        if view["to_move"] != 0:
            view = await c.expect("update", timeout=120)
            continue
        sent = time.perf_counter()
        mine = await c.request({"type": "move", "room_id": room, "ply": view["ply"],
                                "move": view["legal_moves"][0]}, "update")
        if mine["status"] != "playing":
            break
        view = await c.expect("update", timeout=120)
        replies.append(time.perf_counter() - sent)
    return replies


async def _hog(c: Client) -> None:
    """Moves at once in every room of ``c``'s where it is to move (seat 0), for ever: first
    the rooms whose snapshot it already read, then each update."""

    async def answer(m: dict[str, Any]) -> None:
        if m.get("type") in ("room", "update") and m.get("status") == "playing" \
                and m.get("to_move") == 0 and m.get("legal_moves"):
            await c.send({"type": "move", "room_id": m["room_id"], "ply": m["ply"],
                          "move": m["legal_moves"][0]})

    for m in list(c.inbox):
        await answer(m)
    while True:
        await answer(await c.recv(timeout=120))


async def test_another_address_waits_behind_its_own_not_a_hogs(tmp_path: Path) -> None:
    """One address keeps 16 rooms against the hard bot thinking (it answers each bot move
    at once; a hard decision takes up to 2 s of one of the 2 workers); another address's easy
    bot still answers each move within one such decision, where a single first-come line
    would keep it waiting behind a dozen of them (docs/benchmarks.md measures the medians)."""
    async with running(tmp_path / "t.db", workers=2) as (srv, url):
        hog = await guest_at(url, "Hog", "127.0.0.2")
        for _ in range(16):
            await hog.request({"type": "create_room", "game": "boom", "seats": [
                {"kind": "human"}, {"kind": "bot", "level": "hard"}], "join_seat": 0},
                "room_created")
        await srv.bots.warm_up()
        hogging = asyncio.create_task(_hog(hog))
        for _ in range(100):  # the hog's line grows long
            if srv.bots.queued() >= 10:
                break
            await asyncio.sleep(0.1)
        assert srv.bots.queued() >= 10
        me = await guest_at(url, "Me", "127.0.0.3")
        room = (await me.request({"type": "create_room", "game": "connect4", "seats": [
            {"kind": "human"}, {"kind": "bot", "level": "easy"}], "join_seat": 0},
            "room_created"))["room_id"]
        replies = await _bot_replies(me, room, 4)
        assert len(replies) == 4
        assert max(replies) < 2.0, replies  # less than one hard decision
        assert srv.bots.queued() >= 10  # and the hog's line was still there
        hogging.cancel()
        for c in (hog, me):
            await c.close()
