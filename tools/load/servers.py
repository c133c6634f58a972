"""The servers measured, each in a process of its own and steered by lines on its stdin:
``serve-child`` (the same ``TablasServer`` as ``tablas serve``, plus a lag probe, with the rate
limit and the cap on connections per address lifted: thousands of sockets come from
127.0.0.1), ``echo-child`` (a bare ``websockets`` echo server) and ``frames-child`` (the frames
of a move and nothing else). Each prints ``{"port"}``, then answers ``reset``, ``report`` and
``quit`` with JSON lines; :class:`~tools.load.child.Child` is the other end."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import websockets
from pydantic_core import from_json
from tablas.server import views
from tablas.server.app import TablasServer
from tablas.server.protocol import json_text, with_re
from tablas.server.room import Room, SeatState
from tablas.server.server_bench import lag_probe
from tablas.server.store import Store
from websockets.asyncio.connection import broadcast

from tools.load.stats import lag_summary

MAX_ECHO_FRAME = 2**20


class _StampedLags(list[float]):
    """The lag probe's list, which also keeps when each lag was seen (``perf_counter``, the
    system's monotonic clock, which the client processes read too) and the CPU time the
    event loop's thread had used by then (the probe runs on it): its work, second by
    second."""

    def __init__(self) -> None:
        super().__init__()
        self.at: list[tuple[float, float]] = []

    def append(self, ms: float) -> None:
        self.at.append((time.perf_counter(), time.thread_time()))
        super().append(ms)


class _GcPauses:
    """The cyclic collector's pauses, by generation, from ``gc.callbacks``.

    The event loop's lag says *that* it stalled; this says whether the collector was the
    cause (a full collection walks every tracked object, some hundred per open socket).
    """

    def __init__(self) -> None:
        self._started = 0.0
        self.pauses: list[tuple[int, float]] = []

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.pauses.append((info["generation"], time.perf_counter() - self._started))

    def summary(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for gen in range(3):
            ms = [d * 1000 for g, d in self.pauses if g == gen]
            out[f"gen{gen}"] = {"n": len(ms), "total_ms": round(sum(ms), 1),
                                "max_ms": round(max(ms, default=0.0), 1)}
        return out


def _stdin_commands(loop: asyncio.AbstractEventLoop, on_line: Any) -> None:
    """A thread handing each stdin line to ``on_line`` on the loop (EOF: ``quit``)."""
    import sys
    import threading

    def pump() -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(on_line, line.strip())
        loop.call_soon_threadsafe(on_line, "quit")

    threading.Thread(target=pump, daemon=True, name="bench-stdin").start()


async def _child_main(start: Any, close: Any, store: Store | None = None) -> None:
    """Runs a child server: prints ``{"port"}``, then answers ``reset``/``report``/``quit``
    (the report has ``store``'s group commits over the window, when there is one)."""
    import sys

    loop = asyncio.get_running_loop()
    lags = _StampedLags()
    stop = asyncio.Event()
    port = await start()
    probe = asyncio.create_task(lag_probe(stop, lags))

    cpu = [time.process_time(), time.thread_time()]
    pauses = _GcPauses()
    gc.callbacks.append(pauses)
    commits = [dataclasses.replace(store.commit_stats)] if store is not None else []

    def on_line(line: str) -> None:
        # on the loop's thread: thread_time is the event loop's own CPU, process_time adds
        # the SQLite and bot-pool threads
        if line == "reset":
            lags.clear()
            lags.at.clear()
            pauses.pauses.clear()
            cpu[:] = [time.process_time(), time.thread_time()]
            if store is not None:
                commits[:] = [dataclasses.replace(store.commit_stats)]
            print(json.dumps({"ok": True}), flush=True)
        elif line == "report":
            report = lag_summary(lags) | {
                "cpu_s": round(time.process_time() - cpu[0], 3),
                "loop_cpu_s": round(time.thread_time() - cpu[1], 3),
                "gc_objects": len(gc.get_objects()),
                "gc_pauses": pauses.summary(),
                "lag_at": [[round(t, 4), round(ms, 2), round(cpu, 4)]
                           for (t, cpu), ms in zip(lags.at, lags, strict=True)],
            }
            if store is not None:
                report["commits"] = store.commit_stats.minus(commits[0]).summary()
            # After the window: what the scheduled full collection (quiet_collector) would
            # stall the loop for at this load, and what it frees: the cyclic garbage the run
            # left behind.
            started = time.perf_counter()
            report["full_collection_freed"] = gc.collect()
            report["full_collection_ms"] = round((time.perf_counter() - started) * 1000, 1)
            print(json.dumps(report), flush=True)
        elif line == "quit":
            stop.set()

    _stdin_commands(loop, on_line)
    print(json.dumps({"port": port}), flush=True)
    sys.stdout.flush()
    await stop.wait()
    await probe
    await close()


async def serve_child(db: str, bot_workers: int) -> None:
    """``tablas serve`` as served (SQLite ``synchronous=FULL``), with the limits per client
    address lifted (messages, connections, rooms): every client socket comes from
    127.0.0.1."""
    store = await Store.open(db)
    srv = TablasServer(store, bot_workers, max_msgs_per_address=None, max_conns_per_address=None,
                       max_rooms_per_address=None)

    async def start() -> int:
        return await srv.start("127.0.0.1", 0)

    await _child_main(start, srv.close, store)


async def _bare_child(handler: Callable[[Any], Awaitable[None]]) -> None:
    """A bare ``websockets`` server running ``handler`` as a bench child."""
    server = await websockets.serve(handler, "127.0.0.1", 0, max_size=MAX_ECHO_FRAME,
                                    compression=None)  # as the server is configured

    async def start() -> int:
        port: int = next(iter(server.sockets)).getsockname()[1]
        return port

    async def close() -> None:
        server.close()
        await server.wait_closed()

    await _child_main(start, close)


async def echo_child() -> None:
    """A bare ``websockets`` server that sends every frame back: the ceiling to compare with."""

    async def echo(ws: Any) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            async for msg in ws:
                await ws.send(msg)

    await _bare_child(echo)


def _canned_updates() -> tuple[str, str]:
    """The two ``update`` texts of a Connect-4 move in mid-game, written as the server writes
    them (``Room.update_data``): the mover's (no legal moves; ``re`` spliced in per move) and
    its opponent's (with them)."""
    room = Room("0123456789", "connect4", {}, [SeatState("human", None, "a", "A"),
                                               SeatState("human", None, "b", "B")])
    room.start()
    for column in (0, 1, 2, 3, 4, 5, 6, 0):
        seat = room.to_move
        assert seat is not None
        action = room.commit(room.prepare_move("ab"[seat], room.ply, {"column": column}))
    return (json_text(views.update_data(room, action, [])),
            json_text(views.update_data(room, action, room.legal_moves())))


async def frames_child() -> None:
    """The frames of a move and nothing else: for each ``move`` frame, a canned ``update`` to
    its sender (with ``re``) and one to the sender's partner; no model, rule, room or disk.
    A socket first names its pair (``{"type": "pair", "key": ...}``). What the load's clients
    get from it per move is what they get from the server at the least (1 frame in, 2 out;
    a game adds its creation and end), so its moves/s is a ceiling for the server's."""
    own, other = _canned_updates()
    partner: dict[Any, Any] = {}
    waiting: dict[str, Any] = {}

    async def handler(ws: Any) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            async for raw in ws:
                m = from_json(raw)
                if m["type"] == "move":
                    broadcast((ws,), with_re(own, m["id"]))
                    broadcast((partner[ws],), other)
                    continue
                if m["type"] == "pair":
                    mate = waiting.pop(m["key"], None)
                    if mate is None:
                        waiting[m["key"]] = ws
                    else:
                        partner[ws], partner[mate] = mate, ws
                broadcast((ws,), with_re('{"type":"ok"}', m["id"]))

    await _bare_child(handler)
