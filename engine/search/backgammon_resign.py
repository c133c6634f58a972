"""What a resignation of a backgammon game is worth to each side, as the bots and the review
read it.

A resignation gives the other side ``points`` (1 single, 2 gammon, 3 backgammon) times the
cube for sure; playing on gives each side its equity. The bots accept an offer worth at least
what they expect from playing on, and the review charges the resigner what the resignation
gave away against playing on. Both read the position with the learned network at 0 ply
(the bear-off database's chances once both sides bear off): a few milliseconds, so a room can
answer an offer to its bot at once, without the bot pool.

The chances are those of the game being played, cubeless (a live cube is worth a little more
to its holder, which the bots leave out here). In a match the offer is weighed in match
winning chances (:mod:`match_equity`): the score the resignation leaves against the score
playing on leads to.
"""

from __future__ import annotations

from collections.abc import Sequence

from tablas.engine.games.backgammon import BGState, generate_plays
from tablas.engine.search import match_equity
from tablas.engine.search.backgammon_bot import position_probabilities, positions_probabilities
from tablas.engine.search.cubeful import Cubeless

# An offer within this much (points per cube) of what playing on is worth is accepted: the
# evaluation is no finer, and a bot that haggles over a hundredth of a point only delays.
TOLERANCE = 0.01


def _flip(probs: Sequence[float]) -> list[float]:
    """The five probabilities of one side as the other side's."""
    win, wg, wbg, lg, lbg = probs
    return [1.0 - win, lg, lbg, wg, wbg]


def probabilities(state: BGState, seat: int) -> list[float]:
    """``seat``'s five probabilities (win, win gammon, win backgammon, lose gammon, lose
    backgammon) in ``state``, a decision of the game (a play to make with the dice rolled,
    or a cube action before the roll): with the dice rolled, after the roller's best play by
    the network; otherwise the side on roll's before it rolls."""
    turn = state.turn
    me, opp = state.boards[turn], state.boards[1 - turn]
    if state.phase == "move" and state.dice is not None:
        afters = [(o2, m2) for _, m2, o2 in generate_plays(me, opp, *state.dice)]
        theirs = min(positions_probabilities(afters),
                     key=lambda p: Cubeless.from_probs(p).equity)
        roller = _flip(theirs)
    else:
        roller = position_probabilities(me, opp)
    return roller if seat == turn else _flip(roller)


def equity(state: BGState, seat: int) -> float:
    """``seat``'s cubeless equity in ``state``, in points per cube (gammons counted)."""
    return Cubeless.from_probs(probabilities(state, seat)).equity


def accepts(state: BGState, resigner: int, points: int) -> bool:
    """Whether the side facing ``resigner``'s offer of ``points`` (times the cube) takes it:
    in a money game when the points are at least its equity, in a match when the score they
    leave gives it at least the match winning chance of playing on."""
    taker = 1 - resigner
    probs = probabilities(state, taker)
    match = state.match
    if match is None:
        return points >= Cubeless.from_probs(probs).equity - TOLERANCE
    cube = state.cube
    now = match_equity.after_game(match, taker, points * cube)
    on = match_equity.cubeless_mwc(match, taker, probs, cube)
    return now >= on - TOLERANCE / 10  # match winning chances: a tenth of the money margin


def resign_loss(state: BGState, resigner: int, points: int) -> float:
    """What resigning for ``points`` gave away, in points per cube (≥ 0): the resigner's
    equity playing on, against the ``-points`` the resignation is sure to cost."""
    return max(0.0, equity(state, resigner) + points)
