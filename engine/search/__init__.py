"""Search, written once against the game protocol of :mod:`tablas.engine.core`.

* :mod:`tablas.engine.search.alphabeta`: negamax alpha-beta for deterministic games, with iterative
  deepening, a transposition table, move ordering, budgets and exact proofs.
* :mod:`tablas.engine.search.bots`: the bot levels, a pure function from a position to a decision.

Scores are integers from the side to move. A proven result is ``WIN - plies`` (a win in
``plies``) or its negation; everything a heuristic says stays strictly inside ``±HEURISTIC_MAX``.
"""

from tablas.engine.search.scores import HEURISTIC_MAX, WIN, distance_of, proven_of

__all__ = ["HEURISTIC_MAX", "WIN", "distance_of", "proven_of"]
