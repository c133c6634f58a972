"""The bots and the analysis of deterministic games: alpha-beta, and an exact solver where the
game's profile has one.

A profile describes a game's levels as :class:`LevelSpec`\\ s (depth in plies or a time
budget; noise is a uniform random amount added to every root move's score before the best is
taken, so a weak level still prefers good moves; a novice evaluation may replace the game's
own). The levels of every game are in :mod:`tablas.engine.search.profiles`.

"solved" levels (``hard``, ``max``) try the exact solver with half the time budget before the
alpha-beta search gets the rest.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from tablas.engine.core import JSON, Game, Outcome
from tablas.engine.errors import InvalidInputError
from tablas.engine.search.alphabeta import AlphaBeta, Limits, SearchResult
from tablas.engine.search.decision import Decision, Level, SearchInfo, check_level
from tablas.engine.search.exact import ExactSolver, exact_pv, exact_scores
from tablas.engine.search.scores import WIN, distance_of, proven_of

Evaluation = Callable[[Any], int]
MoveOrder = Callable[[Any, list[Any]], list[Any]]
# Given the root of a search, the table key to use (None: the game's own key).
KeyFor = Callable[[Any], Callable[[Any], Hashable] | None]

DEFAULT_ANALYSIS_MS = 2000.0
SOLVED_LEVELS: frozenset[Level] = frozenset({"hard", "max"})


@dataclass(frozen=True, slots=True)
class LevelSpec:
    depth: int | None = None
    time_ms: float | None = None
    noise: int = 0
    evaluation: Evaluation | None = None  # a novice's, instead of the game's own


def pv_texts(game: Game[Any, Any], state: Any, pv: list[Any]) -> list[str]:
    texts = []
    for m in pv:
        texts.append(game.move_text(state, m))
        state = game.apply(state, m)
    return texts


@dataclass(frozen=True)
class AlphaBetaBots:
    """A deterministic game's bots and analysis, from its profile's pieces."""

    levels: Mapping[Level, LevelSpec]
    evaluate: Evaluation | None = None
    order: MoveOrder | None = None
    key_for: KeyFor | None = None
    solver: ExactSolver | None = None

    def engine(self, game: Game[Any, Any], root: Any = None,
               evaluation: Evaluation | None = None) -> AlphaBeta[Any, Any]:
        """An alpha-beta engine with the game's evaluation (or ``evaluation``), its move
        order, and the table key that suits a search from ``root`` (symmetry folding where it
        pays)."""
        key = self.key_for(root) if self.key_for is not None and root is not None else None
        return AlphaBeta(game, evaluate=evaluation or self.evaluate, order=self.order, key=key)

    def decide(
        self,
        game: Game[Any, Any],
        state: Any,
        level: Level,
        budget_ms: float | None,
        seed: int,
        on_progress: Callable[[SearchInfo], None] | None,
    ) -> Decision:
        rng = random.Random(seed)
        moves = game.legal_moves(state)
        if not moves:
            raise InvalidInputError(
                f"{game.id}: no move to choose in {game.position_text(state)!r}")
        if level == "random":
            m = rng.choice(moves)
            return Decision(game.move_to_json(m), game.move_text(state, m))
        spec = self.levels[level]
        time_ms = spec.time_ms
        if budget_ms is not None:
            time_ms = budget_ms if time_ms is None else min(time_ms, budget_ms)
        if level in SOLVED_LEVELS and self.solver is not None:
            # Perfect play when the solver answers in half the time; else search with the rest.
            started = time.perf_counter()
            scored = exact_scores(self.solver, state, None if time_ms is None else time_ms / 2)
            if scored is not None:
                best, score = scored[0]
                text = game.move_text(state, best)
                return Decision(move=game.move_to_json(best), move_text=text, score=score,
                                proven=proven_of(score, True), distance=distance_of(score, True),
                                pv=[text])
            if time_ms is not None:
                time_ms = max(1.0, time_ms - (time.perf_counter() - started) * 1000)

        def iteration(r: SearchResult[Any]) -> None:
            if on_progress is not None:
                on_progress(SearchInfo(r.depth, r.score, tuple(pv_texts(game, state, r.pv)),
                                       r.nodes, proven_of(r.score, r.exact),
                                       distance_of(r.score, r.exact)))

        result = self.engine(game, state, spec.evaluation).search(
            state, Limits(depth=spec.depth, time_ms=time_ms), multipv=spec.noise > 0,
            on_iteration=None if on_progress is None else iteration,
        )
        return decision_of(game, state, result, _noisy_choice(result, spec.noise, rng))

    def analyze(
        self,
        game: Game[Any, Any],
        state: Any,
        position: str,
        depth: int | None,
        time_ms: float | None,
        level: str | None,
    ) -> JSON:
        """``tablas analyze``: best move, score, proof, PV and every root move scored (the
        contract's JSON) of a position in play. Without a depth, time or level the budget is
        :data:`DEFAULT_ANALYSIS_MS`; the search stops earlier once it has proved the result."""
        if level is not None:
            spec = self.levels.get(check_level(level))
            if spec is not None:
                depth = depth if depth is not None else spec.depth
                time_ms = time_ms if time_ms is not None else spec.time_ms
        if depth is None and time_ms is None:
            time_ms = DEFAULT_ANALYSIS_MS
        if not game.legal_moves(state):
            raise InvalidInputError(
                f"{game.id}: position {position!r} has no move to search; "
                "tablas.engine.search.analysis.analyze answers finished positions")
        t0 = time.perf_counter()
        solved = None if depth is not None else self._solve(game, state, time_ms)
        if solved is not None:
            return {"game": game.id, "position": position, **solved}
        if time_ms is not None:
            time_ms = max(1.0, time_ms - (time.perf_counter() - t0) * 1000)
        r = self.engine(game, state).search(state, Limits(depth=depth, time_ms=time_ms),
                                            multipv=True)
        return {
            "game": game.id,
            "position": position,
            "best_move": game.move_to_json(r.best_move),
            "best_move_text": game.move_text(state, r.best_move),
            "score": r.score,
            "proven": r.proven,
            "distance": r.distance,
            "pv": pv_texts(game, state, r.pv),
            "top": _top(game, state, r.top),
            "depth": r.depth,
            "nodes": r.nodes,
            "time_ms": round(r.time_ms, 3),
        }

    def end_score(self, state: Any, outcome: Outcome, seat: int) -> int:
        """A finished position's score for ``seat``: the proof the search gives an end at
        distance 0 (``WIN``, ``-WIN``, or 0 for a draw)."""
        if outcome.winner is None:
            return 0
        return WIN if outcome.winner == seat else -WIN

    def _solve(self, game: Game[Any, Any], state: Any, time_ms: float | None) -> JSON | None:
        """The verdict from the exact solver, or None when there is none or time ran out.
        Half the budget goes to solving the root moves, the rest to spelling out the PV."""
        if self.solver is None:
            return None
        t0 = time.perf_counter()
        scored = exact_scores(self.solver, state, None if time_ms is None else time_ms / 2)
        if scored is None:
            return None
        best, score = scored[0]
        left = None if time_ms is None else max(0.0, time_ms - (time.perf_counter() - t0) * 1000)
        pv = exact_pv(game, self.solver, state, best, None if self.solver.instant_pv else left)
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
            "top": _top(game, state, scored),
            "depth": len(pv),
            "nodes": 0,
            "time_ms": round((time.perf_counter() - t0) * 1000, 3),
        }


def _top(game: Game[Any, Any], state: Any, scored: list[tuple[Any, int]]) -> list[JSON]:
    return [{"move": game.move_to_json(m), "move_text": game.move_text(state, m), "score": s}
            for m, s in scored]


def decision_of(
    game: Game[Any, Any], state: Any, result: SearchResult[Any], move: Any
) -> Decision:
    """The decision to play ``move`` after the search ``result``; the principal variation
    only stands behind the search's own best move, so another move gets just itself."""
    return Decision(
        move=game.move_to_json(move),
        move_text=game.move_text(state, move),
        score=result.score,
        depth=result.depth,
        nodes=result.nodes,
        proven=result.proven,
        distance=result.distance,
        pv=pv_texts(game, state, result.pv if move == result.best_move else [move]),
    )


def _noisy_choice(result: SearchResult[Any], noise: int, rng: random.Random) -> Any:
    if noise <= 0 or not result.top:
        return result.best_move
    return max(result.top, key=lambda ms: ms[1] + rng.uniform(-noise, noise))[0]
