"""The fair share of the bot workers, measured (contract section 15; docs/benchmarks.md).

A real ``tablas serve`` (``--bot-workers 2``) on loopback; a player of one address
(127.0.0.3) plays Connect-4 against the ``easy`` bot, moving as soon as the bot has answered,
and the bot's reply times are taken (a move sent to the bot's update): first on the idle
server, then while another address (127.0.0.2) holds every bot game it may at once (its
``--max-rooms-per-address`` rooms against a strong bot, each answered at once, so that a
decision of its is always waiting). The goal: the loaded median within 2× the idle median
plus 50 ms.

``--baseline REV`` runs the same against another revision of this repository (checked out
into a temporary worktree, run through :mod:`tools.checkout`), in the same run, one server
after the other::

    python -m tools.fair_bench                      # this checkout
    python -m tools.fair_bench --baseline 01b8f95   # and the code before the fair share
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import websockets

from tools.checkout import python_path, server_module

ROOT = Path(__file__).resolve().parent.parent
HOG, PLAYER = "127.0.0.2", "127.0.0.3"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Conn:
    """One WebSocket from ``source``: requests answered by ``re``, the rest in a queue."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.n = 0
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.other: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, port: int, source: str, name: str) -> Conn:
        sock = socket.socket()
        sock.bind((source, 0))
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        ws = await websockets.connect(f"ws://127.0.0.1:{port}/ws", sock=sock,
                                      max_size=2**22, compression=None)
        c = cls(ws)
        await c.request({"type": "hello", "name": name, "token": None})
        return c

    async def _read(self) -> None:
        async for raw in self.ws:
            m = json.loads(raw)
            fut = self.waiting.pop(m.get("re", -1), None)
            if fut is not None:
                fut.set_result(m)
            else:
                self.other.put_nowait(m)

    async def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        fut = asyncio.get_running_loop().create_future()
        self.waiting[self.n] = fut
        await self.ws.send(json.dumps(dict(msg, id=self.n)))
        answer = await fut
        if answer.get("type") == "error":
            raise RuntimeError(f"{msg['type']}: {answer}")
        return answer

    def send(self, msg: dict[str, Any]) -> None:
        self.n += 1
        asyncio.get_running_loop().create_task(self.ws.send(json.dumps(dict(msg, id=self.n))))


async def hog(port: int, rooms: int, game: str, level: str) -> Conn:
    """``rooms`` games against ``level`` from the hog's address, each answered at once."""
    c = await Conn.open(port, HOG, "Hog")
    for _ in range(rooms):
        try:
            await c.request({"type": "create_room", "game": game, "seats": [
                {"kind": "human"}, {"kind": "bot", "level": level}], "join_seat": 0})
        except RuntimeError:  # the address's cap: it holds every room it may
            break

    async def answer() -> None:
        while True:
            m = await c.other.get()
            if m.get("type") in ("room", "update") and m.get("status") == "playing" \
                    and m.get("to_move") == 0 and m.get("legal_moves"):
                c.send({"type": "move", "room_id": m["room_id"], "ply": m["ply"],
                        "move": m["legal_moves"][0]})

    c.reader.add_done_callback(lambda _: None)
    asyncio.get_running_loop().create_task(answer())
    return c


async def replies(port: int, moves: int) -> list[float]:
    """The easy bot's reply times (ms) over ``moves`` moves, new games as games end."""
    c = await Conn.open(port, PLAYER, "Player")
    out: list[float] = []
    while len(out) < moves:
        made = await c.request({"type": "create_room", "game": "connect4", "seats": [
            {"kind": "human"}, {"kind": "bot", "level": "easy"}], "join_seat": 0})
        room = made["room_id"]
        view = await c.other.get()  # the snapshot
        while view.get("room_id") != room or view.get("type") != "room":
            view = await c.other.get()
        while view["status"] == "playing" and len(out) < moves:
            sent = time.perf_counter()
            mine = await c.request({"type": "move", "room_id": room, "ply": view["ply"],
                                    "move": view["legal_moves"][len(out) % 2]})
            if mine["status"] != "playing":
                break
            view = await c.other.get()
            while view.get("type") != "update" or view.get("room_id") != room:
                view = await c.other.get()
            out.append((time.perf_counter() - sent) * 1000)
    await c.ws.close()
    return out


async def measure(src: Path, moves: int, rooms: int, game: str, level: str
                  ) -> dict[str, Any]:
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=python_path(src))
        proc = subprocess.Popen(
            [sys.executable, "-m", f"{server_module(src)}.cli", "serve", "--port", str(port),
             "--db", str(Path(tmp) / "t.sqlite3"), "--bot-workers", "2",
             "--log-level", "warning"], env=env, stdout=subprocess.PIPE, cwd=tmp)
        try:
            assert proc.stdout is not None
            proc.stdout.readline()  # the page's address: it serves
            await replies(port, 4)  # the workers started
            idle = await replies(port, moves)
            await hog(port, rooms, game, level)
            await asyncio.sleep(3.0)  # the hog's line fills
            loaded = await replies(port, moves)
        finally:
            proc.terminate()
            proc.wait(20)
    idle_ms, loaded_ms = statistics.median(idle), statistics.median(loaded)
    loaded.sort()
    return {"code": str(src), "idle_median_ms": round(idle_ms, 1),
            "loaded_median_ms": round(loaded_ms, 1),
            "loaded_p90_ms": round(loaded[int(0.9 * (len(loaded) - 1))], 1),
            "loaded_max_ms": round(max(loaded), 1),
            "goal_ms": round(2 * idle_ms + 50, 1), "met": loaded_ms <= 2 * idle_ms + 50}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--moves", type=int, default=30, help="easy-bot replies measured per phase")
    p.add_argument("--rooms", type=int, default=40, help="the hog's rooms (its cap stops it)")
    p.add_argument("--game", default="boom", help="the hog's game")
    p.add_argument("--level", default="hard", help="the hog's bot level")
    p.add_argument("--baseline", metavar="REV", help="also measure this revision, same run")
    args = p.parse_args(argv)
    sources = [ROOT]
    worktree = None
    if args.baseline:
        worktree = Path(tempfile.mkdtemp()) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree),
                        args.baseline], check=True, capture_output=True)
        sources.append(worktree)
    try:
        for src in sources:
            row = asyncio.run(measure(src, args.moves, args.rooms, args.game, args.level))
            if worktree is not None:
                row["code"] = args.baseline if src == worktree else "this checkout"
            print(json.dumps(row), flush=True)
    finally:
        if worktree is not None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(worktree)], check=False, capture_output=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
