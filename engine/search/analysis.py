"""``tablas analyze``: one position in, the engine's verdict out, in the contract's shape."""

from __future__ import annotations

import time
from typing import Any

from engine.core import JSON, Game
from engine.errors import InvalidInputError
from engine.search.alphabeta import Limits
from engine.search.bots import LEVEL_SPECS, check_level, engine_for, pv_texts
from engine.search.exact import exact_pv, exact_scores
from engine.search.scores import distance_of, proven_of

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
    t0 = time.perf_counter()
    solved = None if depth is not None else solve_exactly(game, state, time_ms)
    if solved is not None:
        return {"game": game.id, "position": position, **solved}
    if time_ms is not None:
        time_ms = max(1.0, time_ms - (time.perf_counter() - t0) * 1000)
    r = engine_for(game, state).search(state, Limits(depth=depth, time_ms=time_ms), multipv=True)
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


def solve_exactly(game: Game[Any, Any], state: Any, time_ms: float | None) -> JSON | None:
    """The verdict from an exact solver, or ``None`` when there is none or time ran out.

    Half the budget goes to solving the root moves, the rest to spelling out the PV."""
    t0 = time.perf_counter()
    half = None if time_ms is None else time_ms / 2
    scored = exact_scores(game, state, half)
    if scored is None:
        return None
    best, score = scored[0]
    left = None if time_ms is None else max(0.0, time_ms - (time.perf_counter() - t0) * 1000)
    # Grundy's solver is memoised: once the root is solved, the whole PV costs next to nothing.
    pv = exact_pv(game, state, best, None if game.id == "grundy" else left)
    draw_len = None
    if score == 0:
        end = state
        for m in pv:
            end = game.apply(end, m)
        draw_len = len(pv) if game.outcome(end) is not None else None
    return {
        "best_move": game.move_to_json(best),
        "best_move_text": game.move_text(state, best),
        "score": score,
        "proven": proven_of(score, True),
        "distance": distance_of(score, True, draw_len),
        "pv": pv_texts(game, state, pv),
        "top": [
            {"move": game.move_to_json(m), "move_text": game.move_text(state, m), "score": s}
            for m, s in scored
        ],
        "depth": len(pv),
        "nodes": 0,
        "time_ms": round((time.perf_counter() - t0) * 1000, 3),
    }
