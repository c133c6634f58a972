"""Baseline bots: classic textbook approaches, kept only to measure the real levels against.

They are not levels of the contract (whose level list the server validates); the ladder in
:mod:`tools.ladder` plays them under the name :data:`BASELINE`.

* **Backgammon, priority heuristic.** The beginner's-book way to pick a play: rate what the
  play does, in this order of weight: hits, points made (by the value of the point), blots
  left (each weighted by the shots at it), growth of the longest prime, back checkers
  escaped, checkers borne off. Then a check of the opponent's best reply: for the best
  :data:`REPLY_CHECK` plays by that rating, the opponent's best reply (rated the same way,
  from its side) is averaged over the 21 rolls and :data:`REPLY_WEIGHT` of it subtracted.
  Cube: never doubles; takes while its pip count is at most :data:`TAKE_PIP_RATIO` times the
  doubler's (the racing rule of thumb that a trailer up to about 12% behind has a take),
  whatever the contact.
* **BOOM, line-count alpha-beta.** The engine's alpha-beta at a fixed depth of
  :data:`BOOM_DEPTH` plies with :func:`~tablas.engine.search.evals.boom_line_count_eval` as the
  evaluation and no move ordering of its own. No time or node guard: depth 8 costs 0.05-0.2 s
  a move on this machine class (measured on random middle games), and a fixed depth keeps the
  baseline independent of the machine's load.
"""

from __future__ import annotations

from typing import Any

from tablas.engine.errors import InvalidInputError
from tablas.engine.games import get_game
from tablas.engine.games.backgammon import DICE_OUTCOMES, Backgammon, BGState, Board, generate_plays
from tablas.engine.search.alphabeta import AlphaBeta, Limits
from tablas.engine.search.alphabeta_bots import decision_of
from tablas.engine.search.backgammon_eval import _POINT_VALUE, _shots_at, back_checker, pips
from tablas.engine.search.decision import Decision
from tablas.engine.search.evals import boom_line_count_eval

BASELINE = "baseline"
BASELINE_GAMES: tuple[str, ...] = ("backgammon", "boom")

BOOM_DEPTH = 8

# The priorities as weights: a hit outranks a made point, which outranks a safe blot.
HIT = 6.0
HIT_PIPS = 0.05  # per pip the hit checker had travelled: hitting deep in our board hurts more
POINT = 4.0  # times the point's value (5-point 1.0, bar 0.9, ... as the evaluation values it)
BLOT = 5.0  # times the chance (shots/36) that the blot is hit
PRIME = 1.5  # per point of growth of the longest run of made points
ESCAPE = 1.0  # per checker brought out of the opponent's home board (or off the bar)
OFF = 1.0  # per checker borne off
REPLY_CHECK = 3
REPLY_WEIGHT = 0.5
TAKE_PIP_RATIO = 1.12


def _longest_run(b: Board) -> int:
    run = best = 0
    for p in range(1, 25):
        if b[p] >= 2:
            run += 1
            best = max(best, run)
        else:
            run = 0
    return best


def _blot_risk(me: Board, opp: Board) -> float:
    """The shots at each of ``me``'s blots, weighted by the pips a hit there would cost."""
    risk = 0.0
    for p in range(1, 25):
        if me[p] == 1:
            risk += _shots_at(p, opp) / 36 * (0.5 + (25 - p) / 24)
    return risk


def play_priority(me: Board, opp: Board, me2: Board, opp2: Board) -> float:
    """The priority rating of the play that turned (``me``, ``opp``) into (``me2``, ``opp2``);
    boards are from their owners' sides, as :func:`generate_plays` gives them."""
    v = 0.0
    hits = opp2[25] - opp[25]
    if hits:
        v += HIT * hits + HIT_PIPS * (pips(opp2) - pips(opp))
    for p in range(1, 25):
        if me2[p] >= 2 > me[p]:
            v += POINT * _POINT_VALUE[p]
    v -= BLOT * _blot_risk(me2, opp2)
    v += PRIME * (_longest_run(me2) - _longest_run(me))
    if back_checker(opp2) + back_checker(me2) > 25:  # escaping only matters while in contact
        v += ESCAPE * (sum(me[19:26]) - sum(me2[19:26]))
    v += OFF * (me2[0] - me[0])
    return v


def _best_reply(me: Board, opp: Board) -> float:
    """The opponent's (``opp``, about to roll) best priority rating, averaged over its rolls."""
    total = 0.0
    for (a, b), prob in DICE_OUTCOMES:
        total += prob * max(
            play_priority(opp, me, o2, m2) for _, o2, m2 in generate_plays(opp, me, a, b)
        )
    return total


def rank_priority_plays(state: BGState) -> list[tuple[Any, float]]:
    """Every play of a ``move`` state with its rating, best first (stable for ties)."""
    assert state.dice is not None
    me, opp = state.boards[state.turn], state.boards[1 - state.turn]
    rated = [
        (play, play_priority(me, opp, me2, opp2), me2, opp2)
        for play, me2, opp2 in generate_plays(me, opp, *state.dice)
    ]
    rated.sort(key=lambda r: -r[1])
    checked = [
        (play, v - REPLY_WEIGHT * _best_reply(me2, opp2))
        for play, v, me2, opp2 in rated[:REPLY_CHECK]
    ]
    checked.sort(key=lambda pv: -pv[1])
    # Plays outside the checked few keep their own rating, which the check never raised.
    return checked + [(play, v) for play, v, _, _ in rated[REPLY_CHECK:]]


def _backgammon_baseline(game: Backgammon, state: BGState) -> Decision:
    if state.phase == "roll":
        return Decision({"action": "roll"}, "roll")
    if state.phase == "take":
        taker = 1 - state.turn
        mine, theirs = pips(state.boards[taker]), pips(state.boards[state.turn])
        action = "take" if mine <= TAKE_PIP_RATIO * theirs else "drop"
        return Decision({"action": action}, action)
    if state.phase != "move":
        raise InvalidInputError(f"backgammon: no decision in phase {state.phase!r}")
    play, score = rank_priority_plays(state)[0]
    text = game.move_text(state, play)
    return Decision(game.move_to_json(play), text, round(score, 4), 1, pv=[text])


def _boom_baseline(state: Any) -> Decision:
    game = get_game("boom")
    result = AlphaBeta(game, evaluate=boom_line_count_eval).search(state, Limits(depth=BOOM_DEPTH))
    return decision_of(game, state, result, result.best_move)


def decide_baseline(
    game_id: str, state: Any, budget_ms: float | None = None, seed: int = 0
) -> Decision:
    """The baseline bot's decision, with the signature of :func:`~tablas.engine.search.bots.decide`
    minus the level. Both baselines are deterministic: ``seed`` and ``budget_ms`` are taken
    for a uniform call and not needed (ties go to the first play or move listed)."""
    del budget_ms, seed
    game = get_game(game_id)
    if game.id not in BASELINE_GAMES:
        raise InvalidInputError(
            f"{game.id}: no baseline bot; baselines: {', '.join(BASELINE_GAMES)}"
        )
    if not game.legal_moves(state):
        raise InvalidInputError(f"{game.id}: no move to choose in {game.position_text(state)!r}")
    if isinstance(game, Backgammon):
        return _backgammon_baseline(game, state)
    return _boom_baseline(state)
