"""The match equity table and the bots' match cube decisions.

The table's numbers are compared with the file GNU Backgammon ships (when installed), and
held to what any MET must be: symmetric (my chance plus yours is 1), monotone (closer to the
target is better), 50% at equal scores. Cube decisions are checked against known facts of
cube theory and against take points worked out in the test from the table alone. Checker
play by match equity: double match point counts gammons for nothing, a gammon that wins the
match is worth the match, far from the end of a long match plays are valued as at money.
"""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tablas.engine.core import Outcome
from tablas.engine.games.backgammon import START, BGState, Match
from tablas.engine.search import match_equity as me
from tablas.engine.search.backgammon_bot import (
    cube_verdict,
    match_search,
    position_probabilities,
    rank_plays,
)
from tablas.engine.search.cubeful import best_action
from tablas.engine.search.met_kazaross_xg2 import POST_CRAWFORD, PRE_CRAWFORD

XML = Path("/usr/share/gnubg/met/Kazaross-XG2.xml")
N = len(PRE_CRAWFORD)


@pytest.mark.skipif(not XML.exists(), reason="gnubg's MET files are not installed")
def test_the_table_is_gnubgs_kazaross_xg2() -> None:
    root = ET.parse(XML).getroot()
    rows = root.find("pre-crawford-table")
    post = root.find("post-crawford-table")
    assert rows is not None and post is not None
    pre = [[float(e.text or "") for e in row.findall("me")] for row in rows.findall("row")]
    assert [list(r) for r in PRE_CRAWFORD] == pre
    row = post.find("row")
    assert row is not None
    assert list(POST_CRAWFORD) == [float(e.text or "") for e in row.findall("me")]
    # and a few entries as published, by hand
    assert PRE_CRAWFORD[1][3] == 0.66870  # 2-away vs 4-away
    assert PRE_CRAWFORD[4][4] == 0.5
    assert POST_CRAWFORD[1] == 0.48803  # 2-away trailer, post-Crawford


def test_shape_and_equal_scores() -> None:
    assert len(PRE_CRAWFORD) == 25 and all(len(r) == 25 for r in PRE_CRAWFORD)
    assert len(POST_CRAWFORD) == 25
    for i in range(N):
        assert PRE_CRAWFORD[i][i] == 0.5


@given(st.integers(1, N), st.integers(1, N), st.booleans())
def test_symmetry(a: int, b: int, post: bool) -> None:
    if post and 1 not in (a, b):
        post = False
    assert me.met(a, b, post) + me.met(b, a, post) == pytest.approx(1.0, abs=2e-5)


@given(st.integers(1, N - 1), st.integers(1, N))
def test_closer_to_the_target_is_better(a: int, b: int) -> None:
    assert me.met(a, b) > me.met(a + 1, b)
    assert me.met(b, a) < me.met(b, a + 1)


def test_post_crawford_trailer_is_monotone_and_even_odd_pairs() -> None:
    for j in range(1, N - 1):
        assert POST_CRAWFORD[j] >= POST_CRAWFORD[j + 1]
    # The trailer doubles at once post-Crawford, so an odd away plays much like the even
    # one below it: 3-away is worth what 2-away is in the Crawford game.
    assert POST_CRAWFORD[2] == pytest.approx(PRE_CRAWFORD[1][0], abs=1e-4)
    assert me.met(1, 1, True) == 0.5 and me.met(0, 3) == 1.0 and me.met(3, 0) == 0.0


def test_after_game_knows_the_next_game_is_crawford() -> None:
    m = Match(5, (2, 3), 3)
    # Seat 1 (at 3) wins 1 and is 1 away: the next game is the Crawford game (pre table).
    assert me.after_game(m, 0, -1) == pytest.approx(PRE_CRAWFORD[2][0])
    post = Match(5, (2, 4), 5, post_crawford=True)
    assert me.after_game(post, 0, 1) == pytest.approx(POST_CRAWFORD[1])


def probs(p: float) -> list[float]:
    return [p, 0.0, 0.0, 0.0, 0.0]


def roll_state(match: Match, cube: int = 1, owner: int | None = None, turn: int = 0) -> BGState:
    return BGState((START, START), turn, "roll", None, cube, owner, True, match=match)


def take_state(match: Match, cube: int = 1, turn: int = 0) -> BGState:
    return BGState((START, START), turn, "take", None, cube, None, True, match=match)


@pytest.mark.parametrize("p", [0.3, 0.5, 0.7, 0.9, 0.99])
def test_double_match_point_nobody_doubles(p: float) -> None:
    for m in (Match(1), Match(7, (6, 6), 9, post_crawford=True)):
        assert best_action(me.cube_values(roll_state(m), probs(p))) == "roll"


def test_the_bots_never_double_at_one_away_one_away() -> None:
    assert cube_verdict(roll_state(Match(1)), "medium").action == "roll"


@pytest.mark.parametrize("trailer_away", [2, 4, 6])
def test_post_crawford_the_trailer_doubles_at_once(trailer_away: int) -> None:
    m = Match(7, (7 - trailer_away, 6), 5, post_crawford=True)
    assert best_action(me.cube_values(roll_state(m), probs(0.5))) == "double"
    assert cube_verdict(roll_state(m), "medium").action == "double"
    # and the leader, needing one point, never does
    assert best_action(me.cube_values(roll_state(m, turn=1), probs(0.8))) == "roll"


def take_point(away: int, other: int, cube: int = 1) -> float:
    """The taker's minimum winning chance, gammonless and dead cube, from the MET alone: the
    taker (``away``) doubled to ``2 cube`` by the doubler (``other``)."""
    drop = me.met(away, other - cube)
    win2, lose2 = me.met(away - 2 * cube, other), me.met(away, other - 2 * cube)
    return (drop - lose2) / (win2 - lose2)


@pytest.mark.parametrize("taker,doubler", [(4, 4), (3, 5), (5, 3), (7, 7), (2, 5), (9, 4)])
def test_take_points_from_the_table(taker: int, doubler: int) -> None:
    n = 11
    m = Match(n, (n - doubler, n - taker), 1)  # seat 0 doubles, seat 1 takes
    tp = take_point(taker, doubler)
    assert 0.0 < tp < 0.5
    # The taker's winning chance q = 1 - p(doubler).
    take = take_state(m)
    assert best_action(me.cube_values(take, probs(1 - (tp + 0.01)))) == "take"
    assert best_action(me.cube_values(take, probs(1 - (tp - 0.01)))) == "drop"


def test_take_point_at_2_away_2_away_is_the_crawford_equity() -> None:
    # Doubled at 2-away/2-away the game decides the match: taking risks nothing more than
    # the match, dropping leaves the taker 2-away against 1-away in the Crawford game. So
    # the take point is exactly that score's winning chance (about 32%, a classic figure).
    assert take_point(2, 2) == pytest.approx(PRE_CRAWFORD[1][0])
    assert 0.30 < take_point(2, 2) < 0.34


def test_money_like_match_scores_double_in_the_money_window() -> None:
    """Far from the end of a long match the cube behaves about as at money: no double at a
    small edge, double at a strong one, too good when gammons are many."""
    m = Match(25, (0, 0), 1)
    assert best_action(me.cube_values(roll_state(m), probs(0.55))) == "roll"
    assert best_action(me.cube_values(roll_state(m), probs(0.73))) == "double"
    assert best_action(me.cube_values(roll_state(m), [0.95, 0.7, 0.1, 0.0, 0.0])) == "roll"


def test_no_double_when_the_cube_already_wins_the_match() -> None:
    # Seat 0 is 2 away with the cube on 2 (its own): doubling can only add to its losses.
    m = Match(7, (5, 0), 3)
    s = roll_state(m, cube=2, owner=0)
    assert best_action(me.cube_values(s, probs(0.8))) == "roll"


# --- checker play by match equity (the levels with the learned evaluation) -----------------


def random_positions(n: int, seed: int = 5) -> list[BGState]:
    """Positions of seeded random money games where the mover has several plays."""
    from tablas.engine.games import get_game

    g = get_game("backgammon")
    rng = random.Random(seed)
    out: list[BGState] = []
    while len(out) < n:
        s = g.initial({})
        while g.outcome(s) is None and len(out) < n:
            while g.is_chance(s):
                s = g.apply_chance(s, rng.choice([o for o, _ in g.chance_outcomes(s)]))
            if s.phase == "move" and len(g.legal_moves(s)) > 4 and rng.random() < 0.15:
                out.append(s)
            move = rng.choice(g.legal_moves(s))
            s = g.apply(s, "roll" if move == "double" else move)
            while g.is_chance(s):
                s = g.apply_chance(s, rng.choice([o for o, _ in g.chance_outcomes(s)]))
    return out


def in_match(s: BGState, m: Match) -> BGState:
    return BGState(s.boards, s.turn, s.phase, s.dice, s.cube, s.owner, True, match=m)


def test_at_double_match_point_a_position_is_worth_its_winning_chance() -> None:
    """1-away/1-away, gammons count for nothing: a leaf's value is 2 P(win) - 1 for seat 0."""
    search = match_search(Match(1), 1)
    for s in random_positions(6):
        after = BGState(s.boards, 1 - s.turn, "dice", None, 1, None, True)
        probs = position_probabilities(after.boards[after.turn], after.boards[1 - after.turn])
        win0 = probs[0] if after.turn == 0 else 1 - probs[0]
        assert search.evaluate(after) == pytest.approx(2 * win0 - 1, abs=1e-9)


def test_a_gammon_that_wins_the_match_is_worth_the_match() -> None:
    m = Match(5, (3, 1), 2)  # seat 0 is 2 away, seat 1 4 away
    search = match_search(m, 1)
    assert search.terminal(Outcome(0, 2, "gammon")) == 1.0
    assert search.terminal(Outcome(0, 1, "single")) == pytest.approx(2 * PRE_CRAWFORD[0][3] - 1)
    assert search.terminal(Outcome(1, 3, "backgammon")) == pytest.approx(
        2 * PRE_CRAWFORD[1][0] - 1)  # seat 1 at 4: Crawford next, seat 0 still 2 away


def test_the_two_double_match_points_rank_plays_alike() -> None:
    from tablas.engine.games import get_game

    g = get_game("backgammon")
    for s in random_positions(2, seed=9):
        a, _, _ = rank_plays(g, in_match(s, Match(1)), "hard", 5000, random.Random(0))
        b, _, _ = rank_plays(g, in_match(s, Match(7, (6, 6), 9, post_crawford=True)), "hard",
                             5000, random.Random(0))
        assert a == b


def test_far_from_the_end_match_play_is_close_to_money_play() -> None:
    from tablas.engine.games import get_game

    g = get_game("backgammon")
    for s in random_positions(3, seed=2):
        money, _, _ = rank_plays(g, s, "hard", 5000, random.Random(0))
        match, _, _ = rank_plays(g, in_match(s, Match(25)), "hard", 5000, random.Random(0))
        assert match[0][1] == pytest.approx(money[0][1], abs=0.1)
