"""Connect Four: 7 columns × 6 rows; seat 0 moves first; four in a row wins, a full board draws.

Position notation: the moves so far as 1-based column digits (``"4453"``; ``""`` is the empty
board). A move is a column ``0..6`` inside the engine, ``{"column": c}`` as JSON and the 1-based
digit as text. :meth:`Connect4.legal_moves` lists columns left to right; search should use its
own order (:data:`CENTRE_ORDER`).

The board is Pascal Pons' bitboard ("Solving Connect 4", blog.gamesolver.org): column ``c``
takes the 7 bits ``c*7 .. c*7+6``, row ``r`` (0 = bottom) of it is bit ``c*7 + r``, and the 7th
bit of each column is an always-empty sentinel that stops lines from wrapping. A position is

* ``mask``: every stone on the board;
* ``current``: the stones of the player to move (so the last mover's are ``current ^ mask``).

``current + mask`` is a unique key of the position (:func:`key`). The module-level functions
below are the fast path for search: the integer helpers (:func:`alignment`,
:func:`compute_winning_position`, :func:`possible`, :func:`play_bits`) work on bare ``int``
bitboards, the state helpers (:func:`can_play`, :func:`play`, :func:`is_winning_move`, ...) on a
:class:`C4State`. The :class:`Connect4` methods are thin wrappers around them.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from tablas.engine.core import JSON, Game, Outcome, RecordFormat, check_options
from tablas.engine.errors import InvalidMoveError, InvalidPositionError
from tablas.engine.games.bitboard import geometry
from tablas.engine.records import MOVES

GEOMETRY = geometry(7, 6)
WIDTH = GEOMETRY.width
HEIGHT = GEOMETRY.height
H1 = GEOMETRY.h1  # bits per column: 6 cells and a sentinel
CELLS = WIDTH * HEIGHT

BOTTOM_MASK = GEOMETRY.bottom
"""The bottom cell of every column."""
BOARD_MASK = GEOMETRY.board
"""Every playable cell (sentinels excluded)."""
BOTTOM_MASK_COL = GEOMETRY.bottom_col
TOP_MASK_COL = GEOMETRY.top_col
COLUMN_MASK = GEOMETRY.column
CENTRE_ORDER: tuple[int, ...] = (3, 2, 4, 1, 5, 0, 6)
"""Columns from the centre outwards: the usual move ordering for search."""

WIN = (Outcome(0, 1, "four_in_a_row"), Outcome(1, 1, "four_in_a_row"))
DRAW = Outcome(None, 0, "board_full")
_DIGITS = "1234567"
# Every update of a game carries the board, so ``state_to_json`` reads each row from a table
# rather than cell by cell. Shifted down by its height, a row's cells sit at bits 0, H1,
# 2*H1, ...; ``_ROW_SPREAD`` keeps those. Its occupied cells, or'ed with the first player's
# shifted one bit up (never a cell: H1 > 1), are the key of its row of -1/0/1.
_ROW_SPREAD = sum(1 << (c * H1) for c in range(WIDTH))


def _row_table() -> dict[int, tuple[int, ...]]:
    table: dict[int, tuple[int, ...]] = {}
    for cells in itertools.product((-1, 0, 1), repeat=WIDTH):
        key = 0
        for c, cell in enumerate(cells):
            if cell >= 0:
                key |= 1 << (c * H1)
            if cell == 0:
                key |= 1 << (c * H1 + 1)
        table[key] = cells
    return table


_ROWS = _row_table()  # all 3**7 rows


cell_bit = GEOMETRY.cell_bit
LINE_MASKS = GEOMETRY.lines
"""The 69 four-cell lines of the board, as bitboards."""


# --- integer bitboard helpers (the search's inner loop) -------------------------------------

alignment = GEOMETRY.has_four
"""True if the stones contain four in a row (Pons' ``alignment``)."""
compute_winning_position = GEOMETRY.threats
"""Empty cells (playable now or not) that would complete four for the stones ``position``;
``mask`` is every stone on the board (Pons' ``compute_winning_position``)."""


def possible(mask: int) -> int:
    """The cells where a stone can be dropped now: one per non-full column."""
    return (mask + BOTTOM_MASK) & BOARD_MASK


def play_bits(current: int, mask: int, move_bit: int) -> tuple[int, int]:
    """``(current, mask)`` after dropping on ``move_bit`` (one bit of :func:`possible`)."""
    return current ^ mask, mask | move_bit


def column_of_bit(move_bit: int) -> int:
    """The column of a single-cell bitboard."""
    return (move_bit.bit_length() - 1) // H1


mirror = GEOMETRY.mirror
"""The bitboard reflected left to right (for symmetric transposition keys)."""


# --- the state ------------------------------------------------------------------------------


class C4State:
    """An immutable Connect Four position; build it with :func:`make_state` or :func:`play`.

    ``current``/``mask`` are Pons' bitboards, ``moves`` the number of stones played,
    ``history`` the notation, ``result`` the :class:`Outcome` once the game has ended.
    """

    __slots__ = ("current", "history", "mask", "moves", "result")

    current: int
    mask: int
    moves: int
    history: str
    result: Outcome | None

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"C4State is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"C4State is immutable (cannot delete {name!r})")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, C4State) and self.history == other.history

    def __hash__(self) -> int:
        return hash(self.history)

    def __repr__(self) -> str:
        return f"C4State({self.history!r})"


_new = object.__new__
_set_current = getattr(C4State, "current").__set__  # noqa: B009 - slot descriptors
_set_mask = getattr(C4State, "mask").__set__  # noqa: B009
_set_moves = getattr(C4State, "moves").__set__  # noqa: B009
_set_history = getattr(C4State, "history").__set__  # noqa: B009
_set_result = getattr(C4State, "result").__set__  # noqa: B009


def make_state(
    current: int, mask: int, moves: int, history: str, result: Outcome | None
) -> C4State:
    """A :class:`C4State` from its fields (no validation)."""
    s: C4State = _new(C4State)
    _set_current(s, current)
    _set_mask(s, mask)
    _set_moves(s, moves)
    _set_history(s, history)
    _set_result(s, result)
    return s


EMPTY = make_state(0, 0, 0, "", None)
"""The empty board."""


def can_play(state: C4State, col: int) -> bool:
    """True if column ``col`` is not full (says nothing about the game having ended)."""
    return not state.mask & TOP_MASK_COL[col]


def play(state: C4State, col: int) -> C4State:
    """The state after the player to move drops in ``col`` (unchecked: the column must not be
    full and the game must not be over)."""
    mask = state.mask
    new_mask = mask | (mask + BOTTOM_MASK_COL[col])
    mover = state.current | (new_mask ^ mask)
    moves = state.moves + 1
    if alignment(mover):
        result: Outcome | None = WIN[state.moves & 1]
    elif moves == CELLS:
        result = DRAW
    else:
        result = None
    return make_state(state.current ^ mask, new_mask, moves, state.history + _DIGITS[col], result)


def key(state: C4State) -> int:
    """Pons' key ``current + mask``: unique per position (< 2**49)."""
    return state.current + state.mask


def mirror_key(state: C4State) -> int:
    """The key of the left-right mirror image of the position."""
    return mirror(state.current) + mirror(state.mask)


def nb_moves(state: C4State) -> int:
    """The number of stones played so far."""
    return state.moves


def possible_mask(state: C4State) -> int:
    """The cells the player to move may drop on (one bit per non-full column)."""
    return possible(state.mask)


def is_winning_move(state: C4State, col: int) -> bool:
    """True if dropping in the playable column ``col`` makes four for the player to move."""
    return bool(
        compute_winning_position(state.current, state.mask)
        & possible(state.mask)
        & COLUMN_MASK[col]
    )


def can_win_next(state: C4State) -> bool:
    """True if the player to move has a move that wins at once."""
    return bool(compute_winning_position(state.current, state.mask) & possible(state.mask))


def possible_non_losing_moves(state: C4State) -> int:
    """Pons' ``possibleNonLosingMoves``: playable cells that do not let the opponent win at once.

    Assumes the player to move cannot win at once. ``0`` means every move loses.
    """
    possible_mask_ = possible(state.mask)
    opponent_win = compute_winning_position(state.current ^ state.mask, state.mask)
    forced = possible_mask_ & opponent_win
    if forced:
        if forced & (forced - 1):
            return 0
        possible_mask_ = forced
    return possible_mask_ & ~(opponent_win >> 1)


def move_score(state: C4State, move_bit: int) -> int:
    """Pons' ordering score: threats the player to move would have after playing ``move_bit``."""
    return compute_winning_position(state.current | move_bit, state.mask).bit_count()


def seat_stones(state: C4State, seat: int) -> int:
    """The stones of ``seat`` (0 moves first)."""
    return state.current if (state.moves & 1) == seat else state.current ^ state.mask


def winning_cells(state: C4State) -> int:
    """Every cell of every complete four on the board (0 if there is none)."""
    return GEOMETRY.four_cells(state.current) | GEOMETRY.four_cells(state.current ^ state.mask)


# --- the game -------------------------------------------------------------------------------


class Connect4(Game[C4State, int]):
    id = "connect4"
    title = "Connect-4"

    def initial(self, options: Mapping[str, Any] | None = None) -> C4State:
        check_options(self.id, options, set())
        return EMPTY

    def parse_position(self, text: str) -> C4State:
        if not isinstance(text, str):
            raise InvalidPositionError(f"connect4: position {text!r} must be a string of digits")
        state = EMPTY
        for i, ch in enumerate(text):
            if state.result is not None:
                raise InvalidPositionError(
                    f"connect4: position {text!r}, character {i} ({ch!r}): the game already "
                    f"ended ({state.result.reason}) after move {i}"
                )
            col = _DIGITS.find(ch) if len(ch) == 1 else -1
            if col < 0:
                raise InvalidPositionError(
                    f"connect4: position {text!r}, character {i} ({ch!r}): must be a column "
                    "digit 1-7"
                )
            if not can_play(state, col):
                raise InvalidPositionError(
                    f"connect4: position {text!r}, character {i} ({ch!r}): column {ch} is full"
                )
            state = play(state, col)
        return state

    def position_text(self, state: C4State) -> str:
        return state.history

    def record_formats(self) -> Sequence[RecordFormat]:
        """``moves``: the POSITION text spells the whole game."""
        return (MOVES,)

    def key(self, state: C4State) -> int:
        return state.current + state.mask

    def state_to_json(self, state: C4State) -> JSON:
        first = seat_stones(state, 0)
        mask = state.mask
        board = [
            list(_ROWS[(mask >> r & _ROW_SPREAD) | (first >> r & _ROW_SPREAD) << 1])
            for r in range(HEIGHT - 1, -1, -1)
        ]
        # play() ends the game at the first four, so a board without a result has none.
        win = winning_cells(state) if state.result is not None else 0
        line = (
            [
                [HEIGHT - 1 - r, c]
                for r in range(HEIGHT - 1, -1, -1)
                for c in range(WIDTH)
                if win & cell_bit(c, r)
            ]
            if win
            else None
        )
        return {
            "notation": state.history,
            "board": board,
            "last_move": _DIGITS.index(state.history[-1]) if state.history else None,
            "winning_line": line,
        }

    def to_move(self, state: C4State) -> int | None:
        return None if state.result is not None else state.moves & 1

    def outcome(self, state: C4State) -> Outcome | None:
        return state.result

    def legal_moves(self, state: C4State) -> list[int]:
        """Non-full columns, left to right; none once the game has ended."""
        if state.result is not None:
            return []
        mask = state.mask
        return [c for c in range(WIDTH) if not mask & TOP_MASK_COL[c]]

    def apply(self, state: C4State, move: int) -> C4State:
        return play(state, move)

    def move_to_json(self, move: int) -> JSON:
        return {"column": move}

    def move_from_json(self, state: C4State, obj: Any) -> int:
        if not isinstance(obj, dict) or set(obj) != {"column"}:
            raise InvalidMoveError(f'connect4: move {obj!r} must be an object {{"column": 0..6}}')
        col = obj["column"]
        if isinstance(col, bool) or not isinstance(col, int) or not 0 <= col < WIDTH:
            raise InvalidMoveError(f"connect4: move {obj!r}: 'column' must be an integer 0..6")
        return col

    def move_text(self, state: C4State, move: int) -> str:
        return _DIGITS[move]

    def parse_move(self, state: C4State, text: str) -> int:
        if not isinstance(text, str) or len(text) != 1 or text not in _DIGITS:
            raise InvalidMoveError(f"connect4: move {text!r} must be a column digit 1-7")
        return _DIGITS.index(text)
