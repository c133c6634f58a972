"""Grundy's game solved exactly: the winner from the Grundy values, the length by search.

Who wins is settled by the Sprague-Grundy theorem (the XOR of the heaps' Grundy values is
non-zero exactly when the side to move wins). How long the game lasts under best play is a
different question: the winner picks, among the moves to a zero position, the one that ends
soonest; the loser, among all moves, the one that lasts longest. That needs the whole tree,
but positions are multisets of heaps (heaps of 1 and 2 never move again), so memoising on
the sorted heaps keeps it to a few thousand positions for a heap of 60.
"""

from __future__ import annotations

from functools import cache

from tablas.engine.games.grundy import Grundy, GrundyMove, GrundyState, grundy_value


def _children(key: tuple[int, ...]) -> set[tuple[int, ...]]:
    out = set()
    for i, h in enumerate(key):
        if i and key[i - 1] == h:
            continue
        rest = key[:i] + key[i + 1 :]
        for b in range(1, (h + 1) // 2):
            parts = [x for x in (h - b, b) if x > 2]
            out.add(tuple(sorted((*rest, *parts), reverse=True)))
    return out


def _value(key: tuple[int, ...]) -> int:
    v = 0
    for h in key:
        v ^= grundy_value(h)
    return v


@cache
def solve(key: tuple[int, ...]) -> tuple[bool, int]:
    """(the side to move wins, plies to the end under best play) for heaps sorted from the
    largest, each above 2 (``Grundy.key`` gives exactly that)."""
    children = _children(key)
    if not children:
        return False, 0
    if _value(key):
        return True, 1 + min(solve(c)[1] for c in children if not _value(c))
    return False, 1 + max(solve(c)[1] for c in children)


def best_moves(game: Grundy, state: GrundyState) -> list[tuple[GrundyMove, bool, int]]:
    """Every legal move of a Grundy state with (mover wins after it, distance from here)."""
    out = []
    for m in game.legal_moves(state):
        child_wins, d = solve(game.key(game.apply(state, m)))
        out.append((m, not child_wins, d + 1))
    return out
