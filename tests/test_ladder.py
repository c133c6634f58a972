"""The bot ladder on tiny runs: games to the end by the rules, a table, sane intervals."""

from __future__ import annotations

from typing import Any

import pytest
from tablas.engine.core import Outcome

from tools.baselines import BASELINE
from tools.ladder import (
    PairingResult,
    main,
    markdown_table,
    mean_interval,
    pairings,
    pooled,
    run_ladder,
    run_pairing,
    wilson,
)


def test_wilson_interval_known_values() -> None:
    lo, hi = wilson(0.5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-3) and hi == pytest.approx(0.7634, abs=1e-3)
    lo, hi = wilson(1.0, 2)
    assert 0.3 < lo < 0.4 and hi == 1.0
    assert wilson(0.0, 0) == (0.0, 1.0)


def test_mean_interval() -> None:
    mean, lo, hi = mean_interval([1.0, -1.0, 2.0, 2.0])
    assert mean == 1.0 and lo < mean < hi
    assert mean_interval([3.0]) == (3.0, 3.0, 3.0)


def test_pairings_climb_the_levels_and_add_baselines() -> None:
    assert pairings("tictactoe") == [
        ("easy", "random"),
        ("medium", "easy"),
        ("hard", "medium"),
        ("max", "hard"),
    ]
    assert pairings("boom")[-1] == ("hard", BASELINE)
    assert ("hard", BASELINE) in pairings("backgammon")


def test_tiny_tictactoe_pairing_gives_a_table_and_a_sane_interval() -> None:
    r = run_pairing("tictactoe", "easy", "random", 2, 50, seed=1)
    assert r.games == 2 and r.wins + r.draws + r.losses == 2
    lo, hi = r.interval()
    assert 0.0 <= lo <= r.score <= hi <= 1.0
    again = run_pairing("tictactoe", "easy", "random", 2, 50, seed=1)
    assert (again.wins, again.draws, again.losses) == (r.wins, r.draws, r.losses)
    table = markdown_table([r])
    assert table.splitlines()[0].startswith("| game | upper vs lower")
    assert "| tictactoe | easy vs random |" in table


def test_backgammon_games_end_by_the_rules_and_count_points() -> None:
    r = run_pairing("backgammon", BASELINE, "random", 2, 20, seed=2)
    assert r.games == 2 and len(r.points) == 2
    assert all(p != 0 for p in r.points)  # backgammon has no draws
    assert "points" in markdown_table([r]).splitlines()[0]
    cubeless = run_pairing("backgammon", BASELINE, "random", 2, 20, seed=2, cube=False)
    assert all(abs(p) in (1, 2, 3) for p in cubeless.points)  # single, gammon, backgammon
    assert "| backgammon (no cube) | baseline vs random |" in markdown_table([cubeless])


def test_run_ladder_filters_pairings() -> None:
    results = run_ladder([("grundy", 2, 20)], seed=3, only={("easy", "random")}, progress=False)
    assert [(r.game, r.upper, r.lower) for r in results] == [("grundy", "easy", "random")]
    assert isinstance(results[0], PairingResult)


def test_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--games", "tictactoe", "-n", "2", "--only", "easy-random", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "| tictactoe | easy vs random | 100 ms | 2 |" in out


def test_backgammon_luck_is_the_rolls_equity_against_the_average_roll() -> None:
    """Seat 0 to roll with checkers on its 6 and 5 points, against one checker on the other
    side's 1 point: only 6-5, 6-6, 5-5, 4-4 and 3-3 bear both off (6 rolls in 36); any other
    loses the game. So its equity before the roll is 6/36 - 30/36, and a winning roll's
    luck is 1 minus that, a losing roll's -1 minus that."""
    pytest.importorskip("gnubg")
    from tablas.engine.games.backgammon import Backgammon, BGState

    from tools.ladder import BackgammonLuck

    game = Backgammon()
    me = (13,) + (0,) * 4 + (1, 1) + (0,) * 19  # 15 checkers: 13 off, one on 5, one on 6
    opp = (14, 1) + (0,) * 24
    state = BGState((me, opp), 0, "dice", None, 1, None, False)
    outcomes = game.chance_outcomes(state)
    before = 6 / 36 - 30 / 36
    for roll, want in (((6, 5), 1 - before), ((4, 4), 1 - before), ((2, 1), -1 - before),
                       ((2, 2), -1 - before)):
        meter = BackgammonLuck()
        meter(state, outcomes, roll)
        assert meter.seat0 == pytest.approx(want, abs=1e-6), roll
    # With the cube on 2 every result is worth two points, and so is the luck (the loser's
    # opponent, sure to win, is valued cubeful: it doubles and the double is dropped, or it
    # bears off; either way two points).
    cubed = BGState((me, opp), 0, "dice", None, 2, None, True)
    for roll, want in (((6, 5), 2 * (1 - before)), ((2, 1), 2 * (-1 - before))):
        meter = BackgammonLuck()
        meter(cubed, game.chance_outcomes(cubed), roll)
        assert meter.seat0 == pytest.approx(want, abs=1e-6), roll
    # Seat 1's roll: the luck is still counted for seat 0, with the sign turned.
    flipped = BGState((opp, me), 1, "dice", None, 1, None, False)
    meter = BackgammonLuck()
    meter(flipped, game.chance_outcomes(flipped), (6, 5))
    assert meter.seat0 == pytest.approx(-(1 - before), abs=1e-6)


def test_luck_adjusted_points_are_the_points_less_the_upper_sides_luck() -> None:
    r = PairingResult("backgammon", "max", "hard", 100.0)
    r.add(Outcome(0, 2, "game"), upper_seat=0, actions=10, luck=0.5)
    r.add(Outcome(0, 1, "game"), upper_seat=1, actions=10, luck=0.25)
    assert r.points == [2.0, -1.0]
    assert r.adjusted == [1.5, -0.75]
    assert "luck-adjusted" in markdown_table([r]).splitlines()[0]


def test_runs_written_with_json_pool_into_one_table(tmp_path: Any,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    paths = []
    for seed in (1, 2):
        path = tmp_path / f"run{seed}.json"
        assert main(["--games", "backgammon", "-n", "2", "--only", "easy-random", "--no-cube",
                     "--seed", str(seed), "--no-progress", "--json", str(path)]) == 0
        paths.append(str(path))
    capsys.readouterr()
    assert main(["--pool", *paths]) == 0
    out = capsys.readouterr().out
    assert "| backgammon (no cube) | easy vs random | 100 ms | 4 |" in out
    [r] = pooled(paths)
    assert len(r.points) == r.games == 4
