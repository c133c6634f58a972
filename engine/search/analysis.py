"""``tablas analyze``: one position in, the engine's verdict out, in the contract's shape."""

from __future__ import annotations

from typing import Any

from engine.core import JSON, Game
from engine.errors import InvalidInputError
from engine.search.alphabeta import Limits
from engine.search.bots import LEVEL_SPECS, check_level, engine_for, pv_texts

DEFAULT_TIME_MS = 2000.0


def analyze(
    game: Game[Any, Any],
    state: Any,
    position: str,
    depth: int | None = None,
    time_ms: float | None = None,
    level: str | None = None,
) -> JSON:
    """Searches ``state`` and reports best move, score, proof, PV and every root move scored.

    Without a depth, time or level the budget is :data:`DEFAULT_TIME_MS`; the search stops
    earlier when it has proved the result.
    """
    if depth is not None and depth < 1:
        raise InvalidInputError(f"--depth must be at least 1, got {depth}")
    if time_ms is not None and time_ms <= 0:
        raise InvalidInputError(f"--time-ms must be positive, got {time_ms}")
    if game.id == "backgammon":
        from engine.search.backgammon_bot import analyze_backgammon

        return analyze_backgammon(game, state, position, depth, time_ms, level)
    if level is not None:
        spec = LEVEL_SPECS[game.id].get(check_level(level))
        if spec is not None:
            depth = depth if depth is not None else spec.depth
            time_ms = time_ms if time_ms is not None else spec.time_ms
    if depth is None and time_ms is None:
        time_ms = DEFAULT_TIME_MS
    if not game.legal_moves(state):
        raise InvalidInputError(f"{game.id}: position {position!r} is over; nothing to analyze")
    r = engine_for(game).search(state, Limits(depth=depth, time_ms=time_ms), multipv=True)
    return {
        "game": game.id,
        "position": position,
        "best_move": game.move_to_json(r.best_move),
        "best_move_text": game.move_text(state, r.best_move),
        "score": r.score,
        "proven": r.proven,
        "distance": r.distance,
        "pv": pv_texts(game, state, r.pv),
        "top": [
            {"move": game.move_to_json(m), "move_text": game.move_text(state, m), "score": s}
            for m, s in r.top
        ],
        "depth": r.depth,
        "nodes": r.nodes,
        "time_ms": round(r.time_ms, 3),
    }
