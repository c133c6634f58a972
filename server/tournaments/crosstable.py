"""A tournament's crosstable (contract section 17): every entrant against every other, the
results of their games from the row's side, with the points and the tie-break of the
standings (``GET /api/tournaments/{id}/crosstable?format=csv|json``). Pure: it is made from
the standings and the games as :mod:`.pairing` reads them."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from tablas.server.store.tournaments import EntrantRow
from tablas.server.tournaments.pairing import Played

FORMATS = ("json", "csv")


def table(entrants: Sequence[EntrantRow], standings: Sequence[dict[str, Any]],
          games: Sequence[Played]) -> list[dict[str, Any]]:
    """One row per entrant, in the order of ``standings`` (the format's rows: ``rank``,
    ``player_id``, ``points``, ``tiebreak``): ``results`` maps each other entrant's
    id to the scores of their games in the order played (1, 0.5, 0; None: not over yet, or
    ended unplayed, such as aborted), ``byes`` the rounds sat out."""
    by_id = {e.player_id: e for e in entrants}
    results: dict[str, dict[str, list[float | None]]] = {
        e.player_id: {o.player_id: [] for o in entrants if o.player_id != e.player_id}
        for e in entrants}
    byes = dict.fromkeys(by_id, 0)
    for g in sorted(games, key=lambda g: g.round):
        a, b = g.players
        if b is None:
            byes[a] += 1
            continue
        for me, other, seat in ((a, b, 0), (b, a, 1)):
            score: float | None = None
            if g.finished and g.counted:
                score = 0.5 if g.winner is None else float(g.winner == seat)
            results[me][other].append(score)
    return [{"rank": s["rank"], "player_id": s["player_id"],
             "name": by_id[s["player_id"]].name, "bot": by_id[s["player_id"]].bot,
             "level": by_id[s["player_id"]].level, "points": s["points"],
             "tiebreak": s["tiebreak"], "byes": byes[s["player_id"]],
             "results": results[s["player_id"]]} for s in standings]


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    """The table as CSV: ``rank,name``, a column per entrant (``x`` on the diagonal; the
    scores of their games separated by spaces, ``*`` for one not over), ``points,tiebreak``."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    ids = [r["player_id"] for r in rows]
    w.writerow(["rank", "name", *(r["name"] for r in rows), "points", "tiebreak"])
    for r in rows:
        cells = ["x" if other == r["player_id"] else
                 " ".join("*" if s is None else f"{s:g}" for s in r["results"][other])
                 for other in ids]
        w.writerow([r["rank"], r["name"], *cells, f"{r['points']:g}", f"{r['tiebreak']:g}"])
    return out.getvalue()
