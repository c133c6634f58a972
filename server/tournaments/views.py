"""``GET /api/tournaments`` and ``GET /api/tournaments/{id}`` (contract sections 13, 19): what
is stored, with the standings recomputed from the games' results every time they are asked,
by the tournament's format (which also gives its own fields: an arena's time, the pairings'
shape)."""

from __future__ import annotations

import json

from tablas.server.store import Storage
from tablas.server.tournaments.crosstable import FORMATS, table, to_csv
from tablas.server.tournaments.formats import format_of
from tablas.server.tournaments.formats.base import played

LISTED = 100


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
            | ({"minutes": t.minutes, "ends_at_ms": t.ends_at_ms} if t.minutes else {})
            for t, n in rows]}, separators=(",", ":")).encode()

    async def detail(self, tournament_id: str) -> bytes | None:
        found = await self.pool.load(tournament_id)
        if found is None:
            return None
        t, entrants, pairings = found
        by_id = {e.player_id: e for e in entrants}
        fmt = format_of(t.format)
        body = {
            "tournament_id": t.tournament_id, "game": t.game, "format": t.format,
            "status": t.status, "round": t.round, "rounds": t.rounds,
            "options": json.loads(t.options), "clock": json.loads(t.clock),
            "rated": t.rated, "games_per_pairing": t.games_per_pairing,
            "max_players": t.max_players, "created_by": t.created_by,
            "tiebreak_name": fmt.tiebreak,
            "standings": [row | {"name": by_id[row["player_id"]].name,
                                 "bot": by_id[row["player_id"]].bot,
                                 "active": by_id[row["player_id"]].active}
                          for row in fmt.standings(entrants, pairings)],
        } | fmt.detail(t, pairings)
        return json.dumps(body, separators=(",", ":")).encode()

    async def crosstable(self, tournament_id: str, form: str) -> tuple[bytes, str] | None:
        """Every entrant against every other (contract section 17), as JSON or CSV."""
        if form not in FORMATS:
            raise ValueError(f"format {form!r}: one of {', '.join(FORMATS)}")
        found = await self.pool.load(tournament_id)
        if found is None:
            return None
        t, entrants, pairings = found
        fmt = format_of(t.format)
        tiebreak = fmt.tiebreak
        rows = table(entrants, fmt.standings(entrants, pairings), [played(p) for p in pairings])
        if form == "csv":
            return to_csv(rows).encode(), "text/csv; charset=utf-8"
        return json.dumps({"tournament_id": t.tournament_id, "game": t.game,
                           "format": t.format, "status": t.status, "tiebreak": tiebreak,
                           "entrants": rows}, separators=(",", ":")).encode(), \
            "application/json"
