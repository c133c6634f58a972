"""Bitboards for the drop games (Connect-4 and BOOM), for any board size.

Pascal Pons' layout: column ``c`` takes the ``height + 1`` bits ``c*h1 .. c*h1 + height``;
row ``r`` (0 = bottom) of it is bit ``c*h1 + r``, and the top bit of each column is an
always-empty sentinel that stops a line from wrapping into the next column. Lines then are
shifts: by 1 (vertical), ``h1`` (horizontal), ``height`` and ``height + 2`` (the diagonals).

:func:`geometry` builds the masks and the two hot functions for one board size. The hot
functions are closures over their shift amounts, so the inner loops of search pay no
attribute or global lookups for them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Geometry:
    width: int
    height: int
    h1: int
    """Bits per column: the cells and one sentinel."""
    bottom: int
    """The bottom cell of every column."""
    board: int
    """Every playable cell (sentinels excluded)."""
    bottom_col: tuple[int, ...]
    top_col: tuple[int, ...]
    column: tuple[int, ...]
    lines: tuple[int, ...]
    """Every four-cell line of the board, as bitboards."""
    has_four: Callable[[int], bool]
    """True if the stones contain four in a line (Pons' ``alignment``)."""
    threats: Callable[[int, int], int]
    """``threats(stones, mask)``: the empty cells (playable now or not) that would give
    ``stones`` four in a line; ``mask`` is every stone on the board (Pons'
    ``compute_winning_position``)."""

    def cell_bit(self, col: int, row: int) -> int:
        """The bit of the cell at column ``col``, row ``row`` (0 = bottom)."""
        return 1 << (col * self.h1 + row)

    def possible(self, mask: int) -> int:
        """The cells where a piece can be dropped now: one per non-full column."""
        return (mask + self.bottom) & self.board

    def four_cells(self, stones: int) -> int:
        """Every cell of every complete four in ``stones`` (0 if none)."""
        out = 0
        for line in self.lines:
            if stones & line == line:
                out |= line
        return out

    def mirror(self, bits: int) -> int:
        """The bitboard reflected left to right."""
        out = 0
        col = (1 << self.h1) - 1
        for c in range(self.width):
            out |= ((bits >> (c * self.h1)) & col) << ((self.width - 1 - c) * self.h1)
        return out


def threat_finder(height: int, board: int) -> Callable[[int, int], int]:
    """Pons' ``compute_winning_position`` for columns of ``height`` cells, as a closure over
    its shift amounts. ``board`` is every playable cell; it need not be one board: side by
    side copies of a board (each copy far enough from the next that a shift of three columns
    stays in its gap) get each copy's threats in one call."""
    h1 = height + 1
    d1, d2 = height, height + 2  # the two diagonal shifts
    # Multiples precomputed: the closure would otherwise multiply on every call.
    h2, h3, e2, e3, f2, f3 = 2 * h1, 3 * h1, 2 * d1, 3 * d1, 2 * d2, 3 * d2

    def threats(position: int, mask: int) -> int:
        # Unrolled on purpose: this is the innermost function of the Connect-4 solver. Per
        # direction, ``p`` marks a stone with another one step back; the empty cell then
        # completes four after two stones (``p`` shifted on) or before two (shifted back),
        # which takes 13 integer operations instead of 18.
        r = (position << 1) & (position << 2) & (position << 3)  # vertical
        a = position << h1  # horizontal
        p = position & a
        r |= ((p << h1) & ((position << h3) | (position >> h1))) | (
            (p >> h2) & (a | (position >> h3))
        )
        a = position << d1  # diagonal 1
        p = position & a
        r |= ((p << d1) & ((position << e3) | (position >> d1))) | (
            (p >> e2) & (a | (position >> e3))
        )
        a = position << d2  # diagonal 2
        p = position & a
        r |= ((p << d2) & ((position << f3) | (position >> d2))) | (
            (p >> f2) & (a | (position >> f3))
        )
        return r & (board ^ mask)

    return threats


def geometry(width: int, height: int) -> Geometry:
    """The masks, lines and hot functions of a ``width`` × ``height`` drop-game board."""
    h1 = height + 1
    bottom = sum(1 << (c * h1) for c in range(width))
    board = bottom * ((1 << height) - 1)

    def bit(c: int, r: int) -> int:
        return 1 << (c * h1 + r)

    lines = []
    for c in range(width):
        for r in range(height):
            for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                cells = [(c + i * dc, r + i * dr) for i in range(4)]
                if all(0 <= x < width and 0 <= y < height for x, y in cells):
                    lines.append(sum(bit(x, y) for x, y in cells))

    d1, d2 = height, height + 2  # the two diagonal shifts
    h2, e2, f2 = 2 * h1, 2 * d1, 2 * d2  # precomputed: the closure would multiply per call

    def has_four(pos: int) -> bool:
        m = pos & (pos >> h1)  # horizontal
        if m & (m >> h2):
            return True
        m = pos & (pos >> d1)  # diagonal, going down to the right
        if m & (m >> e2):
            return True
        m = pos & (pos >> d2)  # diagonal, going up to the right
        if m & (m >> f2):
            return True
        m = pos & (pos >> 1)  # vertical
        return bool(m & (m >> 2))

    return Geometry(
        width=width,
        height=height,
        h1=h1,
        bottom=bottom,
        board=board,
        bottom_col=tuple(1 << (c * h1) for c in range(width)),
        top_col=tuple(1 << (height - 1 + c * h1) for c in range(width)),
        column=tuple(((1 << height) - 1) << (c * h1) for c in range(width)),
        lines=tuple(lines),
        has_four=has_four,
        threats=threat_finder(height, board),
    )
