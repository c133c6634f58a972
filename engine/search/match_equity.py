"""Match equity: a match score's winning chances, and the bots' cube decisions in a match.

A money game's cube is judged in points; a match's in the chance of winning the match (MWC),
read from a match equity table: :mod:`tablas.engine.search.met_kazaross_xg2` (Kazaross XG2, as GNU
Backgammon ships it). :func:`met` looks a score up; :func:`after_game` is a side's MWC once
the current game ends with it winning or losing some points (the next game's Crawford status
taken into account); :func:`cubeless_mwc` weighs the six ways a game can end by their
probabilities (gnubg's five: win, win a gammon, win a backgammon, lose a gammon, lose a
backgammon, gammons counting backgammons).

Cube decisions (:func:`cube_values`) compare, for the side deciding, on one scale: no double
(ND, the cube where it is), double/take (DT, the cube doubled) and double/drop (DP, the cube's
points cashed), each a cubeless MWC. Every MWC is put on the money scale of the current cube,
``-1`` for losing the cube's points and ``+1`` for winning them (what gnubg calls
equivalent-to-money equity), so that a money game would map to itself. The side doubles when
the opponent's best answer, ``min(DT, DP)``, beats ND plus the value of keeping the cube: a
fixed window, :data:`DOUBLE_AT` below the doubling window and shrinking linearly to nothing at
:data:`TOO_GOOD` (above it the gammons are worth more than the point a double cashes), nil
when the opponent is 1 away after the Crawford game (the cube can never come back to hurt: the
trailer doubles at once). The taker takes when DT is worth at least DP. Recube vig and cube
leverage are left out: unlike the money game's Janowski model (:mod:`tablas.engine.search.cubeful`),
a match's live cube depends on the score at every cube level, which this model does not
follow. At 1-away/1-away the cube changes nothing: ND equals DT, and nobody doubles.
"""

from __future__ import annotations

from collections.abc import Sequence

from tablas.engine.core import Outcome
from tablas.engine.games.backgammon import BGState, Match
from tablas.engine.search.met_kazaross_xg2 import POST_CRAWFORD, PRE_CRAWFORD

# Win, win a gammon, win a backgammon, lose a gammon, lose a backgammon (gnubg's order;
# gammons include backgammons), for the side the probabilities are for.
Probs = Sequence[float]

DOUBLE_AT = 0.4  # the value of keeping the cube below the doubling window, on EMG
TOO_GOOD = 1.0
EPS = 1e-9
MET_LENGTH = len(PRE_CRAWFORD)


def met(away: int, other_away: int, post_crawford: bool = False) -> float:
    """The winning chance of a side ``away`` points from winning against one ``other_away``
    from it; ``post_crawford``: the Crawford game has been played."""
    if away <= 0:
        return 1.0
    if other_away <= 0:
        return 0.0
    if post_crawford and other_away == 1 and away > 1:
        return POST_CRAWFORD[min(away, MET_LENGTH) - 1]
    if post_crawford and away == 1 and other_away > 1:
        return 1.0 - POST_CRAWFORD[min(other_away, MET_LENGTH) - 1]
    return PRE_CRAWFORD[min(away, MET_LENGTH) - 1][min(other_away, MET_LENGTH) - 1]


def match_chance(match: Match, seat: int) -> float:
    """``seat``'s winning chance at the start of ``match``'s current game."""
    return met(match.away(seat), match.away(1 - seat), match.post_crawford)


def after_game(match: Match, seat: int, points: int) -> float:
    """``seat``'s winning chance once the current game ends with ``points`` for it (negative:
    against it)."""
    winner = seat if points > 0 else 1 - seat
    nxt = match.after(Outcome(winner, abs(points), "game"))
    return met(nxt.away(seat), nxt.away(1 - seat), nxt.post_crawford)


def outcome_weights(probs: Probs) -> list[tuple[int, float]]:
    """(points per cube for the side, probability) of the six ways a game ends."""
    win, wg, wbg, lg, lbg = (max(0.0, min(1.0, float(p))) for p in probs)
    wg, lg = min(wg, win), min(lg, 1.0 - win)
    wbg, lbg = min(wbg, wg), min(lbg, lg)
    return [(1, win - wg), (2, wg - wbg), (3, wbg),
            (-1, 1.0 - win - lg), (-2, lg - lbg), (-3, lbg)]


def cubeless_mwc(match: Match, seat: int, probs: Probs, cube: int) -> float:
    """``seat``'s winning chance if the game is played out with the cube at ``cube``."""
    return sum(w * after_game(match, seat, k * cube) for k, w in outcome_weights(probs))


def emg(match: Match, seat: int, cube: int, mwc: float) -> float:
    """``mwc`` on the money scale of a game for ``cube`` points: -1 losing them, +1 winning."""
    win, lose = after_game(match, seat, cube), after_game(match, seat, -cube)
    return (2 * mwc - win - lose) / max(win - lose, EPS)


def keep_value(match: Match, seat: int, nd: float) -> float:
    """What keeping the cube is worth to ``seat`` (EMG) at its no-double equity ``nd``: the
    fixed window's, nothing when the opponent is 1 away after the Crawford game."""
    if match.post_crawford and match.away(1 - seat) == 1:
        return 0.0
    return DOUBLE_AT * min(1.0, max(0.0, (TOO_GOOD - nd) / (TOO_GOOD - DOUBLE_AT)))


def cube_values(state: BGState, probs: Probs) -> dict[str, float]:
    """Each cube action's value (EMG, the deciding side's) in ``state``'s ``roll`` or
    ``take`` phase of a match, from the probabilities of the side on roll (``state.turn``,
    the doubler) before its roll. The best action
    (:func:`tablas.engine.search.cubeful.best_action`) is the bots'."""
    match = state.match
    assert match is not None, "a match's cube"
    doubler, c = state.turn, state.cube
    dt = cubeless_mwc(match, doubler, probs, 2 * c)
    dp = after_game(match, doubler, c)
    if state.phase == "take":
        taker = 1 - doubler
        return {"take": emg(match, taker, c, 1.0 - dt), "drop": emg(match, taker, c, 1.0 - dp)}
    nd = emg(match, doubler, c, cubeless_mwc(match, doubler, probs, c))
    answer = emg(match, doubler, c, min(dt, dp))
    return {"roll": nd + keep_value(match, doubler, nd), "double": answer}

