"""The textbook baseline bots: legal, deterministic, and doing what their textbook says."""

from __future__ import annotations

import pytest
from tablas.engine.bench import sample_decisions
from tablas.engine.errors import InvalidInputError
from tablas.engine.games import boom as bm
from tablas.engine.games import get_game
from tablas.engine.games.backgammon import START, BGState
from tablas.engine.search.evals import boom_line_count_eval

from tools.baselines import decide_baseline, rank_priority_plays

BG = get_game("backgammon")
BOOM = get_game("boom")


def _decisions(game_id: str, games: int, every: int) -> list[object]:
    return sample_decisions(get_game(game_id), games, seed=7)[::every]


@pytest.mark.parametrize(("game_id", "every"), [("backgammon", 9), ("boom", 6)])
def test_baseline_plays_are_legal_and_deterministic(game_id: str, every: int) -> None:
    g = get_game(game_id)
    states = _decisions(game_id, 1, every)
    assert states
    for s in states:
        a = decide_baseline(game_id, s, budget_ms=50, seed=3)
        assert g.check_move(s, g.move_from_json(s, a.move)) is not None
        assert decide_baseline(game_id, s, budget_ms=50, seed=3).move == a.move


def test_baseline_refuses_games_without_one() -> None:
    with pytest.raises(InvalidInputError):
        decide_baseline("connect4", get_game("connect4").initial())


def test_backgammon_baseline_makes_the_five_point_with_31() -> None:
    s = BG.apply_chance(BG.initial(), (3, 1))
    assert s.turn == 0 and s.phase == "move"
    best = rank_priority_plays(s)[0][0]
    assert sorted(best) == [(6, 5), (8, 5)]


def test_backgammon_baseline_hits_and_points_on_a_blot() -> None:
    # The opponent has split a back checker to its 20-point, the mover's 5-point.
    opp = list(START)
    opp[24], opp[20] = 1, 1
    s = BGState((START, tuple(opp)), 0, "move", (3, 1))
    best = rank_priority_plays(s)[0][0]
    assert sorted(best) == [(6, 5), (8, 5)]
    after = BG.apply(s, best)
    assert after.boards[1][25] == 1  # the blot is on the bar


def test_backgammon_baseline_cube_never_doubles_and_takes_by_pips() -> None:
    s = BGState((START, START), 0, "roll")
    assert decide_baseline("backgammon", s).move == {"action": "roll"}
    even = BGState((START, START), 0, "take")
    assert decide_baseline("backgammon", even).move == {"action": "take"}
    far_behind = list(START)
    far_behind[6], far_behind[24] = 3, 4  # 36 pips more for the taker (seat 1)
    behind = BGState((START, tuple(far_behind)), 0, "take")
    assert decide_baseline("backgammon", behind).move == {"action": "drop"}


def _swap_colours(s: bm.BoomState) -> bm.BoomState:
    return bm.make_state(s.s1, s.s0, s.bombs, s.d1, s.d0, s.actions, "", None)


def _mirror(s: bm.BoomState) -> bm.BoomState:
    m = bm.GEOMETRY.mirror
    return bm.make_state(m(s.s0), m(s.s1), m(s.bombs), s.d0, s.d1, s.actions, "", None)


def test_line_count_eval_is_symmetric() -> None:
    for s in _decisions("boom", 3, 4):
        assert isinstance(s, bm.BoomState)
        v = boom_line_count_eval(s)
        assert boom_line_count_eval(_mirror(s)) == v
        # The same board with the colours swapped, the same seat to move: the other side's.
        assert boom_line_count_eval(_swap_colours(s)) == -v


def test_line_count_eval_sign_in_misere() -> None:
    # Seat 0 (to move) has three in a row with an open end, seat 1 three scattered stones:
    # the three is a liability in BOOM, so the side to move stands worse.
    s = BOOM.parse_position("152737")
    assert bm.seat_to_act(s) == 0
    assert boom_line_count_eval(s) < 0
    # The same with the roles swapped: seat 1 holds the three, seat 0 to move stands better.
    assert boom_line_count_eval(BOOM.parse_position("517273")) > 0
    assert boom_line_count_eval(BOOM.initial()) == 0
