"""A game ended by a player rather than by a move on the board: a resignation, an abort, a
claimed win. No I/O.

Backgammon resignations have a value (contract section 8): ``resign`` with ``points`` (1, 2
or 3 times the cube) offers to give up the current game; the offer (a :class:`ResignOffer`,
held in memory only: a restart forgets it) waits for the other seat's ``accept_resign``
(the room applies it as the game's action, :meth:`~tablas.server.room.Room.prepare_resignation`)
or ``decline_resign``. While it waits no move is made: the other side answers first. Any
action, the end of the game, an adjournment or a seat handed to a bot withdraws it.

Fair rated play (contract section 10): until each seat has made its first play a seated
person may ``abort`` the game (no winner, ``aborted``), and a rated game that ends in any
other way before then ends ``aborted`` too (the room's ``conclude``); the present player may
claim a game whose opponent has been away for the server's ``claim_after``.

:class:`Endings` prepares each as an :class:`~tablas.engine.core.Outcome`, changing nothing, or
refuses it with the contract's error code; persist the outcome with the clocks, then
:meth:`~tablas.server.room.Room.finish` the game. It reads its room through :class:`Endable`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from tablas.engine.core import Game, Outcome
from tablas.engine.errors import IllegalMoveError
from tablas.server.errors import ErrorCode, RoomError
from tablas.server.rules.presence import Presence

# A game ended before each seat made its first play (contract section 10): unrated.
ABORTED = Outcome(winner=None, points=0, reason="aborted")


class Endable(Protocol):
    """What the endings read of their room."""

    @property
    def to_move(self) -> int | None: ...
    @property
    def opening(self) -> bool: ...
    @property
    def presence(self) -> Presence: ...
    def seats_of(self, player_id: str | None) -> list[int]: ...
    def check_in_play(self, seats: list[int], code: ErrorCode, not_started: str) -> None: ...
    def stake(self) -> int: ...
    def conclude(self, outcome: Outcome) -> Outcome: ...
    @property
    def game(self) -> Game[Any, Any]: ...
    @property
    def state(self) -> Any: ...


@dataclass(frozen=True, slots=True)
class ResignOffer:
    """``seat`` offers to give up the current game for ``points`` times the cube."""

    seat: int
    points: int


class Endings:
    """The verbs that end a room's game without a move."""

    def __init__(self, room: Endable) -> None:
        self.room = room
        self.offer: ResignOffer | None = None  # a resignation waiting for its answer

    def prepare_offer(self, player_id: str, points: int) -> ResignOffer:
        """The ``resign`` message with ``points``: the seated player's offer to give up the
        current game (holding both seats, the seat to move offers); the room's game must
        give resignations a value (``bad_request`` says why not). Set :attr:`offer` to it,
        then tell the room."""
        room = self.room
        seats = room.seats_of(player_id)
        room.check_in_play(seats, "bad_request", "the game has not started")
        if self.offer is not None:
            raise RoomError("bad_request", "a resignation is already offered: wait for the"
                            " answer")
        seat = room.to_move if room.to_move in seats else seats[0]
        assert seat is not None
        try:  # the game says whether this moment allows an offer of these points
            room.game.resignation(room.state, seat, points)
        except IllegalMoveError as e:
            raise RoomError("bad_request", str(e)) from None
        return ResignOffer(seat, points)

    def prepare_answer(self, player_id: str | None) -> ResignOffer:
        """The offer that ``player_id`` may accept or decline: one waits, made by the other
        seat (holding both seats, one answers one's own)."""
        room = self.room
        seats = room.seats_of(player_id)
        room.check_in_play(seats, "bad_request", "the game has not started")
        offer = self.offer
        if offer is None:
            raise RoomError("bad_request", "no resignation is offered")
        if 1 - offer.seat not in seats:
            raise RoomError("bad_request", "the resignation is yours: the other side answers"
                            " it")
        return offer

    def check_no_offer(self) -> None:
        """Refuses a move while a resignation waits for its answer."""
        offer = self.offer
        if offer is not None:
            raise RoomError("bad_request", f"seat {offer.seat} offers to resign: seat"
                            f" {1 - offer.seat} answers (accept_resign or decline_resign)"
                            " before play goes on")

    def prepare_resign(self, player_id: str) -> Outcome:
        """The ``resign`` message without ``points``: the other seat wins the room's whole
        game or match at once (holding both seats, playing oneself, the seat to move
        resigns)."""
        room = self.room
        seats = room.seats_of(player_id)
        room.check_in_play(seats, "bad_request", "the game has not started")
        seat = room.to_move if room.to_move in seats else seats[0]
        assert seat is not None
        return room.conclude(Outcome(winner=1 - seat, points=room.stake(), reason="resign"))

    def prepare_abort(self, player_id: str | None) -> Outcome:
        """The ``abort`` message: a seated person ends the game without a winner while a seat
        has yet to make its first play; afterwards it is ``bad_request``."""
        room = self.room
        room.check_in_play(room.seats_of(player_id), "bad_request",
                           "the game has not started: leave the room instead")
        if not room.opening:
            raise RoomError("bad_request", "both sides have moved: the game can no longer be"
                            " aborted (resign it, or play it out)", reason="abort_too_late")
        return ABORTED

    def prepare_claim(self, player_id: str | None, claim_after: float,
                      now: float | None = None) -> Outcome:
        """The ``claim_win`` message: the present player wins a game whose opponent has been
        away for ``claim_after`` seconds (sync the room's presence first:
        :meth:`Presence.check_claim`); earlier, or with the opponent present,
        ``bad_request``."""
        room = self.room
        seats = room.seats_of(player_id)
        room.check_in_play(seats, "bad_request", "the game has not started")
        if len(seats) > 1:
            raise RoomError("bad_request", "you hold both seats: there is nobody to claim from")
        room.presence.check_claim(1 - seats[0], claim_after, now)
        return room.conclude(Outcome(winner=seats[0], points=room.stake(), reason="abandoned"))
