"""The score scale shared by every search: proofs carry their distance to the end."""

from __future__ import annotations

from typing import Literal

Proven = Literal["win", "loss", "draw"]

WIN = 1_000_000
MAX_PLIES = 10_000
PROVEN_MIN = WIN - MAX_PLIES
HEURISTIC_MAX = PROVEN_MIN - 1
INF = WIN + 1


def is_proven_win(score: int) -> bool:
    return score >= PROVEN_MIN


def is_proven_loss(score: int) -> bool:
    return score <= -PROVEN_MIN


def proven_of(score: int, exact: bool) -> Proven | None:
    """``"win"``, ``"loss"`` or ``"draw"`` when the score is a proof; else ``None``."""
    if is_proven_win(score):
        return "win"
    if is_proven_loss(score):
        return "loss"
    if exact:
        return "draw" if score == 0 else None
    return None


def distance_of(score: int, exact: bool, draw_distance: int | None = None) -> int | None:
    """Plies to the end under best play for a proven score (``draw_distance`` for draws)."""
    if is_proven_win(score):
        return WIN - score
    if is_proven_loss(score):
        return WIN + score
    return draw_distance if exact and score == 0 else None


def to_tt(score: int, ply: int) -> int:
    """Scores in the table are relative to the node, so a proof found at one depth is reused
    at another with the right distance."""
    if is_proven_win(score):
        return score + ply
    if is_proven_loss(score):
        return score - ply
    return score


def from_tt(score: int, ply: int) -> int:
    if is_proven_win(score):
        return score - ply
    if is_proven_loss(score):
        return score + ply
    return score
