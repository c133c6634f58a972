"""Draw offers and takebacks over a real socket against a real server, on SQLite and on
PostgreSQL (contract section 7, "Draws and takebacks"): an offer reaches everyone in the
room; the other side accepts (a draw: the game finishes drawn, ``agreement``; a takeback:
an ``update`` with the position restored) or declines; a house bot answers at once; refused
with ``bad_request`` in rated games (takebacks), in backgammon and with nothing to take back,
changing nothing; a takeback survives a restart, and the clocks keep the time spent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pg_support import Backend, backend, pg_cluster  # noqa: F401
from server_support import Client, connected, create, running
from tablas.engine.games import get_game
from tablas.server.room import Room
from tablas.server.room_offers import bot_takes_draw
from tablas.server.rules.seats import SeatState
from test_server_ratings import HUMAN, member, rated_room

CASUAL_CLOCK = {"base_ms": 300_000, "increment_ms": 0}


async def pair(url: str, game: str, options: dict[str, Any] | None = None,
               names: tuple[str, str, str] = ("Ana", "Bob", "Eve"), **room: Any
               ) -> tuple[Client, Client, Client, str, dict[str, Any]]:
    """Ana (seat 0) and Bob (seat 1) in a started room of ``game``, Eve watching it."""
    a, b, eve = await connected(url, *names)
    created = await a.request({"type": "create_room", "game": game, "options": options or {},
                               "seats": [HUMAN, HUMAN], "join_seat": 0, **room},
                              "room_created")
    await a.expect("room")
    room_id = created["room_id"]
    view = await b.request({"type": "join", "room_id": room_id, "seat": 1}, "room")
    await a.expect("room")
    await eve.request({"type": "spectate", "room_id": room_id}, "room")
    return a, b, eve, room_id, view


async def move(c: Client, room: str, ply: int, mv: dict[str, Any], *others: Client
               ) -> dict[str, Any]:
    """``c`` plays ``mv`` at ``ply``; every other follower sees its update."""
    update = await c.request({"type": "move", "room_id": room, "ply": ply, "move": mv},
                             "update")
    for o in others:
        assert (await o.expect("update"))["ply"] == ply + 1
    return update


async def snap(c: Client, room: str) -> dict[str, Any]:
    return await c.request({"type": "spectate", "room_id": room}, "room")


async def test_a_draw_offered_declined_then_offered_again_and_accepted(
        tmp_path: Path, backend: Backend) -> None:  # noqa: F811
    async with running(backend.where, max_msgs_per_address=None) as (_srv, url):
        a, b, eve, room, _ = await pair(url, "connect4")
        await move(a, room, 0, {"column": 3}, b, eve)
        offer = await a.request({"type": "offer_draw", "room_id": room}, "draw_offer")
        assert offer == {"type": "draw_offer", "re": offer["re"], "room_id": room, "seat": 0}
        for other in (b, eve):  # everyone in the room sees it
            assert (await other.expect("draw_offer"))["seat"] == 0
        assert (await snap(eve, room))["draw_offer"] == 0
        # A second offer, and an answer by the offerer, are refused; nothing changes.
        for msg in ({"type": "offer_draw", "room_id": room},
                    {"type": "accept_draw", "room_id": room}):
            assert (await a.error(msg))["code"] == "bad_request"
        assert (await eve.error({"type": "accept_draw", "room_id": room}))["code"] \
            == "not_seated"
        declined = await b.request({"type": "decline_draw", "room_id": room}, "draw_declined")
        assert (declined["room_id"], declined["seat"]) == (room, 0)
        for other in (a, eve):
            assert (await other.expect("draw_declined"))["seat"] == 0
        view = await snap(eve, room)
        assert view["draw_offer"] is None and view["status"] == "playing" and view["ply"] == 1
        # Declined, it may not be offered again before the game moves on.
        err = await a.error({"type": "offer_draw", "room_id": room})
        assert err["code"] == "bad_request" and "declined" in err["message"]
        assert (await b.error({"type": "decline_draw", "room_id": room}))["code"] \
            == "bad_request"  # nothing is offered any more
        await move(b, room, 1, {"column": 3}, a, eve)
        # Offered again, with the offerer's own move after it (the offer stands), accepted.
        await a.request({"type": "offer_draw", "room_id": room}, "draw_offer")
        await b.expect("draw_offer")
        await move(a, room, 2, {"column": 2}, b, eve)
        assert (await snap(b, room))["draw_offer"] == 0
        await b.request({"type": "accept_draw", "room_id": room}, "room")
        for c in (a, eve):
            final = await c.expect("room")
            assert final["status"] == "finished"
            assert final["result"] == {"winner": None, "points": 0, "reason": "agreement"}
            assert final["draw_offer"] is None and final["rating_change"] is None
    # The result is on disk.
    async with running(backend.where) as (_srv, url):
        (c,) = await connected(url, "Zoe")
        stored = await snap(c, room)
        assert stored["result"]["reason"] == "agreement" and stored["ply"] == 3


async def test_two_draw_offers_meet_in_a_draw(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        a, b, _eve, room, _ = await pair(url, "tictactoe")
        await a.request({"type": "offer_draw", "room_id": room}, "draw_offer")
        await b.expect("draw_offer")
        final = await b.request({"type": "offer_draw", "room_id": room}, "room")
        assert final["result"] == {"winner": None, "points": 0, "reason": "agreement"}


async def test_a_takeback_between_two_people_survives_a_restart(
        tmp_path: Path, backend: Backend) -> None:  # noqa: F811
    async with running(backend.where, max_msgs_per_address=None) as (_srv, url):
        a, b, eve, room, _ = await pair(url, "tictactoe", clock=CASUAL_CLOCK)
        assert (await a.error({"type": "takeback", "room_id": room}))["code"] \
            == "bad_request"  # nothing to take back yet
        await move(a, room, 0, {"cell": 4}, b, eve)
        await move(b, room, 1, {"cell": 0}, a, eve)
        last = await move(a, room, 2, {"cell": 8}, b, eve)
        # Bob takes back his move (cell 0) and Ana's reply to it (cell 8).
        asked = await b.request({"type": "takeback", "room_id": room}, "takeback_offer")
        assert (asked["room_id"], asked["seat"]) == (room, 1)
        for other in (a, eve):
            assert (await other.expect("takeback_offer"))["seat"] == 1
        assert (await snap(eve, room))["takeback_offer"] == 1
        # Bob cannot accept his own; while it waits, a second one is refused.
        assert (await b.error({"type": "accept_takeback", "room_id": room}))["code"] \
            == "bad_request"
        assert (await a.error({"type": "takeback", "room_id": room}))["code"] == "bad_request"
        update = await a.request({"type": "accept_takeback", "room_id": room}, "update")
        assert update["takeback"] == 2 and update["move"] is None
        assert (update["ply"], update["seat"], update["to_move"]) == (1, 1, 1)
        assert update["state"]["notation"] == "....X...."
        assert update["legal_moves"] == []  # Ana's copy: it is Bob's turn again
        # The time spent stays spent: Ana's clock is what it was after her taken-back move.
        assert update["clocks"][0] == last["clocks"][0]
        assert update["clocks"][1] <= last["clocks"][1]
        for other in (b, eve):
            seen = await other.expect("update")
            assert (seen["takeback"], seen["ply"], seen["move"]) == (2, 1, None)
            assert bool(seen["legal_moves"]) == (other is b)
        view = await snap(eve, room)
        assert view["history"] == [{"cell": 4}] and view["ply"] == 1
        assert view["takeback_offer"] is None
        # A move resent for the ply it was made at is stale; the new ply is played.
        err = await b.error({"type": "move", "room_id": room, "ply": 3, "move": {"cell": 2}})
        assert err["code"] == "stale"
        await move(b, room, 1, {"cell": 2}, a, eve)
        kept = (await snap(eve, room))["clocks"]
    async with running(backend.where) as (_srv, url):
        (c,) = await connected(url, "Zoe")
        view = await snap(c, room)
        assert view["history"] == [{"cell": 4}, {"cell": 2}] and view["ply"] == 2
        assert view["state"]["notation"] == "..O.X...."
        assert view["clocks"][1] == kept[1]  # Bob's clock, not running, as it was


async def test_a_takeback_declined_and_withdrawn_by_a_move(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        a, b, eve, room, _ = await pair(url, "boom")
        await move(a, room, 0, {"column": 0}, b, eve)
        await a.request({"type": "takeback", "room_id": room}, "takeback_offer")
        await b.expect("takeback_offer")
        declined = await b.request({"type": "decline_takeback", "room_id": room},
                                   "takeback_declined")
        assert declined["seat"] == 0
        assert (await eve.expect("takeback_offer", "takeback_declined"))["type"] \
            == "takeback_offer"
        assert (await eve.expect("takeback_declined"))["seat"] == 0
        err = await a.error({"type": "takeback", "room_id": room})
        assert err["code"] == "bad_request" and "declined" in err["message"]
        # Bob's move withdraws a takeback he was asked for.
        await move(b, room, 1, {"column": 1}, a, eve)
        await move(a, room, 2, {"column": 0}, b, eve)
        await a.request({"type": "takeback", "room_id": room}, "takeback_offer")
        await move(b, room, 3, {"column": 2}, a, eve)
        assert (await snap(eve, room))["takeback_offer"] is None
        assert (await b.error({"type": "accept_takeback", "room_id": room}))["code"] \
            == "bad_request"


async def test_refused_in_rated_games_in_backgammon_and_before_the_game(
        tmp_path: Path, backend: Backend) -> None:  # noqa: F811
    async with running(backend.where, max_msgs_per_address=None) as (_srv, url):
        ana, _ = await member(url, "Ana")
        bob, _ = await member(url, "Bob", "127.0.0.2")
        room, _ = await rated_room(ana, "tictactoe", [HUMAN, HUMAN])
        await bob.request({"type": "join", "room_id": room, "seat": 1}, "room")
        await move(ana, room, 0, {"cell": 4}, bob)
        err = await ana.error({"type": "takeback", "room_id": room})
        assert err["code"] == "bad_request" and "rated" in err["message"]
        view = await snap(ana, room)
        assert view["takeback_offer"] is None and view["ply"] == 1
        # A draw may be offered in a rated game.
        await ana.request({"type": "offer_draw", "room_id": room}, "draw_offer")

        a, _b, _eve, bg, view = await pair(url, "backgammon", names=("Cy", "Di", "Eve"))
        for kind in ("offer_draw", "takeback"):
            err = await a.error({"type": kind, "room_id": bg})
            assert err["code"] == "bad_request" and "backgammon" in err["message"]
        assert (await snap(a, bg))["ply"] == view["ply"]

        waiting, _ = await create(a, "connect4", [HUMAN, HUMAN])
        for kind in ("offer_draw", "takeback", "accept_draw", "decline_takeback"):
            assert (await a.error({"type": kind, "room_id": waiting}))["code"] \
                == "bad_request"
        assert (await a.error({"type": "offer_draw", "room_id": "nope"}))["code"] \
            == "unknown_room"
        assert (await a.error({"type": "offer_draw"}))["code"] == "bad_request"


async def test_a_house_bot_takes_a_takeback_at_once(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        (a,) = await connected(url, "Ana")
        room, view = await create(a, "connect4", [HUMAN, {"kind": "bot", "level": "easy"}])
        await a.request({"type": "move", "room_id": room, "ply": 0, "move": {"column": 3}},
                        "update")
        bot = await a.expect("update")
        assert bot["ply"] == 2 and bot["seat"] == 1
        await a.request({"type": "takeback", "room_id": room}, "takeback_offer")
        update = await a.expect("update")
        assert (update["takeback"], update["ply"], update["to_move"]) == (2, 0, 0)
        assert update["legal_moves"]  # Ana's turn again
        view = await snap(a, room)
        assert view["history"] == [] and view["status"] == "playing"
        # The bot plays on from the restored position.
        await a.request({"type": "move", "room_id": room, "ply": 0, "move": {"column": 0}},
                        "update")
        assert (await a.expect("update"))["ply"] == 2


@pytest.mark.parametrize(("heap", "takes"), [(7, False), (8, True)])
async def test_a_house_bot_answers_a_draw_offer_at_once_by_its_evaluation(
        tmp_path: Path, heap: int, takes: bool) -> None:
    """Grundy's game from one heap: 7 is lost for the side to move (its Grundy value is 0),
    8 won; the person to move offers a draw, which the bot takes only when it is losing."""
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        (a,) = await connected(url, "Ana")
        room, _ = await create(a, "grundy", [HUMAN, {"kind": "bot", "level": "easy"}],
                               options={"heap": heap})
        await a.request({"type": "offer_draw", "room_id": room}, "draw_offer")
        answer = await a.expect("room" if takes else "draw_declined")
        if takes:
            assert answer["result"] == {"winner": None, "points": 0, "reason": "agreement"}
        else:
            assert answer["seat"] == 0
            assert (await snap(a, room))["status"] == "playing"


def test_the_bots_draw_decision_follows_the_position() -> None:
    """Tic-tac-toe: the bot (O) facing two threats it cannot both block takes a draw; with
    two threats of its own it does not; an even position (a draw under best play) it takes."""
    seats = [SeatState("human", None, "p", "Ana"), SeatState("bot", "easy")]

    def room_after(cells: list[int]) -> Room:
        room = Room("r", "tictactoe", {}, seats)
        room.start()
        game = get_game("tictactoe")
        for c in cells:
            room.state = game.apply(room.state, game.move_from_json(room.state, {"cell": c}))
        return room

    assert bot_takes_draw(room_after([4]), 1)  # a draw under best play
    assert bot_takes_draw(room_after([0, 1, 2, 5, 4]), 1)  # X threatens 6 and 8; O to move
    assert not bot_takes_draw(room_after([4, 0, 5, 1, 7, 3]), 1)  # O threatens 2 and 6
