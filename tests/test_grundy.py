"""Grundy's game: known Grundy values, an exhaustive game-tree check, notation checks."""

from __future__ import annotations

from functools import cache

import pytest
from tablas.engine.errors import InvalidInputError, InvalidMoveError, InvalidPositionError
from tablas.engine.games.grundy import Grundy, GrundyState, grundy_value, position_value

G = Grundy()

# OEIS A002188, n = 0..40.
A002188 = [
    0, 0, 0, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 3, 2, 1, 3, 2, 4, 3, 0,
    4, 3, 0, 4, 3, 0, 4, 1, 2, 3, 1, 2, 4, 1, 2, 4, 1, 2, 4, 1,
]  # fmt: skip


def test_grundy_values_match_oeis() -> None:
    assert [grundy_value(n) for n in range(len(A002188))] == A002188


@cache
def mover_wins(key: tuple[int, ...]) -> bool:
    """Plain game-tree search through the protocol, independent of the Grundy values."""
    state = GrundyState(key)
    return any(not mover_wins(G.key(G.apply(state, m))) for m in G.legal_moves(state))


@pytest.mark.parametrize("n", range(1, 26))
def test_exhaustive_search_agrees_with_grundy_values(n: int) -> None:
    assert mover_wins((n,)) == (grundy_value(n) != 0)


def test_multi_heap_positions_agree_with_the_xor_rule() -> None:
    for heaps in [(4, 2, 1), (5, 3), (7, 4), (6, 6), (9, 5, 3), (10, 4)]:
        state = G.parse_position(",".join(map(str, heaps)))
        assert mover_wins(G.key(state)) == (position_value(state.heaps) != 0)


def test_outcome_and_turns() -> None:
    s = G.initial({"heap": 3})
    assert G.to_move(s) == 0 and G.legal_moves(s) == [(0, 2, 1)]
    s = G.apply(s, (0, 2, 1))
    out = G.outcome(s)
    assert out is not None and (out.winner, out.points, out.reason) == (0, 1, "no_moves")
    assert G.to_move(s) is None and G.legal_moves(s) == []


def test_one_move_per_distinct_result() -> None:
    s = G.parse_position("6,6,5")
    moves = G.legal_moves(s)
    results = [G.key(G.apply(s, m)) for m in moves]
    assert len(results) == len(set(results)) == 2 + 2


@pytest.mark.parametrize("text", ["", ",", "7,", "a", "-3", "0", "3.5", "1" * 5, "٣"])
def test_invalid_positions(text: str) -> None:
    with pytest.raises(InvalidPositionError):
        G.parse_position(text)


def test_options() -> None:
    assert G.initial().heaps == (7,)
    assert G.initial({"heap": 12}).heaps == (12,)
    for bad in ({"heap": 0}, {"heap": "7"}, {"heap": True}, {"heaps": 7}):
        with pytest.raises(InvalidInputError):
            G.initial(bad)


def test_move_notations() -> None:
    s = G.parse_position("7")
    assert G.parse_move(s, "0:4+3") == (0, 4, 3)
    assert G.move_from_json(s, {"heap": 0, "split": [4, 3]}) == (0, 4, 3)
    for bad in ("0:4", "4+3", "x:4+3"):
        with pytest.raises(InvalidMoveError):
            G.parse_move(s, bad)
    for obj in ({"heap": 0}, {"heap": 0, "split": [4]}, {"heap": "0", "split": [4, 3]}):
        with pytest.raises(InvalidMoveError):
            G.move_from_json(s, obj)
