"""A flood of explain trees against a real ``tablas serve`` (not shipped): does the server
keep people's moves and its bots' replies quick while one address asks for the largest tree
``/api/explain`` accepts as fast as it can?

    python -m tools.explain_flood [--seconds 20] [--flooders 6] [--baseline ../old-checkout]

Per run, a fresh ``tablas serve`` (``python -m server.cli serve``, run from the checkout, so
``--baseline DIR`` runs that checkout's server; the WebSocket's per-address limits are lifted
as in :mod:`tools.load`, the measuring clients all come from 127.0.0.1; the HTTP limits stay
as they are) and, for ``--seconds``:

* people's moves: :data:`PVP_GAMES` person-against-person games (tic-tac-toe and Connect-4,
  :func:`tablas.server.server_bench.pvp_game`), a move every :data:`THINK_S` in each, each move's
  round trip (move → own update);
* the easy bot: one person playing Connect-4 against ``easy``, each reply's time (the
  person's move acknowledged → the bot's move arrives), a move every :data:`THINK_S`; the
  first reply, which starts the bot pool's processes, is left out;
* flooded runs only: ``--flooders`` loops in a process of their own, from 127.0.0.2, each
  asking ``/api/explain?game=random&branching=70&depth=2`` (4,971 nodes, the largest tree
  accepted: depth 3 needs branching 16 or less) and reading the whole answer, one after the
  other.

Quiet and flooded runs alternate, this checkout's and the baseline's side by side, so both
see the same machine. docs/benchmarks.md has the figures and the command.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from tablas.server.client import ProtocolClient
from tablas.server.server_bench import percentile, pvp_game

from tools.checkout import python_path, server_module

ROOT = Path(__file__).resolve().parent.parent
FLOOD_TARGET = "/api/explain?game=random&branching=70&depth=2"
FLOOD_SOURCE = "127.0.0.2"
PVP_GAMES = 8
THINK_S = 0.1
EASY = {"kind": "bot", "level": "easy"}


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Server:
    """``tablas serve`` from ``checkout``, on a fresh database, until :meth:`stop`."""

    def __init__(self, checkout: Path, tmp: str) -> None:
        self.port = _free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", f"{server_module(checkout)}.cli", "serve",
             "--port", str(self.port),
             "--db", str(Path(tmp) / f"flood-{self.port}.db"), "--bot-workers", "2",
             "--max-msgs-per-address", "0", "--max-conns-per-address", "0",
             "--log-level", "warning"],
            cwd=checkout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": python_path(checkout)},
        )
        deadline = time.time() + 30
        while True:
            try:
                # The page: 200 once the server serves, in a checkout of any age (one that
                # listens before it serves answers 503 until then; /readyz is newer).
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=1):
                    break
            except OSError:
                if time.time() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"{checkout}: the server did not start") from None
                time.sleep(0.1)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# --- the flood, in a process of its own -------------------------------------------------------


async def _ask(port: int) -> int:
    """One request for the tree from :data:`FLOOD_SOURCE`, read to its end; its status."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port,
                                                   local_addr=(FLOOD_SOURCE, 0))
    try:
        writer.write(f"GET {FLOOD_TARGET} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        head = await reader.readuntil(b"\r\n\r\n")
        await reader.read()  # the server closes after its answer
        return int(head.split(b" ", 2)[1])
    finally:
        writer.close()


async def _flood_async(port: int, flooders: int, seconds: float) -> dict[str, int]:
    end = time.perf_counter() + seconds
    statuses: Counter[str] = Counter()

    async def loop() -> None:
        while time.perf_counter() < end:
            try:
                statuses[str(await _ask(port))] += 1
            except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
                statuses["failed"] += 1

    await asyncio.gather(*(loop() for _ in range(flooders)))
    return dict(statuses)


def _flood(port: int, flooders: int, seconds: float, out: Any) -> None:
    out.send(asyncio.run(_flood_async(port, flooders, seconds)))


# --- what a person sees ----------------------------------------------------------------------


async def _people(url: str, seconds: float, rtts: list[float]) -> int:
    end = time.perf_counter() + seconds
    rng = random.Random(1)

    async def loop(i: int) -> int:
        n = 0
        while time.perf_counter() < end:
            n += await pvp_game(url, ("tictactoe", "connect4")[i % 2],
                                random.Random(rng.random()), rtts, think_s=THINK_S)
        return n

    return sum(await asyncio.gather(*(loop(i) for i in range(PVP_GAMES))))


async def _against_easy(url: str, seconds: float, replies: list[float]) -> None:
    """Connect-4 games against the easy bot, the person moving first, until ``seconds``."""
    end = time.perf_counter() + seconds
    rng = random.Random(2)
    me = await ProtocolClient.open(url, "flood-person")
    try:
        while time.perf_counter() < end:
            created = await me.request({"type": "create_room", "game": "connect4",
                                        "options": {}, "seats": [{"kind": "human"}, EASY],
                                        "join_seat": 0})
            room = created["room_id"]
            view = await me.next_of(lambda m: m.get("type") == "room" and m.get("status")
                                    == "playing" and m.get("to_move") == 0)
            while view["status"] == "playing" and time.perf_counter() < end:
                await asyncio.sleep(THINK_S)
                mine = await me.request({"type": "move", "room_id": room, "ply": view["ply"],
                                         "move": rng.choice(view["legal_moves"])})
                t0 = time.perf_counter()
                if mine["status"] != "playing":
                    break
                view = await me.next_of(lambda m, p=mine["ply"]: m.get("type") == "update"
                                        and m.get("ply", 0) > p)
                replies.append((time.perf_counter() - t0) * 1000)
    finally:
        await me.close()


async def _measure(url: str, seconds: float) -> dict[str, Any]:
    rtts: list[float] = []
    replies: list[float] = []
    moves, _ = await asyncio.gather(_people(url, seconds, rtts),
                                    _against_easy(url, seconds, replies))
    replies = replies[1:]  # the first started the bot pool's processes
    return {
        "moves": moves,
        "move_p50_ms": round(statistics.median(rtts), 1),
        "move_p99_ms": round(percentile(rtts, 99), 1),
        "easy_replies": len(replies),
        "easy_p50_ms": round(statistics.median(replies), 1),
        "easy_max_ms": round(max(replies), 1),
    }


def run(checkout: Path, flooded: bool, seconds: float, flooders: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tablas-flood-") as tmp:
        server = Server(checkout, tmp)
        try:
            flood = None
            if flooded:
                ours, theirs = multiprocessing.Pipe(duplex=False)
                flood = multiprocessing.get_context("spawn").Process(
                    target=_flood, args=(server.port, flooders, seconds + 1, theirs))
                flood.start()
                time.sleep(1.0)  # the flood is under way before the measurement starts
            result = asyncio.run(_measure(server.url, seconds))
            if flood is not None:
                result["flood"] = ours.recv()
                flood.join()
            return result
        finally:
            server.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.explain_flood", description=__doc__
                                .split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--flooders", type=int, default=6)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--baseline", type=Path, default=None,
                   help="another checkout whose server runs side by side with this one's")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    sides = {"this": ROOT}
    if args.baseline is not None:
        sides["baseline"] = args.baseline.resolve()
    results: list[dict[str, Any]] = []
    for r in range(args.rounds):
        for flooded in (False, True):
            for side, checkout in sides.items():
                out = run(checkout, flooded, args.seconds, args.flooders)
                out.update(side=side, flooded=flooded, round=r)
                results.append(out)
                if not args.json:
                    flood = out.get("flood")
                    print(f"{side:<9} {'flooded' if flooded else 'quiet':<8} "
                          f"move p50 {out['move_p50_ms']:>6} ms p99 {out['move_p99_ms']:>7} ms "
                          f"({out['moves']} moves); easy bot p50 {out['easy_p50_ms']:>7} ms "
                          f"max {out['easy_max_ms']:>7} ms ({out['easy_replies']} replies)"
                          + (f"; flood answers {flood}" if flood else ""), flush=True)
    if args.json:
        print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
