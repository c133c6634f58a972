"""An exact Connect-4 solver in the manner of Pascal Pons' "Solving Connect 4".

Integer division here always rounds toward zero, as Pons' C++ does (Python's ``//`` floors,
which is wrong by one for the negative bounds).

Scores use Pons' convention, from the side to move: 0 is a draw; a win scores
``22 - (stones the winner has played when the winning stone lands)``, so a faster win scores
more; a loss is the negation of the opponent's score. What makes it fast enough for Python:

* the bitboards of :mod:`engine.games.connect4`, worked on as bare integers (no state objects
  in the inner loop);
* only non-losing moves are searched (a move under an opponent's threat, or ignoring one, is
  never tried), and a position with no such move is scored at once;
* the score window is clamped by what the stones left on the board still allow;
* null-window searches, bisecting the score range (:meth:`Connect4Solver.solve`);
* moves that create the most threats first, ties from the centre out;
* a table of upper bounds keyed by Pons' position key, kept across calls.

:func:`proof_of` turns a score into this project's ``proven``/``distance``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from engine.games.connect4 import (
    BOARD_MASK,
    BOTTOM_MASK,
    CELLS,
    CENTRE_ORDER,
    COLUMN_MASK,
    C4State,
    compute_winning_position,
)

MIN_SCORE = -(CELLS // 2) + 3  # -18: lose to the opponent's 4th stone
MAX_SCORE = (CELLS + 1) // 2 - 3  # 18: win with your own 4th stone
_ORDER_MASKS = tuple(COLUMN_MASK[c] for c in CENTRE_ORDER)
ORDER_UNTIL = 31  # stones on the board from which moves are no longer ordered by threats


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


class Connect4Solver:
    """Reuse one solver across positions: its table keeps what earlier solves learnt."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.table: dict[int, int] = {}  # upper bounds (every search that fails low)
        self.lower: dict[int, int] = {}  # lower bounds (every search that fails high)
        self.nodes = 0
        self.clock = clock
        self._deadline: float | None = None

    def clear(self) -> None:
        """Forgets every bound (to time a position from scratch, or to free memory)."""
        self.table.clear()
        self.lower.clear()

    def solve(self, state: C4State, time_ms: float | None = None) -> int:
        """The exact score of a position that is not over; :class:`SolverTimeout` if the
        budget runs out first."""
        return self.solve_bits(state.current, state.mask, state.moves, time_ms)

    def solve_bits(self, current: int, mask: int, moves: int, time_ms: float | None = None) -> int:
        self._deadline = None if time_ms is None else self.clock() + time_ms / 1000
        if len(self.table) + len(self.lower) > 8_000_000:
            self.clear()
        if compute_winning_position(current, mask) & ((mask + BOTTOM_MASK) & BOARD_MASK):
            return (CELLS + 1 - moves) // 2
        lo = -((CELLS - moves) // 2)
        hi = (CELLS + 1 - moves) // 2
        while lo < hi:
            med = lo + (hi - lo) // 2
            if med <= 0 and -(-lo // 2) < med:  # lo / 2 rounded toward zero, as in C
                med = -(-lo // 2)
            elif med >= 0 and hi // 2 > med:
                med = hi // 2
            r = self._negamax(current, mask, moves, med, med + 1)
            if r <= med:
                hi = r
            else:
                lo = r
        return lo

    def _negamax(
        self, current: int, mask: int, moves: int, alpha: int, beta: int, opp_win: int = -1
    ) -> int:
        """Pons' negamax; the caller guarantees the side to move cannot win at once.
        ``opp_win`` is the threats of the side not to move when the caller has them already
        (it counted them to order its moves), else -1."""
        self.nodes += 1
        if not self.nodes & 4095 and self._deadline is not None:
            if self.clock() > self._deadline:
                raise SolverTimeout
        opponent = current ^ mask
        possible = (mask + BOTTOM_MASK) & BOARD_MASK
        if opp_win < 0:
            opp_win = compute_winning_position(opponent, mask)
        forced = possible & opp_win
        if forced:
            if forced & (forced - 1):
                return -((CELLS - moves) // 2)  # two threats to answer: lost next move
            possible = forced
        nxt = possible & ~(opp_win >> 1)  # never play right under an opponent's threat
        if not nxt:
            return -((CELLS - moves) // 2)
        if moves >= CELLS - 2:
            return 0
        low = -((CELLS - 2 - moves) // 2)
        if alpha < low:
            alpha = low
            if alpha >= beta:
                return alpha
        high = (CELLS - 1 - moves) // 2
        key = current + mask
        bound = self.table.get(key)
        if bound is not None:
            high = bound
        if beta > high:
            beta = high
            if alpha >= beta:
                return beta
        bound = self.lower.get(key)
        if bound is not None and alpha < bound:
            alpha = bound
            if alpha >= beta:
                return alpha
        # Order: most threats created first; ties keep the centre-out order (stable sort).
        # A lone candidate (often: a forced answer) needs no ordering.
        if not nxt & (nxt - 1):
            ordered: list[tuple[int, int, int, int]] = [(0, 0, nxt, -1)]
        elif moves >= ORDER_UNTIL:
            # Late in the game subtrees are small, and counting threats (a full
            # compute_winning_position per candidate) costs more than the nodes it saves:
            # centre-out only. The cut-over was tuned on Pons' L2 sets (20 positions of
            # L2_R2: 26 → 219 ms, 29 → 194 ms, 31 → 194 ms, 34 → 205 ms, 42 → 221 ms).
            ordered = [(0, 0, nxt & col, -1) for col in _ORDER_MASKS if nxt & col]
        else:
            ordered = []
            for i, col in enumerate(_ORDER_MASKS):
                move = nxt & col
                if move:
                    # The threats after the move are the child's opponent threats: passed on.
                    w = compute_winning_position(current | move, mask) & ~move
                    ordered.append((-w.bit_count(), i, move, w))
            ordered.sort()
        new_moves = moves + 1
        for _, _, move, w in ordered:
            score = -self._negamax(opponent, mask | move, new_moves, -beta, -alpha, w)
            if score >= beta:
                self.lower[key] = score
                return score
            if score > alpha:
                alpha = score
        self.table[key] = alpha
        return alpha

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
