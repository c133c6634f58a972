"""``tablas bench``: speed figures of the engine, each with its unit.

Figures come from seeded random games, so two runs measure the same work; the clock is
``time.perf_counter`` and each figure is the best of a few repeats, the usual way to keep
noise from a busy machine out of a throughput number.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from tablas.engine.core import Game
from tablas.engine.games import get_game

Result = dict[str, Any]


def _best_rate(work: Callable[[], int], repeats: int) -> float:
    """Items per second of the fastest of ``repeats`` runs of ``work`` (which returns items)."""
    best = 0.0
    for _ in range(repeats):
        t0 = time.perf_counter()
        n = work()
        dt = time.perf_counter() - t0
        best = max(best, n / dt)
    return best


def sample_decisions(game: Game[Any, Any], games: int, seed: int) -> list[Any]:
    """Every decision state of ``games`` seeded random games (chance resolved at random)."""
    rng = random.Random(seed)
    states: list[Any] = []
    for _ in range(games):
        s = game.initial()
        while game.outcome(s) is None:
            if game.is_chance(s):
                outs = game.chance_outcomes(s)
                s = game.apply_chance(
                    s, rng.choices([o for o, _ in outs], weights=[p for _, p in outs])[0]
                )
                continue
            states.append(s)
            s = game.apply(s, rng.choice(game.legal_moves(s)))
    return states


def bench_backgammon_plays(quick: bool) -> list[Result]:
    game = get_game("backgammon")
    positions = [
        s for s in sample_decisions(game, 4 if quick else 40, seed=1) if game.legal_moves(s)
    ]
    # Only checker-play decisions: cube actions are trivial to list.
    positions = [s for s in positions if "play" in game.move_to_json(game.legal_moves(s)[0])]
    plays = sum(len(game.legal_moves(s)) for s in positions)

    def work() -> int:
        for s in positions:
            game.legal_moves(s)
        return len(positions)

    per_pos = _best_rate(work, 1 if quick else 3)
    return [
        {
            "name": "backgammon: plays generated",
            "value": per_pos * plays / len(positions),
            "unit": "plays/s",
            "note": f"{len(positions)} positions from seeded random games, "
            f"{plays / len(positions):.1f} plays each",
        },
        {"name": "backgammon: positions generated", "value": per_pos, "unit": "positions/s"},
    ]


def bench_connect4_apply(quick: bool) -> list[Result]:
    game = get_game("connect4")
    rng = random.Random(2)
    lines: list[list[int]] = []
    for _ in range(50 if quick else 500):
        s, line = game.initial(), []
        while game.outcome(s) is None:
            m = rng.choice(game.legal_moves(s))
            line.append(m)
            s = game.apply(s, m)
        lines.append(line)
    total = sum(map(len, lines))
    start = game.initial()
    apply = game.apply

    def work() -> int:
        for line in lines:
            s = start
            for m in line:
                s = apply(s, m)
        return total

    return [
        {
            "name": "connect4: moves applied (protocol apply)",
            "value": _best_rate(work, 1 if quick else 5),
            "unit": "moves/s",
            "note": f"{len(lines)} seeded random games, {total} moves",
        }
    ]


def bench_connect4_movegen(quick: bool) -> list[Result]:
    game = get_game("connect4")
    states = sample_decisions(game, 50 if quick else 500, seed=3)

    def work() -> int:
        for s in states:
            game.legal_moves(s)
        return len(states)

    return [
        {
            "name": "connect4: move lists generated",
            "value": _best_rate(work, 1 if quick else 5),
            "unit": "positions/s",
        }
    ]


def bench_search_nodes(quick: bool) -> list[Result]:
    """Alpha-beta nodes per second through the protocol, each game at a fixed depth."""
    from tablas.engine.search.alphabeta import Limits
    from tablas.engine.search.profiles import engine_for

    cases = [
        ("tictactoe", "", 9),
        ("grundy", "16", 30),
        ("connect4", "", 7 if quick else 9),
        ("boom", "", 5 if quick else 7),
    ]
    out = []
    for game_id, position, depth in cases:
        game = get_game(game_id)
        state = game.parse_position(position) if position else game.initial()
        engine = engine_for(game, state)
        t0 = time.perf_counter()
        r = engine.search(state, Limits(depth=depth))
        dt = time.perf_counter() - t0
        out.append(
            {
                "name": f"{game_id}: alpha-beta nodes",
                "value": r.nodes / dt,
                "unit": "nodes/s",
                "note": f"from {'the start' if not position else repr(position)}, "
                f"depth {r.depth}, {r.nodes} nodes",
            }
        )
    return out


def connect4_data_dir() -> Path | None:
    """Pons' test sets: ``$TABLAS_C4_DATA``, else ``shared/data/connect4`` beside the repo."""
    env = os.environ.get("TABLAS_C4_DATA")
    for cand in (
        Path(env) if env else None,
        Path(__file__).resolve().parents[2] / "shared" / "data" / "connect4",
        Path.cwd().parent / "shared" / "data" / "connect4",
    ):
        if cand is not None and cand.is_dir():
            return cand
    return None


# Pons' published mean time per position of his C++ solver (the issue's goal compares with
# these); a build of it on this machine class gave 44 µs and 6.6 ms.
PONS_CPP_MS = {"Test_L2_R1": 0.046, "Test_L2_R2": 4.5}


def time_connect4_solver(
    kernel: str, rows: list[list[str]]
) -> tuple[float, int, int]:
    """(mean ms a position, nodes, wrong answers) of Pons' positions ``rows`` (moves, score)
    solved by the search ``kernel`` (``"c"`` or ``"python"``), the table cleared before each
    position and the clock around the solve alone."""
    from tablas.engine.search.connect4_solver import Connect4Solver

    game = get_game("connect4")
    solver = Connect4Solver(kernel=kernel)
    total, nodes, wrong = 0.0, 0, 0
    for moves, score in rows:
        state = game.parse_position(moves)
        solver.clear()
        solver.nodes = 0
        t0 = time.perf_counter()
        got = solver.solve(state)
        total += time.perf_counter() - t0
        nodes += solver.nodes
        wrong += got != int(score)
    return total / len(rows) * 1000, nodes, wrong


def read_connect4_set(data: Path, name: str, n: int | None = None) -> list[list[str]]:
    """The first ``n`` (moves, score) rows of Pons' test set ``name``."""
    rows = [ln.split() for ln in (data / name).read_text().split("\n") if ln.strip()]
    return rows[:n]


def bench_connect4_solver(quick: bool) -> list[Result]:
    """Mean exact-solve time per position on Pons' sets, the table cleared before each, by
    each search: the compiled kernel (where a C compiler exists) and the pure-Python one."""
    from tablas.engine.search import c4kernel

    data = connect4_data_dir()
    if data is None:
        return []  # Pons' sets live in shared/data/connect4 beside the repo ($TABLAS_C4_DATA)
    sizes = {"Test_L3_R1": 1000, "Test_L2_R1": 1000, "Test_L2_R2": 60}
    if quick:
        sizes = {"Test_L3_R1": 20, "Test_L2_R1": 5}
    kernels = ["c", "python"] if c4kernel.library() is not None else ["python"]
    out = []
    for name, n in sizes.items():
        rows = read_connect4_set(data, name, n)
        for kernel in kernels:
            mean_ms, nodes, wrong = time_connect4_solver(kernel, rows)
            note = (f"{len(rows)} positions, {wrong} wrong, {nodes:,} nodes, "
                    f"{nodes / (mean_ms * len(rows)) * 1000:,.0f} nodes/s")
            pons = PONS_CPP_MS.get(name)
            if pons:
                note += f", {mean_ms / pons:.1f}x Pons' C++ ({pons * 1000:g} µs)"
            out.append({"name": f"connect4 solver ({kernel}): mean time, {name}",
                        "value": mean_ms, "unit": "ms", "note": note})
    return out


def bench_bgnet(quick: bool) -> list[Result]:
    """The backgammon network's evaluations per second, one by one and in bulk: 17 positions
    a call (a decision's plays: the root of a search) and 300 (about what a 2-ply search asks
    for at once: every reply to every roll after one play)."""
    from tablas.engine.search.bgnet import default_net

    game = get_game("backgammon")
    positions = [
        (s.boards[s.turn], s.boards[1 - s.turn])
        for s in sample_decisions(game, 4 if quick else 60, seed=6)
    ]
    net = default_net()

    def one_by_one() -> int:
        for me, opp in positions:
            net.equity(me, opp)
        return len(positions)

    def in_bulk(size: int) -> Callable[[], int]:
        chunks = [positions[i : i + size] for i in range(0, len(positions) - size + 1, size)]
        chunks = chunks or [positions]

        def run() -> int:
            for chunk in chunks:
                net.equities(chunk)
            return sum(map(len, chunks))

        return run

    note = f"{len(positions)} positions of seeded random games"
    return [
        {"name": "backgammon: network evaluations, one by one",
         "value": _best_rate(one_by_one, 5), "unit": "positions/s", "note": note},
        *({"name": f"backgammon: network evaluations, {size} a call",
           "value": _best_rate(in_bulk(size), 5), "unit": "positions/s", "note": note}
          for size in (17, 300)),
    ]


def bench_backgammon_decisions(quick: bool) -> list[Result]:
    """Median and worst decision time of each backgammon level over sampled positions."""
    from tablas.engine.search.bots import decide

    game = get_game("backgammon")
    states = [
        s
        for s in sample_decisions(game, 2 if quick else 6, seed=4)
        if s.phase == "move" and len(game.legal_moves(s)) > 1
    ][: 5 if quick else 40]
    out = []
    for level in ("random", "easy", "medium", "hard", "max"):
        times = []
        for i, s in enumerate(states):
            t0 = time.perf_counter()
            decide("backgammon", s, level, seed=i)
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        out.append(
            {
                "name": f"backgammon decision time, {level}",
                "value": times[len(times) // 2],
                "unit": "ms (median)",
                "note": f"{len(times)} positions; max {times[-1]:.0f} ms",
            }
        )
    return out


BENCHMARKS: list[Callable[[bool], list[Result]]] = [
    bench_connect4_apply,
    bench_connect4_movegen,
    bench_backgammon_plays,
    bench_bgnet,
    bench_search_nodes,
    bench_connect4_solver,
    bench_backgammon_decisions,
]


def run_benchmarks(quick: bool = False, progress: TextIO | None = None) -> list[Result]:
    """Runs every benchmark; ``progress`` (e.g. stderr) gets a line as each one starts."""
    results: list[Result] = []
    for i, bench in enumerate(BENCHMARKS, 1):
        if progress is not None:
            print(f"[{i}/{len(BENCHMARKS)}] {bench.__name__}", file=progress, flush=True)
        results.extend(bench(quick))
    return results
