"""A room's two seats and their dice seeds: who sits where, and who may sit. No I/O.

:class:`Seating` prepares a seat verb (a join, a leave, a seed, a handover to a bot) as a
:class:`SeatChange`, changing nothing, or refuses it with the contract's error code
(:class:`~tablas.server.errors.RoomError`); the room adds the start of the game when the change
fills the last seat (:class:`Seated`'s ``seat_change``). Persist the change, then
:meth:`~tablas.server.room.Room.commit_seats` it. A rated room's seats are for registered players,
one seat each (contract section 10).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from tablas.engine.search.decision import Level
from tablas.server.dice import Seeds
from tablas.server.errors import RoomError
from tablas.server.protocol import RoomStatus, UnratedReason
from tablas.server.ratings import bot_rating_id


@dataclass(slots=True)
class SeatState:
    kind: Literal["human", "bot"]
    level: Level | None = None
    player_id: str | None = None
    name: str | None = None
    # A bot's seat handed over by a person: that person's name, which the seat goes on
    # showing ("bot (medium) for Ana"). Kept in memory: a room reloaded shows the bot alone.
    stands_for: str | None = None
    bot: bool = False  # the person seated is a bot account (kind "human": a player)

    def copy(self) -> SeatState:
        return SeatState(self.kind, self.level, self.player_id, self.name, self.stands_for,
                         self.bot)

    @property
    def filled(self) -> bool:
        return self.kind == "bot" or self.player_id is not None


@dataclass(frozen=True, slots=True)
class Handover:
    """A seat handed to a bot, as the log of seat changes records it."""

    seat: int
    level: Level
    from_player: str | None
    reason: str  # "hand_to_bot" or "abandoned"
    ply: int
    time: float


@dataclass(frozen=True, slots=True)
class SeatChange:
    """Seats taken, freed or handed to a bot, and the start of the game if that fills the
    last one: checked, not yet part of the room. Persist it, then
    :meth:`~tablas.server.room.Room.commit_seats`."""

    seats: tuple[SeatState, ...]
    status: RoomStatus
    opening_rolls: tuple[tuple[int, int], ...]
    state: Any
    started_at: float | None  # when the game started, if this starts it
    handover: Handover | None = None
    seeds: Seeds | None = None  # the seats' dice seeds after the change (None: no seeds)
    # Why a rated room is rated no more from this pairing on (None: it stays as it is).
    unrated: UnratedReason | None = None


class Seated(Protocol):
    """What the seats read of their room."""

    @property
    def status(self) -> RoomStatus: ...
    @property
    def rated(self) -> bool: ...
    @property
    def ply(self) -> int: ...
    @property
    def clock(self) -> Callable[[], float]: ...
    def check_not_over(self) -> None: ...
    def seat_change(self, seats: list[SeatState], seeds: Seeds | None,
                    handover: Handover | None = None) -> SeatChange: ...


def rating_id(game_id: str, seat: SeatState) -> str | None:
    """Who ``seat`` is as a rated player in ``game_id``: its person, or its bot's level in
    that game (None: an open seat)."""
    if seat.kind == "bot":
        return bot_rating_id(game_id, seat.level or "medium")
    return seat.player_id


class Seating:
    """The seats of room ``room_id`` and their dice seeds (None: a room without them, one
    whose game has no dice or one stored before seat seeds)."""

    def __init__(self, room_id: str, seats: Sequence[SeatState], seeds: Seeds | None,
                 room: Seated) -> None:
        self.room_id = room_id
        self.seats = [s.copy() for s in seats]
        self.seeds = seeds
        self.room = room

    def of(self, player_id: str | None) -> list[int]:
        """The seats ``player_id`` holds (none for None: nobody logged in holds a seat)."""
        if player_id is None:
            return []
        return [i for i, s in enumerate(self.seats) if s.player_id == player_id]

    def copy(self) -> list[SeatState]:
        return [s.copy() for s in self.seats]

    @property
    def full(self) -> bool:
        return all(s.filled for s in self.seats)

    @property
    def open(self) -> int:
        return sum(not s.filled for s in self.seats)

    @property
    def unoccupied(self) -> bool:
        """No person holds a seat."""
        return all(s.player_id is None for s in self.seats)

    def with_seed(self, seats: Sequence[int], seed: str | None) -> Seeds | None:
        """The seeds with ``seed`` for ``seats`` (None: unchanged)."""
        if self.seeds is None or seed is None:
            return self.seeds
        new = list(self.seeds)
        for i in seats:
            new[i] = seed
        return (new[0], new[1])

    def prepare_join(self, player_id: str, name: str, seat: int | None = None,
                     seed: str | None = None, *, registered: bool = False, bot: bool = False
                     ) -> SeatChange | None:
        """Taking ``seat`` (or the first open one) with the seat's dice ``seed``, and the start
        of the game if it fills the last; None when the player holds it already (or any seat,
        when none is named) and the seed changes nothing. ``bot``: the player is a bot
        account (its seat says so)."""
        room = self.room
        if room.status == "closed":
            room.check_not_over()
        # A join's seed is ignored where there are no seat seeds (no dice, or a room from
        # before them): a client may then send one with every join without knowing the game.
        seed = None if self.seeds is None else seed
        held = self.of(player_id)
        if seat is None:
            if held:
                return self._reseed(held, seed)
            open_seats = [i for i, s in enumerate(self.seats) if not s.filled]
            if not open_seats:
                raise RoomError("seat_taken", f"room {self.room_id} has no open seat")
            seat = open_seats[0]
        self._check_seat(seat)
        if seat in held:
            return self._reseed(held, seed)
        if self.seats[seat].filled:
            raise RoomError("seat_taken", f"seat {seat} of room {self.room_id} is taken")
        if room.rated and not registered:
            raise RoomError("not_authenticated", "a rated game's seats are for registered"
                            " players: register (or log in) first")
        if room.rated and held:
            raise RoomError("bad_request", "a rated game is played against someone else:"
                            " you hold a seat already")
        seats = self.copy()
        seats[seat] = SeatState("human", None, player_id, name, bot=bot)
        return room.seat_change(seats, self.with_seed((seat,), seed))

    def _reseed(self, held: list[int], seed: str | None) -> SeatChange | None:
        """A join of seats already held: their seed changes while the room waits; once the
        game has started the seed is fixed and the join (a reconnection) just follows."""
        if seed is None or self.room.status != "waiting" or self.seeds is None:
            return None
        seeds = self.with_seed(held, seed)
        return None if seeds == self.seeds else self.room.seat_change(self.copy(), seeds)

    def prepare_seed(self, player_id: str | None, seed: str) -> SeatChange:
        """The ``seed`` message: the holder's seats take ``seed`` while the room waits."""
        if self.seeds is None:
            raise RoomError("bad_request", f"room {self.room_id} takes no dice seeds")
        held = self.of(player_id)
        if not held:
            raise RoomError("not_seated", f"you hold no seat of room {self.room_id}")
        if self.room.status == "closed":
            self.room.check_not_over()  # game_over: a closed room never rolls
        if self.room.status != "waiting":
            raise RoomError("bad_request", "seeds are fixed at the first roll")
        return self.room.seat_change(self.copy(), self.with_seed(held, seed))

    def prepare_leave(self, player_id: str) -> SeatChange | None:
        """Freeing the player's seats while the game waits (during play they stay held);
        None when that changes nothing."""
        held = self.of(player_id) if self.room.status == "waiting" else []
        if not held:
            return None
        seats = self.copy()
        for i in held:
            seats[i] = SeatState(seats[i].kind, seats[i].level)
        # A freed seat's seed was its holder's: the next one starts from the empty seed.
        return self.room.seat_change(seats, self.with_seed(held, ""))

    def _check_seat(self, seat: int) -> None:
        if not 0 <= seat < len(self.seats):
            raise RoomError("bad_request", f"seat must be 0 or 1, got {seat}")

    def check_hand_to_bot(self, player_id: str | None, seat: int) -> None:
        """Refuses a handover by anyone but the seat's holder, or of a finished game; then
        :meth:`prepare_hand_to_bot` it."""
        self._check_seat(seat)
        if player_id is None or self.seats[seat].player_id != player_id:
            raise RoomError("not_seated", f"you do not hold seat {seat} of room {self.room_id}")
        self.room.check_not_over()
        if self.room.rated:
            raise RoomError("bad_request", "a rated game is not handed to a bot: resign it"
                            " or play it out")

    def prepare_hand_to_bot(self, seat: int, level: Level, reason: str) -> SeatChange:
        """Seat ``seat`` becoming a bot's (a waiting room whose seats are all filled then
        starts); the caller has checked who may (:meth:`check_hand_to_bot`)."""
        seats = self.copy()
        old = self.seats[seat]
        seats[seat] = SeatState("bot", level, stands_for=old.name if old.kind == "human"
                                else old.stands_for)
        handover = Handover(seat, level, self.seats[seat].player_id, reason, self.room.ply,
                            self.room.clock())
        return self.room.seat_change(seats, self.seeds, handover)

    def take(self, seats: Sequence[SeatState], seeds: Seeds | None) -> None:
        """Makes persisted seats and seeds the room's."""
        self.seats = list(seats)
        self.seeds = seeds

    def rename(self, player_id: str, name: str) -> None:
        """A player's new name, on the seats they hold."""
        for i in self.of(player_id):
            self.seats[i].name = name
