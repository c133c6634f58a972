"""``tablas bench``: speed figures of the engine, each with its unit.

Figures come from seeded random games, so two runs measure the same work; the clock is
``time.perf_counter`` and each figure is the best of a few repeats, the usual way to keep
noise from a busy machine out of a throughput number.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any, TextIO

from engine.core import Game
from engine.games import get_game

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


BENCHMARKS: list[Callable[[bool], list[Result]]] = [
    bench_connect4_apply,
    bench_connect4_movegen,
    bench_backgammon_plays,
]


def run_benchmarks(quick: bool = False, progress: TextIO | None = None) -> list[Result]:
    """Runs every benchmark; ``progress`` (e.g. stderr) gets a line as each one starts."""
    results: list[Result] = []
    for i, bench in enumerate(BENCHMARKS, 1):
        if progress is not None:
            print(f"[{i}/{len(BENCHMARKS)}] {bench.__name__}", file=progress, flush=True)
        results.extend(bench(quick))
    return results
