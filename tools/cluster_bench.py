"""The cluster's benchmark (not shipped): moves/s, p99 and CPU per move, one SQLite node beside
1, 2 and 3 cluster nodes (PostgreSQL and Redis), in the same run on the same machine.

    python -m tools.cluster_bench [--games 40 --seconds 10]

Each configuration gets fresh servers: a ``tablas serve`` on a SQLite file; then a PostgreSQL
cluster (``initdb`` in a temporary folder, as the tests make it: ``tests/pg_support.py``) and
a ``redis-server`` (``tests/redis_support.py``), PostgreSQL with ``fsync`` on (unlike the
tests' cluster), with 1, 2 or 3 ``tablas serve --redis`` nodes.
``--games`` game loops play Connect-4 and tic-tac-toe person against person (random legal
moves, as fast as answers come) for ``--seconds``; with several nodes each game's two players
sit on different nodes (player 0 on node i, who creates the room and so owns it, player 1 on
node i + 1), so every other move is forwarded and every update fanned out across nodes.

Per configuration: moves/s, the acknowledged move's p50/p99 (``move`` sent → the mover's own
``update``), and the CPU seconds per move of every server process, read from /proc (user +
system, with their reaped children): the nodes, PostgreSQL's (the postmaster and its
backends), Redis; the load generator's own is shown apart. docs/benchmarks.md has figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the tests' PostgreSQL and Redis (not shipped)

from pg_support import Cluster, pg_bin  # noqa: E402
from redis_support import RedisServer  # noqa: E402
from server_support import Subprocess  # noqa: E402
from tablas.server.server_bench import percentile, pvp_game  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid`` and of its reaped children (/proc/PID/stat)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICKS


def descendants(pid: int) -> list[int]:
    """``pid`` and every process under it."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_of(pids: list[int]) -> float:
    return sum(cpu_seconds(p) for root in pids for p in descendants(root))


async def load(urls: list[str], games: int, seconds: float) -> tuple[int, list[float]]:
    rtts: list[float] = []
    end = time.perf_counter() + seconds

    async def loop(i: int) -> int:
        rng = random.Random(i)
        n = 0
        while time.perf_counter() < end:
            n += await pvp_game(urls[i % len(urls)], ("connect4", "tictactoe")[i % 2], rng,
                                rtts, other_url=urls[(i + 1) % len(urls)],
                                refused_ends_game=True)
        return n

    return sum(await asyncio.gather(*(loop(i) for i in range(games)))), rtts


def measure(name: str, urls: list[str], servers: dict[str, list[int]], games: int,
            seconds: float) -> dict[str, Any]:
    """One configuration's run: a short warm-up, then the window that is measured."""
    asyncio.run(load(urls, games, 1.0))
    before = {k: cpu_of(v) for k, v in servers.items()}
    mine = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    moves, rtts = asyncio.run(load(urls, games, seconds))
    wall = time.perf_counter() - t0
    after = {k: cpu_of(v) for k, v in servers.items()}
    me = resource.getrusage(resource.RUSAGE_SELF)
    cpu = {k: after[k] - before[k] for k in servers}
    return {
        "config": name, "moves": moves, "moves_per_s": round(moves / wall, 1),
        "p50_ms": round(percentile(rtts, 50), 2), "p99_ms": round(percentile(rtts, 99), 2),
        "cpu_ms_per_move": {k: round(v / max(moves, 1) * 1000, 3) for k, v in cpu.items()},
        "servers_cpu_ms_per_move": round(sum(cpu.values()) / max(moves, 1) * 1000, 3),
        "load_generator_cpu_ms_per_move": round(
            (me.ru_utime + me.ru_stime - mine.ru_utime - mine.ru_stime)
            / max(moves, 1) * 1000, 3),
    }


@contextmanager
def started(procs: list[Subprocess]) -> Iterator[None]:
    try:
        for p in procs:
            p.start()
        yield
    finally:
        for p in procs:
            p.terminate()


def run(games: int, seconds: float) -> list[dict[str, Any]]:
    results = []
    # Every player connects from 127.0.0.1: the limits per address are lifted.
    args = ["--max-msgs-per-address", "0", "--max-conns-per-address", "0",
            "--max-rooms-per-address", "0", "--abandon-after", "0"]
    with tempfile.TemporaryDirectory(prefix="tablas-cluster-bench-") as tmp_text:
        tmp = Path(tmp_text)
        single = Subprocess(tmp / "single.db", tmp / "single.log", args=args)
        with started([single]):
            assert single.proc is not None
            results.append(measure("sqlite, 1 node", [single.url],
                                   {"node": [single.proc.pid]}, games, seconds))
        bin_dir = pg_bin()
        if bin_dir is None:
            print("PostgreSQL is not installed: the cluster's rows are left out",
                  file=sys.stderr)
            return results
        for n in (1, 2, 3):
            pg = Cluster(bin_dir, fsync=True)  # durable, as SQLite's synchronous=FULL
            pg.start()
            folder = tmp / f"redis{n}"
            folder.mkdir()
            redis = RedisServer("/usr/bin/redis-server", folder)
            redis.start()
            try:
                url = pg.new_database()
                nodes = [Subprocess(url, tmp / f"node{n}-{i}.log",
                                    args=[*args, "--redis", redis.url, "--node", f"n{i}"])
                         for i in range(n)]
                with started(nodes):
                    postmaster = int((pg.data / "postmaster.pid").read_text().split()[0])
                    assert redis.proc is not None
                    servers = {"nodes": [p.proc.pid for p in nodes if p.proc is not None],
                               "postgresql": [postmaster], "redis": [redis.proc.pid]}
                    results.append(measure(f"postgresql + redis, {n} node(s)",
                                           [p.url for p in nodes], servers, games, seconds))
            finally:
                redis.stop()
                pg.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=40, help="game loops at once")
    parser.add_argument("--seconds", type=float, default=10.0, help="the measured window")
    parser.add_argument("--json", action="store_true", help="print JSON lines")
    args = parser.parse_args()
    for r in run(args.games, args.seconds):
        if args.json:
            print(json.dumps(r), flush=True)
        else:
            print(f"{r['config']:28} {r['moves_per_s']:8.1f} moves/s  p50 {r['p50_ms']:6.2f}"
                  f" ms  p99 {r['p99_ms']:7.2f} ms  servers' CPU"
                  f" {r['servers_cpu_ms_per_move']:6.3f} ms/move {r['cpu_ms_per_move']}"
                  f"  (load generator {r['load_generator_cpu_ms_per_move']} ms/move)",
                  flush=True)


if __name__ == "__main__":
    main()
