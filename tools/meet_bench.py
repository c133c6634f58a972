"""Pairing latency (not shipped): ``--seekers`` guests arriving over ``--seconds``, each
seeking the same casual game, on one SQLite node and on two nodes of a cluster (PostgreSQL and
Redis, started here as the tests start them), in the same run.

    python -m tools.meet_bench [--seekers 1000 --seconds 10]

Each seeker connects first (all before the window), then sends its ``seek`` at its arrival
time (evenly spread, in a shuffled order; on two nodes, seekers alternate between them). Two
figures per configuration, from the arrival of the second seek of a pair:

- **pairing**: its ``seek`` sent → its own ``paired`` received (the server's work: the
  take-or-add step, the room written, the messages);
- **partner told**: the same start → the ``paired`` of the seeker who was waiting, who may
  sit on the other node (the room's owner tells it through Redis).

docs/benchmarks.md has figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import websockets

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the tests' PostgreSQL and Redis (not shipped)

from pg_support import Cluster, pg_bin  # noqa: E402
from redis_support import RedisServer  # noqa: E402
from server_support import Subprocess  # noqa: E402
from tablas.server.server_bench import percentile  # noqa: E402

from tools.cluster_bench import started  # noqa: E402

SEEK = {"type": "seek", "game": "tictactoe"}
# Every seeker connects from 127.0.0.1: the limits per address are lifted.
ARGS = ["--max-msgs-per-address", "0", "--max-conns-per-address", "0",
        "--max-rooms-per-address", "0", "--abandon-after", "0", "--bot-workers", "1"]


async def _seeker(url: str, i: int, at: float, out: dict[int, dict[str, Any]]) -> None:
    async with websockets.connect(url, max_size=2**22) as ws:
        await ws.send(json.dumps({"type": "hello", "name": f"S{i}", "id": 0}))
        while json.loads(await ws.recv())["type"] != "welcome":
            pass
        await asyncio.sleep(max(0.0, at - time.perf_counter()))
        sent = time.perf_counter()
        await ws.send(json.dumps(dict(SEEK, id=1)))
        while True:
            m = json.loads(await ws.recv())
            if m["type"] == "paired":
                out[i] = {"sent": sent, "paired": time.perf_counter(), "room": m["room_id"]}
                return


async def _run(urls: list[str], seekers: int, seconds: float) -> dict[str, Any]:
    order = list(range(seekers))
    random.Random(7).shuffle(order)
    out: dict[int, dict[str, Any]] = {}
    start = time.perf_counter() + 2.0 + seekers / 500  # after every seeker has connected
    await asyncio.gather(*(
        _seeker(urls[i % len(urls)], i, start + order[i] * seconds / seekers, out)
        for i in range(seekers)))
    rooms: dict[str, list[dict[str, Any]]] = {}
    for r in out.values():
        rooms.setdefault(r["room"], []).append(r)
    pairing, told = [], []
    for pair in rooms.values():
        assert len(pair) == 2, "a room with other than two seekers"
        second = max(pair, key=lambda r: r["sent"])
        first = min(pair, key=lambda r: r["sent"])
        pairing.append((second["paired"] - second["sent"]) * 1000)
        told.append((first["paired"] - second["sent"]) * 1000)
    return {"seekers": seekers, "rooms": len(rooms),
            "pairing_p50_ms": round(percentile(pairing, 50), 2),
            "pairing_p99_ms": round(percentile(pairing, 99), 2),
            "partner_told_p50_ms": round(percentile(told, 50), 2),
            "partner_told_p99_ms": round(percentile(told, 99), 2)}


def run(seekers: int, seconds: float) -> list[dict[str, Any]]:
    results = []
    with tempfile.TemporaryDirectory(prefix="tablas-meet-bench-") as tmp_text:
        tmp = Path(tmp_text)
        single = Subprocess(tmp / "single.db", tmp / "single.log", args=ARGS)
        with started([single]):
            r = asyncio.run(_run([single.url], seekers, seconds))
            results.append({"config": "sqlite, 1 node", **r})
        bin_dir = pg_bin()
        if bin_dir is None:
            print("PostgreSQL is not installed: the cluster's row is left out", file=sys.stderr)
            return results
        pg = Cluster(bin_dir, fsync=True)
        pg.start()
        redis = RedisServer("/usr/bin/redis-server", tmp)
        redis.start()
        try:
            url = pg.new_database()
            nodes = [Subprocess(url, tmp / f"node{i}.log",
                                args=[*ARGS, "--redis", redis.url, "--node", f"n{i}"])
                     for i in range(2)]
            with started(nodes):
                r = asyncio.run(_run([p.url for p in nodes], seekers, seconds))
                results.append({"config": "postgresql + redis, 2 nodes", **r})
        finally:
            redis.stop()
            pg.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seekers", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10.0, help="the arrivals' window")
    parser.add_argument("--json", action="store_true", help="print JSON lines")
    args = parser.parse_args()
    for r in run(args.seekers, args.seconds):
        if args.json:
            print(json.dumps(r), flush=True)
        else:
            print(f"{r['config']:28} {r['rooms']} rooms  pairing p50 {r['pairing_p50_ms']} ms"
                  f" p99 {r['pairing_p99_ms']} ms  partner told p50"
                  f" {r['partner_told_p50_ms']} ms p99 {r['partner_told_p99_ms']} ms", flush=True)


if __name__ == "__main__":
    main()
