"""How our Connect-4 solver compares with easyAI's Negamax on the same positions (not shipped).

    python -m tools.compare_easyai [--quick] [--json]

Both solve Pons' test positions (``Test_L3_R1``: end games, ``Test_L2_R1``: middle games, from
``connect4_data_dir()``) to the end; the figure is how many times longer easyAI takes, and
whether the two agree on win, draw or loss. Needs ``easyAI`` (in the test extra).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time

from tablas.engine.bench import Result, connect4_data_dir
from tablas.engine.games import get_game


def bench_easyai_ratio(quick: bool) -> list[Result]:
    """The same positions solved by easyAI's Negamax (full depth, its own Connect-4)."""
    try:
        negamax_cls = importlib.import_module("easyAI").Negamax
        board_cls = importlib.import_module("easyAI.games.ConnectFour").ConnectFour
    except ImportError:
        return []  # easyAI comes with the test extra: pip install -e '.[test]'
    from tablas.engine.search.connect4_solver import Connect4Solver

    data = connect4_data_dir()
    if data is None:
        return []
    game = get_game("connect4")
    out = []
    # easyAI takes seconds on an end game and minutes on a middle game (113 s measured on
    # an L2_R1 position): a few positions already make the ratio plain.
    plan = (("Test_L3_R1", 2),) if quick else (("Test_L3_R1", 100), ("Test_L2_R1", 3))
    for name, n in plan:
        rows = [ln.split() for ln in (data / name).read_text().split("\n") if ln.strip()][:n]
        ours = theirs = 0.0
        agree = 0
        solver = Connect4Solver(kernel="python")  # Python against Python
        for moves, _ in rows:
            state = game.parse_position(moves)
            solver.clear()
            t0 = time.perf_counter()
            score = solver.solve(state)
            ours += time.perf_counter() - t0
            board = board_cls([None, None])
            for ch in moves:
                board.make_move(int(ch) - 1)
                board.switch_player()
            ai = negamax_cls(42 - len(moves))
            t0 = time.perf_counter()
            ai(board)
            theirs += time.perf_counter() - t0
            agree += (score > 0) == (ai.alpha > 0) and (score < 0) == (ai.alpha < 0)
        out.append(
            {
                "name": f"easyAI Negamax / our solver, {name}",
                "value": theirs / ours,
                "unit": "x",
                "note": f"{len(rows)} positions; easyAI {theirs / len(rows) * 1000:.1f} ms, "
                f"ours {ours / len(rows) * 1000:.2f} ms each; win/draw/loss agree on {agree}",
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.compare_easyai", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="two end-game positions only")
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args(argv)
    results = bench_easyai_ratio(args.quick)
    if args.json:
        print(json.dumps({"benchmarks": results}))
    for r in results if not args.json else []:
        print(f"{r['name']:<40} {r['value']:>10,.1f} {r['unit']}  {r['note']}")
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())
