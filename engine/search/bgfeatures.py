"""What an expert sees in a backgammon position, as numbers a network can take.

The network of :mod:`tablas.engine.search.bgnet` reads each point's checkers; some things a player
weighs at once are far from any one point: how many rolls hit a blot (the points in between
may block the way), how much a hit would cost, whether a back checker can still get past a
blockade, how hard the bar is to enter from. A small network learns those poorly from the
counts alone, so they are computed here and given to it as extra inputs (the "expert inputs"
of TD-Gammon 2 and GNU Backgammon's contact network; the definitions below are this
project's own).

Everything is computed for a batch of positions at once (``boards`` of shape ``(n, 2, 26)``:
the two sides' counts from their own sides, index 0 off, 1..24 the points, 25 the bar), with
whole-array numpy operations, because the search evaluates positions by the hundred.

For each ordered pair of sides (the side about to roll, then the other), :func:`features`
gives :data:`PER_SIDE` numbers about side X with the other side Y:

``hit``
    the share of the 36 rolls with which X, rolling now, can hit at least one of Y's blots
    (one checker moving one die, both dice, or up to four steps of a double, every point it
    stops on open; a checker of X on the bar must come in first);
``loss``
    the mean over the 36 rolls of the pips Y would lose by X's best hit (0 if none), / 24;
``escape``
    the share of the 36 rolls with which X's furthest-back checker can move past the last of
    Y's made points among the 12 points in front of it (1 when none is there or X has no
    checker behind Y's);
``dance``
    the chance that a checker of X on the bar does not come in with a roll, (closed points /
    6) squared, if X has any on the bar, else 0;
``prime``
    the longest run of X's made points, / 6.

A side's figures as the roller and as the other (``X=me`` and ``X=opp``) are both given: the
second describes what the other side threatens after the roll.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]

PER_SIDE = 5
N_FEATURES = 2 * PER_SIDE
NAMES = tuple(f"{side}_{name}" for side in ("me", "opp")
              for name in ("hit", "loss", "escape", "dance", "prime"))

# The 21 distinct rolls, each with how many of the 36 it stands for.
ROLLS = tuple((a, b, 1 if a == b else 2) for a in range(1, 7) for b in range(a, 7))
WEIGHT = np.array([w for _, _, w in ROLLS], dtype=np.float32)
REACH = 12  # the points in front of a back checker that can hold it back


def _paths() -> tuple[I64, I64]:
    """Every way one checker can use each roll, four per roll in the order of ROLLS: the
    distance travelled, and the distances of the (up to three) stops before the last (0 for
    none). A non-double's sum has two paths (either die first); a double's checker moves one
    to four times."""
    dist, stops = [], []
    for a, b, _ in ROLLS:
        ways = ([[a * j for j in range(1, k + 1)] for k in range(1, 5)] if a == b
                else [[a], [b], [a, a + b], [b, a + b]])
        for way in ways:
            dist.append(way[-1])
            stops.append(way[:-1] + [0] * (4 - len(way)))
    return np.array(dist, dtype=np.int64), np.array(stops, dtype=np.int64)


PATH_DIST, PATH_STOPS = _paths()
HAS_STOP = PATH_STOPS > 0  # (paths, 3)
_BITS = np.int64(1) << np.arange(26, dtype=np.int64)

# The sets of points below are bitmasks, bit p for point p (25 the bar), one int64 per
# position: a path of a roll is then a few shifts and ands over every position and path at
# once, which is what keeps this cheap enough for the search.


def _mask(rows: B) -> I64:
    """``(n, 26)`` booleans as one bitmask per position."""
    out: I64 = rows.astype(np.int64) @ _BITS
    return out


def _high_bit(m: I64) -> I64:
    """The highest set bit's index (0 for none; bit 0 is never used here)."""
    out: I64 = np.where(m > 0, np.frexp(m.astype(np.float64))[1] - 1, 0)
    return out


def _other_on_x(y: I64) -> I64:
    """Y's counts on X's points 1..24 (Y's point q is X's 25 - q); 0 and 25 empty."""
    out = np.zeros((y.shape[0], 26), dtype=np.int64)
    out[:, 1:25] = y[:, 24:0:-1]
    return out


_DIE_A = np.array([a for a, _, _ in ROLLS], dtype=np.int64)
_DIE_B = np.array([b for _, b, _ in ROLLS], dtype=np.int64)
_DOUBLE = _DIE_A == _DIE_B


def _hits(x: I64, y: I64) -> tuple[F32, F32]:
    """``hit`` and ``loss`` of X against Y, per position.

    For every roll at once (a column each): the points X's checkers can stand on after one
    die, after both, and after a double's third and fourth step, each step landing only on
    points Y has not made; a hit is any of those on one of Y's blots."""
    y_on_x = _other_on_x(y)
    blot = _mask(y_on_x == 1)[:, None]
    held = x > 0
    held[:, 0] = False
    on_bar = held[:, 25].copy()
    held[on_bar, 1:25] = False  # the bar's checkers come in first
    shooter = _mask(held)[:, None]
    open_ = (_mask(y_on_x < 2) & ~np.int64(1))[:, None]
    a, b = _DIE_A[None, :], _DIE_B[None, :]
    after_a = (shooter >> a) & open_
    after_b = (shooter >> b) & open_
    stood = after_a | after_b
    # One checker on to a second step: not while another still waits on the bar.
    free = (x[:, 25] < 2)[:, None]
    step = np.where(free, ((after_a >> b) | (after_b >> a)) & open_, 0)
    stood |= step
    for _ in range(2):  # a double's third and fourth
        step = np.where(_DOUBLE[None, :], (step >> a) & open_, 0)
        stood |= step
    per_roll = stood & blot
    # A hit on X's point t costs Y the t pips it had gone: per roll, the costliest hit.
    best = _high_bit(per_roll)
    hit = ((per_roll != 0) @ WEIGHT) / 36
    loss = (best @ WEIGHT) / (36 * 24)
    return hit.astype(np.float32), loss.astype(np.float32)


def _escape_table() -> I64:
    """Per pattern of blocks among the REACH points in front of a checker (bit k: the point
    REACH - k pips ahead is made by the other side), the rolls of 36 that escape: move past
    the last block, landing and stopping only on open points. Points further than REACH
    ahead, and points off the board, count as open."""
    pattern = np.arange(1 << REACH, dtype=np.int64)

    def blocked(d: I64) -> I64:
        out: I64 = np.where((d >= 1) & (d <= REACH), (pattern[:, None] >> (REACH - d)) & 1, 0)
        return out

    dist = np.broadcast_to(PATH_DIST, (len(pattern), len(PATH_DIST)))
    near = np.arange(1, REACH + 1)
    last = np.max(np.where(blocked(near[None, :]) == 1, near[None, :], 0), axis=1)
    ok = (blocked(dist) == 0) & (dist > last[:, None])
    for j in range(3):
        ok &= ~HAS_STOP[None, :, j] | (blocked(PATH_STOPS[None, :, j]) == 0)
    escapes = ok.reshape(len(pattern), len(ROLLS), 4).any(axis=2) @ WEIGHT.astype(np.int64)
    out: I64 = np.where(last == 0, 36, escapes)
    return out


ESCAPES = _escape_table()


def _escapes(x: I64, y: I64) -> F32:
    """``escape`` of X against Y, per position."""
    back = _high_bit(_mask(x[:, :26] > 0) & ~np.int64(1))  # X's furthest-back checker
    made = _mask(_other_on_x(y) >= 2)
    # The REACH points in front of it as a table index (points off the board are not made).
    shift = back - REACH
    pattern = np.where(shift >= 0, made >> np.maximum(shift, 0), made << np.maximum(-shift, 0))
    out: F32 = (ESCAPES[pattern & ((1 << REACH) - 1)] / 36).astype(np.float32)
    return out


def _dance(x: I64, y: I64) -> F32:
    """``dance`` of X against Y: Y's home points are its 1..6."""
    closed = (y[:, 1:7] >= 2).sum(axis=1)
    return np.where(x[:, 25] > 0, (closed / 6) ** 2, 0.0).astype(np.float32)


def _prime(x: I64) -> F32:
    made = _mask(x[:, :26] >= 2) & ~np.int64(1) & ~(np.int64(1) << 25)
    # Each shift-and-and shortens every run of set bits by one: a position's longest run is
    # how many rounds its mask survives.
    best = np.zeros(x.shape[0], dtype=np.int64)
    while made.any():
        best += made != 0
        made &= made >> 1
    return (best / 6).astype(np.float32)


def side_features(x: I64, y: I64) -> F32:
    """The :data:`PER_SIDE` figures of X against Y, ``(n, PER_SIDE)``."""
    hit, loss = _hits(x, y)
    return np.stack([hit, loss, _escapes(x, y), _dance(x, y), _prime(x)], axis=1)


def features(boards: npt.NDArray[np.integer]) -> F32:
    """``(n, N_FEATURES)``: the side about to roll's figures, then the other side's."""
    b = boards.astype(np.int64)
    me, opp = b[:, 0], b[:, 1]
    return np.concatenate([side_features(me, opp), side_features(opp, me)], axis=1)
