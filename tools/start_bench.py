"""How long ``tablas serve`` takes to answer, with and without a long history (not shipped).

    python -m tools.start_bench [--rooms 40000] [--rounds 3]

Three databases: an empty one; one holding ``--rooms`` rooms that have ended (finished,
adjourned, closed, a third each; each finished or adjourned game with 12 moves); and one
holding as many games still in play, 12 moves each, between people who never come back (what
a server killed in the middle of a busy day, or one that kept every abandoned game before
rooms could end, leaves behind). All are written through the store itself. Each round starts
``tablas serve`` on each database in turn (so all see the same machine) and times it from the
spawn to the first ``200`` of ``/readyz``, then reads the server's resident memory.
docs/benchmarks.md has the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from tablas.engine.core import Outcome
from tablas.server.protocol import RoomStatus
from tablas.server.room import Action, SeatState
from tablas.server.store import Store

MOVES = 12
BATCH = 500  # rooms written concurrently: one group commit holds them


async def _fill(db: Path, rooms: int, live: bool = False) -> None:
    store = await Store.open(db)
    try:
        await store.create_player("a", "Ana", "token-a")
        await store.create_player("b", "Bo", "token-b")
        seats = [SeatState("human", None, "a", "Ana"), SeatState("human", None, "b", "Bo")]
        now = time.time()

        async def one(i: int) -> None:
            room_id = f"{i:016x}"
            kind = 1 if live else i % 3
            status: RoomStatus = "waiting" if kind == 2 else "playing"
            await store.create_room(room_id, "connect4", {}, seats, status, None, [], now - i,
                                    created_by="a")
            if kind == 2:
                await store.set_status(room_id, "closed", now)
                return
            for ply in range(MOVES):
                await store.record_move(
                    room_id, Action(ply, ply % 2, {"column": ply % 7}, (), now), None)
            if kind == 0:
                await store.record_result(room_id, Outcome(0, 1, "resign"), None, now)
            elif not live:
                await store.set_status(room_id, "adjourned", now)

        for start in range(0, rooms, BATCH):
            await asyncio.gather(*(one(i) for i in range(start, min(rooms, start + BATCH))))
    finally:
        await store.close()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _start(db: Path) -> tuple[float, float]:
    """Seconds from the spawn of ``tablas serve`` to its first ``200`` of /readyz (it
    serves); its RSS."""
    port = _free_port()
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tablas.server.cli", "serve", "--port", str(port), "--db", str(db),
         "--bot-workers", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"tablas serve exited with {proc.returncode}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.005)
        seconds = time.perf_counter() - started
        return seconds, _rss_mib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.start_bench")
    p.add_argument("--rooms", type=int, default=40_000)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        dbs = {"empty": Path(tmp, "empty.db"), "ended": Path(tmp, "ended.db"),
               "in_play": Path(tmp, "in_play.db")}
        asyncio.run(_fill(dbs["empty"], 0))
        for name, live in (("ended", False), ("in_play", True)):
            began = time.perf_counter()
            asyncio.run(_fill(dbs[name], args.rooms, live))
            print(f"{name}: wrote {args.rooms} rooms in {time.perf_counter() - began:.1f} s "
                  f"({dbs[name].stat().st_size / 2**20:.0f} MiB)", file=sys.stderr)
        rounds = []
        for _ in range(args.rounds):
            row: dict[str, float] = {}
            for name, db in dbs.items():
                seconds, rss = _start(db)
                row[f"{name}_s"], row[f"{name}_rss_mib"] = round(seconds, 3), round(rss, 1)
            rounds.append(row)
            print(json.dumps(row), file=sys.stderr)
    print(json.dumps({"rooms": args.rooms, "rounds": rounds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
