"""Money-game cube decisions from cubeless probabilities, by Janowski's cubeful equity.

The evaluation knows nothing of the cube: it gives the five probabilities of how the game
ends (win, win a gammon, win a backgammon, lose a gammon, lose a backgammon; gammons count
backgammons) for the side about to roll. Rick Janowski's model ("Take-Points in Money Games",
1993) turns them into the equity of each cube action:

* ``p`` is the chance of winning, ``W`` the average points of a win and ``L`` of a loss
  (so the cubeless, or dead-cube, equity is ``p W - (1 - p) L``).
* With a perfectly live cube (every double made at the last moment, and the game's chances
  moving smoothly), a player owning a cube of value 1 cashes at ``CP = (L + 1) / (W + L +
  1/2)`` and must drop beyond the other side's cash point, below ``TP = (L - 1/2) / (W + L +
  1/2)``; in between, equity is linear in ``p`` between the points (0, -L), (TP, -1),
  (CP, +1) and (1, W), with the pieces each cube position allows: the owner's line runs from
  (0, -L) to (CP, 1), the line of the side whose opponent owns the cube from (TP, -1) to
  (1, W), and a centred cube has all three. Beyond the cash point, playing on is worth
  ``1 + (W - 1)(p - CP)/(1 - CP)``: a side too good to double plays for its gammons.
* Real cubes are neither dead nor perfectly live. The cubeful equity is ``x E_live + (1 - x)
  E_dead`` with ``x`` the cube's efficiency: :data:`CONTACT_EFFICIENCY` while the sides are
  in contact; in a race 0.55 + 0.00125 per pip of the side on roll, kept between 0.6 and 0.7
  (the longer the race, the nearer its market's edge a cube is turned). These are the values
  gnubg uses (on gnubg's own probabilities this model gives its 0-ply cube equities:
  ``tests/test_cubeful.py``), within the 0.55-0.8 range Janowski gives.

:func:`cube_values` compares, for the side deciding, no double (ND: the cube where it is),
double/take (DT: the opponent owns a cube twice as big) and double/drop (DP: +1), all in units
of the cube before the decision; :func:`best_action` picks among them. Known values it
reproduces (``tests/test_cubeful.py``): without gammons a dead cube (x = 0) is taken from 25%
and doubled from 50%, a perfectly live one (x = 1) taken from 20% and doubled only at the
cash point of 80%.

Left out: the Jacoby rule and beavers (the server plays without them), and match scores
(:mod:`tablas.engine.search.match_equity` judges a match's cube by its table).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tablas.engine.games.backgammon import Board
from tablas.engine.search.backgammon_eval import pips
from tablas.engine.search.bgnet import in_contact

# Win, win a gammon, win a backgammon, lose a gammon, lose a backgammon (gnubg's order;
# gammons include backgammons), for the side the probabilities are for.
Probs = Sequence[float]

CONTACT_EFFICIENCY = 0.68
RACE_EFFICIENCY = (0.6, 0.7)  # the shortest and longest races' efficiency
RACE_EFFICIENCY_BASE, RACE_EFFICIENCY_PER_PIP = 0.55, 0.00125
ACCESS = ("centre", "own", "theirs")
EPS = 1e-9


@dataclass(frozen=True)
class Cubeless:
    """A side's chances before its roll, as Janowski's model reads them: ``p`` the chance
    of winning, ``w`` the average points of a win, ``l`` of a loss (both at least 1)."""

    p: float
    w: float
    l: float  # noqa: E741 - Janowski's name

    @classmethod
    def from_probs(cls, probs: Probs) -> Cubeless:
        """From the five probabilities, clipped to be consistent (a gammon rate above the
        winning chance, rounding from a network, would make ``w`` meaningless)."""
        win, wg, wbg, lg, lbg = (max(0.0, min(1.0, float(x))) for x in probs)
        wg, lg = min(wg, win), min(lg, 1.0 - win)
        wbg, lbg = min(wbg, wg), min(lbg, lg)
        lose = 1.0 - win
        w = 1.0 + (wg + wbg) / win if win > EPS else 1.0
        lo = 1.0 + (lg + lbg) / lose if lose > EPS else 1.0
        return cls(win, w, lo)

    @property
    def equity(self) -> float:
        """The cubeless (dead-cube) equity: points per cube, gammons counted."""
        return self.p * self.w - (1.0 - self.p) * self.l

    @property
    def take_point(self) -> float:
        """The chance of winning below which this side, doubled, would drop a live cube;
        equally, where the opponent owning the cube cashes."""
        return (self.l - 0.5) / (self.w + self.l + 0.5)

    @property
    def cash_point(self) -> float:
        """The chance of winning from which this side's double of a live cube is dropped."""
        return (self.l + 1.0) / (self.w + self.l + 0.5)


def _line(p: float, p0: float, e0: float, p1: float, e1: float) -> float:
    return e0 + (e1 - e0) * (p - p0) / (p1 - p0)


def live_equity(c: Cubeless, access: str) -> float:
    """The equity with a perfectly live cube of value 1, by who may double: ``"centre"``
    (either side), ``"own"`` (this side owns it) or ``"theirs"`` (the opponent does)."""
    if access not in ACCESS:
        raise ValueError(f"cube access must be one of {ACCESS}, not {access!r}")
    tp, cp = c.take_point, c.cash_point
    if c.p < tp and access != "own":
        return _line(c.p, 0.0, -c.l, tp, -1.0)
    if c.p >= cp and access != "theirs":
        return _line(c.p, cp, 1.0, 1.0, c.w)
    if access == "own":
        return _line(c.p, 0.0, -c.l, cp, 1.0)
    if access == "theirs":
        return _line(c.p, tp, -1.0, 1.0, c.w)
    return _line(c.p, tp, -1.0, cp, 1.0)


def cubeful_equity(c: Cubeless, x: float, access: str) -> float:
    """Janowski's cubeful equity for a cube of value 1: ``x`` of the live cube's, the rest
    the dead cube's."""
    return x * live_equity(c, access) + (1.0 - x) * c.equity


def efficiency(me: Board, opp: Board) -> float:
    """The cube's efficiency ``x`` for the side ``me`` about to roll (boards as
    :mod:`tablas.engine.games.backgammon` keeps them, from each side's own view)."""
    if in_contact(me, opp):
        return CONTACT_EFFICIENCY
    lo, hi = RACE_EFFICIENCY
    return min(hi, max(lo, RACE_EFFICIENCY_BASE + RACE_EFFICIENCY_PER_PIP * pips(me)))


def cube_values(phase: str, access: str, probs: Probs, x: float) -> dict[str, float]:
    """Each cube action's equity for the side deciding, in units of the cube before the
    decision, from the probabilities of the side on roll (the doubler) before its roll.

    ``phase`` ``"roll"``: the side on roll, which may double (``access`` ``"centre"`` or
    ``"own"``, as :func:`live_equity` names them): ``{"roll": ND, "double": min(DT, DP)}``,
    the double answered as is worse for the doubler. ``"take"``: the doubled side's
    ``{"take": -DT, "drop": -1}`` (``access`` is not read)."""
    c = Cubeless.from_probs(probs)
    if phase == "take":
        return {"take": -2.0 * cubeful_equity(c, x, "theirs"), "drop": -1.0}
    if phase != "roll":
        raise ValueError(f"no cube decision in phase {phase!r}")
    if access not in ("centre", "own"):
        raise ValueError(f"a side with cube access {access!r} cannot double")
    return {"roll": cubeful_equity(c, x, access),
            "double": min(2.0 * cubeful_equity(c, x, "theirs"), 1.0)}


def best_action(values: dict[str, float]) -> str:
    """The action of highest value; ties go to not doubling and to taking."""
    if "roll" in values:
        return "double" if values["double"] > values["roll"] + EPS else "roll"
    return "take" if values["take"] >= values["drop"] - EPS else "drop"
