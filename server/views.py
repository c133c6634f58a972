"""The one place wire models are built: a room as its messages show it.

The room snapshot (``room``), the ``update`` each action sends, the lobby's summary of a room
and a seat's name. Each message is built as the plain data its pydantic model
(:mod:`tablas.server.protocol`) holds, fields in the model's order, for
:func:`~tablas.server.protocol.json_text`: the server sends them to every follower of a room, and
validating the room's own data would cost as much again as writing it. A test holds the data
to the models; :func:`snapshot` and :func:`update` validate it, for tests and tools.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tablas.engine.core import JSON, Outcome
from tablas.server.protocol import RoomSnapshot, RoomSummary, Update
from tablas.server.room import Action, Room, RoomRecord, SeatState
from tablas.server.rules.seats import rating_id


def bot_name(level: str | None) -> str:
    """A house bot's seat name, ``bot (LEVEL)``: what every view shows for a bot's seat (and
    what :func:`tablas.server.names.reads_as_house_bot` keeps people's names from imitating)."""
    return f"bot ({level})"


def seat_name(seat: SeatState) -> str | None:
    """The name a seat shows: its person's (None: an open seat), or the bot's, with the name
    of the person it plays for when one handed it the seat ("Let a bot finish")."""
    if seat.kind == "human":
        return seat.name
    if seat.stands_for:
        return f"{bot_name(seat.level)} for {seat.stands_for}"
    return bot_name(seat.level)


def result_data(result: Outcome | None) -> dict[str, Any] | None:
    """A result as the messages carry it (the contract's ``Result``), None while playing."""
    r = result
    return None if r is None else {"winner": r.winner, "points": r.points, "reason": r.reason}


def seat_rating(room: Room, seat: int) -> int | None:
    """The seat's rating in its game, rounded, in a rated room (None elsewhere)."""
    pid = rating_id(room.game_id, room.seats[seat]) if room.rated else None
    rating = None if pid is None else room.ratings.get(pid)
    return None if rating is None else round(rating)


def roll_data(room: Room) -> list[dict[str, Any]]:
    """Every roll so far as the snapshot carries it (``Roll``): ``ply`` is the number of
    actions applied before it (0: the opening roll)."""
    return [{"ply": 0, "dice": list(r)} for r in room.opening_rolls] + [
        {"ply": a.index + 1, "dice": list(r)} for a in room.history for r in a.rolls]


def commitment(room: Room) -> str | None:
    """The dice's commitment, shown from the start (docs/dice.md)."""
    return room.dice.commitment() if room.dice is not None else None


def revealed_seed(room: Room) -> str | None:
    """The server's dice seed, shown once the game is over (docs/dice.md); None before."""
    return room.seed.hex() if room.seed is not None and room.status == "finished" else None


def snapshot_data(
    room: Room,
    viewer: str | None,
    connected: Callable[[str], bool] = lambda _p: False,
    spectators: int = 0,
    claim_after: float | None = None,
) -> dict[str, Any]:
    """The ``room`` message as ``viewer`` sees it (``connected`` says which players are;
    ``claim_after``: the server's, in a rated room, for the page's countdown), as
    the plain data ``RoomSnapshot`` holds: send it with :func:`~tablas.server.protocol.json_text`
    (every follower gets one at the start and end of every game)."""
    seats = [
        {
            "seat": i,
            "kind": s.kind,
            "name": seat_name(s),
            "level": s.level,
            "connected": True if s.kind == "bot" else (s.player_id is not None
                                                       and connected(s.player_id)),
            "player_id": s.player_id,
            "rating": seat_rating(room, i),
            "bot": s.bot,
        }
        for i, s in enumerate(room.seats)
    ]
    return {
        "type": "room",
        "room_id": room.room_id,
        "game": room.game_id,
        "options": room.options,
        "seats": seats,
        "status": room.status,
        "ply": room.ply,
        "to_move": room.to_move,
        "state": room.state_json(),
        "legal_moves": room.legal_for(viewer),
        "history": [a.move for a in room.history],
        "result": result_data(room.result),
        "spectators": spectators,
        "your_seats": room.seats_of(viewer),
        "rolls": roll_data(room),
        "dice_commitment": commitment(room),
        "dice_seed": revealed_seed(room),
        "seeds": None if room.seeds is None else list(room.seeds),
        "room_options": room.room_options.model_dump(mode="json"),
        "clocks": room.clocks.live(),
        "clock_running": room.clocks.running,
        "rated": room.rated,
        "abortable": room.abortable,
        "away_since_ms": room.presence.away_since_ms(),
        "resign_offer": offer_data(room),
        "draw_offer": room.offers.draw,
        "takeback_offer": room.offers.takeback,
        "rating_change": room.rating_change,
        "claim_after_ms": None if claim_after is None or not room.rated
        else round(claim_after * 1000),
    }


def offer_data(room: Room) -> dict[str, int] | None:
    """The resignation waiting for its answer, as the snapshot carries it."""
    offer = room.endings.offer
    return None if offer is None else {"seat": offer.seat, "points": offer.points}


def snapshot(
    room: Room,
    viewer: str | None,
    connected: Callable[[str], bool] = lambda _p: False,
    spectators: int = 0,
) -> RoomSnapshot:
    """:func:`snapshot_data` as its model (for tests and tools: the server sends the data)."""
    return RoomSnapshot.model_validate(snapshot_data(room, viewer, connected, spectators))


def update_data(room: Room, action: Action, legal_moves: list[JSON]) -> dict[str, Any]:
    """The ``update`` for ``action`` (which must be the room's latest) with ``legal_moves``
    (:meth:`~tablas.server.room.Room.legal_for` the follower), as the plain data ``Update`` holds:
    every move sends it to every follower, written once per list of legal moves."""
    return {
        "type": "update",
        "room_id": room.room_id,
        "ply": action.index + 1,
        "seat": action.seat,
        "move": action.move,
        "state": room.state_json(),
        "to_move": room.to_move,
        "legal_moves": legal_moves,
        "status": room.status,
        "result": result_data(room.result),
        "takeback": 0,
        "dice": list(action.rolls[-1]) if action.rolls else None,
        "clocks": room.clocks.live(),
        "clock_running": room.clocks.running,
        "abortable": room.abortable,
        "away_since_ms": room.presence.away_since_ms(),
    }


def takeback_data(room: Room, seat: int, taken: int) -> dict[str, Any]:
    """The ``update`` of a takeback: the room as it is now, ``taken`` actions back, the turn
    to ``seat`` again (``legal_moves`` to fill in per follower, as :func:`update_data`)."""
    return {
        "type": "update",
        "room_id": room.room_id,
        "ply": room.ply,
        "seat": seat,
        "move": None,
        "state": room.state_json(),
        "to_move": room.to_move,
        "legal_moves": [],
        "status": room.status,
        "result": result_data(room.result),
        "takeback": taken,
        "dice": None,
        "clocks": room.clocks.live(),
        "clock_running": room.clocks.running,
        "abortable": room.abortable,
        "away_since_ms": room.presence.away_since_ms(),
    }


def update(room: Room, action: Action, viewer: str | None) -> Update:
    """:func:`update_data` as ``viewer`` sees it, as its model (for tests and tools)."""
    return Update.model_validate(update_data(room, action, room.legal_for(viewer)))


def summary(room: Room | RoomRecord, spectators: int = 0) -> dict[str, Any]:
    """A room as the lobby lists it (``ROOM_SUMMARY``, JSON-ready): a room in memory, or one
    read from the database (a cluster's lobby), whose seats then show no rating."""
    live = room if isinstance(room, Room) else None
    return RoomSummary.model_validate({
        "room_id": room.room_id,
        "game": room.game_id,
        "status": room.status,
        "seats": [
            {"seat": i, "kind": s.kind, "name": seat_name(s), "level": s.level,
             "player_id": s.player_id, "rating": None if live is None else seat_rating(live, i),
             "bot": s.bot}
            for i, s in enumerate(room.seats)
        ],
        "spectators": spectators,
        "room_options": room.room_options,
        "rated": room.room_options.rated,
    }).model_dump(mode="json")
