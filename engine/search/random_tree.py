"""The lesson's random tree: every node has ``branching`` children down to ``depth``, the root
is MAX, and the leaves hold integers from 0 to 10.

It is a tiny game (enough of the protocol for :mod:`tablas.engine.search.trace` to walk it like any
other): a state is ``(level, index)``, the node's depth and its position from the left among
the nodes of that depth. Seat 0 (MAX) moves at even levels, seat 1 (MIN) at odd ones; a move is
the child's number from 0, written 1-based. Leaf ``i`` (from the left) holds
``splitmix64(seed, i) % 11``: a counter-based generator, so a leaf's value depends only on the
seed and its index, and the same seed, branching and depth give the same leaves in every
algorithm, order and Python version.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tablas.engine.core import Outcome
from tablas.engine.errors import InvalidInputError

State = tuple[int, int]  # (level, index from the left at that level)

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
LEAF_MAX = 10


def splitmix64(seed: int, i: int) -> int:
    """The ``i``-th output (from 0) of the SplitMix64 generator started at ``seed``."""
    z = (seed + (i + 1) * _GOLDEN) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def leaf_values(seed: int, count: int) -> list[int]:
    """The first ``count`` leaf values of the tree with this seed, left to right."""
    return [splitmix64(seed, i) % (LEAF_MAX + 1) for i in range(count)]


def tree_size(branching: int, depth: int) -> int:
    """The number of nodes of the tree: 1 + b + b² + … + b^depth."""
    return sum(branching**k for k in range(depth + 1))


class RandomTree:
    """A complete tree with random leaves, shaped as a game for the tracing search."""

    id = "random"

    def __init__(self, branching: int, depth: int, seed: int) -> None:
        if branching < 1 or depth < 1:
            raise InvalidInputError(
                f"random tree: branching and depth must be at least 1 "
                f"(got branching {branching}, depth {depth})"
            )
        self.branching, self.depth, self.seed = branching, depth, seed

    def initial(self) -> State:
        return (0, 0)

    def to_move(self, state: State) -> int | None:
        level = state[0]
        return None if level == self.depth else level % 2

    def outcome(self, state: State) -> Outcome | None:
        # A leaf ends the "game"; its value is not a result but a number (leaf_value).
        return Outcome(None, 0, "leaf") if state[0] == self.depth else None

    def successors(self, state: State) -> list[tuple[int, State]]:
        level, index = state
        if level == self.depth:
            return []
        b = self.branching
        return [(m, (level + 1, index * b + m)) for m in range(b)]

    def is_chance(self, state: Any) -> bool:
        return False

    def chance_outcomes(self, state: Any) -> Sequence[tuple[Any, float]]:
        return ()

    def apply_chance(self, state: Any, outcome: Any) -> Any:
        raise InvalidInputError("random tree: there are no dice in a random tree")

    def move_text(self, state: State, move: int) -> str:
        return str(move + 1)

    def chance_text(self, outcome: Any) -> str:
        raise InvalidInputError("random tree: there are no dice in a random tree")

    def leaf_value(self, state: State) -> int:
        """The number at a leaf (MAX's point of view); only leaves have one."""
        level, index = state
        assert level == self.depth, f"{state} is not a leaf"
        return splitmix64(self.seed, index) % (LEAF_MAX + 1)
