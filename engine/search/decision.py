"""What a bot decides and what it reports while it thinks: plain data that crosses processes.

The bot levels are one list, :data:`LEVELS` (the wire protocol's ``Level`` is this same
``Literal``). A :class:`Decision` is a bot's answer; a :class:`SearchInfo` is one report of a
search in progress (after each completed alpha-beta iteration, or once with the decision).
Both carry the proof when the search found one, so whoever shows them needs no knowledge of
the score scale: ``proven`` is ``"win"``, ``"loss"`` or ``"draw"`` for the side that moves,
and ``distance`` the plies to the end under best play.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from tablas.engine.core import JSON
from tablas.engine.errors import InvalidInputError
from tablas.engine.search.scores import Proven

Level = Literal["random", "easy", "medium", "hard", "max"]
LEVELS: tuple[Level, ...] = get_args(Level)


def check_level(level: str) -> Level:
    """``level`` if it is one of :data:`LEVELS`; otherwise :class:`InvalidInputError`
    naming them."""
    for known in LEVELS:
        if level == known:
            return known
    raise InvalidInputError(f"unknown bot level {level!r}; levels: {', '.join(LEVELS)}")


@dataclass(frozen=True, slots=True)
class SearchInfo:
    """One report of a search in progress: ``score`` from the side to move, in the game's
    units (its profile's :class:`~tablas.engine.search.profiles.ScoreScale`); ``pv`` as move
    texts."""

    depth: int
    score: float | None
    pv: tuple[str, ...] = ()
    nodes: int = 0
    proven: Proven | None = None
    distance: int | None = None


@dataclass(slots=True)
class Decision:
    """What a bot chose and why; ``move`` is the contract's MOVE object."""

    move: JSON
    move_text: str
    score: float | None = None
    depth: int = 0
    nodes: int = 0
    proven: Proven | None = None
    distance: int | None = None
    pv: list[str] = field(default_factory=list)

    def info(self) -> SearchInfo:
        """The decision as the last report of its search."""
        return SearchInfo(self.depth, self.score, tuple(self.pv), self.nodes, self.proven,
                          self.distance)
