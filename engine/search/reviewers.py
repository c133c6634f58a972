"""How each game judges a move already played: the reviewers and thresholds its profile names.

:func:`tablas.engine.review.review_game` replays a finished game and asks the game's
:class:`Reviewer` (``profile(game).review``) about every action: which action the engine
prefers there, how much the played one loses against it (in the game's score units, from the
mover's side), the proven results before and after it where a solver or a search has them,
and the verdict. Two reviewers serve every game, written once over the game protocol:

* :class:`SearchReviewer`, for the deterministic games: an exact solver's scores where the
  profile says the position must be solved (``solved_from``), else the solver within the
  budget if it honours one, else the strongest alpha-beta search within the budget, every
  root move scored with a full window (``multipv``), so the best and the played move come
  from the same search;
* :class:`BackgammonReviewer`: every play ranked by the strongest level's search over the
  dice that were rolled, the cube actions by the bots' cube logic.

Verdicts (:class:`Thresholds`): a move that turns a proven result into a worse one is a
``blunder`` whatever the numbers; a move that keeps a proven result is ``best``, ``good`` or
an ``inaccuracy`` by how many plies it gives away (a slower win, a quicker loss); otherwise
the loss against the thresholds. ``docs/review.md`` has each game's numbers.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, get_args

from tablas.engine.core import Game, Outcome
from tablas.engine.games.backgammon import Backgammon, Resignation
from tablas.engine.search.alphabeta import Limits
from tablas.engine.search.alphabeta_bots import AlphaBetaBots
from tablas.engine.search.backgammon_bot import cube_verdict, rank_plays
from tablas.engine.search.backgammon_resign import resign_loss
from tablas.engine.search.exact import ExactSolver, exact_scores
from tablas.engine.search.opening_book import book_play
from tablas.engine.search.scores import Proven, is_proven_loss, is_proven_win, proven_of

Verdict = Literal["best", "good", "inaccuracy", "mistake", "blunder"]
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
RESULT_RANK: dict[Proven, int] = {"loss": 0, "draw": 1, "win": 2}
_FLIP: dict[Proven, Proven] = {"win": "loss", "loss": "win", "draw": "draw"}
# Equities are floats from one search: a difference this small is the same value.
TIE = 1e-9


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Where each verdict starts, as a loss in the game's units from the mover's side.

    No loss is ``best``; a loss below ``inaccuracy`` is ``good``; from ``inaccuracy``, an
    ``inaccuracy``; from ``mistake``, a ``mistake``; from ``blunder``, a ``blunder``.
    ``slower``: a move that keeps a proven win (or loss) is ``good`` if it is at most this
    many plies slower to win (quicker to lose) than the best move, an ``inaccuracy`` if more;
    a proven result made worse is always a ``blunder``."""

    inaccuracy: float
    mistake: float
    blunder: float
    slower: int = 2

    def of_loss(self, loss: float) -> Verdict:
        if loss <= TIE:
            return "best"
        if loss < self.inaccuracy:
            return "good"
        if loss < self.mistake:
            return "inaccuracy"
        if loss < self.blunder:
            return "mistake"
        return "blunder"

    def of_proofs(self, before: Proven, after: Proven, plies: float) -> Verdict:
        """The verdict on a move from a proven ``before`` to a proven ``after`` (both for the
        mover) that gives away ``plies`` of distance when the result is the same."""
        if RESULT_RANK[after] < RESULT_RANK[before]:
            return "blunder"
        if plies <= 0:
            return "best"
        return "good" if plies <= self.slower else "inaccuracy"


@dataclass(frozen=True, slots=True)
class Judgement:
    """A reviewer's answer on one move, from the mover's side: the engine's best move (None
    if it has no opinion), the loss in the game's units, the verdict, the proven results
    before and after the move (None where unproven), and the position's value after the move
    for a chart (None if unknown)."""

    best_move: Any | None
    loss: float
    verdict: Verdict
    proven_before: Proven | None
    proven_after: Proven | None
    score_after: float | None


class Reviewer(Protocol):
    """Judges one move of a game in the position where it was played."""

    @property
    def thresholds(self) -> Thresholds:
        """Where each verdict starts in this game (documented in ``docs/review.md``)."""
        ...

    def judge(self, game: Game[Any, Any], state: Any, move: Any, budget_ms: float
              ) -> Judgement:
        """The judgement on the legal ``move`` (in listed form) in ``state``, a decision of
        the seat to move; ``budget_ms`` is the time the review may spend on it (a game's
        profile says where exactness overrides it)."""
        ...


def _end_result(outcome: Outcome, seat: int) -> Proven:
    return "draw" if outcome.winner is None else "win" if outcome.winner == seat else "loss"


def _is_proof(score: int) -> bool:
    return is_proven_win(score) or is_proven_loss(score)


@dataclass(frozen=True)
class SearchReviewer:
    """The reviewer of a deterministic game, from its profile's pieces.

    ``cap``: the units a proven win is worth (-cap a loss); heuristic scores are clipped to
    ±cap. ``solver``: the game's exact solver, if any. ``solved_from(state)``: True where the
    solver must settle the position whatever the budget (None: everywhere the solver is);
    ``solver_within_budget``: before that, try the solver with half the budget (a solver that
    honours ``time_ms``). ``result_of(state)``: an instant exact result for the side to move
    (Grundy values), which settles ``proven_*`` where no solve did. ``depth``: search to this
    fixed depth instead of the budget's time (a review that must come out the same on any
    machine; the differential tests). ``bots``: the game's bots (its profile's), whose
    engine the search is: their evaluation, move order and table key."""

    thresholds: Thresholds
    cap: float
    solver: ExactSolver | None = None
    solved_from: Callable[[Any], bool] | None = None
    solver_within_budget: bool = False
    result_of: Callable[[Any], Proven] | None = None
    depth: int | None = None
    bots: AlphaBetaBots = field(kw_only=True)

    def must_solve(self, state: Any) -> bool:
        """Whether the review solves ``state`` exactly, however long it takes."""
        return self.solver is not None and (self.solved_from is None or self.solved_from(state))

    def judge(self, game: Game[Any, Any], state: Any, move: Any, budget_ms: float
              ) -> Judgement:
        started = time.perf_counter()
        seat = game.to_move(state)
        assert seat is not None, "a review judges decisions only"
        scored, exact = self._solved(state, budget_ms)
        if scored is None:
            left = max(1.0, budget_ms - (time.perf_counter() - started) * 1000)
            scored, exact = self._searched(game, state, left, self.depth)
        best_move, best = scored[0]
        played = next(v for m, v in scored if m == move)
        if played == best:  # among equals, the move played is the engine's choice too
            best_move = move
        before = proven_of(best, exact)
        after = proven_of(played, exact)
        if self.result_of is not None:
            child = game.apply(state, move)
            end = game.outcome(child)
            before = self.result_of(state)
            if end is not None:
                after = _end_result(end, seat)
            else:
                after = self.result_of(child)
                if game.to_move(child) != seat:
                    after = _FLIP[after]
        u_best, u_played = self._units(best, before), self._units(played, after)
        if before is not None and after is not None:
            same = before == after and _is_proof(best) and _is_proof(played)
            plies = max(0, best - played) if same else 0
            verdict = self.thresholds.of_proofs(before, after, plies)
            loss = float(plies) if before == after else max(0.0, u_best - u_played)
        else:
            loss = max(0.0, u_best - u_played)
            verdict = self.thresholds.of_loss(loss)
        return Judgement(best_move, loss, verdict, before, after, u_played)

    def _solved(self, state: Any, budget_ms: float) -> tuple[list[tuple[Any, int]] | None, bool]:
        if self.solver is None:
            return None, False
        if self.must_solve(state):
            return exact_scores(self.solver, state, None), True
        if self.solver_within_budget:
            scored = exact_scores(self.solver, state, budget_ms / 2)
            return scored, scored is not None
        return None, False

    def _searched(self, game: Game[Any, Any], state: Any, time_ms: float, depth: int | None
                  ) -> tuple[list[tuple[Any, int]], bool]:
        """Every root move scored by the strongest level's search (the game's evaluation,
        order and table key) within ``time_ms`` (or to ``depth``); at least depth 1 whatever
        the clock says."""
        engine = self.bots.engine(game, state)
        limits = Limits(time_ms=time_ms) if depth is None else Limits(depth=depth)
        r = engine.search(state, limits, multipv=True)
        if not r.top:
            r = engine.search(state, Limits(depth=1), multipv=True)
        return list(r.top), r.exact

    def _units(self, score: int, proven: Proven | None) -> float:
        """A search score in the game's units: a proven result is ±cap (a draw 0), the rest
        is clipped to ±cap."""
        if proven is not None:
            return {"win": self.cap, "draw": 0.0, "loss": -self.cap}[proven]
        return float(max(-self.cap, min(self.cap, score)))


@dataclass(frozen=True)
class BackgammonReviewer:
    """Backgammon's reviewer: equity loss by ``level``'s search (:mod:`backgammon_bot`).

    Plays: every play of the rolled dice ranked by :func:`rank_plays` within the budget (at
    ``max`` a 2-ply search of the 8 best plays, then the 3-ply pass if the budget allows),
    the played play searched again to the same depth with a full window; loss = best equity -
    played equity, cubeless, in units of the cube. On the opening roll the book's play is the
    best one (as it is the bots'). Cube actions (``roll``/``double``, ``take``/``drop``): the
    bots' choice is the best action, each action's equity from :func:`cube_verdict`
    (Janowski's cubeful equity from the probabilities before the roll, in units of the cube
    before the decision). In a match the cube actions are judged by match equity, in its
    units (EMG: the money equity that the match-winning chances stand for at the current
    cube)."""

    thresholds: Thresholds
    level: str = "max"

    def judge(self, game: Game[Any, Any], state: Any, move: Any, budget_ms: float
              ) -> Judgement:
        assert isinstance(game, Backgammon), "the backgammon reviewer reviews backgammon"
        if isinstance(move, Resignation):
            # What playing on was worth to the resigner against the points given up.
            loss = resign_loss(state, move.seat, move.points)
            return Judgement(None, loss, self.thresholds.of_loss(loss), None, None,
                             -float(move.points))
        if state.phase in ("roll", "take"):
            verdict = cube_verdict(state, self.level)
            best_action, values = verdict.action, verdict.values
            loss = max(0.0, values[best_action] - values[move])
            if state.match is not None:
                after = values[move]
            else:  # the chart shows cubeless equity; a drop ends the game: one cube lost
                after = -1.0 if move == "drop" else verdict.cubeless
            return Judgement(best_action, loss, self.thresholds.of_loss(loss), None, None, after)
        book = book_play(state)
        wanted = [move] if book is None else [move, book]
        ranked, _, _ = rank_plays(game, state, self.level, budget_ms, random.Random(0),
                                  exact_for=wanted)
        equity = dict(ranked)
        best_move, best = (book, equity[book]) if book is not None else ranked[0]
        played = equity[move]
        loss = max(0.0, best - played)
        if loss <= TIE and book is None:  # among equals, the play made is the engine's too
            best_move, loss = move, 0.0
        elif loss <= TIE:
            loss = 0.0
        return Judgement(best_move, loss, self.thresholds.of_loss(loss), None, None, played)
