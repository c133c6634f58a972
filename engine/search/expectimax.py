"""Expectiminimax with *-minimax pruning (Ballard's Star1 and Star2), against the protocol.

Values are floats from seat 0's point of view (seat 0 maximises, seat 1 minimises), inside
known bounds ``[lo, hi]`` (for backgammon's cubeless equity, ±3). Those bounds are what lets a
chance node prune: after some outcomes are searched, the rest can only add between ``lo`` and
``hi`` times their probability.

* **Star1**: a chance node passes each child the window it needs to matter, and stops as soon
  as its value is known to fall outside its own window.
* **Star2** (probing): before searching any outcome in full, a chance node searches just the
  first move of each outcome. For a maximising child that is a lower bound, for a minimising
  one an upper bound; the bounds alone may already settle the node, and they tighten the
  windows of the full searches after.

``depth`` counts decision plies; chance nodes do not spend depth. A leaf is a chance node (the
position before a roll, where backgammon evaluations are at home) or a decision at depth 0.
Injected: ``evaluate(state) -> float`` (seat 0's view), ``terminal(outcome) -> float``, an
optional ``normalize(state)`` applied after every move (backgammon's cubeless search uses it
to skip the cube actions), and ``order(state, moves)`` for the first-move probes. An optional
``evaluate_many(states) -> values`` lets an evaluation that is cheaper in bulk (a network) take
every leaf below a chance node one ply above the leaves at once (under Star2 the probes meet
every one of them anyway, so asking for them together costs no extra evaluation). The
``clock`` is injected too: a ``deadline`` on it makes a search that runs past it raise
:class:`SearchTimeout`, so a caller deepening pass by pass keeps its last complete pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from tablas.engine.core import Game, Outcome

S = TypeVar("S")
M = TypeVar("M")


class SearchTimeout(Exception):
    """The searcher's ``deadline`` passed mid-search; its value is lost, the caller keeps what
    it had before (iterative deepening's last complete pass)."""


# Nodes between two looks at the clock (a power of two minus one): few, because one node of a
# backgammon search may generate and evaluate hundreds of positions.
CHECK_EVERY = 7


@dataclass(slots=True)
class Stats:
    nodes: int = 0
    evals: int = 0


def points_from_seat0(outcome: Outcome) -> float:
    """The result in points won by seat 0 (negative when seat 1 won)."""
    if outcome.winner is None:
        return 0.0
    return float(outcome.points if outcome.winner == 0 else -outcome.points)


class Expectimax(Generic[S, M]):
    """Plain expectiminimax (``star=0``), Star1 (``star=1``) or Star2 (``star=2``)."""

    def __init__(
        self,
        game: Game[S, M],
        evaluate: Callable[[S], float],
        lo: float,
        hi: float,
        star: int = 2,
        terminal: Callable[[Outcome], float] = points_from_seat0,
        normalize: Callable[[S], S] | None = None,
        moves: Callable[[S], list[M]] | None = None,
        beam: int | None = None,
        evaluate_many: Callable[[list[S]], list[float]] | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.game = game
        self.evaluate = evaluate
        self.evaluate_many = evaluate_many
        self.lo, self.hi = lo, hi
        self.star = star
        self.terminal = terminal
        self.normalize = normalize or (lambda s: s)
        self.moves = moves or game.legal_moves
        self._own_moves = moves is not None
        # The classic beam: at a decision, only the best ``beam`` moves by a static look at
        # the position after them are searched deeper. Not exact any more, but affordable.
        self.beam = beam
        self.stats = Stats()
        self.clock = clock
        # When set (a ``clock()`` time), a search that runs past it raises SearchTimeout.
        self.deadline: float | None = None
        # Star2's probes evaluate leaves that the full pass meets again; a cache of leaf
        # values (per searcher, keyed by the game's state key) makes that free.
        self._leaf: dict[Any, float] = {}
        # A decision's children, generated once although the probe and the full search both
        # ask for them.
        self._kids: dict[Any, list[tuple[M, S]]] = {}

    def value(
        self, state: S, depth: int, alpha: float | None = None, beta: float | None = None
    ) -> float:
        """The value of ``state`` searched ``depth`` decision plies deep. With a window
        ``(alpha, beta)`` the answer is exact only inside it; outside it is a bound on the
        side of the window it fell (fail-soft)."""
        lo = self.lo if alpha is None else alpha
        hi = self.hi if beta is None else beta
        return self._search(state, depth, lo, hi)

    def best(
        self, state: S, depth: int, all_exact: bool = False
    ) -> tuple[M, float, list[tuple[M, float]]]:
        """(best move, its value, the moves with their values) at a decision node.

        By default each move after the first is searched against the best so far, so a worse
        move's value is only a bound; ``all_exact`` scores every move exactly instead.
        """
        seat = self.game.to_move(state)
        assert seat is not None, "best() needs a decision node"
        scored: list[tuple[M, float]] = []
        best = self.lo if seat == 0 else self.hi
        for m in self.moves(state):
            child = self._child(state, m)
            if all_exact or not scored:
                v = self._search(child, depth - 1, self.lo, self.hi)
            elif seat == 0:
                v = self._search(child, depth - 1, best, self.hi)
            else:
                v = self._search(child, depth - 1, self.lo, best)
            scored.append((m, v))
            best = max(best, v) if seat == 0 else min(best, v)
        scored.sort(key=lambda mv: -mv[1] if seat == 0 else mv[1])
        return scored[0][0], scored[0][1], scored

    # --- the recursion ---------------------------------------------------------------------

    def _child(self, state: S, move: M) -> S:
        return self.normalize(self.game.apply(state, move))

    def children(self, state: S) -> list[tuple[M, S]]:
        """Every move at a decision with its (normalised) child."""
        if self._own_moves:
            return [(m, self._child(state, m)) for m in self.moves(state)]
        norm = self.normalize
        return [(m, norm(c)) for m, c in self.game.successors(state)]

    def _search(self, state: S, depth: int, alpha: float, beta: float) -> float:
        self.stats.nodes += 1
        if (
            self.deadline is not None
            and not self.stats.nodes & CHECK_EVERY
            and self.clock() > self.deadline
        ):
            raise SearchTimeout
        game = self.game
        out = game.outcome(state)
        if out is not None:
            return self.terminal(out)
        if depth <= 0:
            return self._evaluate(state)
        if game.is_chance(state):
            return self._chance(state, depth, alpha, beta)
        return self._decision(state, depth, alpha, beta)

    def _evaluate(self, state: S) -> float:
        key = self.game.key(state)
        v = self._leaf.get(key)
        if v is None:
            self.stats.evals += 1
            v = self._leaf[key] = self.evaluate(state)
        return v

    def prefetch(self, children: list[S]) -> None:
        """Evaluate the children that are leaves and not cached yet, in one bulk call."""
        if self.evaluate_many is None:
            return
        game = self.game
        todo: dict[Any, S] = {}
        for c in children:
            k = game.key(c)
            if k not in self._leaf and k not in todo and game.outcome(c) is None:
                todo[k] = c
        if len(todo) > 1:
            self.stats.evals += len(todo)
            self._leaf.update(zip(todo, self.evaluate_many(list(todo.values()))))

    def _children_of(self, state: S) -> list[tuple[M, S]]:
        key = self.game.key(state)
        kids = self._kids.get(key)
        if kids is None:
            kids = self._kids[key] = self.children(state)
        return kids

    def _candidates(self, state: S, maximise: bool, depth: int) -> list[tuple[M, S]]:
        """The moves to search at a decision with their children: all of them, or the best
        ``beam`` by a static look at the children."""
        children = self._children_of(state)
        if self.beam is None or len(children) <= self.beam:
            if depth == 1:
                self.prefetch([c for _, c in children])
            return children
        self.prefetch([c for _, c in children])
        scored = [(self._static(c), i, m, c) for i, (m, c) in enumerate(children)]
        scored.sort(key=lambda t: (-t[0] if maximise else t[0], t[1]))
        return [(m, c) for _, _, m, c in scored[: self.beam]]

    def _static(self, state: S) -> float:
        out = self.game.outcome(state)
        return self.terminal(out) if out is not None else self._evaluate(state)

    def _decision(self, state: S, depth: int, alpha: float, beta: float) -> float:
        maximise = self.game.to_move(state) == 0
        best = self.lo - 1 if maximise else self.hi + 1
        for _, child in self._candidates(state, maximise, depth):
            v = self._search(child, depth - 1, alpha, beta)
            if maximise:
                if v > best:
                    best = v
                    alpha = max(alpha, v)
            elif v < best:
                best = v
                beta = min(beta, v)
            if self.star and alpha >= beta:
                break
        return best

    def _probe(self, state: S, depth: int) -> float:
        """One move's value: a bound on a decision node (lower if it maximises)."""
        if self.game.outcome(state) is not None or self.game.is_chance(state) or depth <= 0:
            return self._search(state, depth, self.lo, self.hi)
        _, first = self._candidates(state, self.game.to_move(state) == 0, depth)[0]
        return self._search(first, depth - 1, self.lo, self.hi)

    def _chance(self, state: S, depth: int, alpha: float, beta: float) -> float:
        game = self.game
        outcomes = game.chance_outcomes(state)
        children = [(game.apply_chance(state, o), p) for o, p in outcomes]
        if depth == 1 and self.evaluate_many is not None:
            leaves: list[S] = []
            for c, _ in children:
                if game.outcome(c) is None and game.to_move(c) is not None:
                    leaves.extend(leaf for _, leaf in self._children_of(c))
                    # Generating 21 rolls' replies is the costliest step of a search: the
                    # clock is looked at after each, not only every few nodes.
                    if self.deadline is not None and self.clock() > self.deadline:
                        raise SearchTimeout
            self.prefetch(leaves)
        lo, hi = self.lo, self.hi
        if self.star == 0:
            return sum(p * self._search(c, depth, lo, hi) for c, p in children)
        # Bounds on each child's value: [lo, hi] at first, tightened by probes (Star2).
        lower = [lo] * len(children)
        upper = [hi] * len(children)
        if self.star >= 2:
            for i, (c, _) in enumerate(children):
                seat = game.to_move(c)
                if seat is None:
                    continue
                v = self._probe(c, depth)
                if seat == 0:
                    lower[i] = v
                else:
                    upper[i] = v
            lsum = sum(p * lb for (_, p), lb in zip(children, lower))
            usum = sum(p * ub for (_, p), ub in zip(children, upper))
            if lsum >= beta:
                return lsum
            if usum <= alpha:
                return usum
        # Star1 over the children, each window derived from the bounds of the others.
        lsum = sum(p * lb for (_, p), lb in zip(children, lower))
        usum = sum(p * ub for (_, p), ub in zip(children, upper))
        for i, (c, p) in enumerate(children):
            rest_lo = lsum - p * lower[i]
            rest_hi = usum - p * upper[i]
            a = max(lower[i], (alpha - rest_hi) / p)
            b = min(upper[i], (beta - rest_lo) / p)
            v = self._search(c, depth, a, b)
            lsum = rest_lo + p * v
            usum = rest_hi + p * v
            lower[i] = upper[i] = v
            if lsum >= beta:
                return lsum
            if usum <= alpha:
                return usum
        return lsum
