"""The bot ladder on tiny runs: games to the end by the rules, a table, sane intervals."""

from __future__ import annotations

import pytest

from tools.baselines import BASELINE
from tools.ladder import (
    PairingResult,
    main,
    markdown_table,
    mean_interval,
    pairings,
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
