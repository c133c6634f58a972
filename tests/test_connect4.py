"""Connect Four: perft against OEIS A212693, a naive 2-D implementation as an independent
cross-check, Pascal Pons' test positions, notation round trips and the fast helpers."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pons_support import pons_data
from tablas.engine.core import Outcome
from tablas.engine.errors import (
    GameOverError,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
)
from tablas.engine.games import connect4 as c4
from tablas.engine.games.connect4 import C4State, Connect4

G = Connect4()

# OEIS A212693: legal 7×6 Connect-Four positions after n plies (values checked on oeis.org).
A212693 = [1, 7, 49, 238, 1120, 4263, 16422, 54859, 184275]


# --- a naive reference implementation: a 6×7 list of lists, row 0 at the bottom -------------


class Naive:
    def __init__(self) -> None:
        self.grid = [[-1] * 7 for _ in range(6)]
        self.turn = 0
        self.winner: int | None = None
        self.plies = 0

    def height(self, col: int) -> int:
        return sum(1 for r in range(6) if self.grid[r][col] != -1)

    def over(self) -> bool:
        return self.winner is not None or self.plies == 42

    def legal(self) -> list[int]:
        return [] if self.over() else [c for c in range(7) if self.height(c) < 6]

    def play(self, col: int) -> None:
        assert not self.over() and self.height(col) < 6
        row = self.height(col)
        self.grid[row][col] = self.turn
        self.plies += 1
        if self.four_through(row, col):
            self.winner = self.turn
        self.turn = 1 - self.turn

    def four_through(self, row: int, col: int) -> bool:
        """Four equal stones on some line through (row, col), by walking both ways."""
        who = self.grid[row][col]
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            run = 1
            for sign in (1, -1):
                r, c = row + sign * dr, col + sign * dc
                while 0 <= r < 6 and 0 <= c < 7 and self.grid[r][c] == who:
                    run += 1
                    r, c = r + sign * dr, c + sign * dc
            if run >= 4:
                return True
        return False

    def top_down(self) -> list[list[int]]:
        return [list(row) for row in reversed(self.grid)]


def _naive_of(text: str) -> Naive:
    n = Naive()
    for ch in text:
        n.play(int(ch) - 1)
    return n


def _agree(state: C4State, naive: Naive) -> None:
    assert G.state_to_json(state)["board"] == naive.top_down()
    assert G.legal_moves(state) == naive.legal()
    out = G.outcome(state)
    assert (out is not None) == naive.over()
    if out is not None:
        assert out.winner == naive.winner
        assert out.reason == ("board_full" if naive.winner is None else "four_in_a_row")
        assert out.points == (0 if naive.winner is None else 1)
        assert G.to_move(state) is None
    else:
        assert G.to_move(state) == naive.turn


# --- strategies -----------------------------------------------------------------------------

choices = st.lists(st.integers(0, 6), max_size=60)


def _play_choices(picks: list[int]) -> C4State:
    """A reachable position: each pick chooses among the legal moves; stops at the end."""
    s = G.initial()
    for p in picks:
        moves = G.legal_moves(s)
        if not moves:
            break
        s = G.apply(s, moves[p % len(moves)])
    return s


positions = choices.map(_play_choices)


# --- perft ----------------------------------------------------------------------------------


def test_perft_matches_oeis_a212693() -> None:
    level: dict[int, C4State] = {c4.key(c4.EMPTY): c4.EMPTY}
    counts = [len(level)]
    for _ in range(len(A212693) - 1):
        nxt: dict[int, C4State] = {}
        for s in level.values():
            if G.outcome(s) is not None:  # positions after a win are not expanded
                continue
            for m in G.legal_moves(s):
                t = G.apply(s, m)
                nxt.setdefault(G.key(t), t)
        level = nxt
        counts.append(len(level))
    assert counts == A212693


# --- the naive cross-check ------------------------------------------------------------------


def test_random_games_agree_with_naive() -> None:
    rng = random.Random(1234)
    for _ in range(1000):
        s, n = G.initial(), Naive()
        _agree(s, n)
        while G.outcome(s) is None:
            m = rng.choice(G.legal_moves(s))
            s = G.apply(s, m)
            n.play(m)
            _agree(s, n)


def test_pons_test_positions_parse_and_agree() -> None:
    lines = (pons_data() / "Test_L3_R1").read_text().splitlines()
    assert len(lines) == 1000
    for line in lines:
        moves, score = line.split()
        s = G.parse_position(moves)
        assert G.outcome(s) is None and G.position_text(s) == moves
        assert c4.nb_moves(s) == len(moves)
        naive = _naive_of(moves)
        assert not naive.over()
        assert G.state_to_json(s)["board"] == naive.top_down()
        # a score of 18 - k > 0 that equals (43 - moves) // 2 means the mover wins at once
        if int(score) == (43 - len(moves)) // 2:
            assert c4.can_win_next(s)


# --- random games and notations -------------------------------------------------------------


@given(positions)
def test_games_end_with_a_valid_outcome(s: C4State) -> None:
    while G.outcome(s) is None:
        s = G.apply(s, G.legal_moves(s)[-1])
    out = G.outcome(s)
    assert isinstance(out, Outcome)
    assert out.winner in (0, 1, None)
    if out.winner is None:
        assert (out.points, out.reason) == (0, "board_full") and s.mask == c4.BOARD_MASK
    else:
        assert (out.points, out.reason) == (1, "four_in_a_row")
        # the last mover won
        assert out.winner == (c4.nb_moves(s) - 1) % 2
        assert G.state_to_json(s)["winning_line"]
    assert G.legal_moves(s) == [] and G.to_move(s) is None
    assert Outcome.from_json(out.to_json()) == out


@given(positions)
def test_position_round_trips(s: C4State) -> None:
    text = G.position_text(s)
    t = G.parse_position(text)
    assert t == s and G.key(t) == G.key(s) and G.outcome(t) == G.outcome(s)
    assert G.position_text(G.parse_position(text)) == text
    j = G.state_to_json(s)
    assert j["notation"] == text
    assert j["last_move"] == (int(text[-1]) - 1 if text else None)
    assert (j["winning_line"] is not None) == (
        G.outcome(s) is not None and G.outcome(s).winner is not None  # type: ignore[union-attr]
    )


@given(positions)
def test_move_round_trips(s: C4State) -> None:
    for m in G.legal_moves(s):
        assert G.move_from_json(s, G.move_to_json(m)) == m
        assert G.parse_move(s, G.move_text(s, m)) == m
        assert G.move_text(s, m) == str(m + 1)
        assert G.check_move(s, m) == m
        assert G.position_text(G.play(s, m)) == G.position_text(s) + G.move_text(s, m)


@given(positions)
def test_key_is_the_board(s: C4State) -> None:
    # the key is a function of the board, and the board can be read back from it
    assert G.key(s) == c4.key(s) == s.current + s.mask
    mask = s.mask
    assert (G.key(s) - mask) == s.current
    assert s.current & ~mask == 0 and mask & ~c4.BOARD_MASK == 0


@given(positions)
def test_fast_helpers_agree_with_playing(s: C4State) -> None:
    if G.outcome(s) is not None:
        return
    moves = G.legal_moves(s)
    assert [c for c in range(7) if c4.can_play(s, c)] == moves
    assert c4.possible_mask(s) == sum(
        1 << (c * c4.H1 + bin(s.mask & c4.COLUMN_MASK[c]).count("1")) for c in moves
    )
    wins = [c for c in moves if (o := G.outcome(c4.play(s, c))) and o.winner is not None]
    assert [c for c in moves if c4.is_winning_move(s, c)] == wins
    assert c4.can_win_next(s) == bool(wins)
    if not wins:
        safe = c4.possible_non_losing_moves(s)
        for c in moves:
            t = c4.play(s, c)
            opp_wins = G.outcome(t) is None and c4.can_win_next(t)
            if safe & c4.COLUMN_MASK[c]:
                assert not opp_wins
            elif safe:
                assert opp_wins
    assert c4.mirror(c4.mirror(s.mask)) == s.mask
    mirrored = G.parse_position("".join(str(8 - int(ch)) for ch in s.history))
    assert c4.mirror_key(s) == c4.key(mirrored)
    cur, mask = s.current, s.mask
    for c in moves:
        bit = c4.possible(mask) & c4.COLUMN_MASK[c]
        assert c4.column_of_bit(bit) == c
        ncur, nmask = c4.play_bits(cur, mask, bit)
        t = c4.play(s, c)
        assert (ncur, nmask) == (t.current, t.mask)
        won = t.result is not None and t.result.winner is not None
        assert c4.alignment(ncur ^ nmask) == won


@given(positions)
def test_threats_match_the_lines_on_one_board_and_on_copies_side_by_side(s: C4State) -> None:
    from tablas.engine.search.connect4_solver import _LANE_MOVES, _LANES, _REP, _lane_threats

    for stones in (s.current, s.current ^ s.mask):
        naive = 0
        for line in c4.LINE_MASKS:
            gap = line & ~stones
            if gap and not gap & (gap - 1) and not gap & s.mask:
                naive |= gap
        assert c4.compute_winning_position(stones, s.mask) == naive
    # the solver's packed call: copy i holds the position after a move in its column
    nxt = c4.possible(s.mask)
    spread = (nxt * _REP) & _LANE_MOVES
    after = _lane_threats(s.current * _REP | spread, s.mask * _REP | spread)
    for _, col, shift in _LANES:
        move = nxt & col
        if move:
            want = c4.compute_winning_position(s.current | move, s.mask | move)
            assert (after >> shift) & c4.BOARD_MASK == want


def test_initial_and_options() -> None:
    s = G.initial()
    assert G.position_text(s) == "" and G.to_move(s) == 0 and G.legal_moves(s) == list(range(7))
    assert G.initial({}) == s
    with pytest.raises(Exception, match="unknown option"):
        G.initial({"width": 8})


def test_state_json_example() -> None:
    s = G.parse_position("4455667")
    assert G.outcome(s) == Outcome(0, 1, "four_in_a_row")
    j = G.state_to_json(s)
    assert j["board"][5] == [-1, -1, -1, 0, 0, 0, 0]
    assert j["board"][4] == [-1, -1, -1, 1, 1, 1, -1]
    assert j["board"][0] == [-1] * 7
    assert j["last_move"] == 6
    assert j["winning_line"] == [[5, 3], [5, 4], [5, 5], [5, 6]]
    assert G.state_to_json(G.initial()) == {
        "notation": "",
        "board": [[-1] * 7 for _ in range(6)],
        "last_move": None,
        "winning_line": None,
    }


def test_vertical_and_diagonal_wins() -> None:
    assert G.outcome(G.parse_position("1212121")) == Outcome(0, 1, "four_in_a_row")
    assert G.outcome(G.parse_position("24413353425")) is None
    s = G.parse_position("244133534254")  # seat 1 on the diagonal a1-d4
    assert G.outcome(s) == Outcome(1, 1, "four_in_a_row")
    assert G.state_to_json(s)["winning_line"] == [[2, 3], [3, 2], [4, 1], [5, 0]]


def test_states_are_immutable() -> None:
    s = G.parse_position("44")
    with pytest.raises(AttributeError):
        s.mask = 0
    t = G.apply(s, 3)
    assert G.position_text(s) == "44" and G.position_text(t) == "444"


def test_full_board_draw() -> None:
    text = "257771314744647214154617633623313656555222"
    s = G.parse_position(text)
    assert G.outcome(s) == Outcome(None, 0, "board_full")
    assert s.mask == c4.BOARD_MASK and G.legal_moves(s) == [] and G.to_move(s) is None
    assert G.state_to_json(s)["winning_line"] is None
    assert _naive_of(text).winner is None
    with pytest.raises(InvalidPositionError, match="ended"):
        G.parse_position(text + "1")


# --- invalid input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "index", "why"),
    [
        ("4408", 2, "digit 1-7"),
        ("x", 0, "digit 1-7"),
        ("44 5", 2, "digit 1-7"),
        ("1111111", 6, "full"),
        ("12121217", 7, "ended"),
        ("4455667" + "1", 7, "ended"),
        ("٤", 0, "digit 1-7"),
    ],
)
def test_invalid_positions(text: str, index: int, why: str) -> None:
    with pytest.raises(InvalidPositionError) as err:
        G.parse_position(text)
    msg = str(err.value)
    assert repr(text) in msg and f"character {index}" in msg and why in msg


@given(positions, st.text(alphabet="089abB -", min_size=1, max_size=3))
def test_bad_characters_raise(s: C4State, junk: str) -> None:
    with pytest.raises(InvalidPositionError):
        G.parse_position(G.position_text(s) + junk)


@given(positions)
def test_moves_after_end_or_into_full_columns_raise(s: C4State) -> None:
    text = G.position_text(s)
    if G.outcome(s) is not None:
        for d in "1234567":
            with pytest.raises(InvalidPositionError):
                G.parse_position(text + d)
        with pytest.raises(GameOverError):
            G.check_move(s, 0)
        return
    for c in range(7):
        if not c4.can_play(s, c):
            with pytest.raises(InvalidPositionError, match="full"):
                G.parse_position(text + str(c + 1))
            with pytest.raises(IllegalMoveError):
                G.check_move(s, c)
            with pytest.raises(IllegalMoveError):
                G.play(s, c)


def test_full_column_is_illegal() -> None:
    s = G.parse_position("444444")
    with pytest.raises(IllegalMoveError, match="illegal move"):
        G.check_move(s, 3)
    assert 3 not in G.legal_moves(s)


@pytest.mark.parametrize(
    "obj",
    [
        {"column": 7},
        {"column": -1},
        {"column": True},
        {"column": "3"},
        {"column": 3.0},
        {"column": 3, "x": 1},
        {},
        [3],
        3,
        None,
        {"cell": 3},
    ],
)
def test_invalid_move_json(obj: object) -> None:
    with pytest.raises(InvalidMoveError) as err:
        G.move_from_json(G.initial(), obj)
    assert repr(obj) in str(err.value)


@pytest.mark.parametrize("text", ["", "0", "8", "12", " 1", "a", "B", "٣"])
def test_invalid_move_text(text: str) -> None:
    with pytest.raises(InvalidMoveError) as err:
        G.parse_move(G.initial(), text)
    assert repr(text) in str(err.value)


@settings(max_examples=50)
@given(st.integers(0, 6))
def test_move_json_shape(c: int) -> None:
    assert G.move_to_json(c) == {"column": c}
    assert G.move_repr(c) == f'{{"column":{c}}}'
