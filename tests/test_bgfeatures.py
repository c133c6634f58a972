"""The expert inputs of the backgammon network, against a slow reference written from the
definitions one checker and one roll at a time, and against the classic shot table."""

from __future__ import annotations

import random

import numpy as np
import pytest
from tablas.engine.games.backgammon import START
from tablas.engine.search import bgfeatures

from tests.test_bgnet import random_positions

Board = tuple[int, ...]
ROLLS = [(a, b) for a in range(1, 7) for b in range(1, 7)]  # all 36, each once


def on_mine(opp: Board, p: int) -> int:
    """The other side's checkers on my point ``p``."""
    return opp[25 - p] if 1 <= p <= 24 else 0


def paths(a: int, b: int) -> list[list[int]]:
    """Each way one checker can use the roll: the distances of its stops, in order."""
    if a == b:
        return [[a * j for j in range(1, k + 1)] for k in range(1, 5)]
    return [[a], [b], [a, a + b], [b, a + b]]


def ref_hit(x: Board, y: Board) -> tuple[float, float]:
    hit = loss = 0
    for a, b in ROLLS:
        best = 0
        sources = [25] if x[25] else [p for p in range(1, 25) if x[p]]
        for s in sources:
            for stops in paths(a, b):
                if x[25] >= 2 and len(stops) > 1:
                    continue
                if any(s - d < 1 or on_mine(y, s - d) >= 2 for d in stops):
                    continue
                t = s - stops[-1]
                if on_mine(y, t) == 1:
                    best = max(best, t)
        hit += best > 0
        loss += best
    return hit / 36, loss / (36 * 24)


def ref_escape(x: Board, y: Board) -> float:
    back = max((p for p in range(1, 26) if x[p]), default=0)
    blocks = [d for d in range(1, 13) if back - d >= 1 and on_mine(y, back - d) >= 2]
    if not blocks:
        return 1.0
    last = max(blocks)
    ok = 0
    for a, b in ROLLS:
        # Beyond the 12 points in front, every point counts as open.
        ok += any(stops[-1] > last and all(d > 12 or on_mine(y, back - d) < 2 for d in stops)
                  for stops in paths(a, b))
    return ok / 36


def ref_prime(x: Board) -> float:
    best = run = 0
    for p in range(1, 25):
        run = run + 1 if x[p] >= 2 else 0
        best = max(best, run)
    return best / 6


def ref_side(x: Board, y: Board) -> list[float]:
    hit, loss = ref_hit(x, y)
    closed = sum(1 for p in range(1, 7) if y[p] >= 2)
    dance = (closed / 6) ** 2 if x[25] else 0.0
    return [hit, loss, ref_escape(x, y), dance, ref_prime(x)]


def test_features_agree_with_the_reference_along_random_games() -> None:
    pos = random_positions(5, 4)
    rng = random.Random(5)
    # Positions with checkers on the bar come up rarely in random games: add some.
    for me, opp in rng.sample(pos, 40):
        bar = list(me)
        for _ in range(rng.randint(1, 3)):
            p = rng.choice([q for q in range(1, 25) if bar[q]] or [0])
            if p:
                bar[p] -= 1
                bar[25] += 1
        pos.append((tuple(bar), opp))
    fast = bgfeatures.features(np.array([[me, opp] for me, opp in pos]))
    slow = np.array([ref_side(me, opp) + ref_side(opp, me) for me, opp in pos])
    assert len(pos) > 300
    assert sum(1 for me, _ in pos if me[25]) >= 40
    np.testing.assert_allclose(fast, slow, atol=1e-6)


@pytest.mark.parametrize("distance,shots", list(zip(range(1, 13),
                                                     [11, 12, 14, 15, 15, 17, 6, 6, 5, 3, 2, 3])))
def test_a_lone_blot_is_hit_as_often_as_the_shot_table_says(distance: int, shots: int) -> None:
    me = [14] + [0] * 25
    opp = [14] + [0] * 25
    me[13] = 1
    opp[25 - (13 - distance)] = 1
    hit, loss = bgfeatures.features(np.array([[me, opp]]))[0, :2]
    assert round(hit * 36) == shots
    assert loss == pytest.approx(shots * (13 - distance) / (36 * 24))


def test_a_six_prime_holds_a_back_checker_and_the_bar_is_closed() -> None:
    me = [0] * 26
    me[24], me[0] = 1, 14  # one checker left, on the opponent's ace point
    opp = [0] * 26
    for q in range(7, 13):  # a full prime on its 7..12 points, just in front of mine
        opp[q] = 2
    opp[1], opp[0] = 3, 0
    f = dict(zip(bgfeatures.NAMES, bgfeatures.features(np.array([[me, opp]]))[0]))
    assert f["me_escape"] == 0.0
    assert f["opp_prime"] == 1.0
    assert f["me_dance"] == 0.0  # nothing on the bar
    me[24], me[25] = 0, 1
    closed = list(opp)
    for q in range(1, 7):
        closed[q] = 2
    closed[7:13] = [0] * 6
    closed[0] = 3
    f = dict(zip(bgfeatures.NAMES, bgfeatures.features(np.array([[me, closed]]))[0]))
    assert f["me_dance"] == 1.0 and f["me_hit"] == 0.0


def test_the_start_is_the_same_for_both_sides() -> None:
    f = bgfeatures.features(np.array([[START, START]]))[0]
    assert list(f[:5]) == list(f[5:])
