"""Tic-tac-toe: perft counts, the game value by exhaustive minimax, notation checks."""

from __future__ import annotations

import pytest
from tablas.engine.errors import IllegalMoveError, InvalidMoveError, InvalidPositionError
from tablas.engine.games.tictactoe import TicTacToe, TTTState, canonical_key

G = TicTacToe()


def walk(state: TTTState, seen: set[int]) -> int:
    """Complete games below ``state``; fills ``seen`` with every reachable position's key."""
    seen.add(G.key(state))
    if G.outcome(state) is not None:
        return 1
    return sum(walk(G.apply(state, m), seen) for m in G.legal_moves(state))


def test_perft_complete_games_and_reachable_positions() -> None:
    seen: set[int] = set()
    assert walk(G.initial(), seen) == 255_168
    assert len(seen) == 5_478


def test_reachable_positions_up_to_symmetry() -> None:
    seen: set[int] = set()
    walk(G.initial(), seen)
    states = [TTTState(k & 511, k >> 9) for k in seen]
    assert len({canonical_key(s) for s in states}) == 765  # the classic count


def negamax(state: TTTState, memo: dict[int, int]) -> int:
    k = G.key(state)
    if k not in memo:
        out = G.outcome(state)
        if out is not None:
            # The side to move never has a line of its own: the last mover made it.
            memo[k] = 0 if out.winner is None else -1
        else:
            memo[k] = max(-negamax(G.apply(state, m), memo) for m in G.legal_moves(state))
    return memo[k]


def test_the_game_is_a_draw() -> None:
    assert negamax(G.initial(), {}) == 0


def test_every_reachable_position_round_trips_its_notation() -> None:
    seen: set[int] = set()
    walk(G.initial(), seen)
    for k in seen:
        s = TTTState(k & 511, k >> 9)
        assert G.parse_position(G.position_text(s)) == s


@pytest.mark.parametrize(
    "text",
    ["", "XO", "XXXXXXXXXX", "XO.......x", "XX.......", "O........", "XXXOO.OO.", "XXX.OO.O."],
)
def test_invalid_positions_are_refused_with_the_text(text: str) -> None:
    with pytest.raises(InvalidPositionError) as e:
        G.parse_position(text)
    assert repr(text) in str(e.value)


def test_terminal_positions() -> None:
    won = G.parse_position("XXXOO....")
    out = G.outcome(won)
    assert out is not None and (out.winner, out.points, out.reason) == (0, 1, "three_in_a_row")
    assert G.to_move(won) is None and G.legal_moves(won) == []
    full = G.parse_position("XOXXOOOXX")
    out = G.outcome(full)
    assert out is not None and (out.winner, out.reason) == (None, "board_full")


def test_move_errors_split_by_cause() -> None:
    s = G.parse_position("X........")
    for bad in ({"cell": 9}, {"cell": "4"}, {"cell": True}, {"col": 1}, [4], None):
        with pytest.raises(InvalidMoveError):
            G.move_from_json(s, bad)
    with pytest.raises(IllegalMoveError) as e:
        G.play(s, G.move_from_json(s, {"cell": 0}))
    assert "X........" in str(e.value)
    assert G.position_text(G.play(s, 4)) == "X...O...."


def test_moves_are_written_as_the_board_names_its_squares() -> None:
    """One notation for tic-tac-toe everywhere (the room, the review, /explain, the command
    line): column a-c from the left, row 1-3 from the bottom; the bare cell digit is still
    read."""
    g = TicTacToe()
    s = g.initial()
    names = [g.move_text(s, c) for c in range(9)]
    assert names == ["a3", "b3", "c3", "a2", "b2", "c2", "a1", "b1", "c1"]
    for c, name in enumerate(names):
        assert g.parse_move(s, name) == c
        assert g.parse_move(s, name.upper()) == c
        assert g.parse_move(s, str(c)) == c
    for bad in ("d1", "a4", "a0", "9", "", "b22", "2b"):
        with pytest.raises(InvalidMoveError, match=r"a1\.\.c3"):
            g.parse_move(s, bad)


def test_the_command_line_writes_the_squares(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from tablas.server.cli import main

    assert main(["moves", "tictactoe", "X.O.X....", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [m["move_text"] for m in listed["moves"]] == ["b3", "a2", "c2", "a1", "b1", "c1"]
    assert main(["analyze", "tictactoe", "X.O.X....", "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["best_move_text"] == "c1" and all(len(m) == 2 for m in verdict["pv"])
