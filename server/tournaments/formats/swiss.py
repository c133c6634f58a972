"""Swiss (contract section 13): the rounds asked for, no pair meets twice, equal points
meet first; tie-break Buchholz."""

from __future__ import annotations

from collections.abc import Sequence

from tablas.server.store.tournaments import PairingRow, TournamentRow
from tablas.server.tournaments.formats.base import played
from tablas.server.tournaments.formats.rounds import ByRounds
from tablas.server.tournaments.pairing import Pair, swiss


class Swiss(ByRounds):
    name = "swiss"
    tiebreak = "buchholz"
    asks_rounds = True

    def schedule(self, t: TournamentRow, seeds: list[str], pairings: Sequence[PairingRow]
                 ) -> tuple[int, list[Pair]]:
        return t.rounds, swiss(seeds, [played(p) for p in pairings])
