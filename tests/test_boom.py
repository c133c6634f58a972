"""Desconecta-4 BOOM: known answers for bombs, explosions, misère losses and draws; a naive
column-list implementation as a cross-check; property tests of the bomb accounting."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tablas.engine.core import Outcome
from tablas.engine.errors import (
    GameOverError,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
)
from tablas.engine.games import boom as bm
from tablas.engine.games.boom import BOOM, Boom, BoomState

G = Boom()

# Seat 0 fills row 0 but column 4 (1 2 3 _ 5 6 _), seat 1 takes 4 and 7 and stacks on 1, 3, 5;
# seat 0's 5th piece (column 6) and seat 1's 5th (column 5, row 1) are bombs. Seat 0's boom
# empties row 0 of its pieces, seat 1's three fall into it (o _ o o o _ o: no four), and seat
# 1's boom then clears the board. 12 actions back to the empty board, bomb counters at 0.
CYCLE = "1427315365BB"


def picture(rows: list[str], d0: int = 10, d1: int = 10, actions: int = 20) -> BoomState:
    """A state from 7 strings, top row first: ``x``/``X`` seat 0 (``X`` a bomb), ``o``/``O``
    seat 1, ``.`` empty. Columns must have no gaps."""
    assert len(rows) == 7 and all(len(r) == 7 for r in rows)
    s0 = s1 = bombs = 0
    for i, row in enumerate(rows):
        r = 6 - i
        for c, ch in enumerate(row):
            bit = bm.cell_bit(c, r)
            if ch in "xX":
                s0 |= bit
            elif ch in "oO":
                s1 |= bit
            if ch in "XO":
                bombs |= bit
    mask = s0 | s1
    assert bm.possible(mask) & mask == 0, "gap in a column"
    assert not bm.has_four(s0) and not bm.has_four(s1)
    return bm.make_state(s0, s1, bombs, d0, d1, actions, "", None)


def draw_picture(s: BoomState) -> list[str]:
    j = G.state_to_json(s)
    bombs = {tuple(b) for b in j["bombs"]}
    out = []
    for r, row in enumerate(j["board"]):
        line = ""
        for c, v in enumerate(row):
            ch = "." if v == -1 else "xo"[v]
            line += ch.upper() if (r, c) in bombs else ch
        out.append(line)
    return out


# --- a naive reference: each column a list of (seat, is_bomb), bottom first -----------------


class Naive:
    def __init__(self) -> None:
        self.cols: list[list[tuple[int, bool]]] = [[] for _ in range(7)]
        self.dropped = [0, 0]
        self.actions = 0
        self.result: tuple[int | None, str] | None = None

    def cell(self, c: int, r: int) -> int:
        return self.cols[c][r][0] if r < len(self.cols[c]) else -1

    def has_bomb(self, seat: int) -> bool:
        return any(p == (seat, True) for col in self.cols for p in col)

    def four(self, seat: int) -> bool:
        for c in range(7):
            for r in range(7):
                for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                    cells = [(c + i * dc, r + i * dr) for i in range(4)]
                    if all(0 <= x < 7 and 0 <= y < 7 and self.cell(x, y) == seat for x, y in cells):
                        return True
        return False

    def legal(self) -> list[int]:
        if self.result is not None:
            return []
        moves = [c for c in range(7) if len(self.cols[c]) < 7]
        return [*moves, BOOM] if self.has_bomb(self.actions % 2) else moves

    def act(self, move: int) -> None:
        assert move in self.legal()
        me = self.actions % 2
        if move == BOOM:
            row = next(r for col in self.cols for r, p in enumerate(col) if p == (me, True))
            for col in self.cols:
                if row < len(col) and col[row][0] == me:
                    del col[row]  # what was above falls by itself
        else:
            self.dropped[me] += 1
            bomb = self.dropped[me] % 5 == 0 and not self.has_bomb(me)
            self.cols[move].append((me, bomb))
        self.actions += 1
        if self.four(me):
            self.result = (1 - me, "four_in_a_row")
        elif self.four(1 - me):
            self.result = (me, "four_in_a_row")
        elif all(len(col) == 7 for col in self.cols):
            self.result = (None, "board_full")
        elif self.actions >= 200:
            self.result = (None, "move_limit")

    def board(self) -> list[list[int]]:
        return [[self.cell(c, r) for c in range(7)] for r in range(6, -1, -1)]

    def bombs(self) -> list[list[int]]:
        return [
            [6 - r, c]
            for r in range(6, -1, -1)
            for c in range(7)
            if r < len(self.cols[c]) and self.cols[c][r][1]
        ]


def _agree(s: BoomState, n: Naive) -> None:
    j = G.state_to_json(s)
    assert j["board"] == n.board()
    assert j["bombs"] == n.bombs()
    assert j["dropped"] == n.dropped and j["actions"] == n.actions
    assert G.legal_moves(s) == n.legal()
    out = G.outcome(s)
    if n.result is None:
        assert out is None and G.to_move(s) == n.actions % 2
    else:
        assert out is not None and (out.winner, out.reason) == n.result
        assert out.points == (0 if out.winner is None else 1)


def _random_game(rng: random.Random, boom_bias: float) -> list[BoomState]:
    """A random game preferring moves that do not lose at once, and booms with ``boom_bias``."""
    s = G.initial()
    states = [s]
    while G.outcome(s) is None:
        me = s.actions & 1
        moves = G.legal_moves(s)
        safe = [m for m in moves if (o := G.apply(s, m).result) is None or o.winner != 1 - me]
        if BOOM in safe and rng.random() < boom_bias:
            m = BOOM
        else:
            m = rng.choice(safe or moves)
        s = G.apply(s, m)
        states.append(s)
    return states


# --- strategies -----------------------------------------------------------------------------


def _play_choices(picks: list[int]) -> BoomState:
    s = G.initial()
    for p in picks:
        moves = G.legal_moves(s)
        if not moves:
            break
        # a boom whenever the pick is large, so that explosions are common
        s = G.apply(s, BOOM if BOOM in moves and p >= 9 else moves[p % len(moves)])
    return s


positions = st.lists(st.integers(0, 11), max_size=120).map(_play_choices)


# --- known answers: bombs -------------------------------------------------------------------


def test_fifth_drop_is_a_bomb() -> None:
    s = G.parse_position("14273153")  # four drops each
    j = G.state_to_json(s)
    assert j["bombs"] == [] and j["dropped"] == [4, 4] and j["next_is_bomb"] == [True, True]
    assert bm.next_drop_is_bomb(s, 0) and not bm.can_boom(s)
    s = G.apply(s, 5)  # seat 0's 5th piece: column 6, row 0
    j = G.state_to_json(s)
    assert j["bombs"] == [[6, 5]] and j["next_is_bomb"] == [False, True]
    assert bm.bomb_of(s, 0) == bm.cell_bit(5, 0) and bm.bomb_of(s, 1) == 0
    s = G.apply(s, 4)  # seat 1's 5th: column 5, row 1
    assert G.state_to_json(s)["bombs"] == [[5, 4], [6, 5]]
    assert G.legal_moves(s)[-1] == BOOM and bm.can_boom(s, 0) and bm.can_boom(s, 1)
    assert G.move_text(s, BOOM) == "B"


# CYCLE[:10], then five more drops each without exploding (found by random safe play).
TEN_EACH = "14273153657475145744"


def test_tenth_drop_is_not_a_bomb_while_the_first_is_on_the_board() -> None:
    s = G.parse_position(TEN_EACH[:18])
    j = G.state_to_json(s)
    assert j["dropped"] == [9, 9] and j["bombs"] == [[5, 4], [6, 5]]
    assert j["next_is_bomb"] == [False, False]  # both have a bomb on the board
    s = G.apply(s, 3)  # seat 0's 10th: column 4, row 3
    j = G.state_to_json(s)
    assert j["dropped"] == [10, 9] and j["board"][3][3] == 0
    assert j["bombs"] == [[5, 4], [6, 5]]  # not a bomb
    s = G.apply(s, 3)  # seat 1's 10th: column 4, row 4, not a bomb either
    j = G.state_to_json(s)
    assert G.position_text(s) == TEN_EACH
    assert j["dropped"] == [10, 10] and j["board"][2][3] == 1
    assert j["bombs"] == [[5, 4], [6, 5]]


def test_fifteenth_drop_is_a_bomb_after_the_bomb_exploded() -> None:
    s = G.apply(G.parse_position(TEN_EACH), BOOM)  # seat 0 explodes its bomb (column 6, row 0)
    j = G.state_to_json(s)
    assert j["exploded"] == [[6, 0], [6, 1], [6, 2], [6, 4], [6, 5]]
    assert j["bombs"] == [[6, 4]]  # seat 1's bomb fell from row 1 to row 0
    assert j["board"][6] == [1, -1, 1, 1, 1, -1, 1]
    assert j["next_is_bomb"] == [False, False] and not bm.can_boom(s, 0)
    s = G.parse_position(TEN_EACH + "B537252321")
    j = G.state_to_json(s)
    assert j["dropped"] == [14, 15]
    assert j["bombs"] == [[6, 4]]  # seat 1's 15th is no bomb: its first is on the board
    assert j["next_is_bomb"] == [True, False]
    s = G.apply(s, 5)  # seat 0's 15th: column 6, row 0
    j = G.state_to_json(s)
    assert j["dropped"] == [15, 15] and j["bombs"] == [[6, 4], [6, 5]]
    assert bm.bomb_of(s, 0) == bm.cell_bit(5, 0) and bm.can_boom(s, 0)
    # and the cycle brings both counters back to a bomb every 5th drop
    c = G.parse_position(CYCLE * 2 + CYCLE[:10])
    assert G.state_to_json(c)["bombs"] == [[5, 4], [6, 5]]
    assert G.state_to_json(c)["dropped"] == [15, 15]


# --- known answers: explosions --------------------------------------------------------------


def test_boom_removes_own_pieces_in_the_row_and_pieces_fall() -> None:
    s = picture(
        [
            ".......",
            ".......",
            ".......",
            "...x...",
            "o..o...",
            "xo.X.x.",
            "ox.oxo.",
        ]
    )
    t = G.apply(s, BOOM)
    assert draw_picture(t) == [
        ".......",
        ".......",
        ".......",
        ".......",
        "...x...",
        "oo.o...",  # seat 1's piece in row 1 stays; the ones above fall
        "ox.oxo.",
    ]
    assert G.outcome(t) is None
    j = G.state_to_json(t)
    assert j["exploded"] == [[5, 0], [5, 3], [5, 5]]
    assert j["last_move"] == {"boom": True} and j["bombs"] == [] and j["actions"] == 21
    assert j["dropped"] == [10, 10]


def test_boom_moves_the_opponents_bomb_down() -> None:
    s = picture(
        [
            ".......",
            ".......",
            ".......",
            ".......",
            "..O....",
            "..X....",
            "..o....",
        ]
    )
    t = G.apply(s, BOOM)
    assert draw_picture(t) == ["......."] * 5 + ["..O....", "..o...."]
    assert bm.bomb_of(t, 1) == bm.cell_bit(2, 1)


def test_making_four_of_your_own_loses() -> None:
    s = G.parse_position("1122334")  # seat 0: 1 2 3 4 in row 0
    assert G.outcome(s) == Outcome(1, 1, "four_in_a_row")
    assert G.state_to_json(s)["losing_line"] == [[6, 0], [6, 1], [6, 2], [6, 3]]
    assert G.legal_moves(s) == [] and G.to_move(s) is None
    s = G.parse_position("12123212")  # seat 1: column 2, four high (seat 0 has three)
    assert G.outcome(s) == Outcome(0, 1, "four_in_a_row")


# Seat 0 (to act) has its bomb in row 1 with x x X there; after the boom, the pieces above
# fall into a diagonal x from the bottom left, and seat 1's o o o o into row 1.
BOTH_FOURS = [
    ".......",
    ".......",
    "...x...",
    "..xo...",
    ".xoo...",
    ".xxXoo.",
    "xoooxx.",
]


def test_boom_that_gives_the_opponent_four_makes_the_opponent_lose() -> None:
    rows = list(BOTH_FOURS)
    rows[6] = "." + rows[6][1:]  # without x at the bottom left, seat 0 gets only three
    rows[5] = "." + rows[5][1:]
    t = G.apply(picture(rows), BOOM)
    assert G.outcome(t) == Outcome(0, 1, "four_in_a_row")  # seat 1 made four by falling
    assert G.state_to_json(t)["losing_line"] == [[5, 2], [5, 3], [5, 4], [5, 5]]


def test_boom_giving_both_four_loses_for_the_actor() -> None:
    t = G.apply(picture(BOTH_FOURS), BOOM)
    assert draw_picture(t) == [
        ".......",
        ".......",
        ".......",
        "...x...",
        "..xo...",
        ".xoooo.",  # seat 1: four in row 1
        "xoooxx.",  # seat 0: the diagonal from the bottom left
    ]
    assert bm.has_four(t.s0) and bm.has_four(t.s1)
    assert G.outcome(t) == Outcome(1, 1, "four_in_a_row")  # the actor, seat 0, loses


def test_seat_one_boom_mirrors_the_rules() -> None:
    s = picture(
        [
            ".......",
            ".......",
            ".......",
            ".......",
            ".......",
            "xOo....",
            "oxx....",
        ],
        actions=21,
    )
    assert G.to_move(s) == 1 and G.legal_moves(s)[-1] == BOOM
    t = G.apply(s, BOOM)
    assert draw_picture(t)[5:] == ["x......", "oxx...."]  # only seat 1's pieces go
    assert G.to_move(t) == 0 and BOOM not in G.legal_moves(t)


# --- known answers: draws -------------------------------------------------------------------


def test_full_board_draw() -> None:
    text = "4516513532153673273715122441323467521265447774666"
    s = G.parse_position(text)
    assert G.outcome(s) == Outcome(None, 0, "board_full")
    assert s.s0 | s.s1 == bm.BOARD_MASK and G.legal_moves(s) == []
    assert G.parse_position(text[:-1]).result is None
    with pytest.raises(InvalidPositionError, match="ended"):
        G.parse_position(text + "B")


def test_move_limit_draw() -> None:
    text = CYCLE * 16 + CYCLE[:8]
    assert len(text) == 200
    assert G.parse_position(text[:-1]).result is None
    s = G.parse_position(text)
    assert G.outcome(s) == Outcome(None, 0, "move_limit")
    assert G.state_to_json(s)["actions"] == 200 and G.to_move(s) is None
    with pytest.raises(InvalidPositionError, match="ended"):
        G.parse_position(text + "1")


def test_a_loss_beats_the_move_limit() -> None:
    s = picture(
        [
            ".......",
            ".......",
            ".......",
            ".......",
            ".......",
            ".......",
            "xxx.ooo",
        ],
        actions=198,
    )
    assert G.outcome(G.apply(s, 3)) == Outcome(1, 1, "four_in_a_row")  # 199th action
    s = bm.make_state(s.s0, s.s1, 0, 10, 10, 199, "", None)
    assert G.outcome(G.apply(s, 3)) == Outcome(0, 1, "four_in_a_row")  # 200th, seat 1 loses
    assert G.outcome(G.apply(s, 0)) == Outcome(None, 0, "move_limit")


# --- the naive cross-check and properties ---------------------------------------------------


def test_random_games_agree_with_naive() -> None:
    rng = random.Random(7)
    for i in range(150):
        s, n = G.initial(), Naive()
        while G.outcome(s) is None:
            moves = G.legal_moves(s)
            m = BOOM if BOOM in moves and rng.random() < 0.3 else rng.choice(moves)
            if i % 2:  # half of the games avoid losing at once, so they last longer
                me = s.actions & 1
                safe = [
                    x for x in moves if (o := G.apply(s, x).result) is None or o.winner != 1 - me
                ]
                m = m if m in safe or not safe else rng.choice(safe)
            s = G.apply(s, m)
            n.act(m)
            _agree(s, n)


@pytest.mark.parametrize(
    "text",
    [
        "4516513532153673273715122441323467521265447774666",
        CYCLE * 16 + CYCLE[:8],
        TEN_EACH + "B5372523216",
    ],
)
def test_known_games_agree_with_naive(text: str) -> None:
    s, n = G.initial(), Naive()
    for ch in text:
        m = G.parse_move(s, ch)
        s = G.apply(s, m)
        n.act(m)
        _agree(s, n)


def _check_transition(s: BoomState, m: int, t: BoomState) -> None:
    me = s.actions & 1
    assert t.actions == s.actions + 1
    for seat in (0, 1):
        assert (t.bombs & bm.stones(t, seat)).bit_count() <= 1
    assert t.bombs & ~(t.s0 | t.s1) == 0 and t.s0 & t.s1 == 0
    mask = t.s0 | t.s1
    assert bm.possible(mask) & mask == 0 and mask & ~bm.BOARD_MASK == 0  # no gaps
    if m == BOOM:
        assert bm.bomb_of(s, me) and t.exploded & bm.bomb_of(s, me)
        assert (t.d0, t.d1) == (s.d0, s.d1)
        assert bm.stones(t, 1 - me).bit_count() == bm.stones(s, 1 - me).bit_count()
        assert bm.stones(t, me).bit_count() == bm.stones(s, me).bit_count() - t.exploded.bit_count()
        row_mask = bm.ROW_MASK[(bm.bomb_of(s, me).bit_length() - 1) % 8]
        assert t.exploded == bm.stones(s, me) & row_mask
        return
    # a drop: exactly one new piece, the actor's, on top of column m
    new = (t.s0 | t.s1) & ~(s.s0 | s.s1)
    assert new.bit_count() == 1 and (s.s0 | s.s1) & ~(t.s0 | t.s1) == 0
    assert new & bm.COLUMN_MASK[m] and new & bm.stones(t, me)
    assert bm.stones(t, 1 - me) == bm.stones(s, 1 - me)
    assert bm.dropped(t, me) == bm.dropped(s, me) + 1 and t.exploded == 0
    became_bomb = bool(t.bombs & new)
    assert became_bomb == bm.next_drop_is_bomb(s, me)
    assert became_bomb == (bm.dropped(t, me) % 5 == 0 and not bm.bomb_of(s, me))
    assert t.bombs & ~new == s.bombs


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from([0.0, 0.3, 0.9]))
def test_bomb_accounting_along_random_games(seed: int, bias: float) -> None:
    states = _random_game(random.Random(seed), bias)
    removed = [0, 0]
    for s, t in itertools.pairwise(states):
        m = BOOM if t.history[-1] == "B" else int(t.history[-1]) - 1
        assert m in G.legal_moves(s)
        _check_transition(s, m, t)
        if m == BOOM:
            removed[s.actions & 1] += t.exploded.bit_count()
        for seat in (0, 1):
            assert bm.stones(t, seat).bit_count() == bm.dropped(t, seat) - removed[seat]
    end = states[-1]
    out = G.outcome(end)
    assert out is not None and end.actions <= 200
    assert out.reason in ("four_in_a_row", "board_full", "move_limit")
    assert (out.winner is None) == (out.points == 0)
    if out.reason == "move_limit":
        assert end.actions == 200


# --- notations ------------------------------------------------------------------------------


@given(positions)
def test_position_round_trips(s: BoomState) -> None:
    text = G.position_text(s)
    t = G.parse_position(text)
    assert t == s and G.key(t) == G.key(s) and G.outcome(t) == G.outcome(s)
    assert G.position_text(t) == text
    j = G.state_to_json(s)
    assert j["notation"] == text and j["actions"] == len(text)
    assert j["next_is_bomb"] == [bm.next_drop_is_bomb(s, 0), bm.next_drop_is_bomb(s, 1)]
    if text:
        assert G.move_to_json(G.parse_move(s, text[-1])) == j["last_move"]
    assert (j["exploded"] is not None) == text.endswith("B")


@given(positions)
def test_move_round_trips(s: BoomState) -> None:
    for m in G.legal_moves(s):
        assert G.move_from_json(s, G.move_to_json(m)) == m
        assert G.parse_move(s, G.move_text(s, m)) == m
        assert G.check_move(s, m) == m
        assert G.position_text(G.play(s, m)) == G.position_text(s) + G.move_text(s, m)
        assert G.position_text(G.parse_position(G.position_text(s) + G.move_text(s, m))) == (
            G.position_text(s) + G.move_text(s, m)
        )


@given(positions)
def test_key_determines_the_future(s: BoomState) -> None:
    # the same board reached by another route, with other drop counts mod 5, has another key
    k = G.key(s)
    assert k == bm.key(s)
    same = bm.make_state(s.s0, s.s1, s.bombs, s.d0 + 5, s.d1 + 10, s.actions, "x", s.result)
    assert bm.key(same) == k
    other = bm.make_state(s.s0, s.s1, s.bombs, s.d0 + 1, s.d1, s.actions, "", s.result)
    assert bm.key(other) != k
    later = bm.make_state(s.s0, s.s1, s.bombs, s.d0, s.d1, s.actions + 2, "", s.result)
    assert bm.key(later) != k


@given(positions)
def test_invalid_continuations_raise(s: BoomState) -> None:
    text = G.position_text(s)
    if G.outcome(s) is not None:
        for ch in "1234567B":
            with pytest.raises(InvalidPositionError, match="ended"):
                G.parse_position(text + ch)
        with pytest.raises(GameOverError):
            G.check_move(s, 0)
        return
    if not bm.can_boom(s):
        with pytest.raises(InvalidPositionError, match="no bomb") as err:
            G.parse_position(text + "B")
        assert f"character {len(text)}" in str(err.value)
        with pytest.raises(IllegalMoveError):
            G.check_move(s, BOOM)
    for c in range(7):
        if not bm.can_drop(s, c):
            with pytest.raises(InvalidPositionError, match="full"):
                G.parse_position(text + str(c + 1))
            with pytest.raises(IllegalMoveError):
                G.play(s, c)


@pytest.mark.parametrize(
    ("text", "index", "why"),
    [
        ("B", 0, "no bomb"),
        ("1234B", 4, "no bomb"),
        ("440", 2, "digit 1-7 or 'B'"),
        ("8", 0, "digit 1-7 or 'B'"),
        ("12b", 2, "digit 1-7 or 'B'"),
        ("1111111" + "1", 7, "full"),
        ("1122334" + "5", 7, "ended"),
    ],
)
def test_invalid_positions(text: str, index: int, why: str) -> None:
    with pytest.raises(InvalidPositionError) as err:
        G.parse_position(text)
    msg = str(err.value)
    assert repr(text) in msg and f"character {index}" in msg and why in msg


@pytest.mark.parametrize(
    "obj",
    [
        {"column": 7},
        {"column": -1},
        {"column": False},
        {"column": "1"},
        {"boom": 1},
        {"boom": False},
        {"boom": "true"},
        {"boom": True, "column": 1},
        {},
        None,
        "B",
    ],
)
def test_invalid_move_json(obj: object) -> None:
    with pytest.raises(InvalidMoveError) as err:
        G.move_from_json(G.initial(), obj)
    assert repr(obj) in str(err.value)


@pytest.mark.parametrize("text", ["", "0", "8", "b", "BB", "boom", "11"])
def test_invalid_move_text(text: str) -> None:
    with pytest.raises(InvalidMoveError):
        G.parse_move(G.initial(), text)


def test_json_shapes_and_initial() -> None:
    assert G.move_to_json(BOOM) == {"boom": True} and G.move_to_json(2) == {"column": 2}
    assert G.move_from_json(G.initial(), {"boom": True}) == BOOM
    s = G.initial({})
    assert G.state_to_json(s) == {
        "notation": "",
        "board": [[-1] * 7 for _ in range(7)],
        "bombs": [],
        "dropped": [0, 0],
        "next_is_bomb": [False, False],
        "actions": 0,
        "last_move": None,
        "exploded": None,
        "losing_line": None,
    }
    with pytest.raises(Exception, match="unknown option"):
        G.initial({"rows": 6})
    with pytest.raises(AttributeError):
        s.s0 = 1
