"""Desconecta-4 BOOM: a misère Connect Four with bombs, on 7 columns × 7 rows.

The rules (contract, section 4): pieces fall to the lowest free cell. A player with four of
their own pieces in a line (row, column or diagonal) LOSES. Every 5th piece a player drops
(their 5th, 10th, 15th, ...) is a bomb, unless that player already has a bomb on the board.
A player with a bomb on the board may, instead of dropping, play ``boom``: the bomb and every
piece of that player in the bomb's row are removed, and the pieces above fall. After an
action, if the player who acted has four in a line they lose; otherwise, if the opponent has,
the opponent loses. A full board, or 200 actions, is a draw.

Readings of the rules this module makes:

* a bomb is a piece of its owner like any other: it counts in its owner's lines, it falls
  when a piece under it is removed, and it is only removed by its owner's own ``boom``;
* the drop count never goes down (pieces removed by a boom were still dropped), so "the 15th
  piece" is the 15th drop of that player whatever was removed in between;
* losses are checked before the draw conditions, so a 200th action or a board-filling drop
  that makes four still loses;
* seats alternate after every action (a boom is a turn); seat 0 acts first.

Position notation: the actions so far, digits ``1``-``7`` for drops (1-based column) and
``B`` for a boom, e.g. ``"44536B"``. Moves inside the engine are ints: a column ``0..6``, or
:data:`BOOM` (= 7); as JSON ``{"column": c}`` or ``{"boom": true}``; as text the digit or ``B``.

Bitboards: column ``c`` takes the 8 bits ``c*8 .. c*8+7``, row ``r`` (0 = bottom) is bit
``c*8 + r``; the 8th bit of each column is an always-empty sentinel. A state holds one
bitboard of stones per seat (bombs included), one bitboard of the bombs on the board (at most
one per seat; the owner is whoever holds that stone), each seat's drop count and the action
count. The module-level helpers are the fast path for search and evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from tablas.engine.core import JSON, Game, Outcome, RecordFormat, check_options
from tablas.engine.errors import InvalidMoveError, InvalidPositionError
from tablas.engine.games.bitboard import geometry
from tablas.engine.records import MOVES

GEOMETRY = geometry(7, 7)
WIDTH = GEOMETRY.width
HEIGHT = GEOMETRY.height
H1 = GEOMETRY.h1  # bits per column: 7 cells and a sentinel
CELLS = WIDTH * HEIGHT
MAX_ACTIONS = 200
BOMB_EVERY = 5
BOOM = 7
"""The move ``boom`` (columns are 0..6)."""

BOTTOM_MASK = GEOMETRY.bottom
BOARD_MASK = GEOMETRY.board
BOTTOM_MASK_COL = GEOMETRY.bottom_col
TOP_MASK_COL = GEOMETRY.top_col
COLUMN_MASK = GEOMETRY.column
ROW_MASK: tuple[int, ...] = tuple(BOTTOM_MASK << r for r in range(HEIGHT))
BELOW_ROW: tuple[int, ...] = tuple(BOTTOM_MASK * ((1 << r) - 1) for r in range(HEIGHT))
"""Cells strictly below row ``r``, in every column."""
ABOVE_ROW: tuple[int, ...] = tuple(
    BOARD_MASK & ~(BELOW_ROW[r] | ROW_MASK[r]) for r in range(HEIGHT)
)
"""Cells strictly above row ``r``, in every column."""
CENTRE_ORDER: tuple[int, ...] = (3, 2, 4, 1, 5, 0, 6)

LOSS_OF = (Outcome(1, 1, "four_in_a_row"), Outcome(0, 1, "four_in_a_row"))
"""``LOSS_OF[s]``: seat ``s`` has four in a line and loses."""
DRAW_FULL = Outcome(None, 0, "board_full")
DRAW_LIMIT = Outcome(None, 0, "move_limit")
_DIGITS = "1234567"
_TEXT = "1234567B"


cell_bit = GEOMETRY.cell_bit
LINE_MASKS = GEOMETRY.lines
"""Every four-cell line of the 7×7 board, as bitboards."""


# --- integer bitboard helpers ---------------------------------------------------------------

has_four = GEOMETRY.has_four
"""True if the stones contain four in a line (row, column or diagonal)."""
four_cells = GEOMETRY.four_cells
"""Every cell of every complete four in the stones (0 if none)."""
completion_cells = GEOMETRY.threats
"""Empty cells (playable now or not) that would give the stones four in a line: in BOOM,
the cells where that player must not drop. ``mask`` is every stone on the board."""
possible = GEOMETRY.possible
"""The cells a drop can go to now: one per non-full column."""


def fall(bits: int, removed: int, row: int) -> int:
    """``bits`` after the cells ``removed`` (all in ``row``) are emptied and what was above
    them in their columns falls one cell."""
    cols = (removed >> row) * ((1 << HEIGHT) - 1)  # the whole columns that lost a cell
    bits &= ~removed
    return (bits & ~cols) | (bits & cols & BELOW_ROW[row]) | ((bits & cols & ABOVE_ROW[row]) >> 1)


# --- the state ------------------------------------------------------------------------------


class BoomState:
    """An immutable BOOM position; build it with :func:`make_state`, :func:`drop`, :func:`boom`.

    ``s0``/``s1``: each seat's stones (bombs included); ``bombs``: the bombs on the board;
    ``d0``/``d1``: pieces each seat has dropped; ``actions``: actions so far (the seat to act
    is ``actions & 1``); ``history``: the notation; ``result``: the :class:`Outcome` once the
    game has ended; ``exploded``: the cells the last action removed (0 unless it was a boom).
    """

    __slots__ = ("actions", "bombs", "d0", "d1", "exploded", "history", "result", "s0", "s1")

    s0: int
    s1: int
    bombs: int
    d0: int
    d1: int
    actions: int
    history: str
    result: Outcome | None
    exploded: int

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"BoomState is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"BoomState is immutable (cannot delete {name!r})")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BoomState) and self.history == other.history

    def __hash__(self) -> int:
        return hash(self.history)

    def __repr__(self) -> str:
        return f"BoomState({self.history!r})"


_new = object.__new__
_SETTERS = tuple(
    getattr(BoomState, name).__set__
    for name in ("s0", "s1", "bombs", "d0", "d1", "actions", "history", "result", "exploded")
)
(
    _set_s0,
    _set_s1,
    _set_bombs,
    _set_d0,
    _set_d1,
    _set_actions,
    _set_history,
    _set_result,
    _set_exploded,
) = _SETTERS


def make_state(
    s0: int,
    s1: int,
    bombs: int,
    d0: int,
    d1: int,
    actions: int,
    history: str,
    result: Outcome | None,
    exploded: int = 0,
) -> BoomState:
    """A :class:`BoomState` from its fields (no validation)."""
    s: BoomState = _new(BoomState)
    _set_s0(s, s0)
    _set_s1(s, s1)
    _set_bombs(s, bombs)
    _set_d0(s, d0)
    _set_d1(s, d1)
    _set_actions(s, actions)
    _set_history(s, history)
    _set_result(s, result)
    _set_exploded(s, exploded)
    return s


EMPTY = make_state(0, 0, 0, 0, 0, 0, "", None)
"""The empty board."""


def seat_to_act(state: BoomState) -> int:
    """The seat whose turn it is (whether or not the game has ended)."""
    return state.actions & 1


def stones(state: BoomState, seat: int) -> int:
    """The bitboard of ``seat``'s pieces, bombs included."""
    return state.s1 if seat else state.s0


def board_mask(state: BoomState) -> int:
    """Every piece on the board."""
    return state.s0 | state.s1


def bomb_of(state: BoomState, seat: int) -> int:
    """The one-cell bitboard of ``seat``'s bomb on the board, or 0."""
    return state.bombs & (state.s1 if seat else state.s0)


def dropped(state: BoomState, seat: int) -> int:
    """How many pieces ``seat`` has dropped so far."""
    return state.d1 if seat else state.d0


def next_drop_is_bomb(state: BoomState, seat: int) -> bool:
    """True if ``seat``'s next drop would be a bomb."""
    d = state.d1 if seat else state.d0
    return (d + 1) % BOMB_EVERY == 0 and not bomb_of(state, seat)


def can_boom(state: BoomState, seat: int | None = None) -> bool:
    """True if ``seat`` (default: the seat to act) has a bomb on the board."""
    if seat is None:
        seat = state.actions & 1
    return bool(bomb_of(state, seat))


def can_drop(state: BoomState, col: int) -> bool:
    """True if column ``col`` is not full."""
    return not (state.s0 | state.s1) & TOP_MASK_COL[col]


def key(state: BoomState) -> int:
    """Everything that decides the future, packed in one int: both seats' stones, the bombs,
    each seat's drop count mod 5 and the action count (for the 200-action limit)."""
    return (
        state.s0
        | (state.s1 << 56)
        | (state.bombs << 112)
        | ((state.d0 % BOMB_EVERY) << 168)
        | ((state.d1 % BOMB_EVERY) << 171)
        | (state.actions << 174)
    )


def _draw_or_none(mask: int, actions: int) -> Outcome | None:
    if mask == BOARD_MASK:
        return DRAW_FULL
    if actions >= MAX_ACTIONS:
        return DRAW_LIMIT
    return None


def drop(state: BoomState, col: int) -> BoomState:
    """The state after the seat to act drops in ``col`` (unchecked: not full, game not over)."""
    s0, s1, bombs = state.s0, state.s1, state.bombs
    mask = s0 | s1
    bit = (mask & COLUMN_MASK[col]) + BOTTOM_MASK_COL[col]
    actions = state.actions + 1
    history = state.history + _DIGITS[col]
    # A drop only adds the actor's piece, so only the actor can have made four.
    if state.actions & 1:
        d1 = state.d1 + 1
        if d1 % BOMB_EVERY == 0 and not bombs & s1:
            bombs |= bit
        s1 |= bit
        result = LOSS_OF[1] if has_four(s1) else _draw_or_none(mask | bit, actions)
        return make_state(s0, s1, bombs, state.d0, d1, actions, history, result)
    d0 = state.d0 + 1
    if d0 % BOMB_EVERY == 0 and not bombs & s0:
        bombs |= bit
    s0 |= bit
    result = LOSS_OF[0] if has_four(s0) else _draw_or_none(mask | bit, actions)
    return make_state(s0, s1, bombs, d0, state.d1, actions, history, result)


def boom(state: BoomState) -> BoomState:
    """The state after the seat to act explodes its bomb (unchecked: it must have one)."""
    seat = state.actions & 1
    own, opp = (state.s1, state.s0) if seat else (state.s0, state.s1)
    bomb = state.bombs & own
    row = (bomb.bit_length() - 1) % H1
    removed = own & ROW_MASK[row]
    own = fall(own, removed, row)
    opp = fall(opp, removed, row)
    bombs = fall(state.bombs & ~bomb, removed, row)
    actions = state.actions + 1
    if has_four(own):
        result: Outcome | None = LOSS_OF[seat]
    elif has_four(opp):
        result = LOSS_OF[1 - seat]
    else:
        result = _draw_or_none(own | opp, actions)
    s0, s1 = (opp, own) if seat else (own, opp)
    return make_state(
        s0, s1, bombs, state.d0, state.d1, actions, state.history + "B", result, removed
    )


def legal_move_list(state: BoomState) -> list[int]:
    """Non-full columns left to right, then :data:`BOOM` if the seat to act has a bomb."""
    if state.result is not None:
        return []
    mask = state.s0 | state.s1
    moves = [c for c in range(WIDTH) if not mask & TOP_MASK_COL[c]]
    if state.bombs & (state.s1 if state.actions & 1 else state.s0):
        moves.append(BOOM)
    return moves


def _cells(bits: int) -> list[list[int]]:
    """``[row, col]`` of each set cell, rows counted from the top, in reading order."""
    return [
        [HEIGHT - 1 - r, c]
        for r in range(HEIGHT - 1, -1, -1)
        for c in range(WIDTH)
        if bits & cell_bit(c, r)
    ]


# --- the game -------------------------------------------------------------------------------


class Boom(Game[BoomState, int]):
    id = "boom"
    title = "Desconecta-4 BOOM"

    def initial(self, options: Mapping[str, Any] | None = None) -> BoomState:
        check_options(self.id, options, set())
        return EMPTY

    def parse_position(self, text: str) -> BoomState:
        if not isinstance(text, str):
            raise InvalidPositionError(
                f"boom: position {text!r} must be a string of digits 1-7 and 'B'"
            )
        state = EMPTY
        for i, ch in enumerate(text):
            where = f"boom: position {text!r}, character {i} ({ch!r})"
            if state.result is not None:
                raise InvalidPositionError(
                    f"{where}: the game already ended ({state.result.reason}) after action {i}"
                )
            if ch == "B":
                if not can_boom(state):
                    raise InvalidPositionError(
                        f"{where}: seat {state.actions & 1} has no bomb on the board"
                    )
                state = boom(state)
                continue
            col = _DIGITS.find(ch) if len(ch) == 1 else -1
            if col < 0:
                raise InvalidPositionError(f"{where}: must be a column digit 1-7 or 'B'")
            if not can_drop(state, col):
                raise InvalidPositionError(f"{where}: column {ch} is full")
            state = drop(state, col)
        return state

    def position_text(self, state: BoomState) -> str:
        return state.history

    def record_formats(self) -> Sequence[RecordFormat]:
        """``moves``: the POSITION text spells the whole game."""
        return (MOVES,)

    def key(self, state: BoomState) -> int:
        return key(state)

    def state_to_json(self, state: BoomState) -> JSON:
        """Adds to the contract's fields ``losing_line``: the cells of the four(s) of the
        seat that lost, or null. Rows count from the top, as in ``board``."""
        s0, s1 = state.s0, state.s1
        board = [
            [0 if s0 & cell_bit(c, r) else 1 if s1 & cell_bit(c, r) else -1 for c in range(WIDTH)]
            for r in range(HEIGHT - 1, -1, -1)
        ]
        last: JSON | None = None
        if state.history:
            ch = state.history[-1]
            last = {"boom": True} if ch == "B" else {"column": _DIGITS.index(ch)}
        result = state.result
        losing: list[list[int]] | None = None
        if result is not None and result.winner is not None:
            losing = _cells(four_cells(s1 if result.winner == 0 else s0))
        return {
            "notation": state.history,
            "board": board,
            "bombs": _cells(state.bombs),
            "dropped": [state.d0, state.d1],
            "next_is_bomb": [next_drop_is_bomb(state, 0), next_drop_is_bomb(state, 1)],
            "actions": state.actions,
            "last_move": last,
            "exploded": _cells(state.exploded) if state.exploded else None,
            "losing_line": losing,
        }

    def to_move(self, state: BoomState) -> int | None:
        return None if state.result is not None else state.actions & 1

    def outcome(self, state: BoomState) -> Outcome | None:
        return state.result

    def legal_moves(self, state: BoomState) -> list[int]:
        """Non-full columns left to right, then :data:`BOOM` if the seat to act has a bomb."""
        return legal_move_list(state)

    def apply(self, state: BoomState, move: int) -> BoomState:
        return boom(state) if move == BOOM else drop(state, move)

    def move_to_json(self, move: int) -> JSON:
        return {"boom": True} if move == BOOM else {"column": move}

    def move_from_json(self, state: BoomState, obj: Any) -> int:
        if isinstance(obj, dict) and set(obj) == {"boom"}:
            if obj["boom"] is not True:
                raise InvalidMoveError(f"boom: move {obj!r}: 'boom' must be true")
            return BOOM
        if not isinstance(obj, dict) or set(obj) != {"column"}:
            raise InvalidMoveError(
                f'boom: move {obj!r} must be {{"column": 0..6}} or {{"boom": true}}'
            )
        col = obj["column"]
        if isinstance(col, bool) or not isinstance(col, int) or not 0 <= col < WIDTH:
            raise InvalidMoveError(f"boom: move {obj!r}: 'column' must be an integer 0..6")
        return col

    def move_text(self, state: BoomState, move: int) -> str:
        return _TEXT[move]

    def parse_move(self, state: BoomState, text: str) -> int:
        if not isinstance(text, str) or len(text) != 1 or text not in _TEXT:
            raise InvalidMoveError(f"boom: move {text!r} must be a column digit 1-7 or 'B'")
        return _TEXT.index(text)
