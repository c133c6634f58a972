"""The house bots' fixed ratings (contract section 10), computed from the bot ladder.

Each game's ``random`` level is the anchor's anchor at :data:`BASE`; each level above it is
rated from its measured score against the level below (``tools.ladder``'s matches, as
docs/strength.md records them), as Elo/Glicko read a score: a step of
400·log10(s / (1 − s)) points. A perfect score (60-0-0) says only that the step is large: it is
read as the lower end of its 95% Wilson interval. The RD is the step estimates' standard error
added up the ladder (the delta method: 400 / ln 10 / √(n·s·(1 − s)) a step), at least
:data:`MIN_RD`. ``max`` takes ``hard``'s rating where the ladder could not tell them apart
(every game but backgammon: both solve, or spend the same budget).

``engine/search/profiles.py`` holds the result (each profile's ``bot_ratings``); a test checks
that it is what this computes. Run ``python -m tools.anchors`` to print the table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

BASE = 700.0  # the random mover: a person who knows the rules beats it nearly always
MIN_RD = 30.0
UPPER = ("easy", "medium", "hard", "max")

# Wins, draws, losses of each level against the one below (easy vs random first), from the
# ladder runs recorded in docs/strength.md ("The bot ladder"; backgammon: "Matches between
# adjacent levels", without the cube, games won).
LADDER: Mapping[str, Sequence[tuple[int, int, int]]] = {
    "tictactoe": [(29, 1, 10), (33, 2, 5), (22, 18, 0)],
    "grundy": [(64, 0, 36), (69, 0, 31), (98, 0, 2)],
    "connect4": [(60, 0, 0), (44, 7, 9), (44, 3, 13)],
    "boom": [(20, 0, 0), (20, 0, 0), (19, 0, 1)],
    "backgammon": [(99, 0, 1), (73, 0, 27), (76, 0, 24), (83, 0, 77)],
}


def wilson_low(s: float, n: int, z: float = 1.96) -> float:
    """The lower end of the Wilson score interval of a score ``s`` over ``n`` games."""
    d = 1 + z * z / n
    c = s + z * z / (2 * n)
    r = z * math.sqrt(s * (1 - s) / n + z * z / (4 * n * n))
    return (c - r) / d


def step(wins: int, draws: int, losses: int) -> tuple[float, float]:
    """The rating step a score says, and its standard error."""
    n = wins + draws + losses
    s = (wins + draws / 2) / n
    if s >= 1.0:
        s = wilson_low(1.0, n)
    if s <= 0.0:
        s = 1.0 - wilson_low(1.0, n)
    points = 400 * math.log10(s / (1 - s))
    se = 400 / math.log(10) / math.sqrt(n * s * (1 - s))
    return points, se


def anchors(ladder: Sequence[tuple[int, int, int]]) -> dict[str, tuple[int, int]]:
    """Each level's (rating, RD), rounded, from one game's ladder."""
    rating, variance = BASE, 0.0
    out = {"random": (round(rating), round(MIN_RD))}
    for level, result in zip(UPPER, ladder):
        points, se = step(*result)
        rating += points
        variance += se * se
        out[level] = (round(rating), round(max(MIN_RD, math.sqrt(variance))))
    if "max" not in out:
        out["max"] = out["hard"]
    return out


def main() -> None:
    for game, ladder in LADDER.items():
        row = ", ".join(f"{lv} {r} (RD {rd})" for lv, (r, rd) in anchors(ladder).items())
        print(f"{game}: {row}")


if __name__ == "__main__":
    main()
