"""The seek pool's pairing rule on each backend (contract section 11, and section 15's
blocks): two seeks pair when game, options, clock and ``rated`` are equal, each player's
rating lies in the other's range (all four bounds, inclusive), they are two players, and
neither blocked the other; the oldest compatible one is taken. Checked against the rule
written here, apart from the stores' SQL, with players of different ratings: dropping any one
bound from either backend's statement fails a case below."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from pg_support import Backend
from tablas.server.store.seeks import SeekRow

_ids = itertools.count()


def seek(player: str, rating: float, lo: float | None, hi: float | None, *,
         game: str = "tictactoe", rated: bool = False, clock: str = "null") -> SeekRow:
    n = next(_ids)
    return SeekRow(f"s{n}", "node", n, player, player.title(), True, False, "", rating, game,
                   "{}", clock, rated, lo, hi, float(n))


def compatible(a: SeekRow, b: SeekRow) -> bool:
    """The contract's rule, written out."""
    def admits(s: SeekRow, rating: float) -> bool:
        return (s.lo is None or s.lo <= rating) and (s.hi is None or rating <= s.hi)
    return (a.player_id != b.player_id and (a.game, a.options, a.clock, a.rated) ==
            (b.game, b.options, b.clock, b.rated) and admits(a, b.rating)
            and admits(b, a.rating))


# (waiting seek, newcomer): each bound at its edge (pairs), and each alone one point out.
CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("both ranges hold, edges included",
     dict(rating=1400, lo=1500, hi=1700), dict(rating=1500, lo=1400, hi=1600)),
    ("the newcomer under the waiting seek's low bound",
     dict(rating=1400, lo=1501, hi=1700), dict(rating=1500, lo=1400, hi=1600)),
    ("the newcomer over the waiting seek's high bound",
     dict(rating=1400, lo=1300, hi=1499), dict(rating=1500, lo=1400, hi=1600)),
    ("the waiting player under the newcomer's low bound",
     dict(rating=1400, lo=1300, hi=1700), dict(rating=1500, lo=1401, hi=1600)),
    ("the waiting player over the newcomer's high bound",
     dict(rating=1800, lo=1300, hi=1700), dict(rating=1500, lo=1400, hi=1799)),
    ("open ranges take anyone", dict(rating=2400, lo=None, hi=None),
     dict(rating=900, lo=None, hi=None)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
async def test_all_four_bounds_on_each_backend(backend: Backend,
                                               case: tuple[str, dict[str, Any],
                                                           dict[str, Any]]) -> None:
    _, w, n = case
    store = await backend.open()
    try:
        waiting, newcomer = seek("wanda", **w), seek("newt", **n)
        assert await store.seeks.pair_or_add(waiting) is None
        taken = await store.seeks.pair_or_add(newcomer)
        assert (taken is not None) == compatible(waiting, newcomer)
        if taken is not None:
            assert taken.seek_id == waiting.seek_id
            assert await store.seeks.total() == 0
        else:  # both wait now
            assert await store.seeks.total() == 2
    finally:
        await store.close()


async def test_never_oneself_the_oldest_first_and_never_a_blocked_pair(
        backend: Backend) -> None:
    store = await backend.open()
    try:
        for pid in ("ana", "bob", "cy"):
            await store.create_player(pid, pid.title(), f"token-{pid}")
        first = seek("ana", 1500, None, None)
        assert await store.seeks.pair_or_add(first) is None
        # Her own second seek waits beside the first: never paired with herself.
        assert await store.seeks.pair_or_add(seek("ana", 1500, None, None)) is None
        assert await store.seeks.total() == 2
        # Another kind of game or clock waits apart.
        assert await store.seeks.pair_or_add(seek("bob", 1500, None, None, game="boom")) \
            is None
        assert await store.seeks.pair_or_add(
            seek("bob", 1500, None, None, clock='{"base_ms":60000,"increment_ms":0}')) is None
        # Bob blocked Ana: his matching seek waits too, whoever blocked whom.
        await store.blocks.block("bob", "ana", 1.0)
        blocked = seek("bob", 1500, None, None)
        assert await store.seeks.pair_or_add(blocked) is None
        assert await store.seeks.cancel(blocked.seek_id, "bob")
        await store.blocks.unblock("bob", "ana")
        await store.blocks.block("ana", "cy", 2.0)
        assert await store.seeks.pair_or_add(seek("cy", 1500, None, None)) is None
        # Without a block, the oldest compatible one is taken: Ana's first (Cy's is younger).
        await store.create_player("dan", "Dan", "token-dan")
        taken = await store.seeks.pair_or_add(seek("dan", 1500, None, None))
        assert taken is not None and taken.seek_id == first.seek_id
    finally:
        await store.close()
