"""Backgammon resignations with a value, over a real socket against a real server (contract
section 8): ``resign`` with ``points`` offers the current game; the other side accepts (the
game ends for that many points times the cube, a match goes on) or declines (play goes on);
everyone in the room sees the offer and the answer; a house bot answers at once by its equity;
``resign`` without ``points`` still gives the whole match. Bad offers and answers are refused
with ``bad_request`` and change nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from server_support import Client, connected, create, running
from tablas.engine.games.backgammon import START, Backgammon, BGState, Match
from tablas.engine.search import backgammon_resign
from test_server_records import get, review

HUMANS = [{"kind": "human"}, {"kind": "human"}]


async def two_players(url: str, options: dict[str, Any]
                      ) -> tuple[Client, Client, str, dict[str, Any]]:
    """Ana in seat 0 and Bob in seat 1 of a backgammon room with ``options``, started."""
    a, b = await connected(url, "Ana", "Bob")
    room, _ = await create(a, "backgammon", HUMANS, 0, options)
    view = await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
    await a.expect("room")
    return a, b, room, view


async def test_a_resignation_declined_then_accepted_between_two_people(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        a, b, room, view = await two_players(url, {"match_to": 3})
        (watcher,) = await connected(url, "Eve")
        await watcher.request({"type": "spectate", "room_id": room}, "room")
        offer = await a.request({"type": "resign", "room_id": room, "points": 2},
                                "resign_offer")
        assert (offer["seat"], offer["points"], offer["room_id"]) == (0, 2, room)
        for other in (b, watcher):  # everyone in the room sees it
            seen = await other.expect("resign_offer")
            assert (seen["seat"], seen["points"]) == (0, 2)
        snap = await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
        assert snap["resign_offer"] == {"seat": 0, "points": 2}
        # While the offer waits nobody moves, a second offer is refused, and the offerer
        # cannot answer their own offer.
        mover = a if view["to_move"] == 0 else b
        legal = (await mover.request({"type": "join", "room_id": room,
                                      "seat": view["to_move"]}, "room"))["legal_moves"]
        err = await mover.error({"type": "move", "room_id": room, "ply": view["ply"],
                                 "move": legal[0]})
        assert err["code"] == "bad_request" and "answers" in err["message"]
        assert (await a.error({"type": "resign", "room_id": room, "points": 1}))["code"] \
            == "bad_request"
        assert (await a.error({"type": "accept_resign", "room_id": room}))["code"] \
            == "bad_request"
        declined = await b.request({"type": "decline_resign", "room_id": room},
                                   "resign_declined")
        assert declined["room_id"] == room
        await a.expect("resign_declined")
        await watcher.expect("resign_declined")
        snap = await a.request({"type": "join", "room_id": room, "seat": 0}, "room")
        assert snap["resign_offer"] is None and snap["ply"] == view["ply"]
        assert snap["state"]["score"] == [0, 0]
        assert (await b.error({"type": "decline_resign", "room_id": room}))["code"] \
            == "bad_request"  # nothing is offered any more
        # Offered again, for a single, and accepted: game 1 ends 0-1, the match goes on.
        await a.request({"type": "resign", "room_id": room, "points": 1}, "resign_offer")
        update = await b.request({"type": "accept_resign", "room_id": room}, "update")
        assert update["move"] == {"action": "resign", "seat": 0, "points": 1}
        assert update["seat"] == 0 and update["ply"] == view["ply"] + 1
        state = update["state"]
        assert state["score"] == [0, 1] and state["game_number"] == 2
        assert state["last_game"] == {"winner": 1, "points": 1, "reason": "resign"}
        assert update["status"] == "playing" and update["result"] is None
        assert update["dice"] is not None  # the next game's opening roll
        assert (await watcher.expect("update"))["move"] == update["move"]
        snap = await a.request({"type": "join", "room_id": room, "seat": 0}, "room")
        assert snap["history"][-1] == update["move"] and snap["resign_offer"] is None
        assert snap["legal_moves"] or snap["to_move"] == 1  # play goes on


async def test_a_money_game_resigned_for_a_gammon_ends_for_two_points(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        a, b, room, _view = await two_players(url, {})
        await b.request({"type": "resign", "room_id": room, "points": 2}, "resign_offer")
        await a.request({"type": "accept_resign", "room_id": room}, "update")
        snap = await a.expect("room")  # the game is over: a fresh snapshot
        assert snap["status"] == "finished"
        assert snap["result"] == {"winner": 0, "points": 2, "reason": "resign"}


async def test_a_resignation_survives_a_restart_and_the_match_is_still_won_whole(
        tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    async with running(db, max_msgs_per_address=None) as (_srv, url):
        a, b, room, _view = await two_players(url, {"match_to": 5})
        await a.request({"type": "resign", "room_id": room, "points": 3}, "resign_offer")
        await b.request({"type": "accept_resign", "room_id": room}, "update")
        token = next(m["token"] for m in b.inbox if m["type"] == "welcome")
        await a.close()
        await b.close()
    async with running(db, max_msgs_per_address=None) as (_srv, url):
        (a,) = await connected(url, "Ana")
        snap = await a.request({"type": "spectate", "room_id": room}, "room")
        assert snap["state"]["score"] == [0, 3] and snap["state"]["game_number"] == 2
        assert snap["history"][-1] == {"action": "resign", "seat": 0, "points": 3}
        # The record replays, reviews and exports with the resignation in it.
        await a.close()
        b = Client(url)
        await b.connect("Bob", token)
        await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
        await b.send({"type": "resign", "room_id": room})
        final = await b.expect("room")
        assert final["result"] == {"winner": 0, "points": 5, "reason": "resign"}
        code, _headers, body = await review(url, room)
        assert code == 200
        entry = json.loads(body)["moves"][0]
        assert (entry["seat"], entry["move_text"]) == (0, "resigns a backgammon")
        # Three points given up at the start cost about three: a blunder.
        assert entry["loss"] > 2 and entry["verdict"] == "blunder"
        code, _headers, mat = await get(url, f"/api/rooms/{room}/export?format=mat")
        games = mat.decode().split(" Game ")
        assert code == 200 and len(games) == 3
        assert "Wins 3 points" in games[1] and "Wins" in games[2]


async def test_bad_offers_are_refused_and_change_nothing(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        a, b, room, view = await two_players(url, {"match_to": 3})
        for bad in (0, 4, "1", True, 1.5):
            err = await a.error({"type": "resign", "room_id": room, "points": bad})
            assert err["code"] == "bad_request", bad
        (eve,) = await connected(url, "Eve")
        assert (await eve.error({"type": "resign", "room_id": room, "points": 1}))["code"] \
            == "not_seated"
        # Other games' resignations have no value: resign without points gives the game.
        t, _ = await create(a, "tictactoe", HUMANS, 0)
        await b.request({"type": "join", "room_id": t, "seat": 1}, "room")
        err = await a.error({"type": "resign", "room_id": t, "points": 1})
        assert err["code"] == "bad_request" and "without points" in err["message"]
        snap = await a.request({"type": "join", "room_id": room, "seat": 0}, "room")
        assert snap["ply"] == view["ply"] and snap["resign_offer"] is None


async def test_the_easy_bot_takes_a_single_and_the_match_goes_on(tmp_path: Path) -> None:
    """A match to 3 against ``easy``: the person resigns game 1 for a single point, the bot
    accepts at once, the score reads 0-1 and game 2 is played; ``resign`` without points
    then gives the whole match."""
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        (a,) = await connected(url, "Ana")
        room, _snap = await create(a, "backgammon",
                                  [{"kind": "human"}, {"kind": "bot", "level": "easy"}], 0,
                                  {"match_to": 3})
        offer = await a.request({"type": "resign", "room_id": room, "points": 1},
                                "resign_offer")
        assert offer["seat"] == 0
        update = await a.expect("update")
        while update["move"].get("action") != "resign":  # a bot move may come first
            update = await a.expect("update")
        assert update["move"] == {"action": "resign", "seat": 0, "points": 1}
        assert update["state"]["score"] == [0, 1] and update["status"] == "playing"
        assert update["state"]["game_number"] == 2
        # Game 2 goes on: someone moves in it.
        nxt = await a.request({"type": "join", "room_id": room, "seat": 0}, "room")
        if nxt["to_move"] == 0:
            moved = await a.request({"type": "move", "room_id": room, "ply": nxt["ply"],
                                     "move": nxt["legal_moves"][0]}, "update")
        else:
            moved = await a.expect("update", timeout=60)
        assert moved["state"]["game_number"] == 2 and moved["state"]["score"] == [0, 1]
        await a.send({"type": "resign", "room_id": room})
        final = await a.expect("room")
        assert final["status"] == "finished"
        assert final["result"] == {"winner": 1, "points": 3, "reason": "resign"}


async def test_a_bot_declines_what_is_worth_less_than_playing_on(tmp_path: Path) -> None:
    """Over the socket: a bot offered a single in a game it is sure to win declines it (its
    equity is near a backgammon), and everyone is told."""
    game = Backgammon()
    # The bot (seat 1) has one checker left on its ace point; the person (seat 0), to play
    # a 6-6, has all fifteen on the bar: a backgammon for the bot, whatever the dice.
    lost = (0,) * 25 + (15,)
    won = (14, 1) + (0,) * 24
    state = BGState((lost, won), 0, "move", (6, 6), cube_enabled=False)
    assert not backgammon_resign.accepts(state, 0, 1)
    assert not backgammon_resign.accepts(state, 0, 2)
    assert backgammon_resign.accepts(state, 0, 3)
    start = game.apply_chance(game.initial({}), (3, 1))
    assert backgammon_resign.accepts(start, 0, 1)  # a single is more than the start is worth
    assert start.boards[0] == START
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (srv, url):
        (a,) = await connected(url, "Ana")
        room, _ = await create(a, "backgammon",
                               [{"kind": "human"}, {"kind": "bot", "level": "easy"}], 0, {})
        live = srv.hub.rooms[room]
        async with live.lock:  # the person to move in the bot's won game, as above
            live.room.state = state
        await a.request({"type": "resign", "room_id": room, "points": 1}, "resign_offer")
        await a.expect("resign_declined")
        snap = await a.request({"type": "spectate", "room_id": room}, "room")
        assert snap["status"] == "playing" and snap["resign_offer"] is None


def test_the_bots_weigh_a_match_offer_by_the_score() -> None:
    """In a match the same offer is weighed in match winning chances: 1 point away from the
    match, a single is the match itself, and a bot takes it however well it stands."""
    game = Backgammon()
    lost = (0,) * 25 + (15,)
    won = (14, 1) + (0,) * 24
    state = BGState((lost, won), 1, "roll", match=Match(5, (0, 4)), cube_enabled=False)
    assert backgammon_resign.accepts(state, 0, 1)  # 4-0 to 5: one point wins the match
    far = BGState((lost, won), 1, "roll", match=Match(5, (0, 0)), cube_enabled=False)
    assert not backgammon_resign.accepts(far, 0, 1)
    assert game.move_text(state, game.resignation(state, 0, 2)) == "resigns a gammon"
