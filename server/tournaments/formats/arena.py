"""The arena (contract section 19): a fixed time; entrants join and leave while it runs;
whoever is free is paired at once with the nearest free player in the standings.

- **Pairing**: every look of the owner pairs the free players (active entrants not in an
  unfinished game of it): as many pairs as there can be, then as few rematches as there can
  be (a pair whose either player's last game was against the other), then the pairs nearest
  in the standings (the smallest sum of their distances), found at once as a maximum weight
  matching (networkx's, as the Swiss pairing does); seat 0 to whoever has had it less. With
  an odd number free, one waits for the next one to be free. Nothing is paired once the
  time is up; the arena ends when its last game is over.
- **Score**: a win 2, a draw 1, a loss 0; after two wins in a row a player is on a streak and
  each further game scores double, until one that is not a win (which scores as usual and
  ends the streak). A berserk win scores one point more (not doubled). A game that ended
  without being played (``aborted``) counts nothing and leaves the streak as it was.
- **Standings**: points, then games won; equal both share a rank. Each row also has
  ``streak`` (on a streak now) and ``games`` (games counted).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
from tablas.server.store.tournaments import EntrantRow, PairingRow, TournamentRow
from tablas.server.tournaments.formats.base import Step, played, result
from tablas.server.tournaments.pairing import Pair

WIN, DRAW = 2, 1
STREAK_AFTER = 2  # wins in a row that put a player on a streak
BERSERK_WIN = 1  # a berserk win's extra point


@dataclass(slots=True)
class Tally:
    """One player's arena so far."""

    points: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    run: int = 0  # wins in a row, the last game included
    seat0: int = 0
    seat1: int = 0
    last: str | None = None  # the last opponent paired
    games: list[int] = field(default_factory=list)  # each counted game's score, in order

    @property
    def streak(self) -> bool:
        return self.run >= STREAK_AFTER


def tallies(entrants: Sequence[EntrantRow], pairings: Sequence[PairingRow]
            ) -> dict[str, Tally]:
    """Every entrant's tally from the games in the order paired (their ``round``)."""
    out = {e.player_id: Tally() for e in entrants}
    for p in sorted(pairings, key=lambda p: (p.round, p.idx)):
        if p.p1 is None:
            continue
        players = (p.p0, p.p1)
        for seat, me in enumerate(players):
            mine = out.setdefault(me, Tally())
            mine.last = players[1 - seat]
            if seat == 0:
                mine.seat0 += 1
            else:
                mine.seat1 += 1
        g = played(p)
        if not g.finished or not g.counted:
            continue
        for seat, me in enumerate(players):
            mine = out[me]
            won = g.winner == seat
            base = WIN if won else DRAW if g.winner is None else 0
            score = base * (2 if mine.streak else 1)
            if won and p.berserk[seat]:
                score += BERSERK_WIN
            mine.points += score
            mine.games.append(score)
            if won:
                mine.wins += 1
                mine.run += 1
            else:
                mine.run = 0
                if g.winner is None:
                    mine.draws += 1
                else:
                    mine.losses += 1
    return out


def ranked(entrants: Sequence[EntrantRow], table: dict[str, Tally]) -> list[str]:
    """The entrants by points, then wins, then the order they entered."""
    return [e.player_id for e in sorted(
        entrants, key=lambda e: (-table[e.player_id].points, -table[e.player_id].wins,
                                 e.seq))]


def pair_free(order: Sequence[str], free: set[str], table: dict[str, Tally]) -> list[Pair]:
    """Pairs among ``free`` (``order``: the standings): the most pairs, then the fewest
    rematches, then the nearest in ``order``; best placed pair first."""
    place = {p: i for i, p in enumerate(order)}
    waiting = [p for p in order if p in free]
    graph: nx.Graph[str] = nx.Graph()
    graph.add_nodes_from(waiting)
    for i, a in enumerate(waiting):
        for b in waiting[i + 1:]:
            rematch = table[a].last == b or table[b].last == a
            # A rematch costs more than any sum of distances (at most 64 players).
            graph.add_edge(a, b, weight=10_000_000 - (1_000_000 if rematch else 0)
                           - abs(place[a] - place[b]))
    found = nx.max_weight_matching(graph, maxcardinality=True)
    pairs = [(a, b) if place[a] < place[b] else (b, a) for a, b in found]
    return [_seats(a, b, table) for a, b in sorted(pairs, key=lambda ab: place[ab[0]])]


def _seats(a: str, b: str, table: dict[str, Tally]) -> Pair:
    """Seat 0 to whoever has had it less often (relative to seat 1); ``a`` otherwise."""
    ta, tb = table[a], table[b]
    if ta.seat0 - ta.seat1 > tb.seat0 - tb.seat1:
        return b, a
    return a, b


class Arena:
    name = "arena"
    tiebreak = "wins"
    asks_rounds = False

    def step(self, t: TournamentRow, entrants: Sequence[EntrantRow],
             pairings: Sequence[PairingRow], now_ms: int) -> Step:
        busy = {pid for p in pairings if not played(p).finished
                for pid in (p.p0, p.p1) if pid is not None}
        if t.ends_at_ms is None or now_ms >= t.ends_at_ms:
            return Step(finish=not busy)
        table = tallies(entrants, pairings)
        free = {e.player_id for e in entrants if e.active and e.player_id not in busy}
        return Step(pairs=pair_free(ranked(entrants, table), free, table))

    def standings(self, entrants: Sequence[EntrantRow], pairings: Sequence[PairingRow]
                  ) -> list[dict[str, Any]]:
        table = tallies(entrants, pairings)
        rows: list[dict[str, Any]] = []
        for i, pid in enumerate(ranked(entrants, table)):
            t = table[pid]
            rank = i + 1
            if rows and (rows[-1]["points"], rows[-1]["wins"]) == (t.points, t.wins):
                rank = rows[-1]["rank"]
            rows.append({"rank": rank, "player_id": pid, "points": t.points,
                         "tiebreak": t.wins, "wins": t.wins, "draws": t.draws,
                         "losses": t.losses, "streak": t.streak, "games": len(t.games),
                         "scores": t.games})
        return rows

    def detail(self, t: TournamentRow, pairings: Sequence[PairingRow]) -> dict[str, Any]:
        return {"minutes": t.minutes, "ends_at_ms": t.ends_at_ms, "pairings": [
            {"room_id": p.room_id, "players": [p.p0, p.p1], "result": result(p),
             "berserk": [bool(ms) for ms in p.berserk]}
            for p in sorted(pairings, key=lambda p: (p.round, p.idx))]}
