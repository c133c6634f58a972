"""Bot accounts over a real socket (contract section 12): ``register`` with ``"bot": true``
makes one; its seats (``kind: "human"`` with ``"bot": true``), leaderboard rows, player page,
seeks and challenges say so, after a restart too; it plays rated games by section 10's rules;
and it holds at most 8 games and seeks at once: past that, accepting a challenge, seeking and
taking a seek are refused (``rate_limited``), the challenge staying open until a place frees."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from server_support import Client, running
from test_server_meet import paired, seek
from test_server_ratings import CLOCK, PASSWORD, get, member

MAX_GAMES = 8  # contract section 12, written here apart from the server's constant


async def bot_account(url: str, name: str) -> tuple[Client, str]:
    c = Client(url)
    pid = (await c.connect(name))["player_id"]
    await c.request({"type": "register", "password": PASSWORD, "bot": True}, "registered")
    return c, pid


async def log_in(url: str, name: str, source: str | None = None
                 ) -> tuple[Client, dict[str, Any]]:
    c = Client(url, source)
    await c.open()
    await c.send({"type": "hello", "name": name, "password": PASSWORD})
    return c, await c.expect("welcome")


async def challenge(by: Client, to: Client, to_name: str, **terms: Any) -> dict[str, Any]:
    """``by`` challenges ``to_name`` (connected as ``to``): the offer ``to`` gets."""
    sent = await by.request({"type": "challenge", "to": to_name, "game": "tictactoe", **terms},
                            "challenge_sent")
    offer = await to.expect("challenge")
    assert offer["challenge_id"] == sent["challenge_id"]
    return offer


async def play_out(room: str, seats: dict[int, Client], view: dict[str, Any]
                   ) -> dict[str, Any]:
    """Each seat's client plays its first legal move in turn until the game ends."""
    while view["status"] != "finished":
        mover = seats[view["to_move"]]
        moves = view["legal_moves"] if view.get("legal_moves") else None
        if moves is None:  # the view was another seat's: the mover's own lists them
            view = await mover.request({"type": "join", "room_id": room}, "room")
            continue
        view = await mover.request({"type": "move", "room_id": room, "ply": view["ply"],
                                    "move": moves[0]}, "update")
        other = seats[1 - view["seat"]]
        if other is not mover:
            await other.expect("update")
    return view


async def test_a_bot_account_is_marked_everywhere_and_plays_rated(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    async with running(db) as (_, url):
        robo, robo_id = await bot_account(url, "Robo")
        # Ana's own address: accounts of one address do not rate each other (section 16).
        ana, ana_id = await member(url, "Ana", "127.0.0.2")
        again, welcome = await log_in(url, "Robo")
        assert welcome["registered"] is True and welcome["bot"] is True
        _, ana_welcome = await log_in(url, "Ana", "127.0.0.2")
        assert ana_welcome["bot"] is False
        # A person's challenge to the bot: the offer says who it is from; the bot's seat,
        # a person's, says it is a bot account.
        offer = await challenge(ana, robo, "Robo", rated=True, clock=CLOCK)
        assert offer["from"] == {"player_id": ana_id, "name": "Ana", "rating": 1500,
                                 "bot": False, "registered": True}
        await robo.send({"type": "accept_challenge", "challenge_id": offer["challenge_id"]})
        (p_robo, snap), (p_ana, _) = await asyncio.gather(paired(robo), paired(ana))
        room = p_robo["room_id"]
        assert snap["rated"] is True and snap["status"] == "playing"
        mine, theirs = snap["seats"][p_robo["seat"]], snap["seats"][p_ana["seat"]]
        assert (mine["kind"], mine["bot"], mine["player_id"], mine["level"]) == \
            ("human", True, robo_id, None)
        assert (theirs["kind"], theirs["bot"]) == ("human", False)
        lobby = [r for r in (await get(url, "/api/rooms"))["rooms"] if r["room_id"] == room]
        assert [s["bot"] for s in lobby[0]["seats"]] == [s["bot"] for s in snap["seats"]]
        # The bot's seeks and challenges say it is a bot.
        await seek(robo, game="connect4", clock=CLOCK)
        shown = (await get(url, "/api/seeks"))["seeks"]
        assert [s["player"]["bot"] for s in shown] == [True]
        offer = await challenge(robo, ana, "Ana", game="boom", clock=CLOCK)
        assert offer["from"]["bot"] is True and offer["from"]["registered"] is True
        await ana.send({"type": "decline_challenge", "challenge_id": offer["challenge_id"]})
        await robo.expect("challenge_declined")
        # Played to the end, rated by section 10's rules like any game of registered players.
        seats = {p_robo["seat"]: robo, p_ana["seat"]: ana}
        end = await play_out(room, seats, snap)
        assert end["result"]["reason"] != "aborted"
        board = (await get(url, "/api/leaderboard?game=tictactoe"))["players"]
        flags = {row["player_id"]: row["bot"] for row in board}
        assert flags[robo_id] is True and flags[ana_id] is False
        assert flags["bot:tictactoe:easy"] is True  # the house levels stay bots
        page = await get(url, f"/api/players/{robo_id}")
        assert page["bot"] is True and page["ratings"]["tictactoe"]["games"] == 1
        game_seats = {s["player_id"]: s["bot"] for s in page["games"][0]["seats"]}
        assert game_seats == {robo_id: True, ana_id: False}
        assert (await get(url, f"/api/players/{ana_id}"))["bot"] is False
        # Another game stays open across the restart.
        offer = await challenge(ana, robo, "Robo", game="connect4", clock=CLOCK)
        await robo.send({"type": "accept_challenge", "challenge_id": offer["challenge_id"]})
        p2, _ = await paired(robo)
        token = next(m for m in robo.inbox if m["type"] == "welcome")["token"]
        for c in (robo, ana, again):
            await c.close()
    async with running(db) as (_, url):
        back = Client(url)
        welcome = await back.connect("Robo", token=token)
        assert welcome["bot"] is True
        assert {s["room_id"] for s in welcome["seats"]} == {p2["room_id"]}
        snap = await back.request({"type": "join", "room_id": p2["room_id"]}, "room")
        assert snap["seats"][p2["seat"]]["bot"] is True
        assert snap["seats"][1 - p2["seat"]]["bot"] is False
        await back.close()


async def test_bad_registrations_change_nothing(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        c = Client(url)
        await c.connect("Robo")
        e = await c.error({"type": "register", "password": PASSWORD, "bot": "yes"})
        assert e["code"] == "bad_request"
        await c.request({"type": "register", "password": PASSWORD}, "registered")
        # A person's account stays one: no second registration makes it a bot.
        e = await c.error({"type": "register", "password": PASSWORD, "bot": True})
        assert e["code"] == "bad_request"
        _, welcome = await log_in(url, "Robo")
        assert welcome["bot"] is False
        await c.close()


async def test_a_bot_account_holds_at_most_eight_games_and_seeks(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        robo, _ = await bot_account(url, "Robo")
        # A bot account plays at most 2 games at once against one address (contract section
        # 15): the guests come from four addresses.
        guests = []
        for i in range(4):
            g = Client(url, source=f"127.0.0.{i + 2}")
            await g.connect(f"Gus{i}")
            guests.append(g)
        rooms: list[tuple[Client, str]] = []
        for i in range(MAX_GAMES - 1):
            gus = guests[i // 2]
            offer = await challenge(gus, robo, "Robo", clock=CLOCK)
            await robo.send({"type": "accept_challenge", "challenge_id": offer["challenge_id"]})
            rooms.append((gus, (await paired(robo))[0]["room_id"]))
            await paired(gus)
        # The eighth place goes to a seek; then every place is taken.
        await seek(robo, game="connect4", clock=CLOCK)
        assert (await robo.error(dict(_SEEK, game="boom", clock=CLOCK)))["code"] == \
            "rate_limited"
        gus = guests[3]
        offer = await challenge(gus, robo, "Robo", clock=CLOCK)
        e = await robo.error({"type": "accept_challenge", "challenge_id": offer["challenge_id"]})
        assert e["code"] == "rate_limited" and "8" in e["message"]
        other = Client(url)
        await other.connect("Olga")
        theirs = await seek(other, game="grundy", options={"heap": 7}, clock=CLOCK)
        e = await robo.error({"type": "accept_seek", "seek_id": theirs})
        assert e["code"] == "rate_limited"
        # Refused, nothing changed: the challenge is still open, the seek still there.
        await asyncio.sleep(0.2)
        assert not [m for m in gus.inbox if m["type"] == "challenge_canceled"]
        assert theirs in {s["seek_id"] for s in (await get(url, "/api/seeks"))["seeks"]}
        # A game ends: its place is free, and the waiting challenge can be accepted.
        first, room = rooms[0]
        await first.request({"type": "resign", "room_id": room}, "room")
        await robo.send({"type": "accept_challenge", "challenge_id": offer["challenge_id"]})
        p, snap = await paired(robo)
        assert p["challenge_id"] == offer["challenge_id"] and snap["status"] == "playing"
        for c in (robo, other, *guests):
            await c.close()


_SEEK = {"type": "seek", "game": "tictactoe", "options": {}, "clock": None, "rated": False,
         "rating_range": None}
