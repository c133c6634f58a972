"""Negamax alpha-beta for deterministic two-player games, against the game protocol.

What it does, in the order a reader meets it in :meth:`AlphaBeta.search`:

* iterative deepening under a depth, time and node budget (the clock is injected);
* principal variation search: the first move with the full window, the others with a null
  window, re-searched only when they prove better;
* a transposition table of lower / upper / exact bounds keyed by ``game.key`` (or an injected
  key, e.g. one that folds symmetric positions together), storing node-relative proof scores;
* move ordering: the table's move first, then killer moves, then the history heuristic, on top
  of an optional game-specific order;
* exact proofs: a terminal scores ``WIN - plies`` for the winner, and every value carries a flag
  saying whether a heuristic leaf took part. A root value with no heuristic behind it is a
  proof, a draw included; the search stops deepening as soon as it has one.

The evaluation is injected: ``evaluate(state) -> int`` from the side to move, strictly inside
``±HEURISTIC_MAX``. Without one, a depth-limited leaf scores 0 (still heuristic).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from tablas.engine.core import Game
from tablas.engine.search.scores import (
    HEURISTIC_MAX,
    INF,
    WIN,
    Proven,
    distance_of,
    from_tt,
    proven_of,
    to_tt,
)

S = TypeVar("S")
M = TypeVar("M")

EXACT, LOWER, UPPER = 0, 1, 2
MAX_DEPTH = 200
CHECK_EVERY = 1023  # nodes between two looks at the clock; a power of two minus one


class _Stop(Exception):
    """The budget ran out in the middle of an iteration."""


@dataclass(frozen=True, slots=True)
class Limits:
    """A search budget; ``None`` means no limit of that kind (at least one must be set,
    unless the game is small enough to be solved)."""

    depth: int | None = None
    time_ms: float | None = None
    nodes: int | None = None


@dataclass(slots=True)
class SearchResult(Generic[M]):
    best_move: M | None
    score: int
    exact: bool
    pv: list[M]
    top: list[tuple[M, int]]
    depth: int
    nodes: int
    time_ms: float
    proven: Proven | None = None
    distance: int | None = None
    iterations: list[tuple[int, int, list[M]]] = field(default_factory=list)


@dataclass(slots=True)
class _Entry:
    depth: int
    flag: int
    score: int
    move: Any
    heuristic: bool
    raw: Hashable  # the unfolded key: a move is only reused in the same orientation


class AlphaBeta(Generic[S, M]):
    """One search engine for one game; reuse it to keep the transposition table warm."""

    def __init__(
        self,
        game: Game[S, M],
        evaluate: Callable[[S], int] | None = None,
        order: Callable[[S, list[M]], list[M]] | None = None,
        key: Callable[[S], Hashable] | None = None,
        clock: Callable[[], float] = time.perf_counter,
        tt_entries: int = 2_000_000,
    ) -> None:
        self.game = game
        self.evaluate = evaluate
        self.order = order
        # A symmetric key folds mirror images into one entry. Their scores are equal, but a
        # best move is only meaningful in the orientation it was found in (``raw``).
        self.key = key or game.key
        self.raw_key = game.key
        self.clock = clock
        self.tt_entries = tt_entries
        self.tt: dict[Hashable, _Entry] = {}
        self.nodes = 0
        self._deadline: float | None = None
        self._node_limit: int | None = None
        self._killers: list[list[Any]] = [[] for _ in range(MAX_DEPTH + 2)]
        self._history: dict[Any, int] = {}

    # --- the public entry ----------------------------------------------------------------

    def search(
        self,
        state: S,
        limits: Limits,
        multipv: bool = False,
        on_iteration: Callable[[SearchResult[M]], None] | None = None,
    ) -> SearchResult[M]:
        """Deepens until the budget runs out or the root is proven; returns the deepest
        completed iteration. ``multipv`` scores every root move exactly (for ``top``), at the
        price of no pruning at the root. ``on_iteration`` sees each completed iteration."""
        game = self.game
        start = self.clock()
        self.nodes = 0
        self._deadline = None if limits.time_ms is None else start + limits.time_ms / 1000
        self._node_limit = limits.nodes
        self._history.clear()
        for k in self._killers:
            k.clear()
        if len(self.tt) > self.tt_entries:
            self.tt.clear()
        moves = game.legal_moves(state)
        seat = game.to_move(state)
        if not moves or seat is None:
            raise ValueError(f"{game.id}: nothing to search in {game.position_text(state)!r}")
        if self.order is not None:
            moves = self.order(state, moves)
        max_depth = min(limits.depth or MAX_DEPTH, MAX_DEPTH)
        result: SearchResult[M] | None = None
        for depth in range(1, max_depth + 1):
            try:
                scored, exact = self._root(state, seat, moves, depth, multipv)
            except _Stop:
                break
            best_move, best = scored[0]
            pv = self._pv(state, best_move, depth)
            result = SearchResult(
                best_move=best_move,
                score=best,
                exact=exact,
                pv=pv,
                top=scored,
                depth=depth,
                nodes=self.nodes,
                time_ms=(self.clock() - start) * 1000,
                iterations=[*(result.iterations if result else []), (depth, best, pv)],
            )
            if on_iteration is not None:
                on_iteration(result)
            # Later iterations order the root by this one's scores: best first.
            moves = [m for m, _ in scored]
            if exact:
                break
        if result is None:
            # Not even depth 1 finished: answer something legal, honestly unscored.
            result = SearchResult(moves[0], 0, False, [moves[0]], [], 0, self.nodes, 0.0)
        result.nodes = self.nodes
        result.time_ms = (self.clock() - start) * 1000
        result.proven = proven_of(result.score, result.exact)
        draw_len = len(result.pv) if self._pv_ends(state, result.pv) else None
        result.distance = distance_of(result.score, result.exact, draw_len)
        return result

    # --- internals -----------------------------------------------------------------------

    def _root(
        self, state: S, seat: int, moves: Sequence[M], depth: int, multipv: bool
    ) -> tuple[list[tuple[M, int]], bool]:
        game = self.game
        alpha, beta = -INF, INF
        scored: list[tuple[M, int]] = []
        any_heuristic = False
        for i, m in enumerate(moves):
            child = game.apply(state, m)
            a = -INF if multipv else alpha
            if i == 0 or multipv:
                v, h = self._negamax(child, 1 - seat, depth - 1, -beta, -a, 1)
                v = -v
            else:
                v, h = self._negamax(child, 1 - seat, depth - 1, -alpha - 1, -alpha, 1)
                v = -v
                if alpha < v < beta:
                    v, h = self._negamax(child, 1 - seat, depth - 1, -beta, -alpha, 1)
                    v = -v
            any_heuristic |= h
            scored.append((m, v))
            if v > alpha:
                alpha = v
        # A move searched with a null window only has an upper bound; ranking by it keeps the
        # true best first, since only the best move raised alpha.
        scored.sort(key=lambda mv: -mv[1])
        best_move, best = scored[0]
        self.tt[self.key(state)] = _Entry(
            depth, EXACT, to_tt(best, 0), best_move, any_heuristic, self.raw_key(state)
        )
        return scored, not any_heuristic

    def _negamax(
        self, state: S, seat: int, depth: int, alpha: int, beta: int, ply: int
    ) -> tuple[int, bool]:
        """(score from ``seat``'s view, whether a heuristic leaf contributed)."""
        self.nodes += 1
        if not self.nodes & CHECK_EVERY:
            self._check_budget()
        game = self.game
        out = game.outcome(state)
        if out is not None:
            if out.winner is None:
                return 0, False
            return (WIN - ply if out.winner == seat else ply - WIN), False
        key = self.key(state)
        entry = self.tt.get(key)
        tt_move = None
        raw = self.raw_key(state) if self.key is not self.raw_key else key
        if entry is not None:
            if entry.raw == raw:
                tt_move = entry.move
            if entry.depth >= depth or not entry.heuristic:
                s = from_tt(entry.score, ply)
                if (
                    entry.flag == EXACT
                    or (entry.flag == LOWER and s >= beta)
                    or (entry.flag == UPPER and s <= alpha)
                ):
                    return s, entry.heuristic
        if depth <= 0 or ply >= MAX_DEPTH:
            if self.evaluate is None:
                return 0, True
            v = self.evaluate(state)
            return max(-HEURISTIC_MAX, min(HEURISTIC_MAX, v)), True

        moves = self._ordered(state, game.legal_moves(state), tt_move, ply)
        alpha0 = alpha
        best, best_move, heuristic = -INF, moves[0], False
        for i, m in enumerate(moves):
            child = game.apply(state, m)
            nxt = game.to_move(child)
            cseat = 1 - seat if nxt is None else nxt
            sign = 1 if cseat == seat else -1
            if sign < 0 and i > 0:
                v, h = self._negamax(child, cseat, depth - 1, -alpha - 1, -alpha, ply + 1)
                v = -v
                if alpha < v < beta:
                    v, h = self._negamax(child, cseat, depth - 1, -beta, -alpha, ply + 1)
                    v = -v
            elif sign < 0:
                v, h = self._negamax(child, cseat, depth - 1, -beta, -alpha, ply + 1)
                v = -v
            else:  # the same side moves again (no game here does, but the protocol allows it)
                v, h = self._negamax(child, cseat, depth - 1, alpha, beta, ply + 1)
            heuristic |= h
            if v > best:
                best, best_move = v, m
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        self._reward(m, ply, depth)
                        break
        flag = UPPER if best <= alpha0 else LOWER if best >= beta else EXACT
        self.tt[key] = _Entry(depth, flag, to_tt(best, ply), best_move, heuristic, raw)
        return best, heuristic

    def _ordered(self, state: S, moves: list[M], tt_move: Any, ply: int) -> list[M]:
        if self.order is not None:
            moves = self.order(state, moves)
        killers = self._killers[ply]
        hist = self._history
        n = len(moves)

        def rank(im: tuple[int, M]) -> tuple[int, int, int]:
            i, m = im
            if m == tt_move:
                return (0, 0, i)
            if m in killers:
                return (1, 0, i)
            return (2, -hist.get(m, 0), i)

        if n > 1:
            moves = [m for _, m in sorted(enumerate(moves), key=rank)]
        return moves

    def _reward(self, move: M, ply: int, depth: int) -> None:
        killers = self._killers[ply]
        if move not in killers:
            killers.insert(0, move)
            del killers[2:]
        self._history[move] = self._history.get(move, 0) + depth * depth

    def _check_budget(self) -> None:
        if self._deadline is not None and self.clock() >= self._deadline:
            raise _Stop
        if self._node_limit is not None and self.nodes >= self._node_limit:
            raise _Stop

    def _pv(self, state: S, first: M, depth: int) -> list[M]:
        """The principal variation: the first move, then the table's best moves while they
        are legal (a guard against stale entries)."""
        game = self.game
        pv = [first]
        state = game.apply(state, first)
        seen = {self.key(state)}
        while len(pv) < max(depth, 1) * 2 and game.outcome(state) is None:
            entry = self.tt.get(self.key(state))
            if (
                entry is None
                or entry.raw != self.raw_key(state)
                or entry.move not in game.legal_moves(state)
            ):
                break
            pv.append(entry.move)
            state = game.apply(state, entry.move)
            k = self.key(state)
            if k in seen:
                break
            seen.add(k)
        return pv

    def _pv_ends(self, state: S, pv: list[M]) -> bool:
        for m in pv:
            state = self.game.apply(state, m)
        return self.game.outcome(state) is not None
