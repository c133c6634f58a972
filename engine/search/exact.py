"""Exact solvers, where a game is small enough: every root move with its proven score.

A game's profile (:mod:`tablas.engine.search.profiles`) names its solver, if it has one. Scores come
back on the search's scale (``WIN - plies`` for a win, its negation for a loss, 0 for a draw),
so callers need not know which solver ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Any, Protocol

from tablas.engine.core import Game
from tablas.engine.games.connect4 import C4State
from tablas.engine.games.grundy import Grundy, GrundyState
from tablas.engine.search.alphabeta import AlphaBeta, Limits
from tablas.engine.search.connect4_solver import Connect4Solver, SolverTimeout, proof_of
from tablas.engine.search.grundy_solver import best_moves
from tablas.engine.search.scores import WIN


class ExactSolver(Protocol):
    """Solves positions of one game exactly."""

    # True when solving is memoised so cheaply that a principal variation needs no budget.
    instant_pv: bool

    def scores(self, state: Any, time_ms: float | None) -> list[tuple[Any, int]] | None:
        """Every legal move with its exact score from the mover's side, in any order; None
        when the budget ran out first."""
        ...


class Connect4Exact:
    """Pons' solver (:mod:`tablas.engine.search.connect4_solver`), one instance reused per process
    for the bounds its tables keep."""

    instant_pv = False

    def __init__(self) -> None:
        self._solver = Connect4Solver()

    def scores(self, state: C4State, time_ms: float | None) -> list[tuple[Any, int]] | None:
        try:
            scored = self._solver.best_moves(state, time_ms)
        except SolverTimeout:
            return None
        out: list[tuple[Any, int]] = []
        for col, pons in scored:
            # The child has one stone more; the proof is of the child, from the mover's side.
            proven, dist = proof_of(pons, state.moves)
            out.append(
                (col, 0 if proven == "draw" else (WIN - dist if proven == "win" else dist - WIN))
            )
        return out


class GrundyExact:
    """Grundy values for who wins, a memoised search for how long it lasts."""

    instant_pv = True

    def __init__(self) -> None:
        self._game = Grundy()

    def scores(self, state: GrundyState, time_ms: float | None) -> list[tuple[Any, int]]:
        return [(m, WIN - d if wins else d - WIN)
                for m, wins, d in best_moves(self._game, state)]


class SearchExact:
    """Alpha-beta to the end of the game, without an evaluation: for a game small enough
    that this takes well under a second from its start (tic-tac-toe). Every root move is
    searched with a full window (``multipv``), so every score is exact; one table is kept
    across calls. ``key``: the table key (e.g. one folding symmetric positions)."""

    instant_pv = False

    def __init__(self, game: Game[Any, Any], key: Callable[[Any], Hashable] | None = None
                 ) -> None:
        self._search = AlphaBeta(game, key=key)

    def scores(self, state: Any, time_ms: float | None) -> list[tuple[Any, int]] | None:
        r = self._search.search(state, Limits(time_ms=time_ms), multipv=True)
        return list(r.top) if r.exact else None


def exact_scores(
    solver: ExactSolver, state: Any, time_ms: float | None = None
) -> list[tuple[Any, int]] | None:
    """Every legal move with its exact score, best first; None if the budget ran out."""
    scored = solver.scores(state, time_ms)
    if scored is None:
        return None
    scored.sort(key=lambda ms: -ms[1])
    return scored


def exact_pv(
    game: Game[Any, Any], solver: ExactSolver, state: Any, first: Any,
    time_ms: float | None = None,
) -> list[Any]:
    """The principal variation of a solved position: best replies while time allows."""
    deadline = None if time_ms is None else time.perf_counter() + time_ms / 1000
    pv = [first]
    state = game.apply(state, first)
    while game.outcome(state) is None:
        left = None if deadline is None else (deadline - time.perf_counter()) * 1000
        if left is not None and left <= 0:
            break
        scored = exact_scores(solver, state, left)
        if not scored:
            break
        pv.append(scored[0][0])
        state = game.apply(state, scored[0][0])
    return pv
