"""The Connect-4 solver's compiled kernel against its pure-Python search: the same scores and
the same node counts on Pons' test sets and on random positions, its budget, and the choice
between the two (``TABLAS_C4_KERNEL``), falling back to Python where nothing can be built."""

from __future__ import annotations

import logging
import random
from pathlib import Path

import pytest
from c4kernel_support import need_kernel
from hypothesis import given, settings
from hypothesis import strategies as st
from pons_support import pons_data
from tablas.engine.games import get_game
from tablas.engine.games.connect4 import C4State
from tablas.engine.search import c4kernel
from tablas.engine.search.connect4_solver import Connect4Solver, SolverTimeout

C4 = get_game("connect4")


@pytest.fixture(scope="module")
def solvers() -> tuple[Connect4Solver, Connect4Solver]:
    need_kernel("c")
    return Connect4Solver(kernel="python"), Connect4Solver(kernel="c")


def both(solvers: tuple[Connect4Solver, Connect4Solver], s: C4State) -> tuple[int, int]:
    """The score of ``s`` by each search from empty tables; asserts they agree, scores and
    node counts both. Returns (score, nodes)."""
    out = []
    for solver in solvers:
        solver.clear()
        solver.nodes = 0
        out.append((solver.solve(s), solver.nodes))
    assert out[0] == out[1], (s.history, out)
    return out[0]


@pytest.mark.parametrize("name,limit", [("Test_L3_R1", None), ("Test_L2_R1", None),
                                        ("Test_L2_R2", 12)])
def test_the_kernel_and_python_agree_with_pons_scores_and_node_counts(
        solvers: tuple[Connect4Solver, Connect4Solver], name: str, limit: int | None) -> None:
    rows = [ln.split() for ln in (pons_data() / name).read_text().split("\n") if ln.strip()]
    for moves, score in rows[:limit]:
        assert both(solvers, C4.parse_position(moves))[0] == int(score), moves


def _midgame(seed: int, stones: int) -> C4State | None:
    """A random position of ``stones`` stones, none of whose moves ended the game (each move
    drawn among those that do not, where there are some); None where there were none."""
    rng = random.Random(seed)
    s = C4.initial()
    for _ in range(stones):
        going = [t for t in (C4.apply(s, m) for m in C4.legal_moves(s))
                 if C4.outcome(t) is None]
        if not going:
            return None
        s = rng.choice(going)
    return s


@settings(max_examples=40)
@given(st.integers(0, 2**32), st.integers(20, 41))
def test_the_kernel_and_python_agree_on_random_positions(seed: int, stones: int) -> None:
    need_kernel("c")
    s = _midgame(seed, stones)
    if s is None:
        return
    py, c = Connect4Solver(kernel="python"), Connect4Solver(kernel="c")
    assert py.best_moves(s) == c.best_moves(s), s.history
    assert py.nodes == c.nodes, s.history


def test_a_reused_kernel_table_keeps_every_answer_exact() -> None:
    """One kernel solver across many positions (no clearing, as the bots use it) and one
    that clears: the same scores."""
    need_kernel("c")
    rows = [ln.split() for ln in (pons_data() / "Test_L2_R1").read_text().split("\n")
            if ln.strip()][:300]
    kept = Connect4Solver(kernel="c")
    for moves, score in rows:
        assert kept.solve(C4.parse_position(moves)) == int(score), moves


def test_the_kernel_keeps_its_budget_and_its_table_survives_a_timeout() -> None:
    need_kernel("c")
    ticks = iter(range(10**9))
    solver = Connect4Solver(clock=lambda: next(ticks) / 1000, kernel="c")  # +1 ms a look
    s = C4.parse_position("44")  # far too deep to solve in a few ms
    with pytest.raises(SolverTimeout):
        solver.solve(s, time_ms=5)
    assert 4096 <= solver.nodes <= 6 * 4096
    easy = C4.parse_position("2252576253462244111563365343671351441")  # Test_L3_R1's first
    rows = (pons_data() / "Test_L3_R1").read_text().split()
    assert rows[0] == easy.history
    assert solver.solve(easy, time_ms=10_000) == int(rows[1])


def test_the_choice_of_search(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABLAS_C4_KERNEL", "python")
    assert Connect4Solver().path == "python"
    monkeypatch.setenv("TABLAS_C4_KERNEL", "fortran")
    with pytest.raises(ValueError, match="TABLAS_C4_KERNEL"):
        Connect4Solver()
    monkeypatch.delenv("TABLAS_C4_KERNEL")
    expected = "c" if c4kernel.compiler() is not None else "python"
    if expected == "c":
        need_kernel("c")
    assert Connect4Solver().path == expected  # auto


@pytest.mark.parametrize("how", ["no compiler", "a failing compiler"])
def test_auto_falls_back_to_python_silently_and_c_says_why(
        how: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(c4kernel, "_loaded", {})
    monkeypatch.setattr(c4kernel, "_errors", {})
    if how == "no compiler":
        monkeypatch.setattr(c4kernel, "compiler", lambda: None)
    else:
        broken = tmp_path / "cc"
        broken.write_text("#!/bin/sh\necho 'no luck' >&2\nexit 1\n")
        broken.chmod(0o755)
        monkeypatch.setenv("TABLAS_CACHE", str(tmp_path / "cache"))
        monkeypatch.setenv("CC", str(broken))  # a compiler that fails every build
    with caplog.at_level(logging.DEBUG, logger="tablas.engine.search.c4kernel"):
        solver = Connect4Solver(kernel="auto")
        assert solver.path == "python"
        assert solver.solve(C4.parse_position("2252576253462244111563365343671351441")) == -1
        Connect4Solver(kernel="auto").solve(C4.parse_position("22525762534622441115633653"))
    assert [r.levelno for r in caplog.records] == [logging.DEBUG]  # once a process
    with pytest.raises(c4kernel.KernelUnavailable, match="compiler" if how == "no compiler"
                       else "cc failed .1.: no luck"):
        Connect4Solver(kernel="c").solve(C4.parse_position("44"))
