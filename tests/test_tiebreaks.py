"""Tie-breaks with draws (server/tournaments/pairing.py's ``standings``), against the
definitions written here apart from the server's, on round robins whose every result
hypothesis draws (wins, draws and losses, from either seat), and on a worked example.

Sonneborn–Berger: the final points of every opponent one beat, plus half those of every
opponent one drew. Buchholz: the final points of every opponent met (a bye adds nothing)."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st
from tablas.server.tournaments.pairing import Played, berger, standings

PLAYERS = ["a", "b", "c", "d", "e"]


def _points(games: list[Played]) -> dict[str, Fraction]:
    points = dict.fromkeys(PLAYERS, Fraction(0))
    for g in games:
        x, y = g.players
        if y is None:
            points[x] += 1
        elif g.winner is None:
            points[x] += Fraction(1, 2)
            points[y] += Fraction(1, 2)
        else:
            points[(x, y)[g.winner]] += 1
    return points


def _tiebreak(games: list[Played], kind: str) -> dict[str, Fraction]:
    points = _points(games)
    tie = dict.fromkeys(PLAYERS, Fraction(0))
    for g in games:
        x, y = g.players
        if y is None:
            continue
        for me, other, seat in ((x, y, 0), (y, x, 1)):
            if kind == "buchholz":
                tie[me] += points[other]
            elif g.winner is None:
                tie[me] += points[other] / 2
            elif g.winner == seat:
                tie[me] += points[other]
    return tie


@given(st.lists(st.sampled_from([0, 1, None]), min_size=10, max_size=10),
       st.sampled_from(["sonneborn_berger", "buchholz"]))
def test_tiebreaks_with_draws_equal_their_definitions(results: list[int | None],
                                                      kind: str) -> None:
    games = []
    results_iter = iter(results)
    for rnd, round_pairs in enumerate(berger(PLAYERS), 1):
        for a, b in round_pairs:
            games.append(Played(rnd, (a, b), True, None if b is None else next(results_iter)))
    assert sum(1 for g in games if g.players[1] is not None) == 10
    table = {s.player_id: s for s in standings(PLAYERS, games, kind)}
    points, tie = _points(games), _tiebreak(games, kind)
    for p in PLAYERS:
        assert table[p].points == points[p]
        assert table[p].tiebreak == tie[p], (p, kind)
        draws = sum(1 for g in games if p in g.players and g.players[1] is not None
                    and g.winner is None)
        assert table[p].draws == draws


def test_a_worked_example_with_draws() -> None:
    """Four players, each pair once: a beats b, a draws c, a draws d, b beats c, b draws d,
    c beats d. Points a 2, b 1.5, c 1.5, d 1. Sonneborn–Berger: a = 1.5 (b) + 0.75 (c) + 0.5
    (d) = 2.75; b = 1.5 (c) + 0.5 (d) = 2; c = 1 (a's half) + 1 (d) = 2; d = 1 (a's half) +
    0.75 (b's half) = 1.75."""
    games = [Played(1, ("a", "b"), True, 0), Played(1, ("c", "d"), True, 0),
             Played(2, ("a", "c"), True, None), Played(2, ("b", "d"), True, None),
             Played(3, ("d", "a"), True, None), Played(3, ("b", "c"), True, 0)]
    table = {s.player_id: s for s in standings(["a", "b", "c", "d"], games,
                                               "sonneborn_berger")}
    assert {p: (s.points, s.tiebreak) for p, s in table.items()} == {
        "a": (2.0, 2.75), "b": (1.5, 2.0), "c": (1.5, 2.0), "d": (1.0, 1.75)}
    assert table["b"].rank == table["c"].rank == 2 and table["d"].rank == 4
