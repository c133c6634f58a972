"""The review of finished games (engine/review.py): verdicts against independent values.

Tic-tac-toe exhaustively against a textbook minimax written here; Grundy against the
literature's P-positions and a mex computed here; Connect-4 against Pons' published scores;
BOOM and backgammon against their own engine (the best move replayed is ``best``, a bad move
is worse); and the shape of every entry of a whole random game of each game."""

from __future__ import annotations

import dataclasses
import pickle
import random
from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tablas.engine.core import JSON, Game
from tablas.engine.errors import IllegalMoveError, InvalidInputError, UnknownGameError
from tablas.engine.games import GAME_IDS, get_game
from tablas.engine.games.backgammon import BGState
from tablas.engine.games.tictactoe import TTTState
from tablas.engine.review import VERDICTS, MoveReview, review_game
from tablas.engine.search.backgammon_bot import EVALUATION, cube_verdict, cubeless, skip_cube
from tablas.engine.search.bots import decide
from tablas.engine.search.profiles import profile
from tablas.engine.search.reviewers import SearchReviewer, Thresholds
from tablas.engine.search.scores import PROVEN_MIN, WIN

TTT = get_game("tictactoe")
RANK = {"loss": 0, "draw": 1, "win": 2}
FLIP = {"win": "loss", "loss": "win", "draw": "draw"}


# --- helpers ------------------------------------------------------------------------------


def actions_of(game: Game[Any, Any], state: Any, moves: list[Any]) -> list[tuple[JSON, list[Any]]]:
    """``moves`` from ``state`` as the server stores them (no dice)."""
    out = []
    for m in moves:
        out.append((game.move_to_json(m), []))
        state = game.apply(state, m)
    return out


def random_game(game_id: str, options: JSON, seed: int, max_actions: int | None = None
                ) -> tuple[list[list[int]], list[tuple[JSON, list[list[int]]]]]:
    """A game of random actions and dice, as the server stores it: the opening rolls (refused
    ties left out, as the server re-rolls them) and (move, rolls) pairs. Backgammon's cube
    is turned now and then, and always taken, so that the game goes on with dice."""
    game = get_game(game_id)
    rng = random.Random(seed)
    state = game.initial(options)

    def roll() -> list[list[int]]:
        nonlocal state
        rolls = []
        while game.is_chance(state):
            outcome = rng.choice([o for o, _ in game.chance_outcomes(state)])
            state = game.apply_chance(state, outcome)
            rolls.append(list(outcome))
        return rolls

    opening = roll()
    actions = []
    while game.outcome(state) is None and (max_actions is None or len(actions) < max_actions):
        legal = game.legal_moves(state)
        m = rng.choice(legal)
        if "drop" in legal:
            m = "take"
        elif "double" in legal:
            m = "double" if rng.random() < 0.15 else "roll"
        state = game.apply(state, m)
        actions.append((game.move_to_json(m), roll()))
    return opening, actions


def check_well_formed(game_id: str, reviews: list[MoveReview], n: int) -> None:
    """One entry per action, in order, every field of the contract's type and range."""
    assert [r.ply for r in reviews] == list(range(n))
    scale = profile(game_id).score
    for r in reviews:
        assert r.seat in (0, 1)
        assert isinstance(r.move_text, str) and r.move_text
        assert r.best_move_text is None or isinstance(r.best_move_text, str)
        assert r.loss >= 0
        assert r.verdict in VERDICTS
        assert r.proven_before in (None, "win", "draw", "loss")
        assert r.proven_after in (None, "win", "draw", "loss")
        if r.proven_before is not None and r.proven_after is not None:
            assert RANK[r.proven_after] <= RANK[r.proven_before]  # nobody gains by moving
            assert (r.verdict == "blunder") == (RANK[r.proven_after] < RANK[r.proven_before])
        if r.verdict == "best":
            assert r.loss == 0
        assert r.score_after is None or abs(r.score_after) <= scale.cap
        j = r.to_json()
        assert set(j) == {"ply", "seat", "move_text", "best_move_text", "loss", "verdict",
                          "proven_before", "proven_after", "score_after", "move", "best_move",
                          "state_before", "forced"}
        # A forced action is no decision: nothing to name instead, nothing lost.
        assert not j["forced"] or (j["best_move_text"] is None and j["loss"] == 0)
        assert isinstance(j["state_before"], dict) and "notation" in j["state_before"]
        assert isinstance(j["move"], dict)
        assert (j["best_move"] is None) == (j["best_move_text"] is None)


# --- thresholds ---------------------------------------------------------------------------


def test_thresholds_order_the_verdicts_by_loss() -> None:
    th = Thresholds(inaccuracy=0.04, mistake=0.08, blunder=0.16)
    got = [th.of_loss(x) for x in (0.0, 0.01, 0.04, 0.07, 0.08, 0.15, 0.16, 2.0)]
    assert got == ["best", "good", "inaccuracy", "inaccuracy", "mistake", "mistake",
                   "blunder", "blunder"]
    assert th.of_proofs("win", "draw", 0) == "blunder"
    assert th.of_proofs("draw", "loss", 0) == "blunder"
    assert th.of_proofs("win", "win", 0) == "best"
    assert th.of_proofs("win", "win", 2) == "good"
    assert th.of_proofs("win", "win", 4) == "inaccuracy"


# --- tic-tac-toe: exhaustive against a textbook minimax ----------------------------------


_TEXTBOOK: dict[tuple[str, Any], tuple[str, int]] = {}


def pref(rd: tuple[str, int]) -> tuple[int, int]:
    """Best play's order: a better result first, then a quicker win or a slower loss."""
    result, d = rd
    return RANK[result], -d if result == "win" else d


def textbook(game: Game[Any, Any], state: Any) -> tuple[str, int]:
    """(result for the side to move, plies to the end) under best play, by the textbook
    recursion over every move (no pruning, no solver), memoised on the game's key."""
    k = (game.id, game.key(state))
    if k not in _TEXTBOOK:
        _TEXTBOOK[k] = max((after_move(game, state, m) for m in game.legal_moves(state)),
                           key=pref)
    return _TEXTBOOK[k]


def after_move(game: Game[Any, Any], state: Any, m: Any) -> tuple[str, int]:
    """(result for the mover, plies to the end) once ``m`` is played, best play after."""
    seat = game.to_move(state)
    child = game.apply(state, m)
    out = game.outcome(child)
    if out is not None:
        return ("draw" if out.winner is None else "win" if out.winner == seat else "loss"), 1
    result, d = textbook(game, child)
    return FLIP[result], d + 1


def expected_verdict(game: Game[Any, Any], state: Any, m: Any) -> tuple[str, float]:
    """The documented verdict of an exact game, from the textbook values: a worse result is a
    blunder (1000 points a step), the same one graded by the plies given away."""
    before, d_best = textbook(game, state)
    after, d = after_move(game, state, m)
    if RANK[after] < RANK[before]:
        return "blunder", 1000.0 * (RANK[before] - RANK[after])
    plies = {"win": d - d_best, "loss": d_best - d, "draw": 0}[after]
    return ("best" if plies == 0 else "good" if plies <= 2 else "inaccuracy"), float(plies)


def reachable_ttt() -> list[TTTState]:
    out, todo, seen = [], [TTT.initial()], set()
    while todo:
        s = todo.pop()
        if (s.xs, s.os) in seen:
            continue
        seen.add((s.xs, s.os))
        if TTT.outcome(s) is None:
            out.append(s)
            todo.extend(TTT.apply(s, m) for m in TTT.legal_moves(s))
    return out


def test_tictactoe_every_move_of_every_position_against_textbook_minimax() -> None:
    reviewer = profile("tictactoe").review
    states = reachable_ttt()
    assert len(states) == 4520
    seen = set()
    for s in states:
        for m in TTT.legal_moves(s):
            j = reviewer.judge(TTT, s, m, 500.0)
            want_verdict, want_loss = expected_verdict(TTT, s, m)
            after, _ = after_move(TTT, s, m)
            assert j.proven_before == textbook(TTT, s)[0], (s, m)
            assert j.proven_after == after, (s, m)
            assert (j.verdict, j.loss) == (want_verdict, want_loss), (s, m)
            assert j.score_after == {"win": 1000, "draw": 0, "loss": -1000}[after]
            if j.verdict != "best":  # the engine's best move is one the textbook agrees with
                assert expected_verdict(TTT, s, j.best_move)[0] == "best", (s, m)
            else:
                assert j.best_move == m
            seen.add(j.verdict)
    assert seen == {"best", "good", "inaccuracy", "blunder"}  # every branch taken


@given(st.randoms(use_true_random=False))
def test_tictactoe_review_of_a_random_game_is_the_textbook_verdict_per_move(
        rng: random.Random) -> None:
    s = TTT.initial()
    moves = []
    while TTT.outcome(s) is None:
        m = rng.choice(TTT.legal_moves(s))
        moves.append(m)
        s = TTT.apply(s, m)
    reviews = review_game("tictactoe", {}, [], actions_of(TTT, TTT.initial(), moves))
    check_well_formed("tictactoe", reviews, len(moves))
    s = TTT.initial()
    for ply, (m, r) in enumerate(zip(moves, reviews, strict=True)):
        seat = ply % 2
        verdict, loss = expected_verdict(TTT, s, m)
        forced = len(TTT.legal_moves(s)) == 1
        assert (r.seat, r.move_text) == (seat, TTT.move_text(s, m))
        assert r.verdict == ("best" if forced else verdict)
        assert r.loss == (0.0 if forced else loss)
        assert (r.best_move_text is None) == forced
        after, _ = after_move(TTT, s, m)
        mover = {"win": 1000, "draw": 0, "loss": -1000}[after]
        assert r.score_after == (mover if seat == 0 else -mover)  # from seat 0's side
        s = TTT.apply(s, m)


# --- every game: the shape of a whole random game's review --------------------------------


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_a_whole_random_game_gets_one_well_formed_entry_per_action(game_id: str) -> None:
    options = {"heap": 15} if game_id == "grundy" else {}
    opening, actions = random_game(game_id, options, seed=11, max_actions=30)
    reviews = review_game(game_id, options, opening, actions, seconds_per_move=0.05)
    check_well_formed(game_id, reviews, len(actions))
    assert len(actions) >= 5
    assert pickle.loads(pickle.dumps(reviews)) == reviews  # it crosses from a worker process
    game = get_game(game_id)
    state = game.initial(options)
    for roll in opening:
        state = game.apply_chance(state, tuple(roll))
    for (move, rolls), r in zip(actions, reviews, strict=True):
        m = game.move_from_json(state, move)
        assert (r.seat, r.move_text) == (game.to_move(state), game.move_text(state, m))
        state = game.apply(state, m)
        for roll in rolls:
            state = game.apply_chance(state, tuple(roll))


# --- Grundy: the literature's P-positions, a mex computed here, the textbook distances ------

GRUNDY = get_game("grundy")
# Single heaps lost for the player to move (Grundy value 0) up to 60: Berlekamp, Conway and
# Guy, Winning Ways vol. 1 ch. 4; A. Flammenkamp's table of Grundy's game (OEIS A002188).
GRUNDY_P = {1, 2, 4, 7, 10, 20, 23, 26, 50, 53}


def mex_value(heaps: tuple[int, ...]) -> int:
    """The Grundy value of a position, by the mex over splits, written here from scratch."""
    value = 0
    for h in heaps:
        value ^= _heap_value(h)
    return value


@cache
def _heap_value(n: int) -> int:
    seen = {_heap_value(a) ^ _heap_value(n - a) for a in range(1, n) if 2 * a < n}
    return next(g for g in range(n + 1) if g not in seen)


def split(state: Any, heap: int, small: int) -> Any:
    """The listed move that splits the first heap of size ``heap`` into ``heap - small``
    and ``small``."""
    i = state.heaps.index(heap)
    return GRUNDY.check_move(state, (i, heap - small, small))


def test_grundy_literature_p_positions_are_proven_losses_for_the_mover() -> None:
    assert {n for n in range(1, 61) if mex_value((n,)) == 0} == GRUNDY_P  # the test's own mex
    for n in range(3, 54):
        s = GRUNDY.initial({"heap": n})
        [r] = review_game("grundy", {"heap": n}, [], actions_of(GRUNDY, s, [split(s, n, 1)]))
        assert r.proven_before == ("loss" if n in GRUNDY_P else "win"), n
        after = "win" if mex_value((n - 1,)) == 0 else "loss"  # n-1 and 1: 1 has value 0
        assert r.proven_after == after, n
        assert (r.verdict == "blunder") == (r.proven_before == "win" and after == "loss"), n


def test_grundy_verdicts_agree_with_the_values_and_the_textbook_distances() -> None:
    rng = random.Random(7)
    for n in (8, 11, 13, 16, 17, 19, 21):
        s = GRUNDY.initial({"heap": n})
        moves = []
        while GRUNDY.outcome(s) is None:
            m = rng.choice(GRUNDY.legal_moves(s))
            moves.append(m)
            s = GRUNDY.apply(s, m)
        s = GRUNDY.initial({"heap": n})
        reviews = review_game("grundy", {"heap": n}, [], actions_of(GRUNDY, s, moves))
        check_well_formed("grundy", reviews, len(moves))
        for m, r in zip(moves, reviews, strict=True):
            child = GRUNDY.apply(s, m)
            assert r.proven_before == ("win" if mex_value(s.heaps) else "loss")
            assert r.proven_after == ("loss" if mex_value(child.heaps) else "win")
            if len(GRUNDY.legal_moves(s)) > 1:
                assert (r.verdict, r.loss) == expected_verdict(GRUNDY, s, m), (s, m)
            s = child


def test_grundy_heaps_too_large_to_solve_still_get_exact_results() -> None:
    # 70 is no P-position (the next after 53 is 270), so the mover wins; 50 and 20 are both
    # P-positions, so splitting 70 into them wins, and into 69 and 1 (69 is no P-position)
    # gives the win away.
    s = GRUNDY.initial({"heap": 70})
    good, bad = split(s, 70, 20), split(s, 70, 1)
    [r_good] = review_game("grundy", {"heap": 70}, [], actions_of(GRUNDY, s, [good]),
                           seconds_per_move=0.05)
    [r_bad] = review_game("grundy", {"heap": 70}, [], actions_of(GRUNDY, s, [bad]),
                          seconds_per_move=0.05)
    assert (r_good.proven_before, r_good.proven_after) == ("win", "win")
    assert r_good.verdict in ("best", "good", "inaccuracy")
    assert (r_bad.proven_before, r_bad.proven_after, r_bad.verdict) == ("win", "loss", "blunder")


# --- Connect-4: Pons' published scores, exact from 12 stones on ---------------------------

C4 = get_game("connect4")
# Positions of Pascal Pons' benchmark set Test_L2_R1 ("Solving Connect 4", Part 2) with the
# score it publishes for the side to move (positive: a win; 0: a draw; negative: a loss).
PONS_WIN = ("47724652442416755146", 8)
PONS_LOSS = ("1233722555341451114725221333", -1)


def c4_actions(moves: str) -> tuple[Any, list[tuple[JSON, list[Any]]]]:
    s = C4.initial()
    out = []
    for ch in moves:
        m = C4.parse_move(s, ch)
        out.append((C4.move_to_json(m), []))
        s = C4.apply(s, m)
    return s, out


def four_after(moves: str) -> bool:
    """Whether the last stone of ``moves`` (1-based columns) makes four in a row: a plain
    grid walk, independent of the engine's bitboards."""
    grid: dict[tuple[int, int], int] = {}
    heights = [0] * 7
    for i, ch in enumerate(moves):
        c = int(ch) - 1
        grid[(c, heights[c])] = i % 2
        heights[c] += 1
    c = int(moves[-1]) - 1
    r = heights[c] - 1
    who = (len(moves) - 1) % 2
    for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        n = 1
        for sign in (1, -1):
            k = 1
            while grid.get((c + sign * k * dc, r + sign * k * dr)) == who:
                n += 1
                k += 1
        if n >= 4:
            return True
    return False


def test_connect4_known_win_is_proven_and_a_move_allowing_four_is_a_blunder() -> None:
    moves, score = PONS_WIN
    assert score > 0
    state, actions = c4_actions(moves)
    reviewer = profile("connect4").review
    blunders = 0
    for col in C4.legal_moves(state):
        text = C4.move_text(state, col)
        gives_four = any(four_after(moves + text + str(reply + 1))
                         for reply in C4.legal_moves(C4.apply(state, col)))
        j = reviewer.judge(C4, state, col, 20.0)
        assert j.proven_before == "win"
        if gives_four:  # the opponent completes four at once: the win is given away
            assert (j.proven_after, j.verdict, j.loss) == ("loss", "blunder", 2000), text
            blunders += 1
        if j.proven_after == "win":
            assert j.verdict in ("best", "good", "inaccuracy"), text
        if j.best_move == col:
            assert (j.verdict, j.loss) == ("best", 0.0)
    assert blunders == 5
    # The whole game: every move from the one laying the 12th stone on is judged exactly,
    # whatever the budget.
    reviews = review_game("connect4", {}, [], [*actions, (C4.move_to_json(0), [])],
                          seconds_per_move=0.02)
    check_well_formed("connect4", reviews, len(actions) + 1)
    assert (reviews[-1].proven_before, reviews[-1].verdict) == ("win", "blunder")
    for r in reviews:
        if r.ply >= 11:
            assert r.proven_before is not None and r.proven_after is not None, r


def test_connect4_known_loss_has_no_blunder_left() -> None:
    moves, score = PONS_LOSS
    assert score < 0
    state, _ = c4_actions(moves)
    for col in C4.legal_moves(state):
        j = profile("connect4").review.judge(C4, state, col, 20.0)
        assert (j.proven_before, j.proven_after) == ("loss", "loss")
        assert j.verdict != "blunder"


def test_connect4_best_move_replayed_is_best() -> None:
    moves, _ = PONS_WIN
    state, _ = c4_actions(moves)
    reviewer = profile("connect4").review
    first = reviewer.judge(C4, state, 0, 20.0)
    again = reviewer.judge(C4, state, first.best_move, 20.0)
    assert (again.verdict, again.loss, again.best_move) == ("best", 0.0, first.best_move)
    assert again.proven_after == "win"


# --- BOOM: the engine's own choice is best, a self-made four a blunder ---------------------

BOOM = get_game("boom")
# From a random game: every drop but the boom makes four of the mover's own and loses at once;
# the boom loses too, two plies later (3 plies from here against 1).
BOOM_ONLY_BOOM = "7335525261714671372326674565522237633574"
# Seat 0 holds columns 1-3 of the bottom row: a drop in column 4 is a four of its own.
BOOM_THREE = "172736"


def boom_actions(history: str) -> tuple[Any, list[tuple[JSON, list[Any]]]]:
    s = BOOM.initial()
    out = []
    for ch in history:
        m = BOOM.parse_move(s, ch)
        out.append((BOOM.move_to_json(m), []))
        s = BOOM.apply(s, m)
    return s, out


def test_boom_the_only_move_that_lasts_is_best_and_quicker_losses_are_no_blunders() -> None:
    state, actions = boom_actions(BOOM_ONLY_BOOM)
    seat = BOOM.to_move(state)
    legal = BOOM.legal_moves(state)
    losing = [m for m in legal if (o := BOOM.outcome(BOOM.apply(state, m))) and o.winner != seat]
    [saving] = [m for m in legal if m not in losing]
    assert BOOM.move_text(state, saving) == "B" and len(losing) >= 2
    reviewer = profile("boom").review
    ok = reviewer.judge(BOOM, state, saving, 100.0)
    assert (ok.verdict, ok.loss, ok.best_move) == ("best", 0.0, saving)
    assert (ok.proven_before, ok.proven_after) == ("loss", "loss")
    for m in losing:  # lost anyway: losing two plies sooner is the same result
        j = reviewer.judge(BOOM, state, m, 100.0)
        assert (j.verdict, j.loss, j.proven_after, j.best_move) == ("good", 2, "loss", saving)
        assert j.score_after == -1000  # the mover's side
    [r] = review_game("boom", {}, [], [*actions, (BOOM.move_to_json(losing[0]), [])],
                      seconds_per_move=0.01)[-1:]
    assert r.score_after == (-1000 if seat == 0 else 1000)  # seat 0's side


def test_boom_a_four_of_your_own_is_a_blunder() -> None:
    state, actions = boom_actions(BOOM_THREE)
    four = BOOM.parse_move(state, "4")
    bad = review_game("boom", {}, [], [*actions, (BOOM.move_to_json(four), [])],
                      seconds_per_move=0.1)[-1]
    assert (bad.seat, bad.verdict, bad.proven_after) == (0, "blunder", "loss")
    assert bad.proven_before != "loss" and bad.best_move_text != "4"
    assert bad.loss > profile("boom").review.thresholds.blunder
    assert bad.score_after == -1000


def test_boom_a_reviewed_game_scores_its_best_moves_as_best() -> None:
    opening, actions = random_game("boom", {}, seed=4, max_actions=24)
    reviews = review_game("boom", {}, opening, actions, seconds_per_move=0.05)
    check_well_formed("boom", reviews, len(actions))
    assert any(r.best_move_text is not None and r.move_text != r.best_move_text
               for r in reviews)  # the random moves are not all the engine's
    for r in reviews:
        if r.move_text == r.best_move_text:
            assert (r.verdict, r.loss) == ("best", 0.0)
        else:
            assert r.verdict != "best" or r.loss == 0


# --- backgammon: the book and the engine's choice are best, blots and bad cubes are not ----

BG = get_game("backgammon")


def bg_opening(roll: tuple[int, int], play: str) -> tuple[list[list[int]], JSON, Any]:
    s = BG.apply_chance(BG.initial(), roll)
    return [list(roll)], BG.move_to_json(BG.parse_move(s, play)), s


def test_backgammon_the_book_is_best_where_the_search_prefers_another_play() -> None:
    # On 21 the search within the budget likes the split 24/23 13/11, within 0.01 of the
    # book's slot: the book's play is the best one all the same, as the bots play it.
    rolls, book, _ = bg_opening((2, 1), "13/11 6/5")
    [r] = review_game("backgammon", {}, rolls, [(book, [])])
    assert (r.verdict, r.loss, r.best_move_text) == ("best", 0.0, "13/11 6/5")
    rolls, split_play, _ = bg_opening((2, 1), "24/23 13/11")
    [r] = review_game("backgammon", {}, rolls, [(split_play, [])])
    assert r.best_move_text == "13/11 6/5"
    assert r.verdict in ("best", "good") and r.loss < 0.04


def test_backgammon_book_opening_is_best_and_a_blotty_one_a_blunder() -> None:
    rolls, book, _ = bg_opening((3, 1), "8/5 6/5")
    [r] = review_game("backgammon", {}, rolls, [(book, [])])
    assert (r.verdict, r.loss, r.best_move_text, r.seat) == ("best", 0.0, "8/5 6/5", 0)
    # Two blots, on the 7- and the 3-point, in direct range of the back checkers.
    rolls, blotty, _ = bg_opening((3, 1), "8/7 6/3")
    [r] = review_game("backgammon", {}, rolls, [(blotty, [])])
    assert r.best_move_text == "8/5 6/5"
    assert r.loss > profile("backgammon").review.thresholds.blunder
    assert r.verdict == "blunder"
    assert r.score_after is not None and r.score_after < 0  # seat 0's side: the blots cost


def test_backgammon_engine_choice_replayed_is_best() -> None:
    rolls, book, s = bg_opening((3, 1), "8/5 6/5")
    s = BG.apply(s, BG.move_from_json(s, book))
    actions: list[tuple[JSON, list[list[int]]]] = [(book, []), ({"action": "roll"}, [[6, 4]])]
    s = BG.apply_chance(BG.apply(s, "roll"), (6, 4))
    worst = BG.legal_moves(s)[-1]
    # A budget this short stops after the first play's 2-ply search: the same ranking each
    # time, so the second review sees the first one's best.
    first = review_game("backgammon", {}, rolls, [*actions, (BG.move_to_json(worst), [])],
                        seconds_per_move=0.001)[-1]
    assert first.best_move_text is not None
    best = BG.parse_move(s, first.best_move_text)
    again = review_game("backgammon", {}, rolls, [*actions, (BG.move_to_json(best), [])],
                        seconds_per_move=0.001)[-1]
    assert (again.verdict, again.loss, again.best_move_text) == ("best", 0.0, first.best_move_text)


def test_backgammon_cube_decisions_after_the_opening_are_judged_as_the_bots_judge_them() -> None:
    rolls, book, _ = bg_opening((3, 1), "8/5 6/5")
    # Seat 1 is behind after the best opening: rolling is right, doubling a blunder, and
    # dropping that double a bigger one (the taker would be ahead).
    roll = review_game("backgammon", {}, rolls, [(book, []), ({"action": "roll"}, [])])[-1]
    assert (roll.seat, roll.verdict, roll.loss, roll.best_move_text) == (1, "best", 0.0, "roll")
    doubled = [(book, []), ({"action": "double"}, [])]
    dbl = review_game("backgammon", {}, rolls, doubled)[-1]
    assert (dbl.best_move_text, dbl.verdict) == ("roll", "blunder")
    take = review_game("backgammon", {}, rolls, [*doubled, ({"action": "take"}, [])])[-1]
    assert (take.seat, take.verdict, take.loss) == (0, "best", 0.0)
    drop = review_game("backgammon", {}, rolls, [*doubled, ({"action": "drop"}, [])])[-1]
    assert (drop.best_move_text, drop.verdict) == ("take", "blunder")
    assert drop.loss > 1.0  # dropping loses a point; taking was worth about +2 × 0.1
    assert drop.score_after == -1.0  # seat 0 dropped: over, one cube lost from its side


def test_backgammon_cube_reviews_are_the_bots_cubeful_equities() -> None:
    """Each cube action's loss is what the bots' own Janowski values say it gives up, and the
    action the review calls best is the one the bots take, in positions on both sides of the
    doubling and take points."""
    reviewer = profile("backgammon").review
    assert reviewer is not None
    for mine, theirs in (([6, 5], [6, 4]), ([4, 4], [5, 5]), ([6, 6, 6], [1, 1])):
        b0 = tuple([15 - len(mine)] + [mine.count(i) for i in range(1, 26)])
        b1 = tuple([15 - len(theirs)] + [theirs.count(i) for i in range(1, 26)])
        roll = BGState((b0, b1), 0, "roll", None, 1, None, True)
        for s in (roll, BG.apply(roll, "double")):
            verdict = cube_verdict(s, "max")
            for action in BG.legal_moves(s):
                j = reviewer.judge(BG, s, action, 100)
                loss = verdict.values[verdict.action] - verdict.values[action]
                assert (j.best_move, j.loss) == (verdict.action, pytest.approx(loss))
                bot = decide("backgammon", s, "max").move["action"]
                assert bot == verdict.action


def test_backgammon_loss_is_the_difference_of_both_plays_searched_alike() -> None:
    """Differential: the loss against an independent 2-ply search of the best and the played
    play (the same evaluation, a full window for each), which is what the reviewer's budget
    of a millisecond leaves it (the first pass's first play, then the played one again)."""
    _, book, s = bg_opening((3, 1), "8/5 6/5")
    s = BG.apply_chance(BG.apply(BG.apply(s, BG.move_from_json(s, book)), "roll"), (5, 2))
    search = cubeless(BG, None, s.cube, EVALUATION["max"])
    sign = 1 if s.turn == 0 else -1
    reviewer = profile("backgammon").review
    checked = 0
    for play in BG.legal_moves(s):
        j = reviewer.judge(BG, s, play, 0.001)
        assert j.best_move is not None
        best = sign * search.value(skip_cube(BG.apply(s, j.best_move)), 1)
        played = sign * search.value(skip_cube(BG.apply(s, play)), 1)
        assert j.loss == pytest.approx(max(0.0, best - played), abs=1e-9)
        assert j.score_after == pytest.approx(played, abs=1e-9)
        checked += j.loss > 0
    assert checked >= 2


# --- BOOM and Connect-4 before the solver: differential against a textbook depth search ----


def negamax(game: Game[Any, Any], state: Any, seat: int, depth: int, ply: int,
            evaluate: Any) -> int:
    """Plain negamax to ``depth`` (no pruning, no table), scored on the engine's scale: an
    end ``ply`` plies down is WIN - ply for its winner (0 a draw), a leaf the evaluation."""
    out = game.outcome(state)
    if out is not None:
        if out.winner is None:
            return 0
        return WIN - ply if out.winner == seat else ply - WIN
    if depth == 0:
        return int(evaluate(state))
    return max(-negamax(game, game.apply(state, m), 1 - seat, depth - 1, ply + 1, evaluate)
               for m in game.legal_moves(state))


@pytest.mark.parametrize(("game_id", "history"), [("boom", "7474135"), ("connect4", "4435")])
def test_search_verdicts_agree_with_a_textbook_search_to_the_same_depth(
        game_id: str, history: str) -> None:
    game = get_game(game_id)
    state = game.initial()
    for ch in history:
        state = game.apply(state, game.parse_move(state, ch))
    seat = game.to_move(state)
    evaluate = profile(game_id).bots.evaluate  # type: ignore[attr-defined]
    depth = 3
    scores = {m: -negamax(game, game.apply(state, m), 1 - seat, depth - 1, 1, evaluate)
              for m in game.legal_moves(state)}
    assert all(abs(v) < PROVEN_MIN for v in scores.values())  # a quiet position: no proofs
    best = max(scores.values())
    reviewer = dataclasses.replace(profile(game_id).review, depth=depth)
    th = reviewer.thresholds
    verdicts = set()
    for m, v in scores.items():
        # A budget far too short for the solver: the search decides.
        j = reviewer.judge(game, state, m, 0.001)
        assert j.loss == best - v, game.move_text(state, m)
        assert j.verdict == th.of_loss(best - v)
        assert j.score_after == v
        assert scores[j.best_move] == best
        assert (j.proven_before, j.proven_after) == (None, None)
        verdicts.add(j.verdict)
    assert len(verdicts) >= 2


def test_scores_beyond_the_cap_are_drawn_at_the_cap() -> None:
    reviewer = profile("boom").review
    assert isinstance(reviewer, SearchReviewer)
    cap = profile("boom").score.cap
    assert reviewer.cap == cap
    assert reviewer._units(5 * int(cap), None) == cap
    assert reviewer._units(-5 * int(cap), None) == -cap
    assert reviewer._units(12, None) == 12
    assert reviewer._units(WIN - 3, "win") == cap
    assert reviewer._units(0, "draw") == 0


def test_a_record_that_does_not_replay_is_refused() -> None:
    s = TTT.initial()
    taken = [(TTT.move_to_json(4), []), (TTT.move_to_json(4), [])]
    with pytest.raises(IllegalMoveError):
        review_game("tictactoe", {}, [], taken)
    with pytest.raises(InvalidInputError):
        review_game("tictactoe", {}, [], actions_of(TTT, s, [4]), seconds_per_move=0)
    with pytest.raises(UnknownGameError):
        review_game("chess", {}, [], [])
