"""The exact Connect-4 solver's two searches side by side against Pons' C++ (not shipped).

    python -m tools.c4_solver_bench [--rounds 3] [--python-l2r2 60] [--json]

Per round, each of Pons' sets (``Test_L3_R1``, ``Test_L2_R1``, ``Test_L2_R2``, from
``connect4_data_dir()``) is solved by the compiled kernel (every position) and by the
pure-Python search (every position of the first two; the first ``--python-l2r2`` of
``Test_L2_R2``, with the kernel's time on those same positions beside it), the two paths one
after the other in the same round, the table cleared before each position. Printed: each
row's median over the rounds of the mean time per position, its node count (the same every
round) and wrong answers, and the ratio to Pons' published times (46 µs on L2_R1, 4.5 ms on
L2_R2). Without a C compiler only the Python rows appear.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

from tablas.engine.bench import (
    PONS_CPP_MS,
    connect4_data_dir,
    read_connect4_set,
    time_connect4_solver,
)
from tablas.engine.search import c4kernel


def run(rounds: int, python_l2r2: int) -> list[dict[str, object]]:
    data = connect4_data_dir()
    if data is None:
        sys.exit("Pons' test sets not found: set $TABLAS_C4_DATA (see engine.bench)")
    has_c = c4kernel.library() is not None
    plan: list[tuple[str, str, int | None]] = []  # (set, path, positions: None = all)
    for name in ("Test_L3_R1", "Test_L2_R1", "Test_L2_R2"):
        few = python_l2r2 if name == "Test_L2_R2" else None
        if has_c:
            plan.append((name, "c", None))
            if few is not None:
                plan.append((name, "c", few))
        plan.append((name, "python", few))
    times: dict[int, list[float]] = {i: [] for i in range(len(plan))}
    counts: dict[int, tuple[int, int, int]] = {}
    for r in range(rounds):
        for i, (name, kernel, n) in enumerate(plan):
            rows = read_connect4_set(data, name, n)
            mean_ms, nodes, wrong = time_connect4_solver(kernel, rows)
            times[i].append(mean_ms)
            counts[i] = (len(rows), nodes, wrong)
            print(f"round {r + 1}: {name} {kernel} {len(rows)}: {mean_ms * 1000:.1f} µs",
                  file=sys.stderr, flush=True)
    out: list[dict[str, object]] = []
    for i, (name, kernel, _) in enumerate(plan):
        positions, nodes, wrong = counts[i]
        med = statistics.median(times[i])
        pons = PONS_CPP_MS.get(name)
        out.append({
            "set": name, "path": kernel, "positions": positions,
            "median_us": med * 1000, "rounds_us": [t * 1000 for t in times[i]],
            "nodes": nodes, "mean_nodes": nodes / positions, "wrong": wrong,
            "x_pons": med / pons if pons else None,
        })
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--python-l2r2", type=int, default=60,
                    help="Test_L2_R2 positions for the Python search (about 0.1 s each)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = run(args.rounds, args.python_l2r2)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print("| set | path | positions | µs a position (median of rounds) | nodes (mean) | wrong "
          "| × Pons' published |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        x = r["x_pons"]
        print(f"| {r['set']} | {r['path']} | {r['positions']} | {r['median_us']:,.1f} | "
              f"{r['nodes']:,} ({r['mean_nodes']:,.1f}) | {r['wrong']} | "
              f"{'' if x is None else f'{x:.2f}×'} |")


if __name__ == "__main__":
    main()
