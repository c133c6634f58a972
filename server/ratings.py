"""Glicko-2 ratings: pure arithmetic, no I/O (the server stores the results).

What the caller does (contract §8): when a room created with ``"rated": true`` finishes,
turn its RESULT into a score for seat 0 with :func:`score_of`, then call
:func:`rate_game` with both sides' ratings from *before* the game and store the two
ratings it returns. Each finished rated game is one rating period for both sides. A
player never rated before (including each bot level of each game) starts at :data:`NEW`.

The algorithm is Glickman's, "Example of the Glicko-2 system" (2013), steps 1–8: the
rating and RD move to the Glicko-2 scale (divided by :data:`SCALE` around 1500), the
volatility is found by the Illinois algorithm to tolerance :data:`EPSILON`, and the new
values move back. See docs/ratings.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tablas.engine.search.decision import LEVELS, Level

__all__ = [
    "EPSILON",
    "MAX_RD",
    "NEW",
    "SCALE",
    "TAU",
    "Rating",
    "RatingChange",
    "bot_level",
    "bot_rating_id",
    "is_bot_rating_id",
    "rate",
    "rate_game",
    "score_of",
]

SCALE = 173.7178
"""Glicko-2's scale factor: ``mu = (rating - 1500) / SCALE``, ``phi = rd / SCALE``."""

TAU = 0.5
"""The system constant τ: how far the volatility may move in one period. Glickman advises
0.3–1.2, smaller for games whose results are less surprising; 0.5 is the value of his
worked example, a middle choice for games with a single result per period (a smaller τ
keeps one lucky backgammon game from moving a player's volatility much)."""

MAX_RD = 350.0
"""No period leaves an RD above this: the RD of a player never rated (Glicko's cap)."""

EPSILON = 0.000001
"""The convergence tolerance of the volatility's Illinois iteration (Glickman's ε)."""

_BASE = 1500.0
_MAX_PHI = MAX_RD / SCALE


@dataclass(frozen=True)
class Rating:
    """One player's rating in one game, on the familiar (Glicko) scale.

    ``rating`` is the estimate, ``rd`` its rating deviation (a 95% interval is about
    ``rating ± 2·rd``), ``volatility`` how erratic the player's results are, and ``games``
    how many rated results have gone into it. Immutable: :func:`rate` returns a new one.
    """

    rating: float = _BASE
    rd: float = MAX_RD
    volatility: float = 0.06
    games: int = 0


NEW = Rating()
"""A player never rated: 1500, RD 350, volatility 0.06, no games."""


def _g(phi: float) -> float:
    """Glickman's g(φ): how much an opponent's uncertainty damps a result's weight."""
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, g_j: float) -> float:
    """Glickman's E(μ, μ_j, φ_j): the expected score against opponent j."""
    return 1.0 / (1.0 + math.exp(-g_j * (mu - mu_j)))


def _new_volatility(sigma: float, phi: float, v: float, delta: float, tau: float) -> float:
    """Step 5: the new volatility σ', the root of f by the Illinois algorithm."""
    a = math.log(sigma * sigma)
    phi2 = phi * phi
    delta2 = delta * delta
    tau2 = tau * tau

    def f(x: float) -> float:
        ex = math.exp(x)
        d = phi2 + v + ex
        return ex * (delta2 - phi2 - v - ex) / (2.0 * d * d) - (x - a) / tau2

    big_a = a
    if delta2 > phi2 + v:
        big_b = math.log(delta2 - phi2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0.0:
            k += 1
        big_b = a - k * tau
    f_a = f(big_a)
    f_b = f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0.0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def rate(player: Rating, results: Sequence[tuple[Rating, float]], tau: float = TAU) -> Rating:
    """Return ``player``'s rating after one rating period (Glickman's steps 1–8).

    ``results`` holds, for each game of the period, the opponent's rating at the start of
    the period and the player's score in it (1 a win, 0.5 a draw, 0 a loss; any value in
    [0, 1] is accepted). An empty period only grows the RD (step 6) and keeps the rating
    and volatility. ``games`` grows by ``len(results)``. No RD leaves a period above
    :data:`MAX_RD`. Raises ``ValueError`` for a score outside [0, 1] or ``tau <= 0``.
    """
    if not tau > 0.0:
        raise ValueError(f"tau must be positive, not {tau}")
    for _, score in results:
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"a score is in [0, 1], not {score}")
    # Step 2: to the Glicko-2 scale.
    mu = (player.rating - _BASE) / SCALE
    phi = player.rd / SCALE
    sigma = player.volatility
    if not results:
        # Step 6 alone: the rating and volatility stay, the RD grows (capped).
        phi_star = min(math.sqrt(phi * phi + sigma * sigma), _MAX_PHI)
        return Rating(player.rating, phi_star * SCALE, sigma, player.games)
    # Steps 3 and 4: the estimated variance v and the estimated improvement Δ.
    inv_v = 0.0
    total = 0.0
    for opponent, score in results:
        g_j = _g(opponent.rd / SCALE)
        e_j = _expected(mu, (opponent.rating - _BASE) / SCALE, g_j)
        inv_v += g_j * g_j * e_j * (1.0 - e_j)
        total += g_j * (score - e_j)
    v = 1.0 / inv_v
    delta = v * total
    # Step 5: the new volatility.
    sigma_new = _new_volatility(sigma, phi, v, delta, tau)
    # Step 6: the pre-period RD, never above the cap (so step 7's RD, smaller, is not either).
    phi_star = min(math.sqrt(phi * phi + sigma_new * sigma_new), _MAX_PHI)
    # Step 7: the new RD and rating.
    phi_new = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + inv_v)
    mu_new = mu + phi_new * phi_new * total
    # Step 8: back to the Glicko scale.
    return Rating(
        rating=mu_new * SCALE + _BASE,
        rd=phi_new * SCALE,
        volatility=sigma_new,
        games=player.games + len(results),
    )


def rate_game(a: Rating, b: Rating, score_a: float, tau: float = TAU) -> tuple[Rating, Rating]:
    """Rate one finished game as one rating period for both sides.

    ``score_a`` is side a's score (1 a win, 0.5 a draw, 0 a loss; b scores ``1 - score_a``).
    Each side is rated against the other's rating from before the game, so the order of
    the two calls does not matter. Returns ``(a_after, b_after)``: store both.
    """
    return rate(a, [(b, score_a)], tau), rate(b, [(a, 1.0 - score_a)], tau)


def score_of(result_winner: int | None, seat: int) -> float:
    """The score of ``seat`` (0 or 1) in a finished room whose RESULT names ``result_winner``.

    1.0 if the seat won, 0.0 if the other seat won, 0.5 for a draw (``winner`` None).
    A rated game abandoned, resigned or lost on time counts as a loss for that seat with
    nothing special to do: the room's RESULT then names the other seat the winner.
    """
    if seat not in (0, 1):
        raise ValueError(f"a seat is 0 or 1, not {seat}")
    if result_winner is None:
        return 0.5
    if result_winner not in (0, 1):
        raise ValueError(f"a winner is 0, 1 or None, not {result_winner}")
    return 1.0 if result_winner == seat else 0.0


def bot_rating_id(game_id: str, level: str) -> str:
    """The rated player a bot level of a game is (``bot:connect4:hard``): each level of each
    game has a rating of its own, so a bot's strength reads as a number."""
    return f"bot:{game_id}:{level}"


def is_bot_rating_id(player_id: str) -> bool:
    return player_id.startswith("bot:")


def bot_level(player_id: str) -> Level | None:
    """The house bot level a :func:`bot_rating_id` names (None: a person, or no level)."""
    if not is_bot_rating_id(player_id):
        return None
    level = player_id.rsplit(":", 1)[-1]
    return next((lv for lv in LEVELS if lv == level), None)


@dataclass(frozen=True)
class RatingChange:
    """What one finished rated game did to one side: ``player_id`` (a player's id or a
    :func:`bot_rating_id`) in ``seat`` scored ``score`` and went from ``before`` to
    ``after`` in ``game``."""

    seat: int
    player_id: str
    game: str
    score: float
    before: Rating
    after: Rating
