"""Tournaments as stored (contract section 13): the tournament, its entrants, its pairings.
The standings are never stored: they are recomputed from the results of the games' rooms.

A backend gives :class:`TournamentStore` (``store.tournaments``). Joining, leaving and
starting are single conditional statements any node may run (the tournament must still be
waiting, have room, …); what only its owner writes (a round's pairings, the end) carries the
owner's :class:`~tablas.server.ownership.Fence`, checked in the same transaction.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Literal

from tablas.server.ownership import Fence

Joined = Literal["joined", "unknown", "not_waiting", "full", "already"]
Berserked = Literal["berserk", "unknown", "not_seated", "already"]
Left = Literal["left", "unknown", "not_waiting", "not_entered"]
Started = Literal["started", "unknown", "not_creator", "not_waiting", "too_few",
                  "too_many_bots"]


@dataclass(frozen=True, slots=True)
class TournamentRow:
    tournament_id: str
    game: str
    options: str  # JSON text
    clock: str  # JSON text
    format: str
    rounds: int  # a round robin's: 0 until its start
    games_per_pairing: int
    rated: bool
    max_players: int
    created_by: str
    status: str
    round: int
    created_at: float
    minutes: int = 0  # an arena's length in arena minutes (0: another format)
    ends_at_ms: int | None = None  # when an arena ends, set at its start

    def values(self) -> tuple[Any, ...]:
        return (self.tournament_id, self.game, self.options, self.clock, self.format,
                self.rounds, self.games_per_pairing, int(self.rated), self.max_players,
                self.created_by, self.status, self.round, self.created_at)

    @classmethod
    def of(cls, r: Any) -> TournamentRow:
        return cls(str(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), int(r[5]),
                   int(r[6]), bool(r[7]), int(r[8]), str(r[9]), str(r[10]), int(r[11]),
                   float(r[12]), int(r[13]), None if r[14] is None else int(r[14]))




@dataclass(frozen=True, slots=True)
class EntrantRow:
    """An entrant: a person or bot account (``level`` None), or a house bot level."""

    player_id: str
    name: str
    registered: bool
    bot: bool
    level: str | None
    seq: int = 0
    active: bool = True  # False: an arena entrant who left (kept, not paired)

    @classmethod
    def of(cls, r: Any) -> EntrantRow:
        return cls(str(r[0]), str(r[1]), bool(r[2]), bool(r[3]),
                   None if r[4] is None else str(r[4]), int(r[5]), bool(r[6]))


@dataclass(frozen=True, slots=True)
class PairingRow:
    """A pairing of a round and, read back, its room's status and result (None: no room
    yet, or a bye)."""

    round: int
    idx: int
    room_id: str | None
    p0: str
    p1: str | None
    room_status: str | None = None
    winner: int | None = None
    reason: str | None = None
    points: int | None = None
    # An arena game: each seat's time left when it went berserk (ms; 0: it did not).
    berserk: tuple[int, int] = (0, 0)

    @classmethod
    def of(cls, r: Any) -> PairingRow:
        return cls(int(r[0]), int(r[1]), None if r[2] is None else str(r[2]), str(r[3]),
                   None if r[4] is None else str(r[4]), None if r[5] is None else str(r[5]),
                   None if r[6] is None else int(r[6]), None if r[7] is None else str(r[7]),
                   None if r[8] is None else int(r[8]), (int(r[9]), int(r[10])))


class TournamentStore(ABC):
    @abstractmethod
    async def create(self, t: TournamentRow, entrants: list[EntrantRow],
                     created_from: str = "") -> None:
        """A new tournament, waiting, with its first entrants (house bot levels), made from
        the client address ``created_from`` (kept until it finishes)."""

    @abstractmethod
    async def live_created(self, player_id: str, address: str) -> tuple[int, int]:
        """How many tournaments waiting or playing ``player_id`` created, and how many were
        created from ``address`` (contract section 15's caps)."""

    @abstractmethod
    async def join(self, tournament_id: str, e: EntrantRow) -> Joined:
        """Enters ``e`` while the tournament waits and has room (``seq`` is given here); an
        arena also while it plays (one who left is active again)."""

    @abstractmethod
    async def leave(self, tournament_id: str, player_id: str) -> Left:
        """Takes ``player_id`` out while the tournament waits; from an arena that plays,
        marks them inactive (their games stay)."""

    @abstractmethod
    async def start(self, tournament_id: str, by: str, *, now_ms: int = 0,
                    minute_ms: int = 60_000) -> Started:
        """Its creator starts it (2 entrants at least, house bots at most half of them):
        status ``playing``, round 0; its owner pairs the first round. An arena's end is set
        here, once: ``now_ms`` plus its minutes of ``minute_ms``."""

    @abstractmethod
    async def load(self, tournament_id: str
                   ) -> tuple[TournamentRow, list[EntrantRow], list[PairingRow]] | None:
        """The tournament, its entrants (in their order) and its pairings with their
        rooms' status and results."""

    @abstractmethod
    async def adoptable(self, limit: int) -> list[str]:
        """Tournaments waiting or playing that no node holds a live lease on (a single
        server: all of them), oldest first."""

    @abstractmethod
    async def write_round(self, tournament_id: str, round_: int, rounds: int,
                          pairings: list[PairingRow], fence: Fence | None) -> None:
        """The owner pairs round ``round_`` (of ``rounds``): its pairings and the round, in
        one transaction; nothing if the round was written already."""

    @abstractmethod
    async def write_games(self, tournament_id: str, seen: int, pairings: list[PairingRow],
                          fence: Fence | None) -> bool:
        """The owner of an arena adds games (each its own ``round``, numbered on from
        ``seen``, the games paired before), in one transaction, if no other game was paired
        meanwhile and it still plays: whether they were written."""

    @abstractmethod
    async def berserk(self, room_id: str, player_id: str, left_ms: int,
                      fence: Fence | None = None) -> tuple[Berserked, int]:
        """Marks ``player_id``'s seat of the arena game in ``room_id`` berserk (once), its
        time left then ``left_ms``, written by the room's owner (``fence``, on a cluster):
        the answer and the seat."""

    @abstractmethod
    async def finish(self, tournament_id: str, fence: Fence | None) -> None:
        """The owner ends the tournament: every game of its last round is over."""

    @abstractmethod
    async def listing(self, limit: int) -> list[tuple[TournamentRow, int]]:
        """Tournaments, playing first, then waiting, then the latest finished, newest first
        within each, each with its number of entrants."""

    @abstractmethod
    async def created_from(self, tournament_id: str) -> str:
        """The client address the tournament was made from (``""`` once finished)."""

    @abstractmethod
    async def current_games(self, player_id: str) -> list[tuple[str, int, str, int]]:
        """(tournament, round, room, seat) of ``player_id``'s tournament games still being
        played (or waiting for them)."""
