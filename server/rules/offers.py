"""Draw offers and takebacks (contract section 7, "Draws and takebacks"). No I/O.

A seated player offers a draw, or asks to take back their last move (and the reply to it, if
any); the other seat accepts or declines. Games with dice (backgammon) have neither: their
resignations have a value instead (:mod:`tablas.server.rules.endings`). Takebacks are for
casual games only: in a rated one a move stands.

An offer is held in memory only (a restart forgets it, as a resignation offer). A move by the
other side answers a draw offer (it plays on) and withdraws it; the offerer's own move keeps
it. Any move withdraws a takeback asked for (the move it named may no longer be the last), as
do the end of the game, an adjournment and a seat handed to a bot. A seat whose offer was
declined may offer that again once the game has moved on: one ply later at the earliest.

:class:`Offers` checks each verb and changes nothing but the offers; the room's owner sends the
news. A takeback accepted is prepared here (:class:`Takeback`: the plies kept, the position
they lead to, the clocks as they stand: the time spent stays spent), written by the owner
(the store deletes the moves taken back, so the room replays without them after a restart),
then committed here (:meth:`Offers.commit_takeback`). It holds the resignation offer's
withdrawal too (:mod:`tablas.server.rules.endings`): whatever withdraws one withdraws all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tablas.engine.core import JSON, Game, Outcome
from tablas.engine.records import replay
from tablas.server.errors import ErrorCode, RoomError
from tablas.server.rules.clock import Clocks
from tablas.server.rules.endings import Endings

Kind = Literal["draw", "takeback"]
# A draw agreed: no winner, no points (a match's points are backgammon's, which has no draws).
AGREED = Outcome(winner=None, points=0, reason="agreement")


class Offering(Protocol):
    """What the offers read of their room (and change, a takeback committed)."""

    state: Any
    played: list[bool]

    @property
    def game(self) -> Game[Any, Any]: ...
    @property
    def options(self) -> JSON: ...
    @property
    def rated(self) -> bool: ...
    @property
    def ply(self) -> int: ...
    @property
    def history(self) -> list[Any]: ...
    @property
    def clocks(self) -> Clocks: ...
    @property
    def endings(self) -> Endings: ...
    def note_played(self, actions: Sequence[Any]) -> None: ...
    def seats_of(self, player_id: str | None) -> list[int]: ...
    def check_in_play(self, seats: list[int], code: ErrorCode, not_started: str) -> None: ...


@dataclass(frozen=True, slots=True)
class Takeback:
    """A takeback accepted, not yet part of the room: the first ``ply`` actions stay, and
    lead to ``state``; ``clocks`` are each seat's time left now (None: no clock)."""

    ply: int
    state: Any
    clocks: tuple[int, int] | None


@dataclass(slots=True)
class Offers:
    """The draw offer and the takeback asked for in one room, each by a seat (or None)."""

    room: Offering
    draw: int | None = None
    takeback: int | None = None
    # (kind, seat) -> the ply at which that seat's offer was declined.
    _declined: dict[tuple[Kind, int], int] = field(default_factory=dict)

    def withdraw(self) -> None:
        """The game ended, was adjourned, or a bot took a seat: no offer stands (nor a
        resignation offered: :mod:`tablas.server.rules.endings`)."""
        self.draw = self.takeback = None
        self.room.endings.offer = None

    def moved(self, seat: int) -> None:
        """``seat`` acted: it answers the other's draw offer; no takeback (nor resignation
        offer) stands."""
        if self.draw is not None and self.draw != seat:
            self.draw = None
        self.takeback = None
        self.room.endings.offer = None

    def offer(self, kind: Kind, player_id: str | None) -> tuple[int, bool]:
        """The seat offering ``kind`` (holding both seats: the first), and whether the offer
        agrees with the other side's own (two draw offers are a draw): then answer it as
        accepted instead. ``bad_request`` where the game has no such offers, while one of
        this seat's waits, or until the game moves on after a decline."""
        room = self.room
        seats = room.seats_of(player_id)
        room.check_in_play(seats, "bad_request", "the game has not started")
        if room.game.has_chance:
            raise RoomError("bad_request", f"{room.game.id} has no draw offers or takebacks:"
                            " resign with a value instead")
        if kind == "takeback" and room.rated:
            raise RoomError("bad_request", "no takebacks in a rated game",
                            reason="no_takeback_rated")
        seat = seats[0]
        if kind == "takeback":
            last = self._last_of(seats)
            if last is None:
                raise RoomError("bad_request", "nothing to take back: you have not moved")
            seat = room.history[last].seat
        standing = self.draw if kind == "draw" else self.takeback
        if standing is not None and standing in seats:
            raise RoomError("bad_request", f"your {kind} offer waits for its answer")
        if standing is not None:
            if kind == "draw":
                return 1 - standing, True
            raise RoomError("bad_request", "answer the takeback asked for first")
        if self._declined.get((kind, seat)) == room.ply:
            raise RoomError("bad_request", f"your {kind} offer was declined: play a move"
                            " before offering again")
        return seat, False

    def answer(self, kind: Kind, player_id: str | None) -> int:
        """The seat offering the ``kind`` the other seat (``player_id``) answers now;
        ``bad_request`` if nothing of that kind is offered to them."""
        standing = self.draw if kind == "draw" else self.takeback
        seats = self.room.seats_of(player_id)
        self.room.check_in_play(seats, "bad_request", "the game has not started")
        if standing is None or 1 - standing not in seats:
            raise RoomError("bad_request", f"no {kind} offer waits for your answer")
        return standing

    def declined(self, kind: Kind, seat: int) -> None:
        """``seat``'s offer of ``kind`` was declined, at the room's ply."""
        self._declined[(kind, seat)] = self.room.ply
        if kind == "draw":
            self.draw = None
        else:
            self.takeback = None

    def prepare_takeback(self, seat: int, clocks: Sequence[int] | None) -> Takeback:
        """``seat``'s last move and what came after it (the reply) taken back; the time
        spent stays spent (``clocks``: each seat's time left now)."""
        last = self._last_of([seat])
        if last is None:
            raise RoomError("bad_request", "nothing to take back")
        room = self.room
        state = replay(room.game, room.options, (), [(a.move, ()) for a in room.history[:last]])
        return Takeback(last, state, None if clocks is None else (clocks[0], clocks[1]))

    def commit_takeback(self, takeback: Takeback, at: float) -> None:
        """Makes a prepared (and written) takeback part of the room: its history back to
        ``takeback.ply`` actions, the turn (and its clock, from ``at``) to the seat whose
        move it was."""
        room = self.room
        del room.history[takeback.ply:]
        room.state = takeback.state
        room.played = [False, False]
        room.note_played(room.history)
        room.clocks.commit(takeback.clocks, at)
        self.withdraw()

    def _last_of(self, seats: Sequence[int]) -> int | None:
        """The index of the last action of one of ``seats``, None if they have none."""
        history = self.room.history
        for i in range(len(history) - 1, -1, -1):
            if history[i].seat in seats:
                return i
        return None
