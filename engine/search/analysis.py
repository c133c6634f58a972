"""``tablas analyze``: one position in, the engine's verdict out, in the contract's shape."""

from __future__ import annotations

from typing import Any

from engine.core import JSON, Game
from engine.errors import InvalidInputError
from engine.games import profile
from engine.search.decision import check_level


def analyze(
    game: Game[Any, Any],
    state: Any,
    position: str,
    depth: int | None = None,
    time_ms: float | None = None,
    level: str | None = None,
) -> JSON:
    """Searches ``state`` and reports best move, score, proof, PV and every root move scored,
    as the game's profile analyses it. Bad limits raise :class:`InvalidInputError`."""
    if depth is not None and depth < 1:
        raise InvalidInputError(f"--depth must be at least 1, got {depth}")
    if time_ms is not None and time_ms <= 0:
        raise InvalidInputError(f"--time-ms must be positive, got {time_ms}")
    if level is not None:
        check_level(level)
    return profile(game.id).bots.analyze(game, state, position, depth, time_ms, level)
