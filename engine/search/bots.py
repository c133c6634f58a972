"""Bot levels: a decision is a pure function ``(game, state, level, budget, seed) → Decision``.

Everything it takes and returns can cross a process boundary (the server computes decisions
in a process pool), and the same inputs give the same decision: randomness comes only from
``seed``, and a time budget is the one thing that can make two runs differ.

Levels, per game (depth in plies, or a time budget; noise is a uniform random amount added to
every root move's score before the best is taken, so a weak level still prefers good moves):

=========  =============  =============  =============  ======================
level      tic-tac-toe    Grundy         Connect-4      BOOM
=========  =============  =============  =============  ======================
random     uniform        uniform        uniform        uniform
easy       depth 1, ±300  depth 2, ±60,  depth 2, ±120  depth 2, ±120
                          parity
medium     depth 3, ±40   depth 3,       depth 4, ±20   depth 4, ±20
                          parity
hard       solved         solved         solved, or 1 s 1 s
max        solved         solved         solved, or 5 s 5 s
=========  =============  =============  =============  ======================

"parity": Grundy's lower levels judge a position by a novice's count
(:func:`engine.search.evals.grundy_parity_eval`) instead of the Grundy values, which would make
every level that searches at all play perfectly (the first bot ladder showed easy, medium and
hard all equal). They still see a won or lost end inside their depth.

"solved" is perfect play from an exact solver (:mod:`engine.search.exact`), tried with half
the time budget before the alpha-beta search gets the rest.
Backgammon's levels are in :mod:`engine.search.backgammon_bot`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.core import JSON, Game
from engine.errors import InvalidInputError
from engine.games import get_game
from engine.search.alphabeta import AlphaBeta, Limits, SearchResult
from engine.search.evals import EVALUATIONS, KEYS, NOVICE_EVALUATIONS, ORDERS
from engine.search.exact import exact_scores
from engine.search.scores import distance_of, proven_of

LEVELS: tuple[str, ...] = ("random", "easy", "medium", "hard", "max")


@dataclass(frozen=True, slots=True)
class LevelSpec:
    depth: int | None = None
    time_ms: float | None = None
    noise: int = 0
    evaluation: str | None = None  # a name in NOVICE_EVALUATIONS, else the game's own


_DEFAULT = {
    "easy": LevelSpec(depth=2, noise=120),
    "medium": LevelSpec(depth=4, noise=20),
    "hard": LevelSpec(time_ms=1000),
    "max": LevelSpec(time_ms=5000),
}
LEVEL_SPECS: dict[str, dict[str, LevelSpec]] = {
    "tictactoe": {
        "easy": LevelSpec(depth=1, noise=300),
        "medium": LevelSpec(depth=3, noise=40),
        "hard": LevelSpec(depth=9),
        "max": LevelSpec(depth=9),
    },
    "grundy": {
        **_DEFAULT,
        "easy": LevelSpec(depth=2, noise=60, evaluation="grundy_parity"),
        "medium": LevelSpec(depth=3, evaluation="grundy_parity"),
    },
    "connect4": _DEFAULT,
    "boom": _DEFAULT,
}


@dataclass(slots=True)
class Decision:
    """What a bot chose and why; ``move`` is the contract's MOVE object."""

    move: JSON
    move_text: str
    score: float | None = None
    depth: int = 0
    nodes: int = 0
    proven: str | None = None
    distance: int | None = None
    pv: list[str] = field(default_factory=list)

    def to_json(self) -> JSON:
        return {
            "move": self.move,
            "move_text": self.move_text,
            "score": self.score,
            "depth": self.depth,
            "nodes": self.nodes,
            "proven": self.proven,
            "distance": self.distance,
            "pv": self.pv,
        }


def check_level(level: str) -> str:
    if level not in LEVELS:
        raise InvalidInputError(f"unknown bot level {level!r}; levels: {', '.join(LEVELS)}")
    return level


def engine_for(
    game: Game[Any, Any], root: Any = None, evaluation: str | None = None
) -> AlphaBeta[Any, Any]:
    """An alpha-beta engine with the game's own evaluation (or the named novice one) and move
    order, and the table key that suits a search from ``root`` (symmetry folding where it
    pays)."""
    key_for = KEYS.get(game.id)
    key = key_for(root) if key_for is not None and root is not None else None
    evaluate = NOVICE_EVALUATIONS[evaluation] if evaluation else EVALUATIONS.get(game.id)
    return AlphaBeta(game, evaluate=evaluate, order=ORDERS.get(game.id), key=key)


def pv_texts(game: Game[Any, Any], state: Any, pv: list[Any]) -> list[str]:
    texts = []
    for m in pv:
        texts.append(game.move_text(state, m))
        state = game.apply(state, m)
    return texts


def decide(
    game_id: str,
    state: Any,
    level: str,
    budget_ms: float | None = None,
    seed: int = 0,
    *,
    on_progress: Callable[[JSON], None] | None = None,
) -> Decision:
    """The bot's decision in ``state`` (which must be a decision for the side to move).

    ``budget_ms`` caps the thinking time of every level (the server passes the time left on a
    deadline); ``seed`` makes the noise reproducible. ``on_progress`` sees
    ``{depth, score, pv (move texts), nodes}`` after each completed alpha-beta iteration
    (backgammon: once, with the decision).
    """
    game = get_game(game_id)
    check_level(level)
    if game.id == "backgammon":
        from engine.search.backgammon_bot import decide_backgammon

        decision = decide_backgammon(game, state, level, budget_ms, seed)
        if on_progress is not None:
            on_progress({"depth": decision.depth, "score": decision.score,
                         "pv": decision.pv, "nodes": decision.nodes})
        return decision
    rng = random.Random(seed)
    moves = game.legal_moves(state)
    if not moves:
        raise InvalidInputError(f"{game.id}: no move to choose in {game.position_text(state)!r}")
    if level == "random":
        m = rng.choice(moves)
        return Decision(game.move_to_json(m), game.move_text(state, m))
    spec = LEVEL_SPECS[game.id][level]
    time_ms = spec.time_ms
    if budget_ms is not None:
        time_ms = budget_ms if time_ms is None else min(time_ms, budget_ms)
    if level in ("hard", "max"):
        # Perfect play when a solver answers in half the time; else search with what is left.
        started = time.perf_counter()
        scored = exact_scores(game, state, None if time_ms is None else time_ms / 2)
        if scored is not None:
            best, score = scored[0]
            text = game.move_text(state, best)
            return Decision(
                move=game.move_to_json(best),
                move_text=text,
                score=score,
                proven=proven_of(score, True),
                distance=distance_of(score, True),
                pv=[text],
            )
        if time_ms is not None:
            time_ms = max(1.0, time_ms - (time.perf_counter() - started) * 1000)
    def iteration(r: SearchResult[Any]) -> None:
        if on_progress is not None:
            on_progress({"depth": r.depth, "score": r.score, "pv": pv_texts(game, state, r.pv),
                         "nodes": r.nodes})

    result = engine_for(game, state, spec.evaluation).search(
        state, Limits(depth=spec.depth, time_ms=time_ms), multipv=spec.noise > 0,
        on_iteration=None if on_progress is None else iteration,
    )
    return decision_of(game, state, result, _noisy_choice(result, spec.noise, rng))


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
