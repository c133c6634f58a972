"""The rushes of ``burst``: other clients arriving while the human-pace load plays, each
rush from a process of its own so that the game clients' timing is not disturbed by them. A
rush's clients are :class:`~tools.load.wire.LightClient` objects, written to cost their process
little: the machine has 2 cores, and a thousand websockets clients opening in one second
would take a good part of one from the server they measure."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import time
from typing import Any

from tools.load.process import work
from tools.load.stats import spread
from tools.load.sync import CONNECT_CONCURRENCY, STUCK_S, Sync
from tools.load.wire import LIGHT_ERRORS, LightClient

BURST_KINDS = ("connect", "spectate")
PAGE_POLL_S = 3.0  # how often the page asks for the lobby (client/js/app.js, poll())


@dataclasses.dataclass(frozen=True)
class Burst:
    """``n`` clients arriving evenly over ``over`` seconds, ``at`` seconds into the window.

    ``connect``: people following a link posted somewhere: each opens a WebSocket, says
    ``hello`` as a new player and asks for the lobby (``list_rooms``), then stays on the page.
    ``spectate``: people already on the lobby page (connected and greeted before the window)
    each open one of the ``rooms`` games the game clients created last (``spectate`` → the
    room's snapshot), and stay watching it. Either way a client on the page asks for the
    lobby every ``poll`` seconds, as the page does, lobby or room (0: never)."""

    kind: str
    n: int
    at: float
    over: float = 1.0
    rooms: int = 300
    poll: float = PAGE_POLL_S


class _BurstRecord:
    """One rush's timings (``perf_counter``): each client's time from its first byte to its
    last answer, its steps, and the lobby requests of the clients on the page."""

    def __init__(self) -> None:
        self.first = float("inf")  # the first client's first byte
        self.last = float("-inf")  # the last answer of the rush
        self.total: list[float] = []
        self.steps: dict[str, list[float]] = {}
        self.polls: list[float] = []
        self.errors = 0
        self.rooms = 0
        self.playing = 0  # snapshots of a game in play (the others had just ended)
        self.since = float("-inf")  # the window's start: lobby requests before it not timed

    def served(self, t0: float, t1: float, **steps: float) -> None:
        self.first = min(self.first, t0)
        self.last = max(self.last, t1)
        self.total.append((t1 - t0) * 1000)
        for name, seconds in steps.items():
            self.steps.setdefault(name, []).append(seconds * 1000)

    def summary(self, burst: Burst, start: float) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": burst.kind, "n": burst.n, "at_s": burst.at, "over_s": burst.over,
            "poll_s": burst.poll, "served": len(self.total), "errors": self.errors,
        }
        if self.total:
            out |= {"first_sent_s": round(self.first - start, 3),
                    "last_answer_s": round(self.last - start, 3),
                    # what the brief calls the burst's service time: first byte to last answer
                    "span_s": round(self.last - self.first, 3),
                    "latency": spread(self.total),
                    "steps": {k: spread(v) for k, v in self.steps.items()}}
        if burst.kind == "spectate":
            out |= {"rooms": self.rooms, "snapshots_of_games_in_play": self.playing}
        out["polls"] = spread(self.polls)
        return out


async def _at(when: float) -> None:
    await asyncio.sleep(max(0.0, when - time.perf_counter()))


async def _on_page(client: LightClient, first: float, end: float, poll: float,
                   rec: _BurstRecord) -> None:
    """The page's lobby request every ``poll`` seconds from ``first`` until ``end``."""
    if poll <= 0:
        return
    when = first
    while when < end:
        await _at(when)
        t0 = time.perf_counter()
        try:
            await client.request({"type": "list_rooms"})
        except LIGHT_ERRORS:
            rec.errors += 1
            return
        if t0 >= rec.since:
            rec.polls.append((time.perf_counter() - t0) * 1000)
        when += poll


async def _visit(port: int, i: int, when: float, end: float, poll: float, rec: _BurstRecord,
                 clients: list[LightClient]) -> None:
    """One person of the ``connect`` rush: handshake, ``hello``, the lobby, then the page."""
    await _at(when)
    t0 = time.perf_counter()
    try:
        client = await LightClient.open(port)
        clients.append(client)
        t1 = time.perf_counter()
        await client.request({"type": "hello", "name": f"rush-{i}", "token": None})
        t2 = time.perf_counter()
        await client.request({"type": "list_rooms"})
        t3 = time.perf_counter()
    except LIGHT_ERRORS:
        rec.errors += 1
        return
    rec.served(t0, t3, handshake=t1 - t0, hello=t2 - t1, list_rooms=t3 - t2)
    await _on_page(client, t0 + poll, end, poll, rec)


async def _spectate_rush(watchers: list[LightClient], recent: list[str], burst: Burst,
                         at: float, rec: _BurstRecord) -> None:
    """The ``spectate`` rush: at ``at``, the watchers open the rooms created last, one after
    another over ``burst.over`` seconds."""
    await _at(at)
    rooms = list(dict.fromkeys(reversed(recent)))[:burst.rooms]
    if not rooms:
        raise RuntimeError("no room to watch: the game clients opened none")
    rec.rooms = len(rooms)

    async def watch(i: int, client: LightClient) -> None:
        await _at(at + burst.over * i / len(watchers))
        t0 = time.perf_counter()
        try:
            snapshot = await client.request({"type": "spectate", "room_id": rooms[i % len(rooms)]})
        except LIGHT_ERRORS:
            rec.errors += 1
            return
        rec.served(t0, time.perf_counter())
        rec.playing += snapshot.get("status") == "playing"

    await asyncio.gather(*(watch(i, c) for i, c in enumerate(watchers)))


async def _greeted(port: int, n: int) -> list[LightClient]:
    """``n`` connections that have said ``hello`` (people on the lobby page)."""
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)

    async def one(i: int) -> LightClient:
        async with gate:
            client = await LightClient.open(port)
            await client.request({"type": "hello", "name": f"watcher-{i}", "token": None})
            return client

    return list(await asyncio.gather(*(one(i) for i in range(n))))


async def _burst_async(port: int, burst: Burst, seconds: float, seed: int, sync: Sync
                       ) -> dict[str, Any]:
    import queue
    import threading

    rng = random.Random(seed)
    rec = _BurstRecord()
    recent: list[str] = []  # the rooms the game clients opened, in order
    done = threading.Event()

    def drain() -> None:
        while not done.is_set():
            with contextlib.suppress(queue.Empty):
                recent.append(sync.rooms.get(timeout=0.2))

    watchers: list[LightClient] = []
    if burst.kind == "spectate":
        threading.Thread(target=drain, daemon=True, name="rooms").start()
        watchers = await _greeted(port, burst.n)
    play = await sync.start(len(watchers))
    start = rec.since = play + sync.warmup
    end = start + seconds
    at = start + burst.at
    clients = list(watchers)
    if burst.kind == "connect":
        tasks = [_visit(port, i, at + burst.over * i / burst.n, end, burst.poll, rec, clients)
                 for i in range(burst.n)]
    else:
        # on the lobby page from before the window: their polls are spread over one period
        tasks = [_on_page(c, play + rng.uniform(0, burst.poll), end, burst.poll, rec)
                 for c in watchers] if burst.poll > 0 else []
        tasks.append(_spectate_rush(watchers, recent, burst, at, rec))
    finished, stuck = await asyncio.wait([asyncio.ensure_future(t) for t in tasks],
                                         timeout=max(0.0, end - time.perf_counter()) + STUCK_S)
    for t in stuck:
        t.cancel()
        rec.errors += 1
    done.set()
    for t in finished:
        failure = t.exception()
        if failure is not None:
            raise failure
    await sync.finish()
    for c in clients:
        c.close()
    await asyncio.sleep(0.1)  # the close frames leave
    return rec.summary(burst, start)


def burst_worker(port: int, burst: Burst, seconds: float, seed: int, sync: Sync, out: Any,
                 loop: str) -> None:
    """A rush's process: ``burst`` against the server on ``port``; its summary put on ``out``."""
    work(_burst_async(port, burst, seconds, seed, sync), sync, out, loop)
