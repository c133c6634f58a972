"""``tablas match``'s speed against the floor of any line protocol (docs/benchmarks.md).

Two instant engines (the C example, examples/engines/random_engine.c, built with the
machine's cc) play Connect-4 with ``tablas match --concurrency 2``; in the same run, in
turn with it, :mod:`tools.pipe_roundtrip` measures a bare pipe round trip between two
processes. Prints each round and the medians: moves per second, the runner's own CPU time
per move (``tablas match --json``'s ``run``), the round trip's wall time, and their ratio.

    python -m tools.match_bench [--rounds 5] [--games 400]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tools.pipe_roundtrip import measure

ROOT = Path(__file__).resolve().parent.parent


def build(folder: Path) -> Path:
    binary = folder / "random_engine"
    subprocess.run(["cc", "-O2", "-o", str(binary),
                    str(ROOT / "examples" / "engines" / "random_engine.c")], check=True)
    return binary


def match(engine: Path, games: int, seed: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "tablas.server.cli", "match", "--game", "connect4",
         "--engine", f"a={engine}", "--engine", f"b={engine}", "--games", str(games),
         "--concurrency", "2", "--seed", str(seed), "--json"],
        capture_output=True, text=True, check=True)
    run: dict[str, Any] = json.loads(done.stdout)["run"]
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--games", type=int, default=400)
    ap.add_argument("--round-trips", type=int, default=20_000)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        engine = build(Path(tmp))
        for r in range(args.rounds):
            trip = measure(args.round_trips)
            run = match(engine, args.games, r)
            row = {"moves_per_second": run["moves_per_second"],
                   "cpu_us_per_move": run["cpu_us_per_move"],
                   "round_trip_us": trip["wall_us"], "round_trip_cpu_us": trip["cpu_us"],
                   "ratio": round(run["cpu_us_per_move"] / trip["wall_us"], 2)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(json.dumps({"median": {k: statistics.median(row[k] for row in rows)
                                 for k in rows[0]}}))


if __name__ == "__main__":
    main()
