"""``tablas moves`` and ``tablas analyze`` as a user runs them: a real subprocess (or the
command's ``main()`` where many positions are asked), the contract's output and errors."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pons_support import pons_data
from tablas.engine.games import get_game
from tablas.server.cli import main

ROOT = Path(__file__).resolve().parent.parent


def tablas(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tablas.server.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_backgammon_opening_31_lists_16_plays() -> None:
    r = tablas("moves", "backgammon", "4HPwATDgc/ABMA", "--dice", "31", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["game"] == "backgammon" and out["position"] == "4HPwATDgc/ABMA"
    assert len(out["moves"]) == 16
    assert len({m["result"] for m in out["moves"]}) == 16
    assert any(m["move_text"] == "8/5 6/5" for m in out["moves"])
    for m in out["moves"]:
        assert set(m) == {"move", "move_text", "result"} and len(m["result"]) == 14


def test_backgammon_contract_test_vector() -> None:
    r = tablas("moves", "backgammon", "DWfwAyCMc8oBRA", "--dice", "42")
    assert r.returncode == 0, r.stderr
    lines = [ln.strip() for ln in r.stdout.splitlines()[1:]]
    assert len(lines) == 7
    assert all(ln.startswith("bar/21") for ln in lines)


def test_connect4_json() -> None:
    r = tablas("moves", "connect4", "4453", "--json")
    out = json.loads(r.stdout)
    assert [m["result"] for m in out["moves"]] == sorted(f"4453{c}" for c in "1234567") or len(
        out["moves"]
    ) == 7
    assert {m["move"]["column"] for m in out["moves"]} == set(range(7))
    assert all(m["result"] == "4453" + m["move_text"] for m in out["moves"])


def test_batch_keeps_order_and_reports_bad_lines() -> None:
    r = tablas(
        "moves", "backgammon", "--batch", "-", "--json",
        stdin="4HPwATDgc/ABMA 31\n4HPwATDgc/ABMA 77\nDWfwAyCMc8oBRA 42\n",
    )  # fmt: skip
    assert r.returncode == 2
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [len(x.get("moves", [])) for x in lines] == [16, 0, 7]
    assert "error" in lines[1] and "77" in lines[1]["error"]
    assert r.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "args, words",
    [
        (("moves", "chess", "x"), "chess"),
        (("moves", "tictactoe", "XXXX"), "XXXX"),
        (("moves", "connect4", "48"), "48"),
        (("moves", "backgammon", "4HPwATDgc/ABMA"), "dice"),
        (("moves", "backgammon", "4HPwATDgc/ABMA", "--dice", "70"), "70"),
        (("moves", "backgammon", "not-an-id", "--dice", "31"), "not-an-id"),
        (("moves", "grundy", "7", "--dice", "31"), "dice"),
        (("moves", "grundy", "--batch", "/nonexistent/file"), "/nonexistent/file"),
        (("moves",), "game"),
        (("frobnicate",), "frobnicate"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_2(args: tuple[str, ...], words: str) -> None:
    r = tablas(*args)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert words in r.stderr


def test_bench_quick_prints_every_figure_with_its_unit() -> None:
    r = tablas("bench", "--quick", "--json")
    assert r.returncode == 0, r.stderr
    figures = json.loads(r.stdout)["benchmarks"]
    names = {f["name"] for f in figures}
    assert {"backgammon: plays generated", "connect4: moves applied (protocol apply)"} <= names
    assert "backgammon decision time, hard" in names
    assert not any("easyAI" in n for n in names)  # a comparison, in tools/, not shipped
    # Rates and times are positive; a count (bot plies in a short run) may honestly be 0.
    assert all(f["unit"] for f in figures)
    assert all(f["value"] > 0 for f in figures if f["unit"] != "plies")
    assert any(n.startswith("server: move round trip") for n in names)


def test_the_easyai_comparison_solves_the_same_positions() -> None:
    pons_data()  # the comparison reads them (engine.bench.connect4_data_dir)
    r = subprocess.run([sys.executable, "-m", "tools.compare_easyai", "--quick", "--json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    (figure,) = json.loads(r.stdout)["benchmarks"]
    assert figure["name"] == "easyAI Negamax / our solver, Test_L3_R1"
    assert figure["value"] > 0 and "agree on 2" in figure["note"]



def test_the_solver_side_by_side_reports_both_paths_exact_with_node_counts() -> None:
    pons_data()
    r = subprocess.run([sys.executable, "-m", "tools.c4_solver_bench", "--rounds", "1",
                        "--python-l2r2", "2", "--json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    by = {(row["set"], row["path"], row["positions"]): row for row in rows}
    assert ("Test_L2_R2", "python", 2) in by and ("Test_L2_R1", "python", 1000) in by
    assert all(row["wrong"] == 0 and row["median_us"] > 0 for row in rows)
    if ("Test_L2_R2", "c", 2) in by:  # where a compiler built the kernel
        for key in (("Test_L2_R2", "python", 2), ("Test_L2_R1", "python", 1000)):
            assert by[(key[0], "c", key[2])]["nodes"] == by[key]["nodes"]


# --- finished positions ---------------------------------------------------------------------

BOOM_CYCLE = "1427315365BB"  # booms empty the board, so the cycle never makes four
# (game, finished position, proven for the side whose turn it would be, score, winner, reason)
FINISHED = [
    ("tictactoe", "XXXOO....", "loss", -1_000_000, 0, "three_in_a_row"),
    ("tictactoe", "XX.OOOX..", "loss", -1_000_000, 1, "three_in_a_row"),
    ("tictactoe", "XOXXOOOXX", "draw", 0, None, "board_full"),
    ("grundy", "2,1,1", "loss", -1_000_000, 1, "no_moves"),
    ("grundy", "1", "loss", -1_000_000, 1, "no_moves"),
    ("connect4", "1212121", "loss", -1_000_000, 0, "four_in_a_row"),
    ("connect4", "656173566152215676422337377473141445425321", "draw", 0, None, "board_full"),
    # BOOM is misère: the seat that made four by its own drop has lost, the one to move won.
    ("boom", "1212121", "win", 1_000_000, 1, "four_in_a_row"),
    # ... but a boom that drops the opponent's pieces into four makes the opponent lose.
    ("boom", "22443563434321443627B63327114B4171BB23347267B32B144321777176566166B",
     "loss", -1_000_000, 0, "four_in_a_row"),
    ("boom", "4516513532153673273715122441323467521265447774666", "draw", 0, None,
     "board_full"),
    ("boom", BOOM_CYCLE * 16 + BOOM_CYCLE[:8], "draw", 0, None, "move_limit"),
    # Backgammon: the player not on roll has borne off all 15; the player on roll has lost
    # a single game, a gammon (none off), a backgammon (one left in the winner's home board).
    ("backgammon", "AAAABgAAAAAAAA", "loss", -1.0, 1, "single"),
    ("backgammon", "AAAAwP8fAAAAAA", "loss", -2.0, 1, "gammon"),
    ("backgammon", "AAAAwP8PAEAAAA", "loss", -3.0, 1, "backgammon"),
    # A Position ID can also have the player on roll with no checker left: it has won.
    ("backgammon", "/P8BAAAAAAAAAA", "win", 2.0, 0, "gammon"),
]


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``tablas ARGS`` through the command's own ``main()``: (exit code, stdout, stderr)."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("game, position, proven, score, winner, reason", FINISHED)
def test_analyze_answers_a_finished_position_with_its_result(
    capsys: pytest.CaptureFixture[str], game: str, position: str, proven: str, score: float,
    winner: int | None, reason: str,
) -> None:
    code, out, err = cli(capsys, "analyze", game, position, "--json")
    assert (code, err) == (0, "")
    answer = json.loads(out)
    time_ms = answer.pop("time_ms")
    assert isinstance(time_ms, float) and 0 <= time_ms < 1000
    assert answer == {
        "game": game, "position": position, "best_move": None, "best_move_text": None,
        "score": score, "proven": proven, "distance": 0, "pv": [], "top": [],
        "depth": 0, "nodes": 0,
        "outcome": {"winner": winner, "points": answer["outcome"]["points"], "reason": reason},
    }
    assert type(answer["score"]) is type(score)  # points stay integers, equity a float
    if game == "backgammon":
        assert answer["outcome"]["points"] == abs(score)


@pytest.mark.parametrize("game, position, proven, score, winner, reason", FINISHED)
def test_moves_lists_no_move_in_a_finished_position(
    capsys: pytest.CaptureFixture[str], game: str, position: str, proven: str, score: float,
    winner: int | None, reason: str,
) -> None:
    code, out, err = cli(capsys, "moves", game, position, "--json")
    assert (code, err) == (0, "")
    answer = json.loads(out)
    assert answer["moves"] == [] and answer["outcome"]["winner"] == winner
    assert answer["outcome"]["reason"] == reason


def test_text_output_says_the_game_is_over_and_who_won(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = cli(capsys, "analyze", "connect4", "1212121")
    assert code == 0
    assert out.splitlines()[:2] == [
        "connect4 1212121: the game is over: seat 0 won (four_in_a_row, 1 point)",
        "no move: loss for seat 1, whose turn it would be  score -1000000  distance 0",
    ]
    code, out, _ = cli(capsys, "analyze", "boom", "1212121")
    assert "seat 1 won" in out and "win for seat 1, whose turn it would be" in out
    code, out, _ = cli(capsys, "analyze", "backgammon", "AAAAwP8fAAAAAA")
    assert "seat 1 won (gammon, 2 points)" in out and "loss for seat 0" in out
    code, out, _ = cli(capsys, "analyze", "tictactoe", "XOXXOOOXX")
    assert "the game is over: a draw (board_full)" in out and "draw for both sides" in out
    code, out, _ = cli(capsys, "moves", "grundy", "2,1,1")
    assert code == 0
    assert out == ("grundy 2,1,1: 0 legal move(s); "
                   "the game is over: seat 1 won (no_moves, 1 point)\n")
    code, out, _ = cli(capsys, "moves", "grundy", "7")
    assert "over" not in out  # a game in play says nothing of an end


def test_a_finished_position_still_refuses_bad_options_and_dice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Limits are accepted (there is nothing to search), bad ones refused all the same.
    code, out, _ = cli(capsys, "analyze", "tictactoe", "XXXOO....", "--depth", "3", "--json")
    assert code == 0 and json.loads(out)["proven"] == "loss"
    code, out, err = cli(capsys, "analyze", "tictactoe", "XXXOO....", "--depth", "0")
    assert (code, out) == (2, "") and "--depth" in err
    code, out, err = cli(capsys, "analyze", "tictactoe", "XXXOO....", "--level", "godlike")
    assert (code, out) == (2, "") and "godlike" in err
    # No roll is due once a backgammon game is over: a finished Position ID takes no dice.
    for command in ("analyze", "moves"):
        code, out, _ = cli(capsys, command, "backgammon", "AAAABgAAAAAAAA", "--json")
        assert code == 0 and json.loads(out)["outcome"]["reason"] == "single"
        code, out, err = cli(capsys, command, "backgammon", "AAAABgAAAAAAAA", "--dice", "31")
        assert (code, out) == (2, "") and "no roll is due" in err


def test_analyze_batch_answers_good_bad_and_finished_lines_in_order() -> None:
    r = tablas("analyze", "tictactoe", "--batch", "-", "--json",
               stdin="XX.OO....\nXXXX\nXXXOO....\n")
    assert r.returncode == 2
    good, bad, over = (json.loads(x) for x in r.stdout.splitlines())
    assert good["position"] == "XX.OO...." and good["best_move"] is not None
    assert (good["proven"], good["distance"], good["outcome"]) == ("win", 1, None)
    assert bad == {"game": "tictactoe", "position": "XXXX", "error": bad["error"]}
    assert "XXXX" in bad["error"]
    assert over["position"] == "XXXOO...." and over["best_move"] is None
    assert (over["proven"], over["distance"]) == ("loss", 0)
    assert r.stderr.count("\n") == 1 and "XXXX" in r.stderr


def test_moves_batch_answers_good_bad_and_finished_lines_in_order() -> None:
    r = tablas("moves", "connect4", "--batch", "-", "--json", stdin="44\n48\n1212121\n")
    assert r.returncode == 2
    good, bad, over = (json.loads(x) for x in r.stdout.splitlines())
    assert len(good["moves"]) == 7 and good["outcome"] is None
    assert bad == {"game": "connect4", "position": "48", "error": bad["error"]}
    assert over["moves"] == [] and over["outcome"]["winner"] == 0


def _ended(game_id: str, start: Any, rng: random.Random | None) -> list[str]:
    """Every finished position reachable from ``start`` (``rng`` None), or the ends of 40
    random games (``rng``)."""
    game = get_game(game_id)
    if rng is not None:
        ends = []
        for _ in range(40):
            s = start
            while game.outcome(s) is None:
                s = game.apply(s, rng.choice(game.legal_moves(s)))
            ends.append(game.position_text(s))
        return ends
    found, todo, seen = [], [start], set()
    while todo:
        s = todo.pop()
        text = game.position_text(s)
        if text in seen:
            continue
        seen.add(text)
        if game.outcome(s) is not None:
            found.append(text)
        else:
            todo.extend(game.apply(s, m) for m in game.legal_moves(s))
    return found


@pytest.mark.parametrize("game_id", ["tictactoe", "connect4", "boom"])
def test_every_finished_position_is_the_result_for_the_side_whose_turn_it_would_be(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, game_id: str,
) -> None:
    """Each game's end, judged apart from the engine's answer: the seat whose turn it would
    be is the one that did not act last (the positions' texts count the actions)."""
    game = get_game(game_id)
    every = game_id == "tictactoe"
    ends = _ended(game_id, game.initial(), None if every else random.Random(20))
    if every:  # the well-known count: 626 won by X, 316 by O, 16 full boards drawn
        assert len(ends) == 958
    batch = tmp_path / "ends.txt"
    batch.write_text("\n".join(ends) + "\n")
    code, out, _ = cli(capsys, "analyze", game_id, "--batch", str(batch))
    assert code == 0
    answers = [json.loads(line) for line in out.splitlines()]
    assert [a["position"] for a in answers] == ends
    for text, a in zip(ends, answers, strict=True):
        actions = 9 - text.count(".") if game_id == "tictactoe" else len(text)
        last_to_act = (actions - 1) % 2
        winner = a["outcome"]["winner"]
        want = "draw" if winner is None else "loss" if winner == last_to_act else "win"
        assert (a["proven"], a["distance"], a["best_move"], a["pv"]) == (want, 0, None, []), text
        assert a["score"] == {"win": 1_000_000, "loss": -1_000_000, "draw": 0}[want]
    if game_id != "boom":  # only BOOM's misère rule lets the side to move have won
        assert all(a["proven"] != "win" for a in answers)
    code, out, _ = cli(capsys, "moves", game_id, "--batch", str(batch))
    assert code == 0 and all(json.loads(line)["moves"] == [] for line in out.splitlines())
