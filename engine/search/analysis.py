"""``tablas analyze``: one position in, the engine's verdict out, in the contract's shape."""

from __future__ import annotations

import time
from typing import Any

from tablas.engine.core import JSON, Game, Outcome
from tablas.engine.errors import InvalidInputError
from tablas.engine.search.decision import check_level
from tablas.engine.search.profiles import profile
from tablas.engine.search.scores import Proven


def analyze(
    game: Game[Any, Any],
    state: Any,
    position: str,
    depth: int | None = None,
    time_ms: float | None = None,
    level: str | None = None,
) -> JSON:
    """Searches ``state`` and reports best move, score, proof, PV and every root move scored,
    as the game's profile analyses it, plus ``outcome``: null while the game goes on. A
    finished ``state`` is answered too (:func:`game_over`). Bad limits raise
    :class:`InvalidInputError`, finished position or not."""
    if depth is not None and depth < 1:
        raise InvalidInputError(f"--depth must be at least 1, got {depth}")
    if time_ms is not None and time_ms <= 0:
        raise InvalidInputError(f"--time-ms must be positive, got {time_ms}")
    if level is not None:
        check_level(level)
    outcome = game.outcome(state)
    if outcome is not None:
        return game_over(game, state, position, outcome)
    verdict = profile(game.id).bots.analyze(game, state, position, depth, time_ms, level)
    return {**verdict, "outcome": None}


def game_over(game: Game[Any, Any], state: Any, position: str, outcome: Outcome) -> JSON:
    """The verdict on a finished position: no move, and the result proven at distance 0 for
    the side whose turn it would be (the profile's ``turn_at_end``), scored as the game's
    search scores an end it reaches; ``outcome`` is the game's result (winner seat or null,
    points, reason)."""
    p = profile(game.id)
    started = time.perf_counter()  # after the lookup (it may load the game), as a search's is
    seat = p.turn_at_end(state)
    proven: Proven = (
        "draw" if outcome.winner is None else "win" if outcome.winner == seat else "loss"
    )
    return {
        "game": game.id,
        "position": position,
        "best_move": None,
        "best_move_text": None,
        "score": p.bots.end_score(state, outcome, seat),
        "proven": proven,
        "distance": 0,
        "pv": [],
        "top": [],
        "depth": 0,
        "nodes": 0,
        "time_ms": round((time.perf_counter() - started) * 1000, 3),
        "outcome": outcome.to_json(),
    }
