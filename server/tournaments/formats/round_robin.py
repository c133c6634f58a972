"""Round robin (contract section 13): Berger tables, every pair meets ``games_per_pairing``
times; tie-break Sonneborn–Berger."""

from __future__ import annotations

from collections.abc import Sequence

from tablas.server.store.tournaments import PairingRow, TournamentRow
from tablas.server.tournaments.formats.rounds import ByRounds
from tablas.server.tournaments.pairing import Pair, berger


class RoundRobin(ByRounds):
    name = "round_robin"
    tiebreak = "sonneborn_berger"
    asks_rounds = False  # as many as it needs

    def schedule(self, t: TournamentRow, seeds: list[str], pairings: Sequence[PairingRow]
                 ) -> tuple[int, list[Pair]]:
        rounds = berger(seeds, t.games_per_pairing)
        return len(rounds), rounds[t.round] if t.round < len(rounds) else []
