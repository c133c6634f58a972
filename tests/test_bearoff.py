"""The one-sided bear-off database, against independent recursions and the rules module.

The databases here are small (``max_checkers`` <= 8, well under a second each), except for one
comparison with gnubg that builds the full database in memory (about 3 s; the brief allows the
full build in the tests when it takes under 20 s). Nothing is written outside ``tmp_path``.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from tablas.engine.games.backgammon import DICE_OUTCOMES, START, generate_plays
from tablas.engine.search import bearoff
from tablas.engine.search.bearoff import (
    BearoffDB,
    build,
    final_positions,
    index_of,
    load,
    load_or_build,
    position_at,
    positions_count,
)

EMPTY_OPP = (15,) + (0,) * 25


@pytest.fixture(scope="module")
def db6() -> BearoffDB:
    return build(6)


def homes(max_checkers: int) -> Iterator[tuple[int, ...]]:
    for h in itertools.product(range(max_checkers + 1), repeat=6):
        if sum(h) <= max_checkers:
            yield h


def full_board(home: Sequence[int]) -> tuple[int, ...]:
    return (15 - sum(home), *home) + (0,) * 19


def rules_finals(home: Sequence[int], d1: int, d2: int) -> set[tuple[int, ...]]:
    """The home boards the rules module's plays leave, alone against an empty board."""
    return {tuple(m[1:7]) for _, m, _ in generate_plays(full_board(home), EMPTY_OPP, d1, d2)}


@cache
def brute_e(home: tuple[int, ...]) -> float:
    """E by a direct recursion over the rules module's plays."""
    if not any(home):
        return 0.0
    total = 1.0
    for (a, b), p in DICE_OUTCOMES:
        total += p * min(brute_e(h) for h in rules_finals(home, a, b))
    return total


@cache
def single_checker_e(point: int) -> float:
    """One checker alone: a roll moves it by the sum of its dice (bearing off past 0)."""
    if point <= 0:
        return 0.0
    return 1.0 + sum(
        p * single_checker_e(point - (4 * a if a == b else a + b)) for (a, b), p in DICE_OUTCOMES
    )


# --- indexing ------------------------------------------------------------------------------


def test_counts_and_perfect_hash() -> None:
    assert positions_count(15) == 54264
    seen = {index_of(h) for h in homes(7)}
    assert seen == set(range(positions_count(7)))
    for i in range(positions_count(7)):
        assert index_of(position_at(i, 7)) == i
    assert index_of((0,) * 6) == 0
    assert index_of((0, 0, 0, 0, 0, 15)) < 54264
    assert position_at(54263) == (0, 0, 0, 0, 0, 15)
    assert index_of((15, 0, 0, 0, 0, 0)) == 38760  # C(20, 6)


def test_every_move_lowers_the_index() -> None:
    for h in homes(6):
        for d in range(1, 7):
            for s in bearoff.single_steps(h, d):
                assert index_of(s) < index_of(h)


# --- the generator against the rules -------------------------------------------------------


def test_generator_matches_generate_plays_small() -> None:
    for h in homes(4):
        if not any(h):
            continue
        for (a, b), _ in DICE_OUTCOMES:
            assert final_positions(h, a, b) == rules_finals(h, a, b), (h, a, b)


def test_generator_matches_generate_plays_sample() -> None:
    rng = random.Random(7)
    for _ in range(40):
        n = rng.randint(5, 15)
        h = [0] * 6
        for _ in range(n):
            h[rng.randrange(6)] += 1
        for (a, b), _ in DICE_OUTCOMES:
            assert final_positions(h, a, b) == rules_finals(h, a, b), (h, a, b)


# --- known values and the brute force ------------------------------------------------------


def test_known_values(db6: BearoffDB) -> None:
    assert db6.expected_rolls((0,) * 6) == 0.0
    assert db6.expected_rolls((1, 0, 0, 0, 0, 0)) == pytest.approx(1.0)
    assert db6.expected_rolls((2, 0, 0, 0, 0, 0)) == pytest.approx(1.0)
    # Three on the ace point: off in one roll only with a double.
    assert db6.expected_rolls((3, 0, 0, 0, 0, 0)) == pytest.approx(1 + 30 / 36)
    for p in range(1, 7):
        one = [0] * 6
        one[p - 1] = 1
        assert db6.expected_rolls(one) == pytest.approx(single_checker_e(p), abs=1e-12)
    # One checker on the 6: 9 of the 36 rolls (21 31 41 32 11) leave it on the board.
    assert db6.expected_rolls((0, 0, 0, 0, 0, 1)) == pytest.approx(1.25)
    assert db6.off_distribution((0, 0, 0, 0, 0, 1)) == pytest.approx([0.0, 0.75, 0.25])


def test_agrees_with_brute_force_up_to_4_checkers(db6: BearoffDB) -> None:
    for h in homes(4):
        assert db6.expected_rolls(h) == pytest.approx(brute_e(h), abs=1e-12), h


def test_distributions(db6: BearoffDB) -> None:
    for h in homes(6):
        dist = db6.off_distribution(h)
        assert sum(dist) == pytest.approx(1.0, abs=1e-12)
        assert all(x >= 0 for x in dist)
        # The mean number of rolls of the E-minimising play is E itself.
        mean = sum(n * x for n, x in enumerate(dist))
        assert mean == pytest.approx(db6.expected_rolls(h), abs=1e-9)
        if any(h):
            assert dist[0] == 0.0
            # At most 4 checkers come off in one roll.
            assert all(x == 0.0 for x in dist[: (sum(h) + 3) // 4])


def test_adding_a_checker_never_helps(db6: BearoffDB) -> None:
    for h in homes(5):
        e = db6.expected_rolls(h)
        for p in range(6):
            more = list(h)
            more[p] += 1
            assert db6.expected_rolls(more) >= e - 1e-12
    # Moving a checker up a point, by contrast, can help (less wastage): 3-3-4-6 needs fewer
    # rolls on average than 3-3-3-6 (both checked by the brute force above).
    assert db6.expected_rolls((0, 0, 2, 1, 0, 1)) < db6.expected_rolls((0, 0, 3, 0, 0, 1))


def test_small_database_is_a_prefix_of_a_bigger_one(db6: BearoffDB) -> None:
    small = build(3)
    n = len(small)
    assert list(small.expected) == list(db6.expected)[:n]
    for i in range(n):
        h = position_at(i, 3)
        assert small.off_distribution(h) == db6.off_distribution(h)


def test_win_probability(db6: BearoffDB) -> None:
    one6 = (0, 0, 0, 0, 0, 1)
    # On roll with one checker on the 6 against the same: off now 3/4, else surely next.
    assert db6.win_probability(one6, one6) == pytest.approx(0.75 + 0.25 * 0.25)
    assert db6.win_probability((1, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 1)) == 1.0
    assert db6.win_probability((0, 0, 0, 0, 0, 0), one6) == 1.0
    assert db6.win_probability(one6, (0, 0, 0, 0, 0, 0)) == 0.0
    # Being on roll is worth something: never worse than the same position reversed.
    rng = random.Random(3)
    all_homes = [h for h in homes(6) if any(h)]
    for _ in range(300):
        a, b = rng.choice(all_homes), rng.choice(all_homes)
        p = db6.win_probability(a, b)
        assert 0.0 <= p <= 1.0
        if a == b:
            assert p >= 0.5


def test_win_probability_against_a_two_sided_recursion(db6: BearoffDB) -> None:
    """Both sides playing to win (not to minimise E) on tiny races: the one-sided figure
    stays very close."""

    @cache
    def win(me: tuple[int, ...], opp: tuple[int, ...]) -> float:
        if not any(me):
            return 1.0
        if not any(opp):
            return 0.0
        return sum(
            p * max(1.0 - win(opp, h) for h in final_positions(me, a, b))
            for (a, b), p in DICE_OUTCOMES
        )

    for me in homes(2):
        for opp in homes(2):
            if any(me) and any(opp):
                exact = win(me, opp)
                assert db6.win_probability(me, opp) == pytest.approx(exact, abs=0.02)


def _gnubg_check(gnubg: Any, db: BearoffDB, sizes: tuple[int, int], seed: int, tol: float) -> None:
    rng = random.Random(seed)
    ctx = gnubg.eval_context(0, 0, 0, 0, 0.0)
    cube = gnubg.cube_info()
    for _ in range(25):
        me, opp = ([0] * 6, [0] * 6)
        for h in (me, opp):
            for _ in range(rng.randint(*sizes)):
                h[rng.randrange(6)] += 1
        board = (tuple(opp) + (0,) * 19, tuple(me) + (0,) * 19)  # gnubg: the side on roll 2nd
        theirs = gnubg.evaluate(board, cube, ctx)[0]
        assert db.win_probability(me, opp) == pytest.approx(theirs, abs=tol), (me, opp)


def test_gnubg_agrees_small() -> None:
    """Small races: gnubg reads its exact two-sided database (both sides playing to win), so
    the one-sided approximation shows, by up to about 0.008."""
    gnubg = pytest.importorskip("gnubg")
    _gnubg_check(gnubg, build(8), (1, 8), 11, 0.012)


def test_gnubg_agrees_full() -> None:
    """The full database (a few seconds to build) against gnubg's one-sided database, which
    stores the same distributions to 16 bits: agreement to a few 1e-5."""
    gnubg = pytest.importorskip("gnubg")
    _gnubg_check(gnubg, build(15), (9, 15), 12, 2e-4)


def test_bad_input(db6: BearoffDB) -> None:
    with pytest.raises(ValueError):
        db6.expected_rolls((7, 0, 0, 0, 0, 0))
    with pytest.raises(ValueError):
        db6.expected_rolls((1, 0, 0))
    with pytest.raises(ValueError):
        db6.expected_rolls((-1, 0, 0, 0, 0, 0))


def test_is_bearoff() -> None:
    home_me = (10, 2, 2, 1, 0, 0, 0) + (0,) * 19
    home_opp = (0, 5, 5, 5, 0, 0, 0) + (0,) * 19
    assert bearoff.is_bearoff(home_me, home_opp)
    assert not bearoff.is_bearoff(START, START)
    race = (0, 5, 5, 4, 0, 0, 0, 1) + (0,) * 18
    assert not bearoff.is_bearoff(race, home_opp)
    on_bar = (10, 2, 2, 0) + (0,) * 21 + (1,)
    assert not bearoff.is_bearoff(home_me, on_bar)
    assert bearoff.home(home_opp) == (5, 5, 5, 0, 0, 0)


def test_module_api_uses_the_database(monkeypatch: pytest.MonkeyPatch, db6: BearoffDB) -> None:
    monkeypatch.setattr(bearoff, "_DB", db6)
    assert bearoff.database() is db6
    assert bearoff.expected_rolls((0, 0, 0, 0, 0, 1)) == pytest.approx(1.25)
    assert list(bearoff.off_distribution((1, 0, 0, 0, 0, 0))) == pytest.approx([0.0, 1.0])
    assert bearoff.win_probability((0, 0, 0, 0, 0, 1), (0, 0, 0, 0, 0, 1)) == pytest.approx(0.8125)


# --- the cache file ------------------------------------------------------------------------


def test_cache_round_trip_and_recompute(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TABLAS_CACHE", str(tmp_path / "cache"))
    path = bearoff.cache_path(5)
    assert path.parent == tmp_path / "cache"
    assert bearoff.cache_path().name == "bearoff-v1.bin"
    assert not path.exists()

    db = load_or_build(5)  # computed, then written atomically
    assert path.exists()
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left over
    again = load(path, 5)
    assert again is not None
    assert list(again.expected) == list(db.expected)
    assert list(again.dist) == list(db.dist)
    assert again.off_distribution((1, 1, 1, 1, 1, 0)) == db.off_distribution((1, 1, 1, 1, 1, 0))

    # Loading a valid file does not recompute.
    calls: list[int] = []
    real_build = bearoff.build

    def counting_build(m: int = 15) -> BearoffDB:
        calls.append(m)
        return real_build(m)

    monkeypatch.setattr(bearoff, "build", counting_build)
    load_or_build(5)
    assert calls == []

    # A flipped byte in the payload fails the checksum: recomputed and rewritten.
    good = path.read_bytes()
    bad = bytearray(good)
    bad[-3] ^= 0xFF
    path.write_bytes(bytes(bad))
    assert load(path, 5) is None
    fixed = load_or_build(5)
    assert calls == [5]
    assert list(fixed.expected) == list(db.expected)
    assert path.read_bytes() == good

    # Truncated, stale version, other checker count, garbage: all rejected.
    path.write_bytes(good[:-8])
    assert load(path, 5) is None
    stale = bytearray(good)
    stale[8] += 1  # the format version
    path.write_bytes(bytes(stale))
    assert load(path, 5) is None
    path.write_bytes(good)
    assert load(path, 4) is None
    path.write_bytes(b"not a database")
    assert load(path, 5) is None
    assert load(tmp_path / "missing.bin", 5) is None


def test_unwritable_cache_still_works(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("TABLAS_CACHE", str(blocker / "sub"))
    db = load_or_build(3)
    assert db.expected_rolls((1, 1, 1, 0, 0, 0)) > 1
