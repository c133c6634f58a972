"""The store's group commit alone, side by side with another checkout's (not shipped).

    python -m tools.store_bench [--baseline DIR] [--writers 64] [--seconds 10] [--rounds 3]
    python -m tools.store_bench --db postgresql://USER@HOST/NAME [--writers 64] …

``writers`` rooms each write moves one after the other as fast as their commits return (each
``record_move`` awaited, as a room's owner does), through the ``Store`` of this checkout and,
with ``--baseline``, of another, in turn, each in a fresh process on a fresh database
(``synchronous=FULL``, as served). Per run: moves committed per second, and each move's commit
latency (from the call to its return: what a mover waits before its ``update``) p50/p99.
With ``--db`` (what ``tablas serve --db`` takes, a PostgreSQL URL say) this checkout's store
runs on that database instead, its rooms named afresh for each run.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


async def _measure(db: str, writers: int, seconds: float) -> dict[str, Any]:
    # Imported here, by the name the checkout gives its server package (``tablas.server``,
    # or ``server`` before the package): the child's PYTHONPATH says which checkout it is.
    package = os.environ.get("TABLAS_SERVER_PACKAGE", "tablas.server")
    room: Any = importlib.import_module(f"{package}.room")
    stores: Any = importlib.import_module(f"{package}.store")
    Action, SeatState, Store = room.Action, room.SeatState, stores.Store

    if "://" in db:  # a database that outlives the run: rooms of its own
        store: Any = await stores.open_store(db)
        prefix = os.urandom(4).hex()
    else:
        store, prefix = await Store.open(db), ""
    seats = [SeatState("human"), SeatState("human")]
    for i in range(writers):
        await store.create_room(f"{prefix}r{i}", "connect4", {}, seats, "playing", None, [],
                                0.0)
    latencies: list[float] = []
    end = time.perf_counter() + seconds

    async def writer(i: int) -> None:
        ply = 0
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            await store.record_move(f"{prefix}r{i}", Action(ply, ply % 2, {"column": ply % 7},
                                                    time=t0), None)
            latencies.append((time.perf_counter() - t0) * 1000)
            ply += 1

    started = time.perf_counter()
    await asyncio.gather(*(writer(i) for i in range(writers)))
    elapsed = time.perf_counter() - started
    await store.close()
    return {"server": str(Path(stores.__file__).parent.parent), "moves": len(latencies),
            "moves_per_s": round(len(latencies) / elapsed, 1), "latencies_ms": latencies}


def _run(src: Path, writers: int, seconds: float, db: str | None = None) -> dict[str, Any]:
    # The parent's helpers, imported here: the child is this file run in another checkout,
    # which may not have them.
    from tools.checkout import python_path, server_module

    with tempfile.TemporaryDirectory(prefix="tablas-store-bench-") as tmp:
        # This file as a script, from ``src``: that checkout's ``server`` comes first.
        out = subprocess.run(
            [sys.executable, __file__, "--child", db or str(Path(tmp) / "s.db"),
             "--writers", str(writers), "--seconds", str(seconds)],
            cwd=src, env={**os.environ, "PYTHONPATH": python_path(src),
                 "TABLAS_SERVER_PACKAGE": server_module(src)},
            capture_output=True, text=True, check=True)
    # Summed up here, with this checkout's helper: the child may be another checkout's.
    from tablas.server.server_bench import percentile

    result: dict[str, Any] = json.loads(out.stdout)
    latencies = result.pop("latencies_ms")
    result["commit_p50_ms"] = round(percentile(latencies, 50), 3)
    result["commit_p99_ms"] = round(percentile(latencies, 99), 3)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.store_bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", type=Path, metavar="DIR", help="another checkout")
    ap.add_argument("--writers", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--db", metavar="URL", help="this checkout's store on this database")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.db is not None and args.baseline is not None:
        ap.error("--db measures this checkout alone: no --baseline with it")
    if args.child is not None:
        print(json.dumps(asyncio.run(_measure(args.child, args.writers, args.seconds))))
        return 0
    sides = {"this": ROOT}
    if args.baseline is not None:
        sides["baseline"] = args.baseline.resolve()
    report: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
    for i in range(args.rounds):
        for name in list(sides) if i % 2 == 0 else list(reversed(sides)):
            r = _run(sides[name], args.writers, args.seconds, args.db)
            report[name].append(r)
            print(f"round {i + 1}, {name}: {r}", file=sys.stderr, flush=True)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
