"""The bots: a decision is a pure function ``(game, state, level, budget, seed) → Decision``.

Everything it takes and returns can cross a process boundary (the server computes decisions
in a process pool), and the same inputs give the same decision: randomness comes only from
``seed``, and a time budget is the one thing that can make two runs differ. What each level
does in each game is the game's profile (:mod:`tablas.engine.search.profiles`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tablas.engine.games import get_game
from tablas.engine.search.decision import LEVELS, Decision, SearchInfo, check_level
from tablas.engine.search.profiles import profile

__all__ = ["LEVELS", "Decision", "SearchInfo", "decide"]


def decide(
    game_id: str,
    state: Any,
    level: str,
    budget_ms: float | None = None,
    seed: int = 0,
    *,
    on_progress: Callable[[SearchInfo], None] | None = None,
) -> Decision:
    """The bot's decision in ``state`` (which must be a decision for the side to move).

    ``budget_ms`` caps the thinking time of every level (the server passes the time left on a
    deadline); ``seed`` makes the noise reproducible. ``on_progress`` sees a
    :class:`SearchInfo` after each completed alpha-beta iteration (backgammon: once, with the
    decision).
    """
    game = get_game(game_id)
    return profile(game_id).bots.decide(game, state, check_level(level), budget_ms, seed,
                                        on_progress)
