"""A room's people coming and going, and what their absence makes of the room. No I/O: the
owner says who is connected, every time is read from the room's injected clock.

Rooms end (contract section 6): a person is *absent* once they have had no connection for the
server's ``abandon_after`` seconds. :meth:`Presence.due` says what that makes of the room: a
game whose absent player faces a present person is won by that person (``abandoned``); a game
with no person present is ``adjourned`` (played again when one of its players joins:
:meth:`Presence.prepare_resume`); a waiting room whose creator is absent is ``closed``. A
room with ``abandon_to_bot_after_ms`` hands an absent player's seat to a bot instead
(:meth:`Presence.abandoned`). Fair rated play (section 10): a rated game with a clock is never
adjourned, and the present player may claim a game whose opponent has been away for the
server's ``claim_after`` (:meth:`Presence.check_claim`).

:class:`Presence` reads its room through :class:`Attended`; who is online server-wide is
:class:`tablas.server.connections.Presence`'s, which the owner asks and passes in as ``connected``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from tablas.engine.core import Outcome
from tablas.server.errors import RoomError
from tablas.server.protocol import RoomOptions, RoomStatus
from tablas.server.rules.clock import Clocks
from tablas.server.rules.seats import SeatState


@dataclass(frozen=True, slots=True)
class Lapse:
    """A change of status without a move: ``adjourned`` or ``playing`` again (a game), or
    ``closed`` (a waiting room), at ``at``. Persist it, then
    :meth:`~tablas.server.room.Room.commit_lapse`."""

    status: RoomStatus
    at: float


class Attended(Protocol):
    """What presence reads of its room."""

    @property
    def status(self) -> RoomStatus: ...
    @property
    def seats(self) -> Sequence[SeatState]: ...
    @property
    def created_by(self) -> str | None: ...
    @property
    def room_options(self) -> RoomOptions: ...
    @property
    def rated(self) -> bool: ...
    @property
    def clocks(self) -> Clocks: ...
    def seats_of(self, player_id: str | None) -> list[int]: ...
    @property
    def clock(self) -> Callable[[], float]: ...
    def stake(self) -> int: ...
    def conclude(self, outcome: Outcome) -> Outcome: ...


class Presence:
    """Since when each seat's person has been away (while their game is played) and since
    when the room's creator has (while it waits): None while present, or not counted."""

    def __init__(self, room: Attended) -> None:
        self.room = room
        self.away_since: list[float | None] = [None, None]
        self.creator_away_since: float | None = None

    def sync(self, connected: Callable[[str], bool], now: float | None = None) -> None:
        """Notes since when each seated player has been away (while the game is played) and
        the creator (while the room waits; a room without a known creator counts as left).
        Call it before asking what their absence makes of the room."""
        room = self.room
        now = room.clock() if now is None else now
        for i, s in enumerate(room.seats):
            away = (room.status == "playing" and s.kind == "human" and s.player_id is not None
                    and not connected(s.player_id))
            if not away:
                self.away_since[i] = None
            elif self.away_since[i] is None:
                self.away_since[i] = now
        creator_away = room.status == "waiting" and (
            room.created_by is None or not connected(room.created_by))
        if not creator_away:
            self.creator_away_since = None
        elif self.creator_away_since is None:
            self.creator_away_since = now

    def back(self, seat: int | None = None) -> None:
        """Forgets ``seat``'s absence (its seat went to a bot), or every seat's (the game is
        played again: absences count afresh from the next :meth:`sync`)."""
        for i in range(len(self.away_since)) if seat is None else (seat,):
            self.away_since[i] = None

    def away_since_ms(self) -> list[int | None]:
        """Since when each seat's player has been away, in epoch milliseconds of the room's
        clock (null: present, a bot, or the game is not being played)."""
        return [None if t is None else round(t * 1000) for t in self.away_since]

    def due(self, abandon_after: float | None, now: float | None = None
            ) -> Outcome | Lapse | None:
        """What the absence of people makes of the room at ``now`` (contract section 6), from
        the presence last noted by :meth:`sync`: a win for the present person over an absent
        one, the game adjourned (no person present), the waiting room closed (its creator
        absent); None: nothing yet, or ``abandon_after`` is None (rooms never end). Persist
        what it says, then commit it (an ending, or a :class:`Lapse`)."""
        if abandon_after is None:
            return None
        room = self.room
        now = room.clock() if now is None else now
        if room.status == "waiting":
            since = self.creator_away_since
            return Lapse("closed", now) if since is not None and now - since >= abandon_after \
                else None
        if room.status != "playing" or room.room_options.abandon_to_bot_after_ms is not None:
            return None
        people = [i for i, s in enumerate(room.seats) if s.kind == "human"]
        absent = [i for i in people if (t := self.away_since[i]) is not None
                  and now - t >= abandon_after]
        if not absent:
            return None
        present = [i for i in people if self.away_since[i] is None]
        if present:
            return room.conclude(Outcome(winner=present[0], points=room.stake(),
                                         reason="abandoned"))
        if len(absent) == len(people) and not self.never_adjourned:
            return Lapse("adjourned", now)
        return None  # the other person is away, not yet absent: their time decides

    @property
    def never_adjourned(self) -> bool:
        """A rated game with a clock, or any tournament game, is never adjourned: its clock
        runs whoever is away, and a flag falls as usual (contract sections 10 and 15)."""
        opts = self.room.room_options
        return (self.room.rated or opts.tournament_id is not None) \
            and self.room.clocks.spec is not None

    def prepare_resume(self, player_id: str) -> Lapse | None:
        """The adjourned game played again, when ``player_id`` holds a seat in it; None when
        the room is not adjourned or they hold none (a join then goes on as usual). Persist
        it, then :meth:`~tablas.server.room.Room.commit_lapse`."""
        if self.room.status != "adjourned" or not self.room.seats_of(player_id):
            return None
        return Lapse("playing", self.room.clock())

    def seconds_to_due(self, abandon_after: float | None, now: float | None = None
                       ) -> float | None:
        """How long until :meth:`due` may have something to say (0: now; None: never, as
        long as nobody comes or goes): when the room's timer must ask again."""
        if abandon_after is None:
            return None
        if self.creator_away_since is None and self.away_since.count(None) == len(
                self.away_since):
            return None  # nobody away (the common case, asked after every move)
        room = self.room
        now = room.clock() if now is None else now
        if self.due(abandon_after, now) is not None:
            return 0.0
        if room.status == "waiting":
            since = [self.creator_away_since]
        elif room.status == "playing" and room.room_options.abandon_to_bot_after_ms is None:
            since = self.away_since
        else:
            return None
        waits = [t + abandon_after - now for t in since
                 if t is not None and t + abandon_after > now]
        return min(waits) if waits else None

    def abandoned(self, now: float | None = None) -> list[int]:
        """The seats whose player has been away for ``abandon_to_bot_after_ms``: hand each to
        a bot (:meth:`~tablas.server.rules.seats.Seating.prepare_hand_to_bot`, ``abandoned``)."""
        room = self.room
        after = room.room_options.abandon_to_bot_after_ms
        if after is None or room.status != "playing":
            return []
        now = room.clock() if now is None else now
        return [i for i, t in enumerate(self.away_since)
                if t is not None and now - t >= after / 1000 and room.seats[i].kind == "human"]

    def seconds_to_abandon(self, now: float | None = None) -> float | None:
        """How long until an away player's seat goes to a bot (None: nobody will)."""
        room = self.room
        after = room.room_options.abandon_to_bot_after_ms
        if after is None or room.status != "playing":
            return None
        now = room.clock() if now is None else now
        waits = [t + after / 1000 - now for t in self.away_since if t is not None]
        return max(0.0, min(waits)) if waits else None

    def check_claim(self, other: int, claim_after: float, now: float | None = None) -> None:
        """Refuses a claim on seat ``other``'s absence (``bad_request``) unless its person has
        been away ``claim_after`` seconds, from the presence last noted by :meth:`sync`."""
        if self.room.seats[other].kind != "human":
            raise RoomError("bad_request", "your opponent is a bot: it never leaves",
                            reason="opponent_is_bot")
        since = self.away_since[other]
        if since is None:
            raise RoomError("bad_request", "your opponent is here: play on",
                            reason="opponent_here")
        now = self.room.clock() if now is None else now
        if now - since < claim_after:
            raise RoomError("bad_request", (
                f"your opponent has been away for {max(0.0, now - since):.0f} s: you may claim"
                f" the win once they have been away for {claim_after:g} s"),
                reason="claim_too_early",
                params={"away": round(max(0.0, now - since)), "wait": round(claim_after)})
