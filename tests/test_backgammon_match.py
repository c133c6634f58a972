"""Backgammon match play in the engine: scores, the Crawford game, the match's end.

Rules checked by hand on built positions (a game won, a drop, a gammon past the target), and
as properties of whole matches played with random legal moves and random dice: the score is
the sum of the games' points, the Crawford game is exactly the game after a side first
reaches N-1 and nobody may double in it, the match ends at the first game that takes a side
to N or more, with that side's score as its points.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tablas.engine.core import Outcome
from tablas.engine.errors import InvalidInputError
from tablas.engine.games import get_game
from tablas.engine.games.backgammon import START, BGState, Match, single_game

G = get_game("backgammon")


def side(points: dict[int, int]) -> tuple[int, ...]:
    b = [0] * 26
    for p, n in points.items():
        b[p] = n
    b[0] = 15 - sum(b[1:])
    return tuple(b)


def about_to_win(match: Match, cube: int = 1, gammon: bool = False) -> BGState:
    """Seat 0 to play 6-5 with its last checker on its 1-point: any play bears it off. Seat
    1 has borne off one checker unless ``gammon``."""
    opp = side({6: 15}) if gammon else side({6: 14})
    return BGState((side({1: 1}), opp), 0, "move", (6, 5), cube, None, True, match=match)


def rolled(state: BGState, rng: random.Random) -> BGState:
    while G.is_chance(state):
        outcomes = G.chance_outcomes(state)
        state = G.apply_chance(state, rng.choices([o for o, _ in outcomes],
                                                  [p for _, p in outcomes])[0])
    return state


def test_options_match_to_is_an_integer_from_1_to_25() -> None:
    for n in (1, 7, 25):
        s = G.initial({"match_to": n})
        assert s.match == Match(n)
        assert G.state_to_json(s)["match_to"] == n
    for bad in (0, 26, -3, True, "5", 5.0, [5]):
        with pytest.raises(InvalidInputError, match="match_to"):
            G.initial({"match_to": bad})
    # null is money play, as no option at all
    assert G.initial({"match_to": None}).match is None
    assert G.initial({"match_to": 3, "cube": False}).cube_enabled is False


def test_money_state_json_carries_the_match_fields_empty() -> None:
    j = G.state_to_json(G.initial({}))
    assert (j["match_to"], j["score"], j["crawford"], j["last_game"]) == (None, [0, 0], False,
                                                                          None)


def test_a_game_won_short_of_the_target_starts_the_next_game() -> None:
    s = G.apply(about_to_win(Match(5, (1, 2), 3), cube=2), ((1, 0),))
    assert G.outcome(s) is None
    assert s.phase == "opening" and s.boards == (START, START)
    assert (s.cube, s.owner) == (1, None)
    assert s.match == Match(5, (3, 2), 4, last_game=Outcome(0, 2, "single"))
    j = G.state_to_json(s)
    assert j["score"] == [3, 2] and j["last_game"] == {"winner": 0, "points": 2,
                                                        "reason": "single"}


def test_a_gammon_past_the_target_ends_the_match_with_the_winners_score() -> None:
    s = G.apply(about_to_win(Match(5, (3, 0), 2), cube=2, gammon=True), ((1, 0),))
    assert G.outcome(s) == Outcome(0, 7, "match")
    assert s.match is not None and s.match.score == (7, 0)
    assert s.match.last_game == Outcome(0, 4, "gammon")
    assert G.state_to_json(s)["last_game"]["reason"] == "gammon"


def test_a_drop_ends_the_game_not_the_match() -> None:
    s = BGState((START, START), 1, "take", None, 2, 0, True, match=Match(7, (0, 0), 2))
    after = G.apply(s, "drop")
    assert G.outcome(after) is None and after.phase == "opening"
    assert after.match is not None and after.match.score == (0, 2)


def test_the_game_after_reaching_n_minus_1_is_crawford_and_nobody_doubles() -> None:
    s = G.apply(about_to_win(Match(5, (3, 1), 4)), ((1, 0),))
    assert s.match is not None and s.match.crawford and s.match.score == (4, 1)
    assert G.state_to_json(s)["crawford"] is True
    rng = random.Random(3)
    s = rolled(s, rng)
    for _ in range(40):  # every decision of the game: plays only, never a cube action
        assert s.phase == "move", s
        s = rolled(G.apply(s, rng.choice(G.legal_moves(s))), rng)
    # After the Crawford game, doubling is back.
    post = G.apply(about_to_win(Match(5, (1, 4), 6, crawford=True)), ((1, 0),))
    assert post.match is not None and not post.match.crawford and post.match.post_crawford
    s = rolled(post, rng)
    s = G.apply(s, G.legal_moves(s)[0])
    assert s.phase == "roll" and "double" in G.legal_moves(s)


def test_a_match_to_1_has_no_crawford_game() -> None:
    s = G.initial({"match_to": 1})
    assert s.match is not None and not s.match.crawford
    won = G.apply(about_to_win(s.match), ((1, 0),))
    assert G.outcome(won) == Outcome(0, 1, "match")


def test_a_side_reaching_n_minus_1_in_the_crawford_game_does_not_make_another() -> None:
    s = G.apply(about_to_win(Match(3, (1, 2), 3, crawford=True)), ((1, 0),))
    assert s.match is not None and s.match.score == (2, 2)
    assert not s.match.crawford and s.match.post_crawford


def test_stake_is_the_cube_in_money_play_and_the_match_in_a_match() -> None:
    s = BGState((START, START), 0, "roll", None, 4, 0, True)
    assert G.stake(s) == 4
    assert G.stake(BGState((START, START), 0, "roll", None, 4, 0, True,
                           match=Match(9, (2, 5), 3))) == 9


def test_single_game_drops_the_match_and_keeps_the_rest() -> None:
    s = about_to_win(Match(5, (3, 1), 4), cube=2)
    one = single_game(s)
    assert one.match is None and one.boards == s.boards and one.cube == 2
    assert G.outcome(G.apply(one, ((1, 0),))) == Outcome(0, 2, "single")


def play_match(n: int, seed: int) -> tuple[BGState, list[tuple[Match, Outcome]]]:
    """A match to ``n`` with random legal moves and dice; each game's match (at its start)
    and result."""
    rng = random.Random(seed)
    s = rolled(G.initial({"match_to": n}), rng)
    games: list[tuple[Match, Outcome]] = []
    while G.outcome(s) is None:
        assert s.match is not None
        before = s.match
        moves = G.legal_moves(s)
        if before.crawford:
            assert "double" not in moves
        # Double and drop more often than at random, so that cubes and drops happen.
        m: Any = "double" if "double" in moves and rng.random() < 0.3 else rng.choice(moves)
        s = G.apply(s, m)
        assert s.match is not None
        if s.match.game != before.game or G.outcome(s) is not None:
            last = s.match.last_game
            assert last is not None
            games.append((before, last))
        s = rolled(s, rng)
    return s, games


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 9), seed=st.integers(0, 10**6))
def test_random_matches_keep_score_and_crawford(n: int, seed: int) -> None:
    end, games = play_match(n, seed)
    score = [0, 0]
    crawford_seen = False
    for i, (m, result) in enumerate(games):
        assert m.game == i + 1
        assert list(m.score) == score, "each game starts from the sum of the ones before"
        assert max(score) < n
        first_at_n_minus_1 = n > 1 and n - 1 in score and not crawford_seen
        assert m.crawford == first_at_n_minus_1
        crawford_seen = crawford_seen or m.crawford
        assert m.post_crawford == (crawford_seen and not m.crawford)
        assert result.winner is not None and result.points >= 1
        score[result.winner] += result.points
    assert max(score) >= n
    outcome = G.outcome(end)
    assert outcome is not None and outcome.reason == "match"
    assert outcome.winner == score.index(max(score)) and outcome.points == max(score)
    assert end.match is not None and list(end.match.score) == score


def test_money_play_is_unchanged_by_matches() -> None:
    """The same seeded game without ``match_to``: the first game's moves and result are the
    same as in a match's first game (a money game's end is the end)."""
    rng = random.Random(11)
    money = rolled(G.initial({}), rng)
    while G.outcome(money) is None:
        money = rolled(G.apply(money, rng.choice(G.legal_moves(money))), rng)
    rng = random.Random(11)
    match = rolled(G.initial({"match_to": 25}), rng)
    while match.match is not None and match.match.game == 1:
        match = rolled(G.apply(match, rng.choice(G.legal_moves(match))), rng)
    assert match.match is not None and match.match.last_game == G.outcome(money)
