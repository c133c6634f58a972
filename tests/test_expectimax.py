"""Expectiminimax: Star1 and Star2 must return plain expectiminimax's value, visiting fewer
nodes; and backgammon bots decide legally at every level, cube actions included."""

from __future__ import annotations

import random
from typing import Any

import pytest
from tablas.engine.games import get_game
from tablas.engine.games.backgammon import Backgammon, BGState
from tablas.engine.search.backgammon_bot import cube_verdict, cubeless, rank_plays
from tablas.engine.search.backgammon_eval import evaluate_for_seat0, stage
from tablas.engine.search.bots import LEVELS, decide
from tablas.engine.search.expectimax import CHECK_EVERY, Expectimax, SearchTimeout

BG: Backgammon = get_game("backgammon")  # type: ignore[assignment]


def random_positions(n: int, seed: int, min_plies: int = 0) -> list[BGState]:
    """Decision states with the dice rolled, from seeded random cubeless games."""
    rng = random.Random(seed)
    out: list[BGState] = []
    while len(out) < n:
        s = BG.initial({"cube": False})
        plies = 0
        while BG.outcome(s) is None and len(out) < n:
            if BG.is_chance(s):
                s = BG.apply_chance(s, rng.choice([o for o, _ in BG.chance_outcomes(s)]))
                continue
            if plies >= min_plies and rng.random() < 0.08 and s.phase == "move":
                out.append(s)
            s = BG.apply(s, rng.choice(BG.legal_moves(s)))
            plies += 1
    return out


def searcher(star: int) -> Expectimax[BGState, Any]:
    norm = cubeless(BG).normalize
    return Expectimax(BG, evaluate_for_seat0, -3.0, 3.0, star=star, normalize=norm)


def test_star_pruning_keeps_the_value_and_saves_work() -> None:
    # Depth 2 from a decision: play, roll, play, evaluate. Positions with few plays keep the
    # plain search affordable. Work is counted as leaf evaluations, per search.
    states = [s for s in random_positions(120, 5, min_plies=20) if len(BG.legal_moves(s)) <= 10]
    assert len(states) >= 6
    totals = {0: 0, 1: 0, 2: 0}
    for s in states[:6]:
        plain, star1, star2 = searcher(0), searcher(1), searcher(2)
        v0 = plain.best(s, 2, all_exact=True)[1]
        assert star1.best(s, 2)[1] == pytest.approx(v0, abs=1e-9)
        assert star2.best(s, 2)[1] == pytest.approx(v0, abs=1e-9)
        assert star1.stats.evals <= plain.stats.evals
        for star, se in ((0, plain), (1, star1), (2, star2)):
            totals[star] += se.stats.evals
    assert totals[2] < totals[0], totals
    assert totals[1] < totals[0], totals


def test_star2_equals_plain_from_a_chance_node_in_contact() -> None:
    s = next(x for x in random_positions(20, 9) if stage(*x.boards) == "contact")
    before_roll = BGState(s.boards, s.turn, "dice", None, 1, None, False)
    plain, star2 = searcher(0), searcher(2)
    assert star2.value(before_roll, 1) == pytest.approx(plain.value(before_roll, 1), abs=1e-9)


@pytest.mark.parametrize("level", LEVELS)
def test_backgammon_levels_decide_legally(level: str) -> None:
    rng = random.Random(3)
    s = BG.initial()
    s = BG.apply_chance(s, (3, 1))
    for _ in range(12):
        if BG.outcome(s) is not None:
            break
        if BG.is_chance(s):
            s = BG.apply_chance(s, rng.choice([o for o, _ in BG.chance_outcomes(s)]))
            continue
        d = decide("backgammon", s, level, budget_ms=300, seed=1)
        m = BG.check_move(s, BG.move_from_json(s, d.move))
        s = BG.apply(s, m)


def test_the_bot_takes_a_fair_double_and_drops_a_hopeless_one() -> None:
    start = BG.initial()
    s = BGState(start.boards, 0, "take", None, 1, None, True)
    assert decide("backgammon", s, "medium").move == {"action": "take"}
    # Seat 0 has one checker left on its ace point; seat 1 has all fifteen far back.
    winning = (14, 1) + (0,) * 24
    losing = (0,) * 24 + (15, 0)
    s = BGState((winning, losing), 0, "take", None, 1, None, True)
    assert decide("backgammon", s, "medium").move == {"action": "drop"}


def test_a_beam_of_one_keeps_exactly_the_best_play_by_the_static_look() -> None:
    # At 1 ply the full-width search picks that same play, so the two agree on the value.
    s = random_positions(30, 2, min_plies=10)[5]
    full = searcher(2)
    narrow = Expectimax(
        BG, evaluate_for_seat0, -3.0, 3.0, star=2, normalize=cubeless(BG).normalize, beam=1
    )
    seat = BG.to_move(s)
    _, v_full, _ = full.best(s, 1, all_exact=True)
    cands = [m for m, _ in narrow._candidates(s, seat == 0, 1)]
    assert len(cands) == 1
    one_ply = [(m, full.value(full._child(s, m), 0)) for m in BG.legal_moves(s)]
    best_static = (max if seat == 0 else min)(one_ply, key=lambda mv: mv[1])
    assert cands[0] == best_static[0]
    assert v_full == pytest.approx(best_static[1])


def _bearoff(mine: list[int], theirs: list[int], phase: str) -> BGState:
    """Both sides bearing off, the rest of their checkers already off; seat 0 to act."""
    def board(points: list[int]) -> tuple[int, ...]:
        b = [0] * 26
        for p in points:
            b[p] += 1
        b[0] = 15 - len(points)
        return tuple(b)

    return BGState((board(mine), board(theirs)), 0, phase, None, 1, None, True)


def test_the_cube_has_a_double_take_window_a_cash_and_a_too_good() -> None:
    # ~73% for the side on roll in a short race: worth doubling, and the other side should
    # take (Janowski: a race cube of efficiency 0.6 is taken down to about 22%).
    s = _bearoff([6, 5], [6, 4], "roll")
    v = cube_verdict(s, "medium")
    assert v.values["roll"] < v.values["double"] < 1.0
    assert decide("backgammon", s, "medium").move == {"action": "double"}
    assert decide("backgammon", BG.apply(s, "double"), "medium").move == {"action": "take"}
    # ~87%: a double the other side drops, which cashes the point.
    s = _bearoff([4, 4], [5, 5], "roll")
    assert cube_verdict(s, "medium").values["double"] == 1.0
    assert cube_verdict(BG.apply(s, "double"), "medium").values["take"] < -1.0
    assert decide("backgammon", s, "medium").move == {"action": "double"}
    assert decide("backgammon", BG.apply(s, "double"), "medium").move == {"action": "drop"}
    # A gammon (or more) in sight: playing on is worth more than the point a double cashes.
    s = BGState(((14, 1) + (0,) * 24, (0,) * 24 + (15, 0)), 0, "roll", None, 1, None, True)
    assert cube_verdict(s, "medium").values["roll"] > 1.0
    assert decide("backgammon", s, "medium").move == {"action": "roll"}


def test_the_owner_of_the_cube_redoubles_later_than_a_centred_cube_is_doubled() -> None:
    # Owning the cube is worth something: near the doubling point, the centred cube is
    # turned and the owned one kept (the cube's value aside, the same position).
    s = _bearoff([6, 5], [6, 4], "roll")
    centred = cube_verdict(s, "max").values
    owned = cube_verdict(BGState(s.boards, 0, "roll", None, 2, 0, True), "max").values
    assert owned["roll"] > centred["roll"]
    assert owned["double"] == centred["double"]


def test_a_game_ending_in_the_search_is_scored_per_cube_unit() -> None:
    """With the cube on 4, bearing off the last checker (a single game: the other side has
    one checker off) is worth 1 unit, on the evaluation's scale and within the search's
    bounds, not the 4 points the game will score."""
    near_win = (14, 1) + (0,) * 24
    other = (1,) + (0,) * 13 + (14,) + (0,) * 11
    for cube, owner in ((1, None), (4, 1)):
        s = BGState((near_win, other), 0, "move", (2, 1), cube, owner, True)
        for level in ("medium", "hard", "max"):
            d = decide("backgammon", s, level, budget_ms=200, seed=1)
            assert (d.move_text, d.score) == ("1/off", 1.0), (cube, level, d)


def test_a_deadline_stops_the_search_with_an_injected_clock() -> None:
    ticks = iter(range(10**6))
    s = next(x for x in random_positions(20, 9) if stage(*x.boards) == "contact")
    search = Expectimax(BG, evaluate_for_seat0, -3.0, 3.0, normalize=cubeless(BG).normalize,
                        clock=lambda: float(next(ticks)))
    search.deadline = 3.0  # the clock reads 0, 1, 2, 3, then 4: past it at the fifth look
    with pytest.raises(SearchTimeout):
        search.value(s, 3)
    assert search.stats.nodes == 5 * (CHECK_EVERY + 1)


def test_bulk_evaluation_gives_the_same_values_as_one_by_one() -> None:
    for s in random_positions(4, 12, min_plies=6):
        bulk = cubeless(BG, evaluation="net")
        single = cubeless(BG, evaluation="net")
        single.evaluate_many = None
        assert bulk.value(s, 2) == pytest.approx(single.value(s, 2), abs=1e-5)


def test_the_leaves_below_a_roll_are_evaluated_in_one_batch() -> None:
    """One ply above the leaves, a chance node asks the bulk evaluation for every leaf below
    its 21 rolls at once: one call per play searched, not one per reply decision."""
    s = next(x for x in random_positions(30, 5, min_plies=8)
             if stage(*x.boards) == "contact" and len(BG.legal_moves(x)) > 4)
    search = cubeless(BG, evaluation="net")
    bulk = search.evaluate_many
    assert bulk is not None
    sizes: list[int] = []

    def counted(states: list[BGState]) -> list[float]:
        sizes.append(len(states))
        return bulk(states)

    search.evaluate_many = counted
    search.value(s, 2)
    assert len(sizes) <= len(BG.legal_moves(s)) + 1
    assert sum(sizes) / len(sizes) > 100


def test_max_deepens_the_best_plays_of_hard_when_time_allows() -> None:
    s = next(x for x in random_positions(30, 4, min_plies=8)
             if stage(*x.boards) == "contact" and len(BG.legal_moves(x)) > 10)
    hard, hard_depth, _ = rank_plays(BG, s, "hard", None, random.Random(0))
    deep, deep_depth, _ = rank_plays(BG, s, "max", None, random.Random(0))
    assert (hard_depth, deep_depth) == (1, 3)
    # The deeper passes re-rank hard's best eight; below them the order is hard's.
    assert {m for m, _ in deep[:8]} == {m for m, _ in hard[:8]}
    assert [m for m, _ in deep[8:]] == [m for m, _ in hard[8:]]
    # Without the time for the deeper passes, max plays hard's play.
    rushed, rushed_depth, _ = rank_plays(BG, s, "max", 0.0, random.Random(0))
    assert rushed_depth == 1
    assert rushed[0][0] == hard[0][0]


def test_analysis_at_a_level_thinks_within_that_levels_cap(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """``tablas analyze --level max`` (and backgammon's default analysis, which is max) takes
    the time max's bot takes, not more: the level's cap bounds it whatever --time-ms asks."""
    from tablas.engine.search import backgammon_bot
    from tablas.engine.search.analysis import analyze

    s = next(x for x in random_positions(30, 4, min_plies=8)
             if stage(*x.boards) == "contact" and len(BG.legal_moves(x)) > 10)
    # With time to spare max searches its full depth (the cap raised: how far it gets in its
    # real cap depends on the machine's load, which a unit test must not).
    monkeypatch.setitem(backgammon_bot.THINK_MS, "max", 600_000.0)
    assert analyze(BG, s, "p", level="max")["depth"] == 3
    assert backgammon_bot.think_budget("max", 5.0) == 5.0  # a shorter budget still applies
    assert backgammon_bot.think_budget("hard", None) is None  # hard has no cap
    monkeypatch.setitem(backgammon_bot.THINK_MS, "max", 0.0)
    for kwargs in ({"level": "max"}, {}, {"level": "max", "time_ms": 60_000.0}, {"depth": 3}):
        verdict = analyze(BG, s, "p", **kwargs)  # type: ignore[arg-type]
        assert verdict["depth"] == 1, kwargs
