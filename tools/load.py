"""The load generator (not shipped): a real server, thousands of real sockets, figures.

    python -m tools.load load [--games 500 --spectators 1000 --seconds 20 --sat-seconds 10]
    python -m tools.load load --baseline ../old-checkout      # side by side, in one run
    python -m tools.load burst [--rounds 3 --baseline ../old-checkout]  # rushes while games play
    python -m tools.load churn                                 # connections at full speed

``load``: the server in a process of its own (``serve-child``: the same ``TablasServer`` as
``tablas serve``, plus a lag probe, with the rate limit and the cap on connections per address
lifted: thousands of sockets come from 127.0.0.1), hundreds of games and spectators from
client processes, at a human pace and at saturation, against a bare ``websockets`` echo server
too, and against a frames-only server: the ceiling any server could reach with these clients.
With ``--baseline DIR`` (a checkout of another version, which must have
``python -m server.bench serve-child`` or ``python -m tools.load serve-child``), each
measurement runs against both servers, alternately, so that both see the same machine.

``burst``: the human-pace load (500 games and 1,000 spectators) for 30 s and, meanwhile, from
processes of their own, two rushes (:class:`Burst`): at 8 s, 1,000 new visitors within one
second, as after a link is posted somewhere (the WebSocket handshake, ``hello`` as a new
player, ``list_rooms``, then the page stays open asking for the lobby every 3 s as the page
does); at 18 s, 1,000 people already on the lobby page open one of the 300 games opened last
within one second (``spectate`` → the room's snapshot) and stay watching. Per run: the
acknowledged move (the mover's own ``update``) p50/p99/max over the run and in each one-second
window, the server's lag and its event loop's CPU in each window, how long each rush took to
be served (first byte to last answer), and the connections the kernel dropped for a full
accept queue. ``--warmup S`` lets the games play S seconds before the window opens.

``churn`` opens and ends connections as fast as it can (refused handshakes, resets, clean
closes) and says what the server's memory keeps.

Every game client is a :class:`server.client.ProtocolClient`, every rush's client a
:class:`_LightClient`. docs/benchmarks.md has the figures and the commands.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import json
import os
import random
import re
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

import websockets
from pydantic_core import from_json, to_json
from websockets.asyncio.connection import broadcast

from server.app import TablasServer
from server.bench import lag_probe, percentile
from server.client import ProtocolClient, Refused
from server.loop import LOOPS, loop_in_use, quiet_collector
from server.loop import run as run_on_loop
from server.protocol import json_text, with_re
from server.room import Room, SeatState
from server.store import Store

ROOT = Path(__file__).resolve().parent.parent


def _raise_nofile() -> int:
    """Raises the soft limit on open files to the hard one; the new soft limit."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            return target
    return soft


def _proc_memory(pid: int) -> dict[str, float]:
    """``VmRSS`` and ``VmHWM`` (peak) of a process, in MiB (empty when it is gone)."""
    out: dict[str, float] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = round(int(rest.split()[0]) / 1024, 1)
    return out


def _busy_s(pids: Sequence[int] | None = None) -> float:
    """CPU seconds spent so far by the whole machine's processes (``/proc/stat``: user, nice
    and system; not interrupts, where the kernel carries loopback packets), or by ``pids``
    (``/proc/PID/stat``: user and system; 0 for one gone)."""
    tick = os.sysconf("SC_CLK_TCK")
    if pids is None:
        with contextlib.suppress(OSError):
            fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
            return sum(int(v) for v in fields[:3]) / tick
        return 0.0
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            stat = Path(f"/proc/{pid}/stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


def _listen_overflows() -> int:
    """How many times the kernel has dropped a connection for a full accept queue (a
    server's ``listen`` backlog), machine-wide: the client's SYN goes unanswered and is sent
    again a second later (``/proc/net/netstat``, ``TcpExt: ListenOverflows``)."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        lines = Path("/proc/net/netstat").read_text().splitlines()
        names, values = (line.split() for line in lines if line.startswith("TcpExt:"))
        return int(dict(zip(names, values, strict=True))["ListenOverflows"])
    return 0


def _lag_summary(lags: list[float]) -> dict[str, float]:
    if not lags:
        return {"lag_samples": 0}
    return {"lag_p50_ms": round(percentile(lags, 50), 2),
            "lag_p99_ms": round(percentile(lags, 99), 2), "lag_max_ms": round(max(lags), 2),
            "lag_samples": len(lags)}


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


# --- the load generator ----------------------------------------------------------------
#
# The server runs in its own process (``python -m tools.load serve-child``: the same
# TablasServer as ``tablas serve``, plus a lag probe, the rate limit and the cap on connections
# per address lifted: thousands of sockets come from 127.0.0.1), and so do a raw
# ``websockets`` echo server (``echo-child``) and a frames-only one (``frames-child``); the
# clients run in ``--workers`` processes of their own, each an event loop holding whole games
# (both players and the spectators), so a latency is always measured on one process's clock.
# Children are controlled by lines on their stdin and answer JSON lines on their stdout.

LOAD_GAMES = ("tictactoe", "connect4")
SLOW_MS = 100.0
STUCK_S = 60.0
CONNECT_CONCURRENCY = 32


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
            report = _lag_summary(lags) | {
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


async def _serve_child(db: str, bot_workers: int) -> None:
    """``tablas serve`` as served (SQLite ``synchronous=FULL``), with the rate limit and the
    cap on connections per address lifted: every client socket comes from 127.0.0.1."""
    store = await Store.open(db)
    srv = TablasServer(store, bot_workers, max_msgs_per_address=None, max_conns_per_address=None)

    async def start() -> int:
        return await srv.start("127.0.0.1", 0)

    await _child_main(start, srv.close, store)


T = TypeVar("T")


async def _quietly(main: Coroutine[Any, Any, T]) -> T:
    """``main`` under the collector as ``tablas serve`` sets it: the server child is served
    so, and the echo server and the clients alike, lest their own collector's pauses (they
    hold as many sockets) show up as the server's latency."""
    async with quiet_collector():
        return await main


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


async def _echo_child() -> None:
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
    return (json_text(room.update_data(action, [])),
            json_text(room.update_data(action, room.legal_moves())))


async def _frames_child() -> None:
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


MAX_ECHO_FRAME = 2**20


class _Child:
    """A child server process (``serve-child``, ``echo-child`` or ``frames-child``) and its
    control pipe."""

    def __init__(self, kind: str, *args: str, src: Path | None = None) -> None:
        """``src``: another checkout to run the child from (its own ``tools.load``, or the
        ``server.bench`` that held the load generator before it moved to ``tools/``)."""
        import subprocess
        import sys

        root = ROOT if src is None else src.resolve()
        module = "tools.load" if (root / "tools" / "load.py").is_file() else "server.bench"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module, kind, *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
        )
        first = self._read()
        self.port = int(first["port"])

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"bench child exited with {self.proc.wait()}")
        out: dict[str, Any] = json.loads(line)
        return out

    def ask(self, command: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._read()

    def memory(self) -> dict[str, float]:
        return _proc_memory(self.proc.pid)

    def stop(self) -> None:
        import subprocess

        if self.proc.poll() is None:
            with contextlib.suppress(BrokenPipeError, OSError):
                assert self.proc.stdin is not None
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class _Recorder:
    """One client worker's measurements (only inside the measurement window)."""

    def __init__(self) -> None:
        self.sent: dict[tuple[str, int], float] = {}
        self.own: list[float] = []
        self.opp: list[float] = []
        # when each timed move of ``own`` and ``opp`` was sent (seconds into the window): the
        # burst scenario's figures per one-second window
        self.own_at: list[float] = []
        self.opp_at: list[float] = []
        # told the id of every room the slots create (the spectator burst watches them)
        self.on_room: Callable[[str], None] | None = None
        self.spec: list[float] = []
        self.moves = 0
        self.errors = 0
        self.games = 0
        self.slow: dict[int, int] = {}  # second of the window -> updates later than SLOW_MS
        self.lags: list[float] = []
        self.start = float("inf")
        self.end = float("inf")

    def active(self, t: float) -> bool:
        return self.start <= t < self.end

    def on_answer(self, t0: float, t1: float) -> None:
        """A move (a round trip, for the echo) sent at ``t0`` whose answer came at ``t1``:
        timed if sent in the window, counted if answered in it too."""
        if self.active(t0):
            self.own.append((t1 - t0) * 1000)
            self.own_at.append(t0 - self.start)
            if t1 < self.end:
                self.moves += 1

    def on_update(self, room: str, ply: int, role: str, t: float) -> None:
        t0 = self.sent.get((room, ply))
        if t0 is not None and self.active(t0):
            ms = (t - t0) * 1000
            if role == "opp":
                self.opp.append(ms)
                self.opp_at.append(t0 - self.start)
            else:
                self.spec.append(ms)
            if ms > SLOW_MS:
                second = int(t0 - self.start)
                self.slow[second] = self.slow.get(second, 0) + 1


async def _open_all(url: str, rec: _Recorder, roles: list[str]) -> list[ProtocolClient]:
    """A client per role: ``echo`` (answers matched by ``id``, no hello), ``opp`` (a player:
    keeps what it is sent, for its next move) or ``spec`` (keeps nothing); the updates a
    player or a spectator receives are timed by ``rec``."""
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)

    async def one(i: int, role: str) -> ProtocolClient:
        def timed(m: dict[str, Any], t: float) -> None:
            if m.get("type") == "update":
                rec.on_update(m["room_id"], m["ply"], role, t)

        async with gate:
            if role == "echo":
                return await ProtocolClient.open(url, answer_key="id")
            return await ProtocolClient.open(url, f"load-{role}-{i}", on_message=timed,
                                             keep=role == "opp")

    return list(await asyncio.gather(*(one(i, r) for i, r in enumerate(roles))))


def _started(room: str) -> Callable[[dict[str, Any]], bool]:
    """Whether a message is the snapshot of ``room`` once its game has started."""
    return lambda m: (m.get("type") == "room" and m.get("room_id") == room
                      and m.get("status") == "playing")


def _update_of(room: str, ply: int) -> Callable[[dict[str, Any]], bool]:
    """Whether a message is ``room``'s update to ``ply``."""
    return lambda m: m.get("type") == "update" and m.get("room_id") == room and m.get("ply") == ply


async def _slot_games(slot: int, players: list[ProtocolClient], watchers: list[ProtocolClient],
                      rec: _Recorder, think: tuple[float, float], rng: random.Random) -> None:
    """Plays games in one slot until the window closes: create, join, spectate, move."""
    a, b = players
    if think[1] > 0:  # human pace: the slots start spread over one think time
        await asyncio.sleep(rng.uniform(0, think[1]))
    while time.perf_counter() < rec.end:
        game = LOAD_GAMES[(slot + rec.games) % len(LOAD_GAMES)]
        try:
            created = await a.request({"type": "create_room", "game": game, "options": {},
                                       "seats": [{"kind": "human"}, {"kind": "human"}],
                                       "join_seat": 0})
            room = created["room_id"]
            if rec.on_room is not None:
                rec.on_room(room)
            for w in watchers:
                await w.request({"type": "spectate", "room_id": room})
            await b.request({"type": "join", "room_id": room, "seat": 1})
            view = await a.next_of(_started(room))
            seats = {0: a, 1: b}
            while view["status"] == "playing" and time.perf_counter() < rec.end:
                if think[1] > 0:
                    await asyncio.sleep(rng.uniform(*think))
                    if time.perf_counter() >= rec.end:
                        break
                seat = view["to_move"]
                ply = view["ply"]
                move = rng.choice(view["legal_moves"])
                t0 = time.perf_counter()
                rec.sent[(room, ply + 1)] = t0
                await seats[seat].request({"type": "move", "room_id": room, "ply": ply,
                                           "move": move})
                rec.on_answer(t0, time.perf_counter())
                view = await seats[1 - seat].next_of(_update_of(room, ply + 1))
            rec.games += 1
            for key in [k for k in rec.sent if k[0] == room]:
                del rec.sent[key]
        except (Refused, TimeoutError, websockets.ConnectionClosed):
            rec.errors += 1
            await asyncio.sleep(0.05)
            if a.reader.done() or b.reader.done():
                return


async def _echo_pairs(pair: list[ProtocolClient], rec: _Recorder, rng: random.Random) -> None:
    """The echo server driven like a game: the two sockets of a pair take turns, each turn
    one move-sized frame sent and its echo awaited (one round trip)."""
    payload = {"type": "move", "room_id": "0123456789", "ply": 0, "move": {"column": 3}}
    turn = 0
    while time.perf_counter() < rec.end:
        t0 = time.perf_counter()
        payload["ply"] = rng.randrange(42)
        await pair[turn].request(payload)
        rec.on_answer(t0, time.perf_counter())
        turn = 1 - turn


async def _frames_pairs(pair: list[ProtocolClient], rec: _Recorder, rng: random.Random,
                        key: str) -> None:
    """The frames-only server driven like a game: the mover sends a move and awaits its own
    ``update``, then the other awaits its ``update`` and picks a legal move from it."""
    for c in pair:
        await c.request({"type": "pair", "key": key})
    turn = 0
    move: dict[str, Any] = {"column": 3}
    while time.perf_counter() < rec.end:
        t0 = time.perf_counter()
        await pair[turn].request({"type": "move", "room_id": "0123456789", "ply": 8,
                                  "move": move})
        rec.on_answer(t0, time.perf_counter())
        turn = 1 - turn
        view = await pair[turn].next_of(lambda m: m.get("type") == "update")
        move = rng.choice(view["legal_moves"])


@dataclasses.dataclass(frozen=True)
class _Sync:
    """How a measurement's processes keep in step (``multiprocessing`` objects): each says
    ``ready`` (its sockets, -1 if it failed), and on ``go`` starts its window at ``start_at``
    (a ``perf_counter`` value: the system's monotonic clock, so every process's figures line
    up, second by second); at the end it says ``done`` once its last request is answered,
    and closes its sockets only once the server has ``reported`` (the server's figures are
    the window's, not those of thousands of connections closing, and its report's full
    collection delays no move of the window). ``rooms``: a queue told the id of each room
    the game clients open (None: nobody listens). With a ``warmup``, the clients start at
    ``start_at`` and the window opens ``warmup`` seconds later."""

    ready: Any
    go: Any
    start_at: Any
    done: Any
    reported: Any
    rooms: Any = None
    warmup: float = 0.0

    async def start(self, n: int) -> float:
        """Says ``n`` sockets are ready; when to start, once it is given."""
        self.ready.put(n)
        await asyncio.to_thread(self.go.wait)
        start: float = self.start_at.value
        return start

    async def finish(self) -> None:
        """Says the window is over here; returns once the server has reported."""
        self.done.put(1)
        await asyncio.to_thread(self.reported.wait, STUCK_S)


async def _client_worker_async(url: str, slots: list[int], watchers: list[int],
                               think: tuple[float, float], seconds: float, seed: int,
                               mode: str, sync: _Sync) -> dict[str, Any]:
    rec = _Recorder()
    if sync.rooms is not None:
        rec.on_room = sync.rooms.put
    roles: list[str] = []
    for k in watchers:
        roles += ["echo", "echo"] if mode == "echo" else ["opp", "opp"] + ["spec"] * k
    conns = await _open_all(url, rec, roles)
    play = await sync.start(len(conns))
    rec.start = play + sync.warmup
    rec.end = rec.start + seconds
    await asyncio.sleep(max(0.0, play - time.perf_counter()))
    rng = random.Random(seed)
    stop = asyncio.Event()
    cpu0 = [time.process_time()]

    async def window() -> None:  # the client's own figures too are the window's
        await asyncio.sleep(max(0.0, rec.start - time.perf_counter()))
        cpu0[0] = time.process_time()
        await lag_probe(stop, rec.lags)

    probe = asyncio.create_task(window())
    tasks: list[Coroutine[Any, Any, None]] = []
    i = 0
    for slot, k in zip(slots, watchers, strict=True):
        players, specs = conns[i:i + 2], conns[i + 2:i + 2 + k]
        i += 2 + k
        if mode == "echo":
            # an echo server returns the frame to its sender only: requests use ids
            tasks.append(_echo_pairs(players, rec, random.Random(rng.random())))
        elif mode == "frames":
            tasks.append(_frames_pairs(players, rec, random.Random(rng.random()), str(slot)))
        else:
            tasks.append(_slot_games(slot, players, specs, rec, think,
                                     random.Random(rng.random())))
    # One deadline for the run instead of a timer per request: a slot still waiting for an
    # answer a minute after the window closed is stuck, and counts as an error.
    done, stuck = await asyncio.wait([asyncio.ensure_future(t) for t in tasks],
                                     timeout=sync.warmup + seconds + STUCK_S)
    for t in stuck:
        t.cancel()
        rec.errors += 1
    for t in done:
        failure = t.exception()
        if failure is not None:
            raise failure
    cpu = time.process_time() - cpu0[0]
    stop.set()
    await probe
    await sync.finish()
    await asyncio.gather(*(c.close() for c in conns))
    return {"own": rec.own, "opp": rec.opp, "spec": rec.spec, "own_at": rec.own_at,
            "opp_at": rec.opp_at, "moves": rec.moves,
            "errors": rec.errors, "games": rec.games, "sockets": len(conns),
            "lags": rec.lags, "slow": rec.slow, "cpu_s": cpu}


def _client_worker(url: str, slots: list[int], watchers: list[int], think: tuple[float, float],
                   seconds: float, seed: int, mode: str, sync: _Sync, out: Any,
                   loop: str) -> None:
    _raise_nofile()
    try:
        result = run_on_loop(_quietly(_client_worker_async(
            url, slots, watchers, think, seconds, seed, mode, sync)), loop)
    except BaseException as e:  # the parent reports it
        sync.ready.put(-1)
        sync.done.put(-1)
        result = {"failed": repr(e)}
    out.put(result)


def _run_load(child: _Child, url: str, games: int, spectators: int, think: tuple[float, float],
              seconds: float, workers: int, seed: int, loop: str,
              mode: str = "game", bursts: Sequence[Burst] = (), by_second: bool = False,
              warmup: float = 0.0) -> dict[str, Any]:
    """One measurement: ``games`` slots and ``spectators`` spread over them, for ``seconds``;
    ``mode`` says what the clients drive: ``game`` the server, ``echo`` the echo server,
    ``frames`` the frames-only server. ``bursts``: rushes of other clients during the window,
    each from a process of its own (:func:`_burst_worker`), each reported; ``by_second``: the
    report also has the figures of each one-second window; ``warmup``: the clients start
    that many seconds before the window opens (a server in its stride, not starting)."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    sync = _Sync(ctx.Queue(), ctx.Event(), ctx.Value("d", 0.0), ctx.Queue(), ctx.Event(),
                 ctx.Queue() if any(b.kind == "spectate" for b in bursts) else None, warmup)
    per_slot = [spectators // games + (1 if i < spectators % games else 0) for i in range(games)]
    workers = max(1, min(workers, games))
    procs = []
    for w in range(workers):
        slots = list(range(w, games, workers))
        procs.append(ctx.Process(
            target=_client_worker,
            args=(url, slots, [per_slot[s] for s in slots], think, seconds, seed * 1000 + w,
                  mode, sync, out, loop),
            daemon=True,
        ))
    burst_out = ctx.Queue()
    burst_procs = [ctx.Process(target=_burst_worker,
                               args=(child.port, b, seconds, seed * 1000 + 100 + i, sync,
                                     burst_out, loop), daemon=True)
                   for i, b in enumerate(bursts)]
    t_setup = time.perf_counter()
    for p in procs + burst_procs:
        p.start()
    sockets = 0
    for _ in procs + burst_procs:
        n = sync.ready.get(timeout=600)
        if n < 0:
            break
        sockets += n
    setup_s = time.perf_counter() - t_setup
    if not warmup:
        child.ask("reset")
    # Every process starts its window at this instant of the one clock (perf_counter is the
    # system's monotonic clock): their figures line up, second by second.
    play = sync.start_at.value = time.perf_counter() + 0.2
    start = play + warmup
    sync.go.set()
    if warmup:
        time.sleep(max(0.0, start - time.perf_counter()))
        child.ask("reset")
    ours = [child.proc.pid, os.getpid()] + [p.pid for p in procs + burst_procs if p.pid]
    cpu0 = (_busy_s(), _busy_s(ours))
    overflows = _listen_overflows()
    time.sleep(max(0.0, start + seconds - time.perf_counter()))
    for _ in procs + burst_procs:  # the moves sent before the end answered
        sync.done.get(timeout=STUCK_S + 30)
    cpu1 = (_busy_s(), _busy_s(ours))
    overflows = _listen_overflows() - overflows
    lag = child.ask("report")
    sync.reported.set()
    memory = child.memory()
    results = [out.get(timeout=300) for _ in procs]
    burst_results = [burst_out.get(timeout=300) for _ in burst_procs]
    for p in procs + burst_procs:
        p.join(30)
    failed = [r["failed"] for r in results + burst_results if "failed" in r]
    if failed:
        raise RuntimeError(f"client worker failed: {failed[0]}")
    lag_at = lag.pop("lag_at", None)  # (when, ms) of each probe: binned below

    def cat(key: str) -> list[float]:
        return [v for r in results for v in r[key]]

    def lat(values: list[float]) -> dict[str, float | None]:
        if not values:
            return {"n": 0, "p50_ms": None, "p99_ms": None}
        return {"n": len(values), "p50_ms": round(percentile(values, 50), 2),
                "p99_ms": round(percentile(values, 99), 2), "max_ms": round(max(values), 2)}

    moves = sum(int(r["moves"]) for r in results)
    client_cpu = sum(float(r["cpu_s"]) for r in results)
    slow: dict[int, int] = {}
    for r in results:
        for second, n in r["slow"].items():
            slow[int(second)] = slow.get(int(second), 0) + int(n)
    client_lags = cat("lags")
    extra: dict[str, Any] = {}
    if bursts:
        extra["bursts"] = sorted(burst_results, key=lambda r: r["at_s"])
    if by_second:
        extra["windows"] = _windows(cat("own_at"), cat("own"), cat("opp_at"), cat("opp"),
                                    lag_at, start, seconds)
    return {
        "games": games, "spectators": spectators, "sockets": sockets, "seconds": seconds,
        "think_s": list(think), "client_workers": workers, "setup_s": round(setup_s, 1),
        "moves": moves, "moves_per_s": round(moves / seconds, 1),
        "games_finished": sum(int(r["games"]) for r in results),
        "errors": sum(int(r["errors"]) for r in results),
        "own_update": lat(cat("own")), "opponent_update": lat(cat("opp")),
        "spectator_update": lat(cat("spec")),
        "server": {**lag, **memory},
        "client_lag": _lag_summary(client_lags),
        # what the machine's CPUs did meanwhile, ours (server, clients) and everyone else's
        "machine_cpu_s": {"all": round(cpu1[0] - cpu0[0], 1), "ours": round(cpu1[1] - cpu0[1], 1),
                          "others": round(cpu1[0] - cpu0[0] - (cpu1[1] - cpu0[1]), 1)},
        "listen_overflows": overflows,  # machine-wide, in the window
        # CPU per move: what a move costs each side, whatever the machine's contention
        "cpu_us_per_move": {
            "server": _per_move(lag.get("cpu_s"), moves),
            "server_loop": _per_move(lag.get("loop_cpu_s"), moves),
            "clients": _per_move(client_cpu, moves),
        },
        "updates_over_100ms_by_second": dict(sorted(slow.items())),
    } | extra


def _per_move(cpu_s: float | None, moves: int) -> float | None:
    return None if cpu_s is None or not moves else round(cpu_s / moves * 1e6, 1)


def _fresh_server(tmp: str, bot_workers: int, n: int, loop: str, src: Path | None = None
                  ) -> _Child:
    return _Child("serve-child", "--db", str(Path(tmp) / f"load-{n}.db"),
                  "--bot-workers", str(bot_workers), "--loop", loop, src=src)


def _p99(result: dict[str, Any]) -> float:
    """The load's verdict: the worse p99 of the opponent's and the spectators' update."""
    values = [result[k]["p99_ms"] for k in ("opponent_update", "spectator_update")
              if result[k]["n"]]
    # No update at all (a run too short for its think time) proves nothing: not holding.
    return float(max(values)) if values else float("inf")


def run_load(
    games: int = 500,
    spectators: int = 1000,
    seconds: float = 20.0,
    think: tuple[float, float] = (1.0, 3.0),
    sat_games: int = 64,
    sat_spectators: int = 0,
    sat_seconds: float = 10.0,
    workers: int = 2,
    search_s: float = 0.0,
    target_ms: float = 100.0,
    max_games: int = 4000,
    seed: int = 1,
    loop: str = "auto",
    progress: Any = None,
) -> dict[str, Any]:
    """The load report: human pace at ``games``/``spectators``, then (``search_s`` > 0) the
    largest human-pace load whose p99 stays within ``target_ms`` (doubling, then bisecting,
    within ``search_s`` seconds), then saturation against the server, the echo server and
    the frames-only server."""
    _raise_nofile()

    def say(msg: str) -> None:
        if progress is not None:
            print(msg, file=progress, flush=True)

    ratio = spectators / games if games else 0.0
    report: dict[str, Any] = {"target_p99_ms": target_ms}
    with tempfile.TemporaryDirectory(prefix="tablas-load-") as tmp:
        trial = 0

        def human(n: int) -> dict[str, Any]:
            nonlocal trial
            trial += 1
            child = _fresh_server(tmp, 1, trial, loop)
            try:
                specs = round(n * ratio)
                say(f"human pace: {n} games + {specs} spectators, {seconds:g} s ...")
                r = _run_load(child, f"ws://127.0.0.1:{child.port}/ws", n, specs, think,
                              seconds, workers, seed + trial, loop)
            finally:
                child.stop()
            r["holds"] = _p99(r) <= target_ms and r["errors"] == 0
            say(f"  -> {r['moves_per_s']} moves/s, opponent p50/p99 "
                f"{r['opponent_update']['p50_ms']}/{r['opponent_update']['p99_ms']} ms, "
                f"spectators p99 {r['spectator_update']['p99_ms']} ms, server lag p99/max "
                f"{r['server'].get('lag_p99_ms')}/{r['server'].get('lag_max_ms')} ms, client lag"
                f" p99/max {r['client_lag'].get('lag_p99_ms')}/{r['client_lag'].get('lag_max_ms')}"
                f" ms, a full collection {r['server'].get('full_collection_ms')} ms, "
                f"RSS {r['server'].get('VmHWM')} MiB, "
                f"errors {r['errors']}: {'holds' if r['holds'] else 'FAILS'}")
            return r

        first = human(games)
        report["human"] = first
        if search_s > 0:
            deadline = time.perf_counter() + search_s
            trials = [first]
            good = games if first["holds"] else 0
            bad = games if not first["holds"] else 0
            n = games

            def holds(n: int) -> bool:
                r = human(n)
                trials.append(r)
                return bool(r["holds"])

            while not bad and n * 2 <= max_games and time.perf_counter() < deadline:
                n *= 2
                if holds(n):
                    good = n
                else:
                    bad = n
            if not bad and not good:
                bad = games
            lo, hi = good, bad or max_games
            while hi - lo > max(8, lo // 10) and time.perf_counter() < deadline and bad:
                mid = (lo + hi) // 2
                if holds(mid):
                    lo = mid
                else:
                    hi = mid
            report["search"] = {
                "largest_holding_games": lo,
                "largest_holding_spectators": round(lo * ratio),
                "smallest_failing_games": hi if bad else None,
                "trials": [{k: t[k] for k in ("games", "spectators", "moves_per_s", "holds",
                                              "errors")}
                           | {"p99_ms": _p99(t), "lag_p99_ms": t["server"].get("lag_p99_ms"),
                              "lag_max_ms": t["server"].get("lag_max_ms"),
                              "full_collection_ms": t["server"].get("full_collection_ms"),
                              "VmHWM_MiB": t["server"].get("VmHWM")} for t in trials],
            }
        # saturation: the server, then the echo server, driven the same way
        trial += 1
        child = _fresh_server(tmp, 1, trial, loop)
        try:
            say(f"saturation: {sat_games} games + {sat_spectators} spectators, no think time,"
                f" {sat_seconds:g} s ...")
            sat = _run_load(child, f"ws://127.0.0.1:{child.port}/ws", sat_games,
                            sat_spectators, (0.0, 0.0), sat_seconds, workers, seed, loop)
        finally:
            child.stop()
        say(f"  -> {sat['moves_per_s']} moves/s, own p50/p99 {sat['own_update']['p50_ms']}/"
            f"{sat['own_update']['p99_ms']} ms, lag p99 {sat['server'].get('lag_p99_ms')} ms")
        echo_child = _Child("echo-child", "--loop", loop)
        try:
            say(f"echo server: {sat_games} socket pairs, no think time, {sat_seconds:g} s ...")
            echo = _run_load(echo_child, f"ws://127.0.0.1:{echo_child.port}/", sat_games, 0,
                             (0.0, 0.0), sat_seconds, workers, seed, loop, mode="echo")
        finally:
            echo_child.stop()
        say(f"  -> {echo['moves_per_s']} round trips/s")
        frames_child = _Child("frames-child", "--loop", loop)
        try:
            say(f"frames-only server: {sat_games} socket pairs, no think time,"
                f" {sat_seconds:g} s ...")
            frames = _run_load(frames_child, f"ws://127.0.0.1:{frames_child.port}/",
                               sat_games, 0, (0.0, 0.0), sat_seconds, workers, seed, loop,
                               mode="frames")
        finally:
            frames_child.stop()
        say(f"  -> {frames['moves_per_s']} moves/s")
        keep = ("games", "sockets", "seconds", "moves", "moves_per_s", "own_update", "errors",
                "cpu_us_per_move")
        report["saturation"] = sat
        report["echo"] = {k: echo[k] for k in keep}
        report["echo"]["round_trips_per_s"] = report["echo"].pop("moves_per_s")
        report["frames_only"] = {k: frames[k] for k in keep}
        echo_rate = max(1e-9, report["echo"]["round_trips_per_s"])
        report["saturation_vs_echo"] = round(sat["moves_per_s"] / echo_rate, 3)
        # the ratio a server doing nothing but a move's frames reaches: the ceiling
        report["frames_only_vs_echo"] = round(frames["moves_per_s"] / echo_rate, 3)
    report["machine"] = {"cpus": os.cpu_count(), "loadavg": os.getloadavg(),
                         "event_loop": loop_in_use(loop)}
    return report


def run_compare(
    baseline: Path,
    rounds: int = 2,
    games: int = 500,
    spectators: int = 1000,
    seconds: float = 20.0,
    think: tuple[float, float] = (1.0, 3.0),
    sat_games: int = 64,
    sat_seconds: float = 10.0,
    workers: int = 2,
    seed: int = 1,
    loop: str = "auto",
    progress: Any = None,
) -> dict[str, Any]:
    """This checkout's server and ``baseline``'s, side by side in one run: ``rounds`` times,
    a human-pace run and a saturation run of each, the two servers alternating (which goes
    first alternates too), so a machine that slows down or speeds up during the run touches
    both alike. Per server and run: moves/s, the opponent's and the mover's update (p50/p99:
    the mover's own update is the acknowledged move, its commit included), the server's lag,
    and its group commits."""
    _raise_nofile()
    sides: dict[str, Path | None] = {"this": None, "baseline": baseline}
    report: dict[str, Any] = {"baseline": str(baseline), "rounds": [],
                              "think_s": list(think)}

    def brief(r: dict[str, Any]) -> dict[str, Any]:
        return {"moves_per_s": r["moves_per_s"], "errors": r["errors"],
                "own_update": r["own_update"], "opponent_update": r["opponent_update"],
                "spectator_update": r["spectator_update"],
                "lag_p99_ms": r["server"].get("lag_p99_ms"),
                "lag_max_ms": r["server"].get("lag_max_ms"),
                "cpu_us_per_move": r["cpu_us_per_move"],
                "commits": r["server"].get("commits"), "VmHWM_MiB": r["server"].get("VmHWM")}

    with tempfile.TemporaryDirectory(prefix="tablas-compare-") as tmp:
        n = 0
        for i in range(rounds):
            order = list(sides) if i % 2 == 0 else list(reversed(sides))
            row: dict[str, Any] = {}
            for name in order:
                for kind, g, specs, th, secs in (
                        ("human", games, spectators, think, seconds),
                        ("saturation", sat_games, 0, (0.0, 0.0), sat_seconds)):
                    n += 1
                    child = _fresh_server(tmp, 1, n, loop, sides[name])
                    try:
                        r = _run_load(child, f"ws://127.0.0.1:{child.port}/ws", g, specs, th,
                                      secs, workers, seed + i, loop)
                    finally:
                        child.stop()
                    row[f"{name} {kind}"] = brief(r)
                    if progress is not None:
                        print(f"round {i + 1}, {name}, {kind}: {r['moves_per_s']} moves/s, own"
                              f" p50/p99 {r['own_update']['p50_ms']}/{r['own_update']['p99_ms']}"
                              f" ms, opponent p99 {r['opponent_update']['p99_ms']} ms, errors"
                              f" {r['errors']}", file=progress, flush=True)
            report["rounds"].append(row)
    report["machine"] = {"cpus": os.cpu_count(), "loadavg": os.getloadavg(),
                         "event_loop": loop_in_use(loop)}
    return report


# --- bursts ---------------------------------------------------------------------------------
#
# ``burst``: the human-pace load for the whole window and, meanwhile, rushes of other clients,
# each from a process of its own so that the game clients' timing is not disturbed by them.
# A rush's clients are _LightClients, written to cost their process little: the machine has 2
# cores, and a thousand websockets clients opening in one second would take a good part of
# one from the server they measure.

BURST_KINDS = ("connect", "spectate")
PAGE_POLL_S = 3.0  # how often the page asks for the lobby (server/web/js/app.js, poll())


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


def _client_frame(opcode: int, payload: bytes) -> bytes:
    """A client's frame, final, masked with a key of zeros (which leaves the payload as is)."""
    n = len(payload)
    if n < 126:
        head = bytes((0x80 | opcode, 0x80 | n))
    elif n < 1 << 16:
        head = bytes((0x80 | opcode, 0xFE)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, 0xFF)) + n.to_bytes(8, "big")
    return head + b"\0\0\0\0" + payload


# The start of an answer as the server writes it (``with_re``), enough to match a big one
# (the lobby, 55 kB with 200 rooms) to its request without parsing it.
_ANSWER_HEAD = re.compile(rb'\{"re":(\d+),"type":"(\w+)"')
BIG_FRAME = 4096


class _LightClient:
    """A WebSocket client by hand: the handshake is one canned request, a request's answer is
    found by ``re`` (a frame without ``"re":`` is not even parsed, nor is a big answer past
    its head), pings are answered, and nothing else is kept. About a sixth of a
    :class:`ProtocolClient`'s CPU per connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.n = 0
        self.waiters: dict[Any, asyncio.Future[dict[str, Any]]] = {}  # by id
        self.task = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, port: int) -> _LightClient:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(UPGRADE_REQUEST)
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            writer.close()
            raise ConnectionError(head.split(b"\r\n", 1)[0].decode(errors="replace"))
        return cls(reader, writer)

    async def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Sends ``msg`` with a fresh ``id``; its answer (an ``error`` raises :class:`Refused`)."""
        if self.task.done():
            raise Refused(str(msg.get("type")), "closed")
        self.n += 1
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiters[self.n] = fut
        self.writer.write(_client_frame(0x1, to_json(dict(msg, id=self.n))))
        m = await fut
        if m.get("type") == "error":
            raise Refused(str(msg.get("type")), str(m.get("code")), str(m.get("message")))
        return m

    async def _read(self) -> None:
        read = self.reader.readexactly
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while True:
                b0, b1 = await read(2)
                n = b1 & 0x7F
                if n == 126:
                    n = int.from_bytes(await read(2), "big")
                elif n == 127:
                    n = int.from_bytes(await read(8), "big")
                payload = await read(n) if n else b""
                opcode = b0 & 0x0F
                if opcode == 0x9:  # ping: the server closes a connection that never pongs
                    self.writer.write(_client_frame(0xA, payload))
                elif opcode == 0x8:
                    break
                elif self.waiters and b'"re":' in payload:
                    head = _ANSWER_HEAD.match(payload) if len(payload) > BIG_FRAME else None
                    m: dict[str, Any] = ({"re": int(head[1]), "type": head[2].decode()}
                                         if head is not None else from_json(payload))
                    fut = self.waiters.pop(m.get("re"), None)
                    if fut is not None and not fut.done():
                        fut.set_result(m)
        for fut in self.waiters.values():
            if not fut.done():
                fut.set_exception(Refused("connection", "closed"))
        self.waiters.clear()

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            self.writer.write(_CLOSE_FRAME)
            self.writer.close()
        self.task.cancel()


LIGHT_ERRORS = (OSError, EOFError, Refused)  # EOFError: asyncio.IncompleteReadError


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
                    "latency": _spread(self.total),
                    "steps": {k: _spread(v) for k, v in self.steps.items()}}
        if burst.kind == "spectate":
            out |= {"rooms": self.rooms, "snapshots_of_games_in_play": self.playing}
        out["polls"] = _spread(self.polls)
        return out


def _spread(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"n": 0}
    return {"n": len(values), "p50_ms": round(percentile(values, 50), 2),
            "p99_ms": round(percentile(values, 99), 2), "max_ms": round(max(values), 2)}


async def _at(when: float) -> None:
    await asyncio.sleep(max(0.0, when - time.perf_counter()))


async def _on_page(client: _LightClient, first: float, end: float, poll: float,
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
                 clients: list[_LightClient]) -> None:
    """One person of the ``connect`` rush: handshake, ``hello``, the lobby, then the page."""
    await _at(when)
    t0 = time.perf_counter()
    try:
        client = await _LightClient.open(port)
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


async def _spectate_rush(watchers: list[_LightClient], recent: list[str], burst: Burst,
                         at: float, rec: _BurstRecord) -> None:
    """The ``spectate`` rush: at ``at``, the watchers open the rooms created last, one after
    another over ``burst.over`` seconds."""
    await _at(at)
    rooms = list(dict.fromkeys(reversed(recent)))[:burst.rooms]
    if not rooms:
        raise RuntimeError("no room to watch: the game clients opened none")
    rec.rooms = len(rooms)

    async def watch(i: int, client: _LightClient) -> None:
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


async def _greeted(port: int, n: int) -> list[_LightClient]:
    """``n`` connections that have said ``hello`` (people on the lobby page)."""
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)

    async def one(i: int) -> _LightClient:
        async with gate:
            client = await _LightClient.open(port)
            await client.request({"type": "hello", "name": f"watcher-{i}", "token": None})
            return client

    return list(await asyncio.gather(*(one(i) for i in range(n))))


async def _burst_async(port: int, burst: Burst, seconds: float, seed: int, sync: _Sync
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

    watchers: list[_LightClient] = []
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


def _burst_worker(port: int, burst: Burst, seconds: float, seed: int, sync: _Sync, out: Any,
                  loop: str) -> None:
    _raise_nofile()
    try:
        result = run_on_loop(_quietly(_burst_async(port, burst, seconds, seed, sync)), loop)
    except BaseException as e:  # the parent reports it
        sync.ready.put(-1)
        sync.done.put(-1)
        result = {"failed": repr(e)}
    out.put(result)


def _windows(own_at: list[float], own: list[float], opp_at: list[float], opp: list[float],
             lag_at: list[list[float]] | None, start: float, seconds: float
             ) -> list[dict[str, Any]]:
    """Each one-second window of the run (moves by the second they were sent in): the
    acknowledged move (the mover's own update) and the opponent's update, p50/p99/max, and
    the server's largest lag and its event loop's CPU in the window (None from a server
    child that does not say when its lags were)."""
    n = max(1, int(seconds + 0.999))

    def bins(at: list[float], ms: list[float]) -> list[list[float]]:
        out: list[list[float]] = [[] for _ in range(n)]
        for t, v in zip(at, ms, strict=True):
            if 0 <= t < n:
                out[int(t)].append(v)
        return out

    lags: list[float | None] = [None] * n
    cpu: list[float | None] = [None] * n  # the loop's CPU time at the window's last probe
    before: float | None = None  # … and at the last probe before the window
    for t, ms, *used in lag_at or []:
        s = t - start
        if s < 0 and used:
            before = used[0]
        if 0 <= s < n:
            lags[int(s)] = max(lags[int(s)] or 0.0, ms)
            if used:
                cpu[int(s)] = used[0]
    busy: list[float | None] = []
    for now in cpu:
        busy.append(None if now is None or before is None else round((now - before) * 1000))
        before = now if now is not None else before
    rows = []
    for s, (mine, theirs) in enumerate(zip(bins(own_at, own), bins(opp_at, opp), strict=True)):
        a, b = _spread(mine), _spread(theirs)
        rows.append({"second": s, "moves": a["n"], "own_p50_ms": a.get("p50_ms"),
                     "own_p99_ms": a.get("p99_ms"), "own_max_ms": a.get("max_ms"),
                     "opp_p99_ms": b.get("p99_ms"), "opp_max_ms": b.get("max_ms"),
                     "lag_max_ms": lags[s], "loop_cpu_ms": busy[s]})
    return rows


def _worst_window(windows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The window whose acknowledged moves' p99 is the highest."""
    timed = [w for w in windows if w["moves"]]
    return max(timed, key=lambda w: (w["own_p99_ms"], w["own_max_ms"])) if timed else None


def _burst_brief(r: dict[str, Any]) -> dict[str, Any]:
    """A burst run's figures: the whole run, the worst window, the server's lag, each rush."""
    return {
        "moves_per_s": r["moves_per_s"], "errors": r["errors"],
        "own_update": r["own_update"], "opponent_update": r["opponent_update"],
        "spectator_update": r["spectator_update"],
        "worst_window": _worst_window(r["windows"]),
        "lag_p99_ms": r["server"].get("lag_p99_ms"), "lag_max_ms": r["server"].get("lag_max_ms"),
        "client_lag_max_ms": r["client_lag"].get("lag_max_ms"),
        "cpu_us_per_move": r["cpu_us_per_move"], "VmHWM_MiB": r["server"].get("VmHWM"),
        "commits": r["server"].get("commits"), "gc_pauses": r["server"].get("gc_pauses"),
        # at the end: the objects the collector tracks, and what a full collection then takes
        "gc_objects": r["server"].get("gc_objects"),
        "full_collection_ms": r["server"].get("full_collection_ms"),
        "machine_cpu_s": r["machine_cpu_s"], "listen_overflows": r["listen_overflows"],
        "bursts": r.get("bursts", []), "windows": r["windows"],
    }


def _burst_line(label: str, b: dict[str, Any]) -> str:
    own, w = b["own_update"], b["worst_window"] or {}
    rushes = "; ".join(
        f"{x['kind']} {x['served']}/{x['n']} in {x.get('span_s')} s (p99 "
        f"{x.get('latency', {}).get('p99_ms')} ms, errors {x['errors']})" for x in b["bursts"])
    return (f"{label}: own p50/p99/max {own['p50_ms']}/{own['p99_ms']}/{own.get('max_ms')} ms;"
            f" worst second {w.get('second')}: p99/max {w.get('own_p99_ms')}/"
            f"{w.get('own_max_ms')} ms; server lag max {b['lag_max_ms']} ms; {rushes};"
            f" errors {b['errors']}")


def run_burst(
    games: int = 500,
    spectators: int = 1000,
    seconds: float = 30.0,
    think: tuple[float, float] = (1.0, 3.0),
    bursts: Sequence[Burst] = (Burst("connect", 1000, 8.0), Burst("spectate", 1000, 18.0)),
    rounds: int = 1,
    baseline: Path | None = None,
    warmup: float = 0.0,
    workers: int = 2,
    seed: int = 1,
    loop: str = "auto",
    progress: Any = None,
) -> dict[str, Any]:
    """``rounds`` runs of the human-pace load (``games`` and ``spectators`` for ``seconds``)
    with ``bursts`` during it, each against a fresh server; with ``baseline`` (another
    checkout), each round runs its server too, which goes first alternating. ``warmup``:
    the games play that long before the run's window opens (0: it opens as they start).
    Per run: the acknowledged move's p50/p99/max over the run and in its worst one-second
    window, the server's lag, each rush's service time."""
    _raise_nofile()
    sides: dict[str, Path | None] = {"this": None}
    if baseline is not None:
        sides["baseline"] = baseline
    report: dict[str, Any] = {
        "games": games, "spectators": spectators, "seconds": seconds, "warmup_s": warmup,
        "think_s": list(think),
        "bursts": [dataclasses.asdict(b) for b in bursts], "rounds": []}
    if baseline is not None:
        report["baseline"] = str(baseline)
    with tempfile.TemporaryDirectory(prefix="tablas-burst-") as tmp:
        n = 0
        for i in range(rounds):
            order = list(sides) if i % 2 == 0 else list(reversed(sides))
            row: dict[str, Any] = {}
            for name in order:
                n += 1
                child = _fresh_server(tmp, 1, n, loop, sides[name])
                try:
                    r = _run_load(child, f"ws://127.0.0.1:{child.port}/ws", games, spectators,
                                  think, seconds, workers, seed + i, loop, bursts=bursts,
                                  by_second=True, warmup=warmup)
                finally:
                    child.stop()
                row[name] = _burst_brief(r)
                if progress is not None:
                    print(_burst_line(f"round {i + 1}, {name}", row[name]), file=progress,
                          flush=True)
            report["rounds"].append(row)
    report["machine"] = {"cpus": os.cpu_count(), "loadavg": os.getloadavg(),
                         "event_loop": loop_in_use(loop)}
    return report


# --- connection churn ---------------------------------------------------------------------

_WS_KEY = "dGhlIHNhbXBsZSBub25jZQ=="  # any 16 bytes in base64: the server only echoes a hash
# A WebSocket handshake by hand, and the same URL asked for without it (the server: 426).
UPGRADE_REQUEST = (
    "GET /ws HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    f"Sec-WebSocket-Key: {_WS_KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()
REFUSED_REQUEST = b"GET /ws HTTP/1.1\r\nHost: bench\r\n\r\n"
# A close frame (code 1000) as a client sends it: masked, here with a key of zeros.
_CLOSE_FRAME = bytes([0x88, 0x82, 0, 0, 0, 0, 0x03, 0xE8])
CHURN_MODES = ("refused", "reset", "clean")


def _one_connection(port: int, mode: str) -> None:
    """One short connection of ``mode``: ``refused`` asks for /ws without ``Upgrade`` (the
    server answers 426), ``reset`` completes the handshake then resets the TCP connection,
    ``clean`` completes it and closes with a close frame."""
    import socket
    import struct

    with socket.create_connection(("127.0.0.1", port)) as s:
        if mode == "refused":
            s.sendall(REFUSED_REQUEST)
            s.recv(4096)
            return
        s.sendall(UPGRADE_REQUEST)
        s.recv(4096)
        if mode == "reset":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        else:
            s.sendall(_CLOSE_FRAME)
            s.recv(4096)


def _churn(port: int, mode: str, seconds: float, threads: int) -> int:
    import threading

    done = [0] * threads
    end = time.perf_counter() + seconds

    def work(i: int) -> None:
        while time.perf_counter() < end:
            try:
                _one_connection(port, mode)
                done[i] += 1
            except OSError:  # out of ephemeral ports, say: a short breath
                time.sleep(0.01)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return sum(done)


def run_churn(seconds: float = 20.0, modes: tuple[str, ...] = CHURN_MODES, threads: int = 4,
              loop: str = "auto") -> dict[str, Any]:
    """Connections opened and ended as fast as ``threads`` clients can, for ``seconds`` per
    mode (:func:`_one_connection`), each mode against a fresh server child served as
    ``tablas serve`` is (its collector included): the server's memory before and after, the
    objects the collector tracks, and the full collection the schedule would run then. A
    connection's objects must go when it ends: anything left in a reference cycle would
    wait for the hourly full collection."""
    _raise_nofile()
    report: dict[str, Any] = {"seconds": seconds, "threads": threads}
    with tempfile.TemporaryDirectory(prefix="tablas-churn-") as tmp:
        for i, mode in enumerate(modes):
            child = _fresh_server(tmp, 1, i, loop)
            try:
                time.sleep(0.5)
                before = child.memory()
                child.ask("reset")
                n = _churn(child.port, mode, seconds, threads)
                time.sleep(1.0)  # the last connections end
                after = child.memory()
                state = child.ask("report")
            finally:
                child.stop()
            report[mode] = {
                "connections": n, "per_s": round(n / seconds, 1),
                "rss_before_MiB": before.get("VmRSS"), "rss_after_MiB": after.get("VmRSS"),
                "rss_growth_MiB": round(after.get("VmRSS", 0.0) - before.get("VmRSS", 0.0), 1),
                "gc_objects": state["gc_objects"],
                "full_collection_ms": state["full_collection_ms"],
            }
    report["machine"] = {"cpus": os.cpu_count(), "event_loop": loop_in_use(loop)}
    return report


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m tools.load")

    def add_loop(p: argparse.ArgumentParser, text: str | None = None) -> None:
        p.add_argument("--loop", choices=LOOPS, default="auto", help=text)

    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("load", help="the load generator (server in its own process)")
    p.add_argument("--games", type=int, default=500)
    p.add_argument("--spectators", type=int, default=1000)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--think", type=float, nargs=2, default=(1.0, 3.0), metavar=("MIN", "MAX"))
    p.add_argument("--sat-games", type=int, default=64)
    p.add_argument("--sat-spectators", type=int, default=0)
    p.add_argument("--sat-seconds", type=float, default=10.0)
    p.add_argument("--workers", type=int, default=2, help="client processes")
    p.add_argument("--search", type=float, default=0.0, metavar="SECONDS",
                   help="then search the largest human-pace load holding --target-ms")
    p.add_argument("--target-ms", type=float, default=100.0)
    p.add_argument("--max-games", type=int, default=4000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--baseline", type=Path, metavar="DIR",
                   help="another checkout: run each measurement against both, alternately")
    p.add_argument("--rounds", type=int, default=2, help="with --baseline")
    p.add_argument("--json", action="store_true")
    add_loop(p, "the event loop of the server, the echo and frames-only servers and the"
             " clients alike")
    p = sub.add_parser("burst", help="rushes of new connections and of spectators while"
                       " games play at a human pace")
    p.add_argument("--games", type=int, default=500)
    p.add_argument("--spectators", type=int, default=1000)
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--think", type=float, nargs=2, default=(1.0, 3.0), metavar=("MIN", "MAX"))
    p.add_argument("--connect", type=int, default=1000,
                   help="new visitors in the connection rush (0: none)")
    p.add_argument("--connect-at", type=float, default=8.0, metavar="SECONDS")
    p.add_argument("--spectate", type=int, default=1000,
                   help="people opening a game to watch in the spectator rush (0: none)")
    p.add_argument("--spectate-at", type=float, default=18.0, metavar="SECONDS")
    p.add_argument("--spectate-rooms", type=int, default=300,
                   help="the rooms they watch: those the games opened last")
    p.add_argument("--over", type=float, default=1.0, metavar="SECONDS",
                   help="each rush arrives evenly over this")
    p.add_argument("--poll", type=float, default=PAGE_POLL_S, metavar="SECONDS",
                   help="a rush's client asks for the lobby this often, as the page does"
                   " (0: never)")
    p.add_argument("--warmup", type=float, default=0.0, metavar="SECONDS",
                   help="the games play this long before the window opens")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--baseline", type=Path, metavar="DIR",
                   help="another checkout: each round runs its server too, alternately")
    p.add_argument("--workers", type=int, default=2, help="game client processes")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true")
    add_loop(p, "the event loop of the server and of every client process")
    p = sub.add_parser("churn", help="connections opened and ended at full speed: what the"
                       " server's memory keeps")
    p.add_argument("--seconds", type=float, default=20.0, help="per mode")
    p.add_argument("--modes", nargs="+", choices=CHURN_MODES, default=list(CHURN_MODES))
    p.add_argument("--threads", type=int, default=4)
    add_loop(p, "the event loop of the server child")
    p = sub.add_parser("serve-child")
    p.add_argument("--db", required=True)
    p.add_argument("--bot-workers", type=int, default=1)
    add_loop(p)
    add_loop(sub.add_parser("echo-child"))
    add_loop(sub.add_parser("frames-child"))
    args = parser.parse_args(argv)
    if args.cmd == "serve-child":
        _raise_nofile()
        run_on_loop(_quietly(_serve_child(args.db, args.bot_workers)), args.loop)
        return 0
    if args.cmd in ("echo-child", "frames-child"):
        _raise_nofile()
        child = _echo_child() if args.cmd == "echo-child" else _frames_child()
        run_on_loop(_quietly(child), args.loop)
        return 0
    if args.cmd == "burst":
        rushes = [Burst("connect", args.connect, args.connect_at, args.over, poll=args.poll),
                  Burst("spectate", args.spectate, args.spectate_at, args.over,
                        args.spectate_rooms, args.poll)]
        report = run_burst(
            games=args.games, spectators=args.spectators, seconds=args.seconds,
            think=(args.think[0], args.think[1]), bursts=[b for b in rushes if b.n > 0],
            rounds=args.rounds, baseline=args.baseline, warmup=args.warmup,
            workers=args.workers, seed=args.seed,
            loop=args.loop, progress=sys.stderr)
        print(json.dumps(report, indent=None if args.json else 2))
        return 0
    if args.cmd == "churn":
        print(json.dumps(run_churn(args.seconds, tuple(args.modes), args.threads, args.loop),
                         indent=2))
        return 0
    if args.cmd == "load" and args.baseline is not None:
        report = run_compare(
            args.baseline, rounds=args.rounds, games=args.games, spectators=args.spectators,
            seconds=args.seconds, think=(args.think[0], args.think[1]),
            sat_games=args.sat_games, sat_seconds=args.sat_seconds, workers=args.workers,
            seed=args.seed, loop=args.loop, progress=sys.stderr)
        print(json.dumps(report, indent=None if args.json else 2))
        return 0
    if args.cmd == "load":
        report = run_load(
            games=args.games, spectators=args.spectators, seconds=args.seconds,
            think=(args.think[0], args.think[1]), sat_games=args.sat_games,
            sat_spectators=args.sat_spectators, sat_seconds=args.sat_seconds,
            workers=args.workers, search_s=args.search, target_ms=args.target_ms,
            max_games=args.max_games, seed=args.seed, loop=args.loop, progress=sys.stderr,
        )
        print(json.dumps(report, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
