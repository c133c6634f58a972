"""Backgammon evaluation: cubeless equity for the player on roll, by stage of the game.

Stages: **contact** (some checker still has to pass an opposing one), **race** (no contact)
and **bear-off** (no contact, every checker of both sides home). Each stage has its own
formula, because what matters changes: in contact, points made, primes, anchors, blots and
the shots at them; in a race, only the pip count and who is on roll; in the bear-off, the
expected number of rolls each side still needs (a one-sided estimate).

Boards are 26 counts from their owner's side (index 0 off, 1..24 points, 25 bar); a checker
of the opponent on its point ``q`` stands on the mover's point ``25 - q``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from tablas.engine.games.backgammon import BGState
from tablas.engine.search import bearoff, bgnet

Board = tuple[int, ...]
Equity = Callable[[Board, Board], float]

# Chance that a blot at distance d (1..24) is hit by one checker, counted over 36 rolls with
# no blocking: the classic direct (1..6) and indirect (7..24) shot table.
_SHOTS_36 = [0, 11, 12, 14, 15, 15, 17, 6, 6, 5, 3, 2, 3, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0, 0, 1]
# Value of holding each of the mover's own points 1..24 (home points most, the 5-point best).
_POINT_VALUE = [0.0, 0.25, 0.35, 0.55, 0.85, 1.0, 0.9, 0.75, 0.4, 0.2, 0.1, 0.1, 0.05] + [0.0] * 13
_ANCHOR_VALUE = {21: 0.45, 20: 0.55, 19: 0.4, 18: 0.35, 22: 0.3, 23: 0.2, 24: 0.15}


def back_checker(b: Board) -> int:
    """The furthest point from home that holds a checker (25 = bar; 0 = all borne off)."""
    for p in range(25, 0, -1):
        if b[p]:
            return p
    return 0


def pips(b: Board) -> int:
    return sum(i * b[i] for i in range(1, 26))


def stage(me: Board, opp: Board) -> str:
    """``"contact"``, ``"race"`` or ``"bearoff"``."""
    if back_checker(me) + back_checker(opp) > 25:
        return "contact"
    if back_checker(me) <= 6 and back_checker(opp) <= 6:
        return "bearoff"
    return "race"


def expected_rolls(b: Board) -> float:
    """The rolls needed to bear everything off: exact from the one-sided database when every
    checker is home, else pips over the 8.17 average roll plus wastage."""
    if not any(b[7:26]):
        return bearoff.expected_rolls(b[1:7])
    p = pips(b)
    if p == 0:
        return 0.0
    checkers = 15 - b[0]
    wastage = 0.4 * sum(b[i] for i in (1, 2)) + 0.1 * max(0, checkers - 6)
    return max(checkers / 4, (p + 2.0 * wastage) / 8.17)


def _race_win(me: Board, opp: Board) -> float:
    """The mover's winning chance in a race, from the rolls each side needs, a half-roll up."""
    mine, theirs = expected_rolls(me), expected_rolls(opp)
    lead = theirs - mine + 0.5
    spread = 0.6 + 0.1 * math.sqrt(mine + theirs)
    return 1 / (1 + math.exp(-lead / spread))


def _gammon_term(me: Board, opp: Board) -> float:
    """Extra equity from gammon chances when the opponent has borne off nothing and is far
    behind in the rolls it needs."""
    if opp[0]:
        return 0.0
    lag = expected_rolls(opp) - expected_rolls(me)
    return min(0.3, (lag - 6) * 0.05) if lag > 6 else 0.0


def race_equity(me: Board, opp: Board) -> float:
    """A race: the winning chance from the rolls each side needs, plus gammon chances."""
    return 2 * _race_win(me, opp) - 1 + _gammon_term(me, opp)


def _shots_at(blot: int, shooter: Board) -> int:
    """Rolls (of 36, capped) with which the shooter's checkers could reach the mover's blot."""
    total = 0
    for q in range(1, 26):
        if shooter[q]:
            d = q - (25 - blot)
            if 1 <= d <= 24:
                total += _SHOTS_36[d]
    return min(total, 36)


def _structure(side: Board, other: Board) -> float:
    """Made points by value, anchors, and a prime that has the other side's checkers behind it."""
    v = 0.0
    run = best_run = 0
    for p in range(1, 13):
        if side[p] >= 2:
            v += _POINT_VALUE[p]
            run += 1
            best_run = max(best_run, run)
        else:
            run = 0
    for p, value in _ANCHOR_VALUE.items():
        if side[p] >= 2:
            v += value
    if back_checker(other) > 12 and best_run >= 4:
        v += 0.25 * (best_run - 3) ** 1.5
    return v


def contact_score(me: Board, opp: Board) -> float:
    """Positional terms for the side on roll minus the same for the other side."""
    s = 0.0
    # Race component: counts for more as the position simplifies.
    pm, po = pips(me), pips(opp)
    s += 0.012 * (po - pm)
    # Points made, anchors and primes: the same terms for each side.
    s += _structure(me, opp) - _structure(opp, me)
    # Blots: the mover rolls first, so the opponent's blots are what is exposed now.
    home_o = sum(1 for p in range(1, 7) if opp[p] >= 2)
    home_m = sum(1 for p in range(1, 7) if me[p] >= 2)
    # A hit blot on point p loses 25 - p pips, and costs more against a strong home board.
    for p in range(1, 25):
        if opp[p] == 1:
            risk = _shots_at(p, me) / 36
            s += risk * (0.15 + 0.02 * (25 - p) + 0.08 * home_m)
        if me[p] == 1:
            risk = _shots_at(p, opp) / 36
            s -= 0.5 * risk * (0.15 + 0.02 * (25 - p) + 0.08 * home_o)
    # Checkers on the bar, worse against a strong home board.
    s -= me[25] * (0.25 + 0.12 * home_o)
    s += opp[25] * (0.25 + 0.12 * home_m)
    # Checkers still in the opponent's home board have the whole board to cross.
    s -= 0.1 * (sum(me[19:26]) - sum(opp[19:26]))
    return s


def _settled(me: Board, opp: Board) -> float | None:
    """The equity of a position whose result no longer depends on play, else ``None``: a side
    with everything off has won, and a bear-off is the database's."""
    if me[0] == 15:
        return 1.0
    if opp[0] == 15:
        return -1.0
    if stage(me, opp) == "bearoff":
        # The database says who finishes first; a side with nothing off can still be gammoned.
        return 2.0 * bearoff.win_probability(me[1:7], opp[1:7]) - 1.0 + _gammon_term(me, opp)
    return None


def equity(me: Board, opp: Board) -> float:
    """Cubeless equity (points per game) for ``me``, the side about to roll: the hand-written
    formulas of this module."""
    settled = _settled(me, opp)
    if settled is not None:
        return settled
    if stage(me, opp) != "contact":
        return race_equity(me, opp)
    s = contact_score(me, opp)
    # Gammon chances grow with a big positional edge; keep equity inside ±3.
    base = math.tanh(0.45 * s)
    return max(-2.9, min(2.9, base * (1.0 + 0.25 * abs(base))))


def net_equity(me: Board, opp: Board, net: bgnet.BGNet | None = None) -> float:
    """Cubeless equity for ``me``, the side about to roll: the learned network
    (:mod:`tablas.engine.search.bgnet`; the shipped one unless ``net`` is given) in contact and
    races, the database in the bear-off."""
    settled = _settled(me, opp)
    if settled is not None:
        return settled
    return (net or bgnet.default_net()).equity(me, opp)


def net_equities(positions: Sequence[tuple[Board, Board]]) -> list[float]:
    """:func:`net_equity` of many positions, the network's share in one bulk call."""
    out = [_settled(me, opp) for me, opp in positions]
    rest = [i for i, v in enumerate(out) if v is None]
    if rest:
        for i, v in zip(rest, bgnet.default_net().equities([positions[i] for i in rest])):
            out[i] = v
    return [v for v in out if v is not None]


EQUITIES: dict[str, Equity] = {"hand": equity, "net": net_equity}
BULK_EQUITIES: dict[str, Callable[[Sequence[tuple[Board, Board]]], list[float]]] = {
    "net": net_equities,
}


def for_seat0(equity_of: Equity) -> Callable[[BGState], float]:
    """An evaluation for the search: seat 0's equity in a position where ``state.turn`` is
    about to roll, from an equity for the side about to roll."""

    def evaluate(state: BGState) -> float:
        me, opp = state.boards[state.turn], state.boards[1 - state.turn]
        e = equity_of(me, opp)
        return e if state.turn == 0 else -e

    return evaluate


def for_seat0_bulk(
    equities_of: Callable[[Sequence[tuple[Board, Board]]], list[float]],
) -> Callable[[list[BGState]], list[float]]:
    """:func:`for_seat0` for an equity that takes many positions at once."""

    def evaluate(states: list[BGState]) -> list[float]:
        values = equities_of([(s.boards[s.turn], s.boards[1 - s.turn]) for s in states])
        return [v if s.turn == 0 else -v for s, v in zip(states, values)]

    return evaluate


evaluate_for_seat0 = for_seat0(equity)
