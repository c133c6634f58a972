"""``GET /api/tournaments`` and ``GET /api/tournaments/{id}`` (contract section 13): what is
stored, with the standings recomputed from the games' results every time they are asked."""

from __future__ import annotations

import json
from typing import Any

from tablas.server.store import Storage
from tablas.server.store.tournaments import PairingRow
from tablas.server.tournaments.crosstable import FORMATS, table, to_csv
from tablas.server.tournaments.keeper import played
from tablas.server.tournaments.pairing import standings

LISTED = 100


def _result(p: PairingRow) -> dict[str, Any] | None:
    if p.p1 is None or not played(p).finished or p.reason is None:
        return None
    return {"winner": p.winner, "points": p.points, "reason": p.reason}


class TournamentViews:
    def __init__(self, store: Storage) -> None:
        self.pool = store.tournaments

    async def listing(self) -> bytes:
        rows = await self.pool.listing(LISTED)
        return json.dumps({"tournaments": [
            {"tournament_id": t.tournament_id, "game": t.game, "format": t.format,
             "status": t.status, "round": t.round, "rounds": t.rounds, "players": n,
             "rated": t.rated, "clock": json.loads(t.clock), "created_by": t.created_by,
             "max_players": t.max_players}
            for t, n in rows]}, separators=(",", ":")).encode()

    async def detail(self, tournament_id: str) -> bytes | None:
        found = await self.pool.load(tournament_id)
        if found is None:
            return None
        t, entrants, pairings = found
        by_id = {e.player_id: e for e in entrants}
        tiebreak = "sonneborn_berger" if t.format == "round_robin" else "buchholz"
        table = standings([e.player_id for e in entrants], [played(p) for p in pairings],
                          tiebreak)
        rounds: list[list[dict[str, Any]]] = [[] for _ in range(t.round)]
        for p in pairings:
            rounds[p.round - 1].append({"room_id": p.room_id, "players": [p.p0, p.p1],
                                        "result": _result(p)})
        body = {
            "tournament_id": t.tournament_id, "game": t.game, "format": t.format,
            "status": t.status, "round": t.round, "rounds": t.rounds,
            "options": json.loads(t.options), "clock": json.loads(t.clock),
            "rated": t.rated, "games_per_pairing": t.games_per_pairing,
            "max_players": t.max_players, "created_by": t.created_by,
            "standings": [{"rank": s.rank, "player_id": s.player_id,
                           "name": by_id[s.player_id].name, "bot": by_id[s.player_id].bot,
                           "points": s.points, "tiebreak": s.tiebreak, "wins": s.wins,
                           "draws": s.draws, "losses": s.losses} for s in table],
            "pairings": rounds,
        }
        return json.dumps(body, separators=(",", ":")).encode()

    async def crosstable(self, tournament_id: str, form: str) -> tuple[bytes, str] | None:
        """Every entrant against every other (contract section 17), as JSON or CSV."""
        if form not in FORMATS:
            raise ValueError(f"format {form!r}: one of {', '.join(FORMATS)}")
        found = await self.pool.load(tournament_id)
        if found is None:
            return None
        t, entrants, pairings = found
        tiebreak = "sonneborn_berger" if t.format == "round_robin" else "buchholz"
        games = [played(p) for p in pairings]
        rows = table(entrants, standings([e.player_id for e in entrants], games, tiebreak),
                     games)
        if form == "csv":
            return to_csv(rows).encode(), "text/csv; charset=utf-8"
        return json.dumps({"tournament_id": t.tournament_id, "game": t.game,
                           "format": t.format, "status": t.status, "tiebreak": tiebreak,
                           "entrants": rows}, separators=(",", ":")).encode(), \
            "application/json"
