"""Janowski's cubeful equity (engine.search.cubeful): the take and doubling points it must
reproduce, dead cube and live, with and without gammons, and the shape of its equity lines."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tablas.engine.games import get_game
from tablas.engine.games.backgammon import START, Backgammon, BGState, encode_position_id
from tablas.engine.search.backgammon_eval import pips, stage
from tablas.engine.search.cubeful import (
    CONTACT_EFFICIENCY,
    RACE_EFFICIENCY,
    Cubeless,
    best_action,
    cube_values,
    cubeful_equity,
    efficiency,
    live_equity,
)

from tests.test_bgnet import random_positions
from tools import bg_cube_judge

BG: Backgammon = get_game("backgammon")  # type: ignore[assignment]


def probs_for(p: float, w: float = 1.0, l: float = 1.0) -> list[float]:  # noqa: E741
    """Five probabilities with winning chance ``p`` whose wins average ``w`` points and
    losses ``l`` (gammons only, 1 <= w, l <= 2)."""
    return [p, p * (w - 1.0), 0.0, (1.0 - p) * (l - 1.0), 0.0]


def threshold(holds: Callable[[float], bool]) -> float:
    """The least p in [0, 1] for which ``holds`` (monotone: false below, true above)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if holds(mid) else (mid, hi)
    return hi


def doubler_takes_at(x: float, w: float = 1.0, l: float = 1.0) -> float:  # noqa: E741
    """The doubler's winning chance above which the other side drops (its take point is one
    minus it)."""
    def dropped(p: float) -> bool:
        return best_action(cube_values("take", "centre", probs_for(p, w, l), x)) == "drop"
    return threshold(dropped)


def doubles_from(x: float, w: float = 1.0, l: float = 1.0, access: str = "centre") -> float:  # noqa: E741
    def doubles(p: float) -> bool:
        return best_action(cube_values("roll", access, probs_for(p, w, l), x)) == "double"
    return threshold(doubles)


def test_a_dead_cube_without_gammons_is_taken_from_25_percent_and_doubled_from_50() -> None:
    assert 1 - doubler_takes_at(0.0) == pytest.approx(0.25, abs=1e-9)
    assert doubles_from(0.0) == pytest.approx(0.5, abs=1e-9)


def test_a_live_cube_without_gammons_is_taken_from_20_percent_and_kept_to_the_cash() -> None:
    assert 1 - doubler_takes_at(1.0) == pytest.approx(0.2, abs=1e-9)
    # Below the cash point (80%) holding the cube is worth more than doubling; there the
    # double is taken at exactly no gain, so doubling gains nothing anywhere (W = 1).
    for p in (0.5, 0.7, 0.79):
        v = cube_values("roll", "centre", probs_for(p), 1.0)
        assert v["double"] < v["roll"]
    for p in (0.8, 0.9):
        v = cube_values("roll", "centre", probs_for(p), 1.0)
        assert v["double"] == pytest.approx(v["roll"]) == pytest.approx(1.0)


def test_the_usual_efficiency_gives_the_usual_money_points() -> None:
    # Between the two: take from about 21.4% ((1.5 + x/2) / (2 + x/2) for the doubler, from
    # the formulas by hand), double from about 69%, as the money-game literature has it.
    x = CONTACT_EFFICIENCY
    assert doubler_takes_at(x) == pytest.approx((1.5 + x / 2) / (2 + x / 2), abs=1e-9)
    assert 0.68 < doubles_from(x) < 0.70


@given(st.floats(1.0, 2.0), st.floats(1.0, 2.0))
def test_a_dead_cubes_take_point_is_the_classic_formula(w: float, l: float) -> None:  # noqa: E741
    # The textbook dead-cube take point (L - 1/2) / (W + L), in the taker's terms: it wins
    # the doubler's l when it wins, and loses the doubler's w.
    assert 1 - doubler_takes_at(0.0, w, l) == pytest.approx((w - 0.5) / (l + w), abs=1e-7)


@given(st.floats(1.0, 2.0), st.floats(1.0, 2.0))
def test_a_live_cubes_take_point_is_janowskis(w: float, l: float) -> None:  # noqa: E741
    # The taker's own live take point, (L - 1/2) / (W + L + 1/2) with its W (the doubler's
    # l) and L (the doubler's w); equally the doubler's cash point.
    taker = 1 - doubler_takes_at(1.0, w, l)
    assert taker == pytest.approx((w - 0.5) / (w + l + 0.5), abs=1e-7)
    assert 1 - taker == pytest.approx(Cubeless.from_probs(probs_for(0.5, w, l)).cash_point,
                                      abs=1e-7)


@given(st.floats(1.0, 2.0), st.floats(1.0, 2.0), st.floats(0.0, 1.0))
def test_owning_the_cube_is_worth_more_than_a_centred_one_and_that_more_than_none(
        w: float, l: float, x: float) -> None:  # noqa: E741
    for i in range(101):
        c = Cubeless.from_probs(probs_for(i / 100, w, l))
        own, centre, theirs = (cubeful_equity(c, x, a) for a in ("own", "centre", "theirs"))
        assert own >= centre - 1e-12 and centre >= theirs - 1e-12


@given(st.floats(1.0, 2.0), st.floats(1.0, 2.0), st.sampled_from(["own", "centre", "theirs"]))
def test_live_equity_runs_from_a_sure_loss_to_a_sure_win_without_a_jump(
        w: float, l: float, access: str) -> None:  # noqa: E741
    def at(p: float) -> float:
        return live_equity(Cubeless(p, w, l), access)

    assert at(0.0) == pytest.approx(-l) and at(1.0) == pytest.approx(w)
    step = 1e-4
    values = [at(i * step) for i in range(int(1 / step) + 1)]
    slope = max(w, l) * 10 + 10  # no piece is steeper than this
    for a, b in itertools.pairwise(values):
        assert a <= b + 1e-12
        assert b - a <= slope * step


def test_too_good_to_double_when_the_gammons_are_worth_more_than_the_point() -> None:
    # 90% to win, half of the wins gammons: playing on is worth more than the cashed point.
    v = cube_values("roll", "centre", [0.9, 0.45, 0.0, 0.0, 0.0], CONTACT_EFFICIENCY)
    assert v["roll"] > 1.0 == v["double"]
    assert best_action(v) == "roll"


def test_ties_go_to_not_doubling_and_to_taking() -> None:
    assert best_action({"roll": 0.5, "double": 0.5}) == "roll"
    assert best_action({"take": -1.0, "drop": -1.0}) == "take"


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="cube access"):
        live_equity(Cubeless(0.5, 1.0, 1.0), "middle")
    with pytest.raises(ValueError, match="cannot double"):
        cube_values("roll", "theirs", probs_for(0.5), 0.68)
    with pytest.raises(ValueError, match="phase"):
        cube_values("move", "centre", probs_for(0.5), 0.68)


def test_inconsistent_probabilities_are_clipped_before_use() -> None:
    c = Cubeless.from_probs([0.3, 0.5, 0.6, 0.9, 0.0])  # gammons above the chances
    assert (c.p, c.w, c.l) == pytest.approx((0.3, 3.0, 2.0))


def test_efficiency_is_the_contact_value_in_contact_and_grows_with_a_race() -> None:
    assert efficiency(START, START) == CONTACT_EFFICIENCY
    short = (13,) + (0,) * 5 + (2,) + (0,) * 19
    long = (0,) * 7 + (15,) + (0,) * 18
    assert efficiency(short, short) == RACE_EFFICIENCY[0]
    assert RACE_EFFICIENCY[0] < efficiency(long, short) <= RACE_EFFICIENCY[1]


# --- differential: gnubg's own cube analysis --------------------------------------------------

GNUBG_CLI = Path(bg_cube_judge.GNUBG)


def pre_roll_positions(n: int, seed: int) -> list[BGState]:
    """Positions before a roll from seeded games of random plays (lopsided ones included, so
    that gammons and too-good positions come up), the cube centred; none where both sides
    bear off (gnubg reads those from its cubeful bear-off database, not Janowski's model)."""
    out = [BGState((me, opp), 0, "roll", None, 1, None, True)
           for me, opp in random_positions(seed, 40)[::5] if stage(me, opp) != "bearoff"]
    return out[:n]


def race_positions(n: int, seed: int) -> list[BGState]:
    """Races before a roll, the cube centred: each side's 15 checkers on its points 1-12 at
    random (so no contact), some outside home, both near the same pip count, where the race
    cube's efficiency matters most."""
    rng = random.Random(seed)
    out: list[BGState] = []
    while len(out) < n:
        boards = []
        for _ in range(2):
            b = [0] * 26
            for _ in range(15):
                b[rng.randint(1, 12)] += 1
            boards.append(tuple(b))
        me, opp = boards
        if stage(me, opp) == "race" and abs(pips(me) - pips(opp)) <= 15:
            out.append(BGState((me, opp), 0, "roll", None, 1, None, True))
    return out


@pytest.mark.skipif(not GNUBG_CLI.exists(), reason="GNU Backgammon is not installed "
                    "(apt-get install gnubg: the README's test command installs it)")
def test_on_gnubgs_probabilities_the_model_gives_gnubgs_cube_equities() -> None:
    """gnubg's 0-ply cube analysis turns its cubeless probabilities into cubeful equities by
    Janowski's formulas, an implementation independent of ours: on the probabilities it
    prints (3 decimals), ours must give its no double and double/take, and its action
    wherever the choice is not a near tie."""
    states = pre_roll_positions(80, 5) + race_positions(30, 6)
    ids = [encode_position_id(s.boards[s.turn], s.boards[1 - s.turn]) for s in states]
    seen = {"contact": 0, "race": 0, "race, efficiency between the bounds": 0}
    for s, g in zip(states, bg_cube_judge.gnubg_cube(ids, 0)):
        me, opp = s.boards[s.turn], s.boards[1 - s.turn]
        x = efficiency(me, opp)
        seen["contact" if x == CONTACT_EFFICIENCY else "race"] += 1
        seen["race, efficiency between the bounds"] += RACE_EFFICIENCY[0] < x < RACE_EFFICIENCY[1]
        ours = cube_values("roll", "centre", g["probs"], x)
        dt = -cube_values("take", "centre", g["probs"], x)["take"]
        assert ours["roll"] == pytest.approx(g["nd"], abs=0.01), (s, g)
        assert dt == pytest.approx(g["dt"], abs=0.01), (s, g)
        theirs = min(g["dt"], g["dp"])
        if abs(theirs - g["nd"]) > 0.02:
            assert (best_action(ours) == "double") == (theirs > g["nd"]), (s, g, ours)
    assert min(seen.values()) >= 10, seen  # both kinds of position were compared


def test_the_cube_judges_match_id_and_errors() -> None:
    # gnubg's own IDs of a money game, player 0 on roll before rolling, the cube centred on 1
    # (and the same with a double offered).
    assert bg_cube_judge.match_id() == "MAEAAAAAAAAA"
    assert bg_cube_judge.match_id(doubled=True) == "MBEAAAAAAAAA"
    g = {"nd": 0.6, "dt": 1.2, "dp": 1.0}  # double, pass
    assert bg_cube_judge.errors_of(g, double=True, take=False) == (0.0, 0.0)
    assert bg_cube_judge.errors_of(g, double=False, take=True) == pytest.approx((0.4, 0.2))


@pytest.mark.skipif(not GNUBG_CLI.exists(), reason="GNU Backgammon is not installed "
                    "(apt-get install gnubg: the README's test command installs it)")
def test_the_cube_judge_runs_end_to_end() -> None:
    res = bg_cube_judge.run(["medium"], 4, seed=3, plies=0, games_by="medium",
                            random_plays=0.3, show_progress=False)
    assert res["n"] == 4 and set(res["rows"]) == {"medium", "gnubg-0ply"}
    for rows in res["rows"].values():
        assert len(rows) == 4
        assert all(r["doubler"] >= 0 and r["taker"] >= 0 for r in rows)
    # Judged by its own 0-ply analysis, gnubg 0-ply never errs.
    assert all(r["doubler"] == r["taker"] == 0 for r in res["rows"]["gnubg-0ply"])
    assert "| medium |" in bg_cube_judge.report(res, 0.2)
