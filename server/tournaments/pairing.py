"""A tournament's pairings and standings, pure (contract section 13): no I/O, no clock.

- **Round robin** by Berger tables (the circle method, FIDE's tables): with an odd number of
  entrants a bye is added, so each entrant sits out once per cycle; ``games_per_pairing`` 2
  plays the cycle twice, the second with every pair's seats swapped, so each pair meets once
  from each seat.
- **Swiss**, a documented simplification of FIDE's Dutch system: no pair meets twice; players
  with equal points meet first (the matching keeps the sum of squared differences of points
  as small as it can be); within that, the higher seed meets one about half a group below;
  seats go to whoever has had seat 0 less often. The pairing is a maximum weight matching of
  the graph of pairs allowed (networkx's, Edmonds' blossom algorithm), which finds the best
  pairing of the whole round at once rather than greedily. With an odd number, the bye goes
  to the lowest-ranked player who has had none and whose absence leaves the rest pairable.
- **Standings**: a win 1, a draw ½, a loss 0, a bye 1; a game that ended without being played
  (``aborted``) 0 for both. Tie-break: Sonneborn–Berger in a round robin (the points of the
  opponents one beat, and half those of the ones one drew), Buchholz in a Swiss (the points of
  every opponent met; a bye counts nothing). Equal points and tie-break share a rank.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

# A pairing: seat 0's player, seat 1's player (None: a bye for seat 0's).
Pair = tuple[str, str | None]


@dataclass(frozen=True, slots=True)
class Played:
    """One game of a tournament as the standings read it: its round, its players by seat,
    and its result (``winner`` 0, 1 or None; ``finished``: whether it is over; ``counted``:
    False for a game that ended without being played, such as ``aborted``)."""

    round: int
    players: Pair
    finished: bool = False
    winner: int | None = None
    counted: bool = True


@dataclass(frozen=True, slots=True)
class Standing:
    rank: int
    player_id: str
    points: float
    tiebreak: float
    wins: int
    draws: int
    losses: int


def berger(entrants: Sequence[str], games_per_pairing: int = 1) -> list[list[Pair]]:
    """Every round of a round robin among ``entrants`` (in their order), each a list of
    pairs; a bye is ``(player, None)``."""
    players: list[str | None] = list(entrants)
    if len(players) % 2:
        players.append(None)
    n = len(players)
    rounds: list[list[Pair]] = []
    ring = list(range(n))
    for r in range(n - 1):
        pairs: list[Pair] = []
        for i in range(n // 2):
            a, b = ring[i], ring[n - 1 - i]
            # The fixed player alternates seats round by round; the others alternate by the
            # circle's turn, which is what Berger's tables give.
            if (i == 0 and r % 2 == 1) or (i > 0 and i % 2 == 1):
                a, b = b, a
            pa, pb = players[a], players[b]
            if pa is None:
                pa, pb = pb, None
            assert pa is not None
            pairs.append((pa, pb))
        rounds.append(pairs)
        ring = [ring[0], ring[-1], *ring[1:-1]]
    if games_per_pairing == 2:
        rounds += [[(b, a) if b is not None else (a, None) for a, b in pairs]
                   for pairs in rounds]
    return rounds


def scores(games: Sequence[Played]) -> dict[str, float]:
    """Each player's points from ``games`` (finished ones; byes count 1)."""
    points: dict[str, float] = {}
    for g in games:
        a, b = g.players
        points.setdefault(a, 0.0)
        if b is None:
            points[a] += 1.0
            continue
        points.setdefault(b, 0.0)
        if not g.finished or not g.counted:
            continue
        if g.winner is None:
            points[a] += 0.5
            points[b] += 0.5
        else:
            points[(a, b)[g.winner]] += 1.0
    return points


def swiss(entrants: Sequence[str], games: Sequence[Played]) -> list[Pair]:
    """The next Swiss round's pairs among ``entrants`` (in seed order, best first), given
    every game before it."""
    points = scores(games)
    met = {frozenset((g.players[0], g.players[1])) for g in games if g.players[1] is not None}
    had_bye = {g.players[0] for g in games if g.players[1] is None}
    seat0 = {p: 0 for p in entrants}
    seat1 = {p: 0 for p in entrants}
    for g in games:
        if g.players[1] is not None:
            seat0[g.players[0]] = seat0.get(g.players[0], 0) + 1
            seat1[g.players[1]] = seat1.get(g.players[1], 0) + 1
    seed = {p: i for i, p in enumerate(entrants)}
    ranked = sorted(entrants, key=lambda p: (-points.get(p, 0.0), seed[p]))
    pairs: list[Pair] = []
    players = list(ranked)
    if len(players) % 2:
        candidates = [p for p in reversed(ranked) if p not in had_bye] or list(reversed(ranked))
        for p in candidates:
            rest = [q for q in players if q != p]
            if _matching(rest, points, met, seed, allow_repeats=False) is not None:
                break
        else:
            p = candidates[0]
        players.remove(p)
        pairs.append((p, None))
    matching = _matching(players, points, met, seed, allow_repeats=False)
    if matching is None:  # too few players for so many rounds: the least repeated
        matching = _matching(players, points, met, seed, allow_repeats=True)
    assert matching is not None
    for a, b in matching:
        pairs.append(_seats(a, b, seat0, seat1, seed))
    pairs[:] = sorted(pairs, key=lambda ab: (ab[1] is None, min(
        ranked.index(ab[0]), ranked.index(ab[1]) if ab[1] is not None else len(ranked))))
    return pairs


def _matching(players: Sequence[str], points: Mapping[str, float], met: set[frozenset[str]],
              seed: Mapping[str, int], *, allow_repeats: bool) -> list[tuple[str, str]] | None:
    """A perfect matching of ``players`` that keeps equal points together, or None."""
    if not players:
        return []
    graph: nx.Graph[str] = nx.Graph()
    graph.add_nodes_from(players)
    half = len(players) / 2
    for i, a in enumerate(players):
        for b in players[i + 1:]:
            repeat = frozenset((a, b)) in met
            if repeat and not allow_repeats:
                continue
            gap = points.get(a, 0.0) - points.get(b, 0.0)
            # Points first (scaled far above the rest), then a seed distance near half the
            # field (top half against bottom half), repeats last of all.
            weight = 1_000_000 - 10_000 * int(4 * gap * gap) - int(
                abs(abs(seed[a] - seed[b]) - half)) - (100_000_000 if repeat else 0)
            graph.add_edge(a, b, weight=weight + 200_000_000)
    found = nx.max_weight_matching(graph, maxcardinality=True)
    if 2 * len(found) != len(players):
        return None
    return [(a, b) if seed[a] < seed[b] else (b, a) for a, b in found]


def _seats(a: str, b: str, seat0: Mapping[str, int], seat1: Mapping[str, int],
           seed: Mapping[str, int]) -> Pair:
    """Seat 0 to whoever has had it less (relative to seat 1); the better seed otherwise."""
    balance_a = seat0.get(a, 0) - seat1.get(a, 0)
    balance_b = seat0.get(b, 0) - seat1.get(b, 0)
    if balance_a != balance_b:
        return (a, b) if balance_a < balance_b else (b, a)
    return (a, b) if seed[a] < seed[b] else (b, a)


def standings(entrants: Sequence[str], games: Sequence[Played], tiebreak: str
              ) -> list[Standing]:
    """The table: ``tiebreak`` ``"sonneborn_berger"`` or ``"buchholz"``."""
    finished = [g for g in games if g.finished or g.players[1] is None]
    points = scores(finished)
    tie = dict.fromkeys(entrants, 0.0)
    wins = dict.fromkeys(entrants, 0)
    draws = dict.fromkeys(entrants, 0)
    losses = dict.fromkeys(entrants, 0)
    for g in finished:
        a, b = g.players
        if b is None or not g.counted:
            continue
        for me, other, seat in ((a, b, 0), (b, a, 1)):
            theirs = points.get(other, 0.0)
            if g.winner is None:
                draws[me] += 1
                tie[me] += theirs / 2 if tiebreak == "sonneborn_berger" else theirs
            elif g.winner == seat:
                wins[me] += 1
                tie[me] += theirs
            else:
                losses[me] += 1
                tie[me] += 0.0 if tiebreak == "sonneborn_berger" else theirs
    order = sorted(entrants, key=lambda p: (-points.get(p, 0.0), -tie[p], entrants.index(p)))
    table: list[Standing] = []
    for i, p in enumerate(order):
        rank = i + 1
        if table and (table[-1].points, table[-1].tiebreak) == (points.get(p, 0.0), tie[p]):
            rank = table[-1].rank
        table.append(Standing(rank, p, points.get(p, 0.0), tie[p], wins[p], draws[p],
                              losses[p]))
    return table
