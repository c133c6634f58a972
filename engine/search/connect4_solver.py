"""An exact Connect-4 solver in the manner of Pascal Pons' "Solving Connect 4".

Integer division here always rounds toward zero, as Pons' C++ does (Python's ``//`` floors,
which is wrong by one for the negative bounds).

Scores use Pons' convention, from the side to move: 0 is a draw; a win scores
``22 - (stones the winner has played when the winning stone lands)``, so a faster win scores
more; a loss is the negation of the opponent's score. What makes it fast enough for Python:

* the bitboards of :mod:`tablas.engine.games.connect4`, worked on as bare integers (no state objects
  in the inner loop);
* only non-losing moves are searched (a move under an opponent's threat, or ignoring one, is
  never tried), and a position with no such move is scored at once;
* the score window is clamped by what the stones left on the board still allow;
* null-window searches, bisecting the score range (:meth:`Connect4Solver.solve`);
* moves that create the most threats first, ties from the centre out, the threats after
  every candidate found in one call on copies of the board side by side (:data:`_LANE`);
* tables of upper and lower bounds keyed by Pons' position key, kept across calls.

:func:`proof_of` turns a score into this project's ``proven``/``distance``.

Where a C compiler exists, the same search runs compiled (:mod:`tablas.engine.search.c4kernel`,
about 25 times faster, the same scores and node counts); this module's Python search is the
fallback, chosen by ``$TABLAS_C4_KERNEL`` or the solver's ``kernel`` argument.
"""

from __future__ import annotations

import ctypes
import threading
import time
import weakref
from collections.abc import Callable

from tablas.engine.games.bitboard import threat_finder
from tablas.engine.games.connect4 import (
    BOARD_MASK,
    BOTTOM_MASK,
    CELLS,
    CENTRE_ORDER,
    COLUMN_MASK,
    HEIGHT,
    WIDTH,
    C4State,
    compute_winning_position,
)
from tablas.engine.search import c4kernel

MIN_SCORE = -(CELLS // 2) + 3  # -18: lose to the opponent's 4th stone
MAX_SCORE = (CELLS + 1) // 2 - 3  # 18: win with your own 4th stone
# Copies of the board side by side, the i-th for the move in the i-th column from the centre,
# so that one call finds the threats after every candidate (a Python integer operation costs
# about the same on 490 bits as on 49). Copies are 70 bits apart: a shift by three columns
# (21 bits) from a copy's 49 bits stays in the gap before the next copy.
_LANE = 70
_REP = sum(1 << (_LANE * i) for i in range(WIDTH))
_LANE_MOVES = sum(COLUMN_MASK[c] << (_LANE * i) for i, c in enumerate(CENTRE_ORDER))
_LANES = tuple((i, COLUMN_MASK[c], _LANE * i) for i, c in enumerate(CENTRE_ORDER))
_lane_threats = threat_finder(HEIGHT, BOARD_MASK * _REP)
# Score bounds by stones on the board, looked up rather than computed at every node: lost to
# the opponent's next stone, lost to the one after it, won with our next-but-one stone.
_LOST_NOW = tuple(-((CELLS - m) // 2) for m in range(CELLS + 1))
_LOST_NEXT = tuple(-((CELLS - 2 - m) // 2) for m in range(CELLS + 1))
_WIN_NEXT = tuple((CELLS - 1 - m) // 2 for m in range(CELLS + 1))
_MAX_ENTRIES = 8_000_000  # bounds kept before a solve starts afresh (memory)


class SolverTimeout(Exception):
    """The solver's budget ran out before the position was solved."""


def proof_of(score: int, moves: int) -> tuple[str, int]:
    """(``"win"``/``"loss"``/``"draw"``, plies to the end under best play) for a Pons score
    of a position with ``moves`` stones."""
    mine = moves // 2  # the side to move has played the smaller half (or an equal one)
    if score > 0:
        return "win", 2 * ((22 - score) - mine) - 1
    if score < 0:
        return "loss", 2 * ((22 + score) - (moves - mine))
    return "draw", CELLS - moves


def score_of(proven: str, distance: int, moves: int) -> int:
    """The Pons score of a proof; the inverse of :func:`proof_of`."""
    mine = moves // 2
    if proven == "win":
        return 22 - (mine + (distance + 1) // 2)
    if proven == "loss":
        return -(22 - (moves - mine + distance // 2))
    return 0


def _python_search(
    upper: dict[int, int], lower: dict[int, int], clock: Callable[[], float]
) -> tuple[Callable[[int, int, int, int, float | None], int], Callable[[], int]]:
    """The pure-Python search over the tables ``upper`` and ``lower``: ``(solve, nodes)``,
    where ``solve(current, mask, moves, opp_win, deadline)`` bisects the score range with
    null-window searches and ``nodes()`` is the node count of the last call. A closure, so
    that the hot path reads its tables, constants and counter from cells rather than from
    attributes and globals."""
    upper_get = upper.get
    lower_get = lower.get
    threats = compute_winning_position
    lane_threats = _lane_threats
    lost_now, lost_next, win_next = _LOST_NOW, _LOST_NEXT, _WIN_NEXT
    bottom, board, rep, lane_moves, lanes = BOTTOM_MASK, BOARD_MASK, _REP, _LANE_MOVES, _LANES
    last = CELLS - 2
    nodes = 0
    deadline: float | None = None

    def negamax(current: int, mask: int, moves: int, alpha: int, beta: int, opp_win: int
                ) -> int:
        # Pons' negamax; the caller guarantees the side to move cannot win at once, and
        # passes ``opp_win``, the threats of the side not to move (it found them to order its
        # moves).
        nonlocal nodes
        nodes += 1
        if not nodes & 4095 and deadline is not None and clock() > deadline:
            raise SolverTimeout
        possible = (mask + bottom) & board
        forced = possible & opp_win
        if forced:
            if forced & (forced - 1):
                return lost_now[moves]  # two threats to answer: lost next move
            possible = forced
        nxt = possible & ~(opp_win >> 1)  # never play right under an opponent's threat
        if not nxt:
            return lost_now[moves]
        if moves >= last:
            return 0
        low = lost_next[moves]
        if alpha < low:
            alpha = low
            if alpha >= beta:
                return alpha
        key = current + mask
        high = upper_get(key, win_next[moves])
        if beta > high:
            beta = high
            if alpha >= beta:
                return beta
        bound = lower_get(key)
        if bound is not None and alpha < bound:
            alpha = bound
            if alpha >= beta:
                return alpha
        opponent = current ^ mask
        if not nxt & (nxt - 1):  # a lone candidate (often a forced answer): no ordering
            mask |= nxt
            score = -negamax(opponent, mask, moves + 1, -beta, -alpha,
                             threats(current | nxt, mask))
            if score >= beta:
                lower[key] = score
                return score
            if score < alpha:
                score = alpha
            upper[key] = score
            return score
        # Order: most threats created first, ties from the centre out; the threats after a
        # move are the child's opponent threats: passed on.
        spread = (nxt * rep) & lane_moves  # copy i: the candidate in its column, if any
        after = lane_threats(current * rep | spread, mask * rep | spread)
        ordered = []
        for i, col, shift in lanes:
            move = nxt & col
            if move:
                w = (after >> shift) & board
                ordered.append((-w.bit_count(), i, move, w))
        ordered.sort()
        moves += 1
        for _, _, move, w in ordered:
            score = -negamax(opponent, mask | move, moves, -beta, -alpha, w)
            if score >= beta:
                lower[key] = score
                return score
            if score > alpha:
                alpha = score
        upper[key] = alpha
        return alpha

    def solve(current: int, mask: int, moves: int, opp_win: int, until: float | None) -> int:
        nonlocal nodes, deadline
        nodes, deadline = 0, until
        lo = -((CELLS - moves) // 2)
        hi = (CELLS + 1 - moves) // 2
        while lo < hi:
            med = lo + (hi - lo) // 2
            if med <= 0 and -(-lo // 2) < med:  # lo / 2 rounded toward zero, as in C
                med = -(-lo // 2)
            elif med >= 0 and hi // 2 > med:
                med = hi // 2
            r = negamax(current, mask, moves, med, med + 1, opp_win)
            if r <= med:
                hi = r
            else:
                lo = r
        return lo

    def count() -> int:
        return nodes

    return solve, count


class Connect4Solver:
    """Reuse one solver across positions: its table keeps what earlier solves learnt.

    ``kernel``: ``"c"``, ``"python"`` or ``"auto"`` (default: ``$TABLAS_C4_KERNEL``, else
    ``auto``), the search that runs (:mod:`tablas.engine.search.c4kernel`); both find the same
    scores with the same node counts. The choice is made at the first solve; :attr:`path`
    then says which one it was."""

    def __init__(
        self, clock: Callable[[], float] = time.perf_counter, kernel: str | None = None
    ) -> None:
        self.table: dict[int, int] = {}  # upper bounds (every search that fails low)
        self.lower: dict[int, int] = {}  # lower bounds (every search that fails high)
        self.nodes = 0
        self.clock = clock
        self._choice = c4kernel.choice(kernel)
        self._solve, self._nodes = _python_search(self.table, self.lower, clock)
        self._lib: ctypes.CDLL | None = None
        self._handle: int | None = None
        self._resolved = False
        self._lock = threading.Lock()  # the C table is not to be used by two threads at once

    @property
    def path(self) -> str:
        """``"c"`` or ``"python"``: the search this solver runs (resolved on first call)."""
        self._resolve()
        return "c" if self._handle is not None else "python"

    def _resolve(self) -> None:
        if self._resolved:
            return
        self._resolved = True
        lib = c4kernel.resolve(self._choice)
        if lib is None:
            return
        handle = lib.c4k_new()
        if not handle:
            if self._choice == "c":
                raise MemoryError("the Connect-4 kernel could not allocate its table")
            return
        self._lib, self._handle = lib, handle
        self._c_clock = c4kernel.CLOCK(self.clock)
        weakref.finalize(self, lib.c4k_free, handle)

    def clear(self) -> None:
        """Forgets every bound (to time a position from scratch, or to free memory)."""
        self.table.clear()
        self.lower.clear()
        if self._lib is not None:
            self._lib.c4k_clear(self._handle)

    def solve(self, state: C4State, time_ms: float | None = None) -> int:
        """The exact score of a position that is not over; :class:`SolverTimeout` if the
        budget runs out first."""
        return self.solve_bits(state.current, state.mask, state.moves, time_ms)

    def solve_bits(self, current: int, mask: int, moves: int, time_ms: float | None = None) -> int:
        deadline = None if time_ms is None else self.clock() + time_ms / 1000
        if compute_winning_position(current, mask) & ((mask + BOTTOM_MASK) & BOARD_MASK):
            return (CELLS + 1 - moves) // 2
        opp_win = compute_winning_position(current ^ mask, mask)
        self._resolve()
        if self._lib is not None:
            return self._solve_c(self._lib, current, mask, moves, opp_win, deadline)
        if len(self.table) + len(self.lower) > _MAX_ENTRIES:
            self.clear()
        try:
            return self._solve(current, mask, moves, opp_win, deadline)
        finally:
            self.nodes += self._nodes()

    def _solve_c(self, lib: ctypes.CDLL, current: int, mask: int, moves: int, opp_win: int,
                 deadline: float | None) -> int:
        nodes = ctypes.c_uint64()
        with self._lock:
            if lib.c4k_size(self._handle) > _MAX_ENTRIES:
                lib.c4k_clear(self._handle)
            r = lib.c4k_solve(self._handle, current, mask, moves, opp_win,
                              c4kernel.NO_CLOCK if deadline is None else self._c_clock,
                              0.0 if deadline is None else deadline, ctypes.byref(nodes))
        self.nodes += nodes.value
        if r == c4kernel.TIMEOUT:
            raise SolverTimeout
        if r == c4kernel.NO_MEMORY:
            raise MemoryError("the Connect-4 kernel's table could not grow")
        return int(r)

    def best_moves(self, state: C4State, time_ms: float | None = None) -> list[tuple[int, int]]:
        """Every playable column with its exact score for the side to move, best first."""
        deadline = None if time_ms is None else self.clock() + time_ms / 1000
        out = []
        current, mask, moves = state.current, state.mask, state.moves
        possible = (mask + BOTTOM_MASK) & BOARD_MASK
        win_now = compute_winning_position(current, mask) & possible
        for col in CENTRE_ORDER:
            move = possible & COLUMN_MASK[col]
            if not move:
                continue
            if win_now & move:
                out.append((col, (CELLS + 1 - moves) // 2))
                continue
            if moves + 1 == CELLS:
                out.append((col, 0))
                continue
            left = None if deadline is None else max(1.0, (deadline - self.clock()) * 1000)
            out.append((col, -self.solve_bits(current ^ mask, mask | move, moves + 1, left)))
        out.sort(key=lambda cs: -cs[1])
        return out
