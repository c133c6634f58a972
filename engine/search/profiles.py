"""Each game's profile: what search knows of it. A game is its rules module under
``engine/games/`` (a line of the registry, :mod:`tablas.engine.games`) plus one entry of
:data:`PROFILES`, which :func:`profile` hands out. The lookup lives here, above the games,
not in the registry: the registry knows only the rules, so nothing below search imports it.

A profile gives the game's bots and analysis (:class:`Bots`: every level's decision and
``tablas analyze``), how to read its scores (:class:`ScoreScale`), which the server sends
with every analysis so that no client needs to know the engine's numbers, and whose turn it
would be once the game is over (``turn_at_end``, for the analysis of a finished position).

Levels, per game (depth in plies, or a time budget; ± is the noise added to each root move's
score before the best is taken):

=========  =============  =============  =============  ======================
level      tic-tac-toe    Grundy         Connect-4      BOOM
=========  =============  =============  =============  ======================
random     uniform        uniform        uniform        uniform
easy       depth 1, ±300  depth 2, ±60,  depth 2, ±120  depth 2, ±120
                          parity
medium     depth 3, ±40   depth 3,       depth 4, ±20   depth 4, ±20
                          parity
hard       solved         solved         solved, or 1 s 1 s
max        solved         solved         solved, or 5 s 5 s
=========  =============  =============  =============  ======================

"parity": Grundy's lower levels judge a position by a novice's count
(:func:`tablas.engine.search.evals.grundy_parity_eval`) instead of the Grundy values, which would
make every level that searches at all play perfectly (the first bot ladder showed easy, medium and
hard all equal). They still see a won or lost end inside their depth. Tic-tac-toe is
"solved" by a full-depth search, the others by their exact solvers
(:mod:`tablas.engine.search.exact`). Backgammon's levels are in
:mod:`tablas.engine.search.backgammon_bot`.

Review (``review``, :mod:`tablas.engine.search.reviewers`; the verdicts per game in
``docs/review.md``): tic-tac-toe and Grundy are solved at every move (Grundy up to
:data:`GRUNDY_SOLVED_UP_TO`), Connect-4 from the move laying stone :data:`C4_EXACT_FROM` on
(before that, the solver within the budget, else the search), BOOM by the strongest search
within the budget, backgammon by the ``max`` level's search.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tablas.engine.core import JSON, Game, Outcome
from tablas.engine.errors import InvalidInputError
from tablas.engine.games import get_game
from tablas.engine.games.backgammon import BGState
from tablas.engine.games.boom import Boom, seat_to_act
from tablas.engine.games.connect4 import C4State, Connect4
from tablas.engine.games.grundy import Grundy, GrundyState, position_value
from tablas.engine.games.tictactoe import TicTacToe, TTTState, canonical_key
from tablas.engine.search import backgammon_resign, evals
from tablas.engine.search.alphabeta import AlphaBeta
from tablas.engine.search.alphabeta_bots import AlphaBetaBots, LevelSpec
from tablas.engine.search.backgammon_bot import BackgammonBots, skip_cube
from tablas.engine.search.backgammon_eval import evaluate_for_seat0
from tablas.engine.search.decision import Decision, Level, SearchInfo
from tablas.engine.search.exact import Connect4Exact, GrundyExact, SearchExact
from tablas.engine.search.reviewers import BackgammonReviewer, Reviewer, SearchReviewer, Thresholds
from tablas.engine.search.scores import Proven


class Bots(Protocol):
    """A game's bots and analysis."""

    def decide(
        self,
        game: Game[Any, Any],
        state: Any,
        level: Level,
        budget_ms: float | None,
        seed: int,
        on_progress: Callable[[SearchInfo], None] | None,
    ) -> Decision:
        """The decision of ``level`` in ``state`` (a decision for the side to move)."""
        ...

    def analyze(
        self,
        game: Game[Any, Any],
        state: Any,
        position: str,
        depth: int | None,
        time_ms: float | None,
        level: str | None,
    ) -> JSON:
        """``tablas analyze``'s verdict in the contract's shape, for a position in play
        (:func:`tablas.engine.search.analysis.analyze` answers finished ones itself)."""
        ...

    def end_score(self, state: Any, outcome: Outcome, seat: int) -> float:
        """The score of the finished ``state`` for ``seat``, as this game's search scores an
        end it reaches (a proof at distance 0, or the points won)."""
        ...


@dataclass(frozen=True, slots=True)
class ScoreScale:
    """How to read a game's scores (always from the side to move).

    ``unit``: ``"equity"`` (points per game, backgammon) or ``"points"`` (the heuristic's
    integers; proofs are then told by ``proven``/``distance``, never by the number).
    ``typical``: the size of a clear, not yet decisive advantage: the scale of an evaluation
    bar (the page gives the side to move ½ + ½·tanh(score / typical) of it).
    ``cap``: the most a position is worth: a review's chart draws a proven win at +cap and a
    proven loss at -cap, and clips other scores to ±cap."""

    unit: Literal["equity", "points"]
    typical: float
    cap: float


@dataclass(frozen=True)
class GameProfile:
    bots: Bots
    score: ScoreScale
    # The engine's static evaluation of a position, from seat 0's side (positive: good for
    # seat 0), for a tree drawn to a depth (``tablas explain``); None: the game has none.
    evaluate_seat0: Callable[[Any], float] | None = None
    # What a searched tree does after every move, if anything: backgammon leaves the cube out
    # (after a play the opponent simply rolls), as its bots' cubeless search does.
    normalize: Callable[[Any], Any] | None = None
    # The seat whose turn it would be in a finished position (the rules' ``to_move`` is None
    # there): ``tablas analyze`` reports the result for that side. Required of every game.
    turn_at_end: Callable[[Any], int] = field(kw_only=True)
    # How a finished game's moves are judged (engine.review.review_game): the reviewer and
    # its thresholds. Required of every game.
    review: Reviewer = field(kw_only=True)
    # Each bot level's fixed rating and RD (contract section 10: house bots are anchors),
    # from the measured bot ladder (tools/anchors.py says how; docs/ratings.md). Required.
    bot_ratings: Mapping[Level, tuple[int, int]] = field(kw_only=True)
    # Whether a bot takes the other side's offer to resign the current game for ``points``
    # (state, resigner's seat, points): backgammon's, by the bot's equity; None for the games
    # whose resignations have no value (they are no offers).
    accepts_resignation: Callable[[Any, int, int], bool] | None = field(default=None,
                                                                       kw_only=True)


def _seat0(game: Game[Any, Any], evaluate: Callable[[Any], int]) -> Callable[[Any], float]:
    """``evaluate`` (from the side to move) from seat 0's side."""

    def for_seat0(state: Any) -> float:
        v = evaluate(state)
        return v if game.to_move(state) == 0 else -v

    return for_seat0


_SEARCH_DEFAULT: Mapping[Level, LevelSpec] = {
    "easy": LevelSpec(depth=2, noise=120),
    "medium": LevelSpec(depth=4, noise=20),
    "hard": LevelSpec(time_ms=1000),
    "max": LevelSpec(time_ms=5000),
}
_POINTS = ScoreScale("points", 150.0, 1000.0)
# In points: a fifth of a clear advantage given away is an inaccuracy, half of one a mistake,
# a whole one a blunder. Exact games use them only where a position is not solved.
_POINT_THRESHOLDS = Thresholds(inaccuracy=30, mistake=75, blunder=150, slower=2)
# GNU Backgammon's defaults for a doubtful, bad and very bad move, in equity.
_EQUITY_THRESHOLDS = Thresholds(inaccuracy=0.04, mistake=0.08, blunder=0.16)
C4_EXACT_FROM = 12
"""A review judges exactly every Connect-4 move that lays this stone or a later one: the
positions it is played from (one stone fewer and up) are solved however long it takes (the
contract's promise; 2-20 s for the first of a game on one core, the later ones mostly from
the solver's tables). Solving the position before the move, not only the one after, keeps
the best and the played move's values from the same solver."""
GRUNDY_SOLVED_UP_TO = 60
"""Grundy positions whose heaps above 2 add up to at most this are solved in a review (a heap
of 60, the page's largest, takes about 6 s the first time, then the solver's memo answers);
larger ones are searched, their results still exact by the Grundy values."""


def _ttt_turn(s: TTTState) -> int:
    return 0 if s.xs.bit_count() == s.os.bit_count() else 1


def _grundy_turn(s: GrundyState) -> int:
    # The player who cannot split any heap: the rules make the other one the winner.
    return s.turn


def _connect4_turn(s: C4State) -> int:
    return s.moves & 1


def _backgammon_turn(s: BGState) -> int:
    # The player on roll of the state's Position ID: after a bear-off, the loser.
    return s.turn


def _c4_solved(s: C4State) -> bool:
    return s.moves + 1 >= C4_EXACT_FROM


def _grundy_solved(s: GrundyState) -> bool:
    return sum(h for h in s.heaps if h > 2) <= GRUNDY_SOLVED_UP_TO


def _grundy_result(s: GrundyState) -> Proven:
    return "win" if position_value(s.heaps) else "loss"


_C4_SOLVER = Connect4Exact()  # the bots' and the review's: one set of tables per process
_GRUNDY_SOLVER = GrundyExact()


# The deterministic games' bots: each profile's review searches as its bots do.
_TTT_BOTS = AlphaBetaBots(
    levels={
        "easy": LevelSpec(depth=1, noise=300),
        "medium": LevelSpec(depth=3, noise=40),
        "hard": LevelSpec(depth=9),
        "max": LevelSpec(depth=9),
    },
    key_for=evals.tictactoe_key_for,
)
_GRUNDY_BOTS = AlphaBetaBots(
    levels={
        **_SEARCH_DEFAULT,
        "easy": LevelSpec(depth=2, noise=60, evaluation=evals.grundy_parity_eval),
        "medium": LevelSpec(depth=3, evaluation=evals.grundy_parity_eval),
    },
    evaluate=evals.grundy_eval,
    solver=_GRUNDY_SOLVER,
)
_C4_BOTS = AlphaBetaBots(
    levels=_SEARCH_DEFAULT,
    evaluate=evals.connect4_eval,
    order=evals.connect4_order,
    key_for=evals.connect4_key_for,
    solver=_C4_SOLVER,
)
_BOOM_BOTS = AlphaBetaBots(levels=_SEARCH_DEFAULT, evaluate=evals.boom_eval)


PROFILES: dict[str, GameProfile] = {
    "tictactoe": GameProfile(
        _TTT_BOTS,
        _POINTS,
        turn_at_end=_ttt_turn,
        bot_ratings={"random": (700, 30), "easy": (879, 62), "medium": (1181, 99),
                     "hard": (1396, 119), "max": (1396, 119)},
        review=SearchReviewer(_POINT_THRESHOLDS, _POINTS.cap,
                              SearchExact(TicTacToe(), canonical_key), bots=_TTT_BOTS),
    ),
    "grundy": GameProfile(
        _GRUNDY_BOTS,
        _POINTS,
        _seat0(Grundy(), evals.grundy_eval),
        turn_at_end=_grundy_turn,
        bot_ratings={"random": (700, 30), "easy": (800, 36), "medium": (939, 52),
                     "hard": (1615, 135), "max": (1615, 135)},
        review=SearchReviewer(_POINT_THRESHOLDS, _POINTS.cap, _GRUNDY_SOLVER,
                              solved_from=_grundy_solved, result_of=_grundy_result,
                              bots=_GRUNDY_BOTS),
    ),
    "connect4": GameProfile(
        _C4_BOTS,
        _POINTS,
        _seat0(Connect4(), evals.connect4_eval),
        turn_at_end=_connect4_turn,
        bot_ratings={"random": (700, 30), "easy": (1177, 94), "medium": (1409, 109),
                     "hard": (1608, 121), "max": (1608, 121)},
        review=SearchReviewer(_POINT_THRESHOLDS, _POINTS.cap, _C4_SOLVER,
                              solved_from=_c4_solved, solver_within_budget=True,
                              bots=_C4_BOTS),
    ),
    "boom": GameProfile(
        _BOOM_BOTS,
        _POINTS,
        _seat0(Boom(), evals.boom_eval),
        turn_at_end=seat_to_act,
        bot_ratings={"random": (700, 30), "easy": (987, 106), "medium": (1273, 149),
                     "hard": (1785, 233), "max": (1785, 233)},
        review=SearchReviewer(_POINT_THRESHOLDS, _POINTS.cap, bots=_BOOM_BOTS),
    ),
    "backgammon": GameProfile(
        BackgammonBots(), ScoreScale("equity", 1.0, 3.0), evaluate_for_seat0, skip_cube,
        turn_at_end=_backgammon_turn,
        bot_ratings={"random": (700, 30), "easy": (1498, 175), "medium": (1671, 179),
                     "hard": (1871, 183), "max": (1884, 186)},
        review=BackgammonReviewer(_EQUITY_THRESHOLDS),
        accepts_resignation=backgammon_resign.accepts,
    ),
}


def profile(game_id: str) -> GameProfile:
    """What search knows of the game: its bots, analysis and score scale; an unknown id
    raises :class:`~tablas.engine.errors.UnknownGameError` (the registry's)."""
    get_game(game_id)
    return PROFILES[game_id]


def engine_for(game: Game[Any, Any], root: Any = None) -> AlphaBeta[Any, Any]:
    """The alpha-beta engine the bots of ``game`` search with (its profile's evaluation, move
    order and table key for a search from ``root``); :class:`InvalidInputError` for a game
    that alpha-beta does not search (backgammon)."""
    bots = profile(game.id).bots
    if not isinstance(bots, AlphaBetaBots):
        raise InvalidInputError(f"{game.id}: its bots do not search with alpha-beta")
    return bots.engine(game, root)
