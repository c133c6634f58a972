"""``tablas moves`` as a user runs it: a real subprocess, the contract's output and errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.bench import connect4_data_dir

ROOT = Path(__file__).resolve().parent.parent


def tablas(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
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


@pytest.mark.skipif(connect4_data_dir() is None, reason="Pons' positions are not beside the repo")
def test_the_easyai_comparison_solves_the_same_positions() -> None:
    r = subprocess.run([sys.executable, "-m", "tools.compare_easyai", "--quick", "--json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    (figure,) = json.loads(r.stdout)["benchmarks"]
    assert figure["name"] == "easyAI Negamax / our solver, Test_L3_R1"
    assert figure["value"] > 0 and "agree on 2" in figure["note"]
