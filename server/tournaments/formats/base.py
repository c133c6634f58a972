"""What every tournament format gives (:class:`Format`) and the helpers they share
(docs/architecture.md "How to add a tournament format").

A format is pure: it reads the tournament, its entrants and its stored games (the games'
results read back from their rooms) and says what its owner does now (:meth:`Format.step`:
pair a round, pair some games, end it, or wait) and what the standings are
(:meth:`Format.standings`). The owner (:mod:`..keeper`) does the I/O: it writes what the
format pairs, opens the rooms, ends the tournament; the views (:mod:`..views`) show what
the format computes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tablas.server.store.tournaments import EntrantRow, PairingRow, TournamentRow
from tablas.server.tournaments.pairing import Pair, Played


def played(p: PairingRow) -> Played:
    """A stored pairing as the standings read it."""
    done = p.p1 is None or p.room_status in ("finished", "closed")
    counted = p.p1 is None or (p.reason is not None and p.reason != "aborted")
    return Played(p.round, (p.p0, p.p1), done, p.winner, counted)


def result(p: PairingRow) -> dict[str, Any] | None:
    """A stored game's result as ``GET /api/tournaments/{id}`` shows it (None: not over)."""
    if p.p1 is None or not played(p).finished or p.reason is None:
        return None
    return {"winner": p.winner, "points": p.points, "reason": p.reason}


@dataclass(frozen=True, slots=True)
class Step:
    """What a tournament's owner does now: end it (``finish``), write ``pairs`` (a whole
    round numbered ``round`` of ``rounds``; with ``round`` 0, games one after another, each
    numbered on from the games before), or nothing (no pairs)."""

    finish: bool = False
    pairs: Sequence[Pair] = ()
    round: int = 0
    rounds: int = 0


class Format(Protocol):
    """One tournament format."""

    name: str
    tiebreak: str  # the name of the standings' ``tiebreak`` column
    asks_rounds: bool  # create_tournament's ``rounds`` is kept (else 0)

    def step(self, t: TournamentRow, entrants: Sequence[EntrantRow],
             pairings: Sequence[PairingRow], now_ms: int) -> Step:
        """What to do now, the tournament playing: pair a round or the next games, end it,
        or wait."""
        ...

    def standings(self, entrants: Sequence[EntrantRow], pairings: Sequence[PairingRow]
                  ) -> list[dict[str, Any]]:
        """The table, best first: each row ``rank``, ``player_id``, ``points``,
        ``tiebreak``, ``wins``, ``draws``, ``losses`` and the format's own columns."""
        ...

    def detail(self, t: TournamentRow, pairings: Sequence[PairingRow]) -> dict[str, Any]:
        """The format's fields of ``GET /api/tournaments/{id}``, ``pairings`` among them."""
        ...
