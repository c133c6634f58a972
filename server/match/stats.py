"""The match's statistics, pure arithmetic (contract section 17; docs/bots.md):

- the Elo difference of a score fraction, logistic: ``-400 log10(1/p - 1)``;
- its 95% interval from the variance of the unit the games come in: a game (trinomial: win,
  draw, loss) or a pair of games from one opening with seats swapped (pentanomial: 0, ½, 1,
  1½ or 2 points), the mean's interval ``μ ± 1.96 σ/√n`` mapped to Elo, its half-width
  reported as ``±`` (as cutechess-cli and fastchess print it);
- the generalized sequential probability ratio test (GSPRT) on pentanomial pairs with
  logistic Elo bounds, as fastchess and OpenBench compute it: for each hypothesis the
  distribution nearest the observed one (maximum likelihood) whose mean is that
  hypothesis's expected score, and the log-likelihood ratio of the two (Michel Van den Bergh,
  *Comments on Normalized Elo*, proposition 1.1). Empty counts are taken as 0.001 (a pair
  result never seen must not make the ratio infinite). The test stops at ``LLR ≥ log((1-β)/α)``
  (H1 accepted) or ``LLR ≤ log(β/(1-α))`` (H0 accepted).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054  # the standard normal's 97.5th percentile
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)  # a pair's points, per game: LL, LD, DD|WL, WD, WW
EMPTY = 1e-3  # what an empty pentanomial count is taken as in the GSPRT


def elo(score: float) -> float:
    """The logistic Elo difference that expects ``score`` (0 < score < 1), ±inf at the ends."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def expected(elo_diff: float) -> float:
    """The expected score of a logistic Elo difference."""
    return 1.0 / (1.0 + math.pow(10.0, -elo_diff / 400.0))


@dataclass(frozen=True, slots=True)
class Estimate:
    score: float  # the mean score per game
    elo: float
    low: float  # the 95% interval's ends
    high: float

    @property
    def margin(self) -> float:
        """The interval's half-width, the ``±`` printed."""
        return (self.high - self.low) / 2


def _estimate(values: Sequence[float], counts: Sequence[float]) -> Estimate | None:
    n = sum(counts)
    if n <= 0:
        return None
    mean = sum(v * c for v, c in zip(values, counts)) / n
    var = sum((v - mean) ** 2 * c for v, c in zip(values, counts)) / n
    half = Z95 * math.sqrt(var / n)
    return Estimate(mean, elo(mean), elo(mean - half), elo(mean + half))


def trinomial(wins: int, draws: int, losses: int) -> Estimate | None:
    """Elo and its interval from games counted one by one."""
    return _estimate((1.0, 0.5, 0.0), (wins, draws, losses))


def pentanomial(pairs: Sequence[int]) -> Estimate | None:
    """Elo and its interval from pairs: ``pairs[i]`` pairs scored ``i`` half-points (0..4)."""
    return _estimate(PAIR_SCORES, pairs)


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """The GSPRT's lower and upper LLR bounds."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def llr(pairs: Sequence[int], elo0: float, elo1: float) -> float:
    """The GSPRT's log-likelihood ratio of H1 (Elo ``elo1``) to H0 (``elo0``) given the
    pentanomial counts."""
    if sum(pairs) == 0:
        return 0.0
    counts = [c if c > 0 else EMPTY for c in pairs]
    total = sum(counts)
    observed = [c / total for c in counts]
    p0 = _nearest(observed, expected(elo0))
    p1 = _nearest(observed, expected(elo1))
    return total * sum(o * (math.log(a) - math.log(b)) for o, a, b in zip(observed, p1, p0))


def _nearest(observed: Sequence[float], mean: float) -> list[float]:
    """The distribution over PAIR_SCORES with expectation ``mean`` that maximizes the
    likelihood of ``observed``: ``p_i = o_i / (1 + θ (a_i - mean))``, θ the root of
    ``Σ o_i (a_i - mean) / (1 + θ (a_i - mean)) = 0`` (decreasing in θ), found by bisection
    between the poles."""
    d = [a - mean for a in PAIR_SCORES]

    def f(theta: float) -> float:
        return sum(o * x / (1 + theta * x) for o, x in zip(observed, d))

    low, high = -1.0 / d[-1], -1.0 / d[0]  # the poles: 1 + θ d_i > 0 strictly between them
    span = high - low
    low, high = low + span * 1e-12, high - span * 1e-12
    for _ in range(200):
        mid = (low + high) / 2
        if f(mid) > 0:
            low = mid
        else:
            high = mid
        if high - low < 1e-15 * max(1.0, abs(mid)):
            break
    theta = (low + high) / 2
    return [o / (1 + theta * x) for o, x in zip(observed, d)]
