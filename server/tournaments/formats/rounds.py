"""What the formats played in rounds share (round robin, Swiss): a round is paired once
every game of the one before is over; the tournament ends after the last; the standings
break ties by a tie-break of the games (:func:`..pairing.standings`); the pairings are shown
one list per round."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tablas.server.store.tournaments import EntrantRow, PairingRow, TournamentRow
from tablas.server.tournaments.formats.base import Step, played, result
from tablas.server.tournaments.pairing import Pair, standings


class ByRounds:
    """A format played in rounds; a subclass says how many and pairs each."""

    name = ""
    tiebreak = ""
    asks_rounds = False

    def schedule(self, t: TournamentRow, seeds: list[str], pairings: Sequence[PairingRow]
                 ) -> tuple[int, list[Pair]]:
        """How many rounds ``t`` plays, and the pairs of its next round."""
        raise NotImplementedError

    def step(self, t: TournamentRow, entrants: Sequence[EntrantRow],
             pairings: Sequence[PairingRow], now_ms: int) -> Step:
        current = [p for p in pairings if p.round == t.round]
        if t.round > 0 and not all(played(p).finished for p in current):
            return Step()
        rounds, pairs = self.schedule(t, [e.player_id for e in entrants], pairings)
        if t.round >= rounds or not pairs:
            return Step(finish=True)
        return Step(pairs=pairs, round=t.round + 1, rounds=rounds)

    def standings(self, entrants: Sequence[EntrantRow], pairings: Sequence[PairingRow]
                  ) -> list[dict[str, Any]]:
        table = standings([e.player_id for e in entrants], [played(p) for p in pairings],
                          self.tiebreak)
        return [{"rank": s.rank, "player_id": s.player_id, "points": s.points,
                 "tiebreak": s.tiebreak, "wins": s.wins, "draws": s.draws,
                 "losses": s.losses} for s in table]

    def detail(self, t: TournamentRow, pairings: Sequence[PairingRow]) -> dict[str, Any]:
        rounds: list[list[dict[str, Any]]] = [[] for _ in range(t.round)]
        for p in pairings:
            rounds[p.round - 1].append({"room_id": p.room_id, "players": [p.p0, p.p1],
                                        "result": result(p)})
        return {"pairings": rounds}
