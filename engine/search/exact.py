"""Exact solving where a game is small enough: every root move with its proven score.

Connect-4 goes to :mod:`engine.search.connect4_solver` (within a time budget), Grundy to
:mod:`engine.search.grundy_solver`. Scores come back on the search's scale (``WIN - plies``
for a win, its negation for a loss, 0 for a draw), so callers need not know which solver ran.
"""

from __future__ import annotations

import time
from typing import Any

from engine.core import Game
from engine.search.connect4_solver import Connect4Solver, SolverTimeout, proof_of
from engine.search.scores import WIN

_C4 = Connect4Solver()


def _c4_scores(state: Any, time_ms: float | None) -> list[tuple[Any, int]] | None:
    try:
        scored = _C4.best_moves(state, time_ms)
    except SolverTimeout:
        return None
    out = []
    for col, pons in scored:
        # The child has one stone more; the proof is of the child, from the mover's side.
        proven, dist = proof_of(pons, state.moves)
        out.append(
            (col, 0 if proven == "draw" else (WIN - dist if proven == "win" else dist - WIN))
        )
    return out


def _grundy_scores(game: Game[Any, Any], state: Any) -> list[tuple[Any, int]]:
    from engine.games.grundy import Grundy
    from engine.search.grundy_solver import best_moves

    assert isinstance(game, Grundy)
    return [(m, WIN - d if wins else d - WIN) for m, wins, d in best_moves(game, state)]


def exact_scores(
    game: Game[Any, Any], state: Any, time_ms: float | None = None
) -> list[tuple[Any, int]] | None:
    """Every legal move with its exact score, best first; ``None`` if this game has no exact
    solver or the budget ran out."""
    if game.id == "connect4":
        scored = _c4_scores(state, time_ms)
    elif game.id == "grundy":
        scored = _grundy_scores(game, state)
    else:
        return None
    if scored is None:
        return None
    scored.sort(key=lambda ms: -ms[1])
    return scored


def exact_pv(
    game: Game[Any, Any], state: Any, first: Any, time_ms: float | None = None
) -> list[Any]:
    """The principal variation of a solved position: best replies while time allows."""
    deadline = None if time_ms is None else time.perf_counter() + time_ms / 1000
    pv = [first]
    state = game.apply(state, first)
    while game.outcome(state) is None:
        left = None if deadline is None else (deadline - time.perf_counter()) * 1000
        if left is not None and left <= 0:
            break
        scored = exact_scores(game, state, left)
        if not scored:
            break
        pv.append(scored[0][0])
        state = game.apply(state, scored[0][0])
    return pv
