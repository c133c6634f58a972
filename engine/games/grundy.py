"""Grundy's game: split one heap into two unequal, non-empty heaps; who cannot move loses.

Position notation: heap sizes joined by ``,`` (``7`` or ``4,2,1``). A split replaces the heap
in place by its two parts, larger first, so ``7`` → ``4,3``. Heaps keep their order in the
notation, but the future depends only on the multiset, so :meth:`Grundy.key` sorts them and
:meth:`Grundy.legal_moves` lists one split per distinct result: the first heap of each size,
larger part first. Moves are written ``i:a+b`` (heap index ``i`` split into ``a`` and ``b``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from tablas.engine.core import JSON, Game, Outcome, check_options, option_int
from tablas.engine.errors import InvalidMoveError, InvalidPositionError

MAX_HEAP = 1000
MAX_HEAPS = 1000
GrundyMove = tuple[int, int, int]  # (heap index, larger part, smaller part)
_MOVE_RE = re.compile(r"^(\d+):(\d+)\+(\d+)$")


class GrundyState:
    """The heaps in notation order and the seat to move (heaps alone cannot tell whose turn)."""

    __slots__ = ("heaps", "turn")

    def __init__(self, heaps: tuple[int, ...], turn: int = 0) -> None:
        self.heaps = heaps
        self.turn = turn

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, GrundyState) and self.heaps == other.heaps and self.turn == other.turn
        )

    def __hash__(self) -> int:
        return hash((self.heaps, self.turn))

    def __repr__(self) -> str:
        return f"GrundyState({self.heaps!r}, turn={self.turn})"


@cache
def grundy_value(n: int) -> int:
    """The Grundy (nim) value of one heap of ``n``, by the mex over its splits."""
    if n < 3:
        return 0
    # Iterative from below so that a large first call does not hit the recursion limit.
    for m in range(3, n):
        grundy_value(m)
    seen = {grundy_value(a) ^ grundy_value(n - a) for a in range(1, (n + 1) // 2) if a != n - a}
    g = 0
    while g in seen:
        g += 1
    return g


def position_value(heaps: tuple[int, ...]) -> int:
    """The Grundy value of a position: the XOR of its heaps'. Zero means the mover loses."""
    v = 0
    for h in heaps:
        v ^= grundy_value(h)
    return v


class Grundy(Game[GrundyState, GrundyMove]):
    id = "grundy"
    title = "Grundy's game"

    def initial(self, options: Mapping[str, Any] | None = None) -> GrundyState:
        check_options(self.id, options, {"heap"})
        return GrundyState((option_int(self.id, options, "heap", 7, 1, MAX_HEAP),))

    def parse_position(self, text: str) -> GrundyState:
        parts = text.split(",")
        if not text or any(not p.isascii() or not p.isdigit() for p in parts):
            raise InvalidPositionError(
                f"grundy: position {text!r} must be heap sizes joined by ',' (e.g. '4,2,1')"
            )
        heaps = tuple(int(p) for p in parts)
        if len(heaps) > MAX_HEAPS or any(not 1 <= h <= MAX_HEAP for h in heaps):
            raise InvalidPositionError(
                f"grundy: position {text!r} needs 1 to {MAX_HEAPS} heaps of 1 to {MAX_HEAP}"
            )
        return GrundyState(heaps)

    def position_text(self, state: GrundyState) -> str:
        return ",".join(map(str, state.heaps))

    def key(self, state: GrundyState) -> tuple[int, ...]:
        # Heaps of 1 and 2 can never be split, so they do not change the future; the turn
        # does not either, since both players have the same moves.
        return tuple(sorted((h for h in state.heaps if h > 2), reverse=True))

    def state_to_json(self, state: GrundyState) -> JSON:
        return {"notation": self.position_text(state), "heaps": list(state.heaps)}

    def to_move(self, state: GrundyState) -> int | None:
        return None if self.outcome(state) is not None else state.turn

    def outcome(self, state: GrundyState) -> Outcome | None:
        if any(h > 2 for h in state.heaps):
            return None
        return Outcome(1 - state.turn, 1, "no_moves")

    def legal_moves(self, state: GrundyState) -> list[GrundyMove]:
        moves: list[GrundyMove] = []
        seen: set[int] = set()
        for i, h in enumerate(state.heaps):
            if h < 3 or h in seen:
                continue
            seen.add(h)
            for b in range(1, (h + 1) // 2):
                moves.append((i, h - b, b))
        return moves

    def apply(self, state: GrundyState, move: GrundyMove) -> GrundyState:
        i, a, b = move
        heaps = state.heaps
        return GrundyState((*heaps[:i], a, b, *heaps[i + 1 :]), 1 - state.turn)

    def move_to_json(self, move: GrundyMove) -> JSON:
        i, a, b = move
        return {"heap": i, "split": [a, b]}

    def move_from_json(self, state: GrundyState, obj: Any) -> GrundyMove:
        ok = isinstance(obj, dict) and set(obj) == {"heap", "split"}
        if ok:
            i, split = obj["heap"], obj["split"]
            ok = (
                isinstance(split, list)
                and len(split) == 2
                and all(type(x) is int for x in (i, *split))
            )
        if not ok:
            raise InvalidMoveError(
                f'grundy: move {obj!r} must be an object {{"heap": i, "split": [a, b]}} of integers'
            )
        return (obj["heap"], obj["split"][0], obj["split"][1])

    def move_text(self, state: GrundyState, move: GrundyMove) -> str:
        i, a, b = move
        return f"{i}:{a}+{b}"

    def parse_move(self, state: GrundyState, text: str) -> GrundyMove:
        m = _MOVE_RE.match(text)
        if not m:
            raise InvalidMoveError(f"grundy: move {text!r} must look like 'i:a+b', e.g. '0:4+3'")
        return (int(m[1]), int(m[2]), int(m[3]))
