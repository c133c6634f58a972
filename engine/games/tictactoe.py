"""Tic-tac-toe: X (seat 0) moves first on a 3×3 board; three in a line wins.

Position notation: 9 characters of ``X``, ``O`` and ``.``, row-major. A move is a cell
0..8 (its MOVE ``{"cell": i}``), written as the board shows it: column ``a``–``c`` from the
left, row ``1``–``3`` from the bottom, so cell 0 (top left) is ``a3``, cell 4 ``b2`` and cell 8
(bottom right) ``c1``, as on a chessboard. Reading a move also takes the bare digit 0..8.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tablas.engine.core import JSON, Game, Outcome, RecordFormat, check_options
from tablas.engine.errors import InvalidMoveError, InvalidPositionError
from tablas.engine.records import MOVES

LINES: tuple[tuple[int, int, int], ...] = (
    (0, 1, 2),
    (3, 4, 5),
    (6, 7, 8),
    (0, 3, 6),
    (1, 4, 7),
    (2, 5, 8),
    (0, 4, 8),
    (2, 4, 6),
)
def cell_name(cell: int) -> str:
    """Cell 0..8 as the board names it: ``a3`` top left … ``c1`` bottom right."""
    return "abc"[cell % 3] + str(3 - cell // 3)


LINE_MASKS: tuple[int, ...] = tuple((1 << a) | (1 << b) | (1 << c) for a, b, c in LINES)
FULL = (1 << 9) - 1
MARKS = "XO"

# The 8 symmetries of the square as cell permutations; search uses them to share TT entries.
SYMMETRIES: tuple[tuple[int, ...], ...] = tuple(
    tuple(perm)
    for perm in (
        (0, 1, 2, 3, 4, 5, 6, 7, 8),
        (2, 5, 8, 1, 4, 7, 0, 3, 6),
        (8, 7, 6, 5, 4, 3, 2, 1, 0),
        (6, 3, 0, 7, 4, 1, 8, 5, 2),
        (2, 1, 0, 5, 4, 3, 8, 7, 6),
        (6, 7, 8, 3, 4, 5, 0, 1, 2),
        (0, 3, 6, 1, 4, 7, 2, 5, 8),
        (8, 5, 2, 7, 4, 1, 6, 3, 0),
    )
)


class TTTState:
    """Two 9-bit masks; ``xs`` for seat 0, ``os`` for seat 1."""

    __slots__ = ("os", "xs")

    def __init__(self, xs: int, os: int) -> None:
        self.xs = xs
        self.os = os

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TTTState) and self.xs == other.xs and self.os == other.os

    def __hash__(self) -> int:
        return self.xs | (self.os << 9)

    def __repr__(self) -> str:
        return f"TTTState({TicTacToe().position_text(self)!r})"


def _holds_line(mask: int) -> bool:
    return any(mask & m == m for m in LINE_MASKS)


# Every set of cells a side can hold, answered once: the rules ask this twice a position.
_HAS_LINE: tuple[bool, ...] = tuple(_holds_line(mask) for mask in range(FULL + 1))


def has_line(mask: int) -> bool:
    return _HAS_LINE[mask]


def winning_line(mask: int) -> tuple[int, int, int] | None:
    for line, m in zip(LINES, LINE_MASKS):
        if mask & m == m:
            return line
    return None


def canonical_key(state: TTTState) -> int:
    """The smallest key over the 8 symmetries: equal for positions that are mirror images."""
    best = -1
    for perm in SYMMETRIES:
        k = 0
        for dst, src in enumerate(perm):
            if state.xs >> src & 1:
                k |= 1 << dst
            elif state.os >> src & 1:
                k |= 1 << (dst + 9)
        if best < 0 or k < best:
            best = k
    return best


class TicTacToe(Game[TTTState, int]):
    id = "tictactoe"
    title = "Tic-tac-toe"

    def initial(self, options: Mapping[str, Any] | None = None) -> TTTState:
        check_options(self.id, options, set())
        return TTTState(0, 0)

    def parse_position(self, text: str) -> TTTState:
        if len(text) != 9 or any(c not in "XO." for c in text):
            raise InvalidPositionError(
                f"tictactoe: position {text!r} must be 9 characters of 'X', 'O' and '.'"
            )
        xs = sum(1 << i for i, c in enumerate(text) if c == "X")
        os = sum(1 << i for i, c in enumerate(text) if c == "O")
        nx, no = bin(xs).count("1"), bin(os).count("1")
        if nx - no not in (0, 1):
            raise InvalidPositionError(
                f"tictactoe: position {text!r} has {nx} X and {no} O; X moves first, so X "
                "must have as many marks as O or one more"
            )
        xline, oline = has_line(xs), has_line(os)
        if (xline and nx != no + 1) or (oline and nx != no):
            raise InvalidPositionError(
                f"tictactoe: position {text!r} is unreachable: play continued after a win"
            )
        return TTTState(xs, os)

    def position_text(self, state: TTTState) -> str:
        return "".join(
            "X" if state.xs >> i & 1 else "O" if state.os >> i & 1 else "." for i in range(9)
        )

    def record_formats(self) -> Sequence[RecordFormat]:
        """``moves``: the POSITION text spells the whole game."""
        return (MOVES,)

    def key(self, state: TTTState) -> int:
        return state.xs | (state.os << 9)

    def state_to_json(self, state: TTTState) -> JSON:
        line = winning_line(state.xs) or winning_line(state.os)
        return {
            "notation": self.position_text(state),
            "cells": [
                0 if state.xs >> i & 1 else 1 if state.os >> i & 1 else None for i in range(9)
            ],
            "winning_line": list(line) if line else None,
        }

    def to_move(self, state: TTTState) -> int | None:
        if self.outcome(state) is not None:
            return None
        return 0 if bin(state.xs).count("1") == bin(state.os).count("1") else 1

    def outcome(self, state: TTTState) -> Outcome | None:
        if has_line(state.xs):
            return Outcome(0, 1, "three_in_a_row")
        if has_line(state.os):
            return Outcome(1, 1, "three_in_a_row")
        if state.xs | state.os == FULL:
            return Outcome(None, 0, "board_full")
        return None

    def legal_moves(self, state: TTTState) -> list[int]:
        if self.outcome(state) is not None:
            return []
        taken = state.xs | state.os
        return [i for i in range(9) if not taken >> i & 1]

    def apply(self, state: TTTState, move: int) -> TTTState:
        if bin(state.xs).count("1") == bin(state.os).count("1"):
            return TTTState(state.xs | (1 << move), state.os)
        return TTTState(state.xs, state.os | (1 << move))

    def move_to_json(self, move: int) -> JSON:
        return {"cell": move}

    def move_from_json(self, state: TTTState, obj: Any) -> int:
        if not isinstance(obj, dict) or set(obj) != {"cell"}:
            raise InvalidMoveError(f'tictactoe: move {obj!r} must be an object {{"cell": 0..8}}')
        cell = obj["cell"]
        if isinstance(cell, bool) or not isinstance(cell, int) or not 0 <= cell <= 8:
            raise InvalidMoveError(f"tictactoe: move {obj!r}: 'cell' must be an integer 0..8")
        return cell

    def move_text(self, state: TTTState, move: int) -> str:
        return cell_name(move)

    def parse_move(self, state: TTTState, text: str) -> int:
        t = text.strip().lower() if isinstance(text, str) else ""
        if len(t) == 1 and t in "012345678":
            return int(t)
        if len(t) == 2 and t[0] in "abc" and t[1] in "123":
            return (3 - int(t[1])) * 3 + "abc".index(t[0])
        raise InvalidMoveError(
            f"tictactoe: move {text!r} must be a square a1..c3 (column a-c from the left, row"
            " 1-3 from the bottom) or a cell digit 0..8")
