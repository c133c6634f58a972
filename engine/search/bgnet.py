"""A small neural network that estimates a backgammon position's outcome probabilities.

Input: the two sides' 26-count boards (index 0 off, 1..24 points, 25 bar, each from its owner's
side), the side about to roll first. Output: five probabilities for that side, in GNU
Backgammon's order: win, win a gammon (backgammons included), win a backgammon, lose a gammon,
lose a backgammon. :func:`equity` turns them into cubeless points per game.

Encoding (``encode_batch``): for every slot of both boards, six units of the count ``c``,
``c>=1 .. c>=5`` and ``max(c-5, 0)/5`` (the TD-Gammon code, extended so that a stack is told
apart up to five); each side's pip count / 100; whether the sides are still in contact; then
the expert inputs of :mod:`tablas.engine.search.bgfeatures` (shots, what a hit costs, escapes, the
bar, primes). One hidden layer of sigmoid units, five sigmoid outputs. A network of the
earlier shape, without the expert inputs, still loads and runs (to compare the two).

Evaluating one position is cheap because every input but the last ones is a function of one
slot's count: that part of the first layer collapses into a table with one row of hidden
pre-activations per (side, slot, count), and a position's pre-activation is the sum of its 52
rows, plus the contact flag's row and the expert inputs times their rows. The search asks for
positions in batches (:meth:`BGNet.probabilities_many`), so the expert inputs are computed for
a whole batch with array operations. That is what makes a network usable inside a 2-ply
search in Python.

The weights are fitted by ``python -m tools.bgnet_train`` (a tool of the repository, not
shipped; its figures are in ``docs/strength.md``) and shipped as ``bgnet.npz`` beside this
module.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt
from tablas.engine.search import bgfeatures

Board = Sequence[int]
F32 = npt.NDArray[np.float32]

SLOTS = 26
MAX_COUNT = 15
UNITS = 6
N_BASE = 2 * SLOTS * UNITS + 3  # slot units, two pip counts, the contact flag
N_INPUTS = N_BASE + bgfeatures.N_FEATURES
N_OUTPUTS = 5
WEIGHTS = Path(__file__).with_name("bgnet.npz")


def _slot_units(counts: npt.NDArray[np.int64]) -> F32:
    """The six units of each count, on a new last axis."""
    c = counts.astype(np.float32)
    thresholds = [(c >= k).astype(np.float32) for k in range(1, 6)]
    return np.stack([*thresholds, np.maximum(c - 5, 0) / 5], axis=-1)


def in_contact(me: Board, opp: Board) -> bool:
    """Whether some checker still has to pass an opposing one (the furthest back checkers
    overlap, counted from each side)."""
    back_me = next((p for p in range(25, 0, -1) if me[p]), 0)
    back_opp = next((p for p in range(25, 0, -1) if opp[p]), 0)
    return back_me + back_opp > 25


def contact_batch(boards: npt.NDArray[np.integer]) -> npt.NDArray[np.bool_]:
    """:func:`in_contact` for ``(n, 2, 26)`` boards at once."""
    held = boards[:, :, 25:0:-1] > 0  # each side's points from the bar down
    back = np.where(held.any(axis=2), 25 - held.argmax(axis=2), 0)
    out: npt.NDArray[np.bool_] = back.sum(axis=1) > 25
    return out


# From this many positions a call, the plain product of the encoded inputs with the first
# layer beats the table (a gather of 52 rows a position moves more memory than BLAS does).
DENSE_FROM = 64
_PIP_WEIGHT = np.arange(SLOTS, dtype=np.float32) / 100  # slot 0 (off) counts no pips


def encode_batch(boards: npt.NDArray[np.int64], contact: npt.NDArray[np.bool_],
                 expert: bool = True) -> F32:
    """Inputs for ``n`` positions: ``boards`` is ``(n, 2, 26)``, side 0 about to roll; without
    the expert inputs if ``expert`` is false (the earlier networks' inputs)."""
    n = boards.shape[0]
    units = _slot_units(boards).reshape(n, 2 * SLOTS * UNITS)
    pips = (boards * _PIP_WEIGHT).sum(axis=2).astype(np.float32)
    parts = [units, pips, contact.astype(np.float32)[:, None]]
    if expert:
        parts.append(bgfeatures.features(boards))
    return np.concatenate(parts, axis=1)


def sigmoid(x: F32) -> F32:
    """The logistic function, as the network uses it."""
    # Clipped: past ±30 the sigmoid is 0 or 1 in float32 anyway, and exp would overflow.
    out: F32 = (1.0 / (1.0 + np.exp(-np.clip(x, -30, 30)))).astype(np.float32, copy=False)
    return out


def equity_of(probs: F32) -> F32:
    """Cubeless points per game from the five probabilities (last axis)."""
    win, wg, wbg, lg, lbg = (probs[..., i] for i in range(N_OUTPUTS))
    out: F32 = (2 * win - 1 + wg - lg + wbg - lbg).astype(np.float32)
    return out


class BGNet:
    """The network; build it from weights with :meth:`load` or directly."""

    def __init__(self, w1: F32, b1: F32, w2: F32, b2: F32) -> None:
        if w1.shape[0] not in (N_BASE, N_INPUTS) or w2.shape != (w1.shape[1], N_OUTPUTS):
            raise ValueError(f"bgnet: weights of shape {w1.shape}, {w2.shape} do not fit")
        self.w1, self.b1, self.w2, self.b2 = w1, b1, w2, b2
        self.expert = w1.shape[0] == N_INPUTS
        self.expert_rows = w1[N_BASE:]
        # One row per (side, slot, count): that count's units times their weights, plus its
        # share of the side's pip count.
        counts = np.arange(MAX_COUNT + 1)
        rows = []
        for side in range(2):
            pip_row = w1[2 * SLOTS * UNITS + side]
            for slot in range(SLOTS):
                start = (side * SLOTS + slot) * UNITS
                block = _slot_units(counts) @ w1[start : start + UNITS]
                rows.append(block + np.outer(counts * _PIP_WEIGHT[slot], pip_row))
        self.table: F32 = np.concatenate(rows).astype(np.float32)
        self.contact_row = w1[N_BASE - 1]
        self._offsets = np.arange(2 * SLOTS, dtype=np.int64) * (MAX_COUNT + 1)

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> BGNet:
        with np.load(path) as data:
            return cls(*(data[k].astype(np.float32) for k in ("w1", "b1", "w2", "b2")))

    def forward(self, inputs: F32) -> F32:
        """The five probabilities for a batch of encoded positions (``encode_batch``)."""
        return sigmoid(sigmoid(inputs @ self.w1 + self.b1) @ self.w2 + self.b2)

    def probabilities(self, me: Board, opp: Board) -> F32:
        """The five probabilities for ``me``, the side about to roll."""
        out: F32 = self.probabilities_many([(me, opp)])[0]
        return out

    def equity(self, me: Board, opp: Board) -> float:
        """Cubeless points per game for ``me``, the side about to roll."""
        win, wg, wbg, lg, lbg = self.probabilities(me, opp).tolist()
        return float(2 * win - 1 + wg - lg + wbg - lbg)

    def probabilities_many(self, positions: Sequence[tuple[Board, Board]]) -> F32:
        """:meth:`probabilities` of many positions at once, one row each: one gather and one
        product for all, several times cheaper per position than one by one."""
        counts = np.array([(*me, *opp) for me, opp in positions], dtype=np.int64)
        boards = counts.reshape(-1, 2, SLOTS)
        contact = contact_batch(boards)
        if len(positions) >= DENSE_FROM:
            pre = encode_batch(boards, contact, self.expert) @ self.w1 + self.b1
        else:
            pre = self.table[counts + self._offsets].sum(axis=1) + self.b1
            pre += contact[:, None] * self.contact_row
            if self.expert:
                pre += bgfeatures.features(boards) @ self.expert_rows
        return sigmoid(sigmoid(pre) @ self.w2 + self.b2)

    def equities(self, positions: Sequence[tuple[Board, Board]]) -> list[float]:
        """:meth:`equity` of many positions at once (:meth:`probabilities_many`)."""
        eq: list[float] = equity_of(self.probabilities_many(positions)).tolist()
        return eq


@lru_cache(maxsize=1)
def default_net() -> BGNet:
    """The shipped network, loaded once per process."""
    return BGNet.load()
