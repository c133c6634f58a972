"""The review of finished games (engine/review.py): verdicts against independent values.

Tic-tac-toe exhaustively against a textbook minimax written here; Grundy against the
literature's P-positions and a mex computed here; Connect-4 against Pons' published scores;
BOOM and backgammon against their own engine (the best move replayed is ``best``, a bad move
is worse); and the shape of every entry of a whole random game of each game."""

from __future__ import annotations

import random
from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.core import JSON, Game
from engine.games import GAME_IDS, get_game, profile
from engine.games.tictactoe import TTTState
from engine.review import VERDICTS, MoveReview, review_game
from engine.search.reviewers import Thresholds

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
    """A game of uniformly random actions and dice, as the server stores it: the opening
    rolls (refused ties left out, as the server re-rolls them) and (move, rolls) pairs."""
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
        m = rng.choice(game.legal_moves(state))
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
                          "proven_before", "proven_after", "score_after"}


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


@cache
def ttt_minimax(xs: int, os: int) -> tuple[str, int]:
    """(result for the side to move, plies to the end) under best play, where best means a
    win as soon as possible, a loss as late as possible: the textbook recursion, no pruning."""
    s = TTTState(xs, os)
    out = TTT.outcome(s)
    if out is not None:
        return ("draw" if out.winner is None else "loss"), 0  # the last mover won

    def pref(rd: tuple[str, int]) -> tuple[int, int]:
        result, d = rd
        return RANK[result], -d if result == "win" else d

    options = []
    for m in TTT.legal_moves(s):
        c = TTT.apply(s, m)
        result, d = ttt_minimax(c.xs, c.os)
        options.append((FLIP[result], d + 1))
    return max(options, key=pref)


def ttt_after(s: TTTState, m: int) -> tuple[str, int]:
    c = TTT.apply(s, m)
    result, d = ttt_minimax(c.xs, c.os)
    return FLIP[result], d + 1


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


def expected_ttt_verdict(s: TTTState, m: int) -> tuple[str, float]:
    before, d_best = ttt_minimax(s.xs, s.os)
    after, d = ttt_after(s, m)
    if RANK[after] < RANK[before]:
        return "blunder", 1000.0 * (RANK[before] - RANK[after])
    plies = {"win": d - d_best, "loss": d_best - d, "draw": 0}[after]
    return ("best" if plies == 0 else "good" if plies <= 2 else "inaccuracy"), float(plies)


def test_tictactoe_every_move_of_every_position_against_textbook_minimax() -> None:
    reviewer = profile("tictactoe").review
    states = reachable_ttt()
    assert len(states) == 4520
    seen = set()
    for s in states:
        for m in TTT.legal_moves(s):
            j = reviewer.judge(TTT, s, m, 500.0)
            want_verdict, want_loss = expected_ttt_verdict(s, m)
            after, _ = ttt_after(s, m)
            assert j.proven_before == ttt_minimax(s.xs, s.os)[0], (s, m)
            assert j.proven_after == after, (s, m)
            assert (j.verdict, j.loss) == (want_verdict, want_loss), (s, m)
            assert j.score_after == {"win": 1000, "draw": 0, "loss": -1000}[after]
            if j.verdict != "best":  # the engine's best move is one the textbook agrees with
                assert expected_ttt_verdict(s, j.best_move)[0] == "best", (s, m)
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
        verdict, loss = expected_ttt_verdict(s, m)
        forced = len(TTT.legal_moves(s)) == 1
        assert (r.seat, r.move_text) == (seat, TTT.move_text(s, m))
        assert r.verdict == ("best" if forced else verdict)
        assert r.loss == (0.0 if forced else loss)
        assert (r.best_move_text is None) == forced
        after, _ = ttt_after(s, m)
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
