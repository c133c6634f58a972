"""The game clients: a worker process's event loop holding whole games (both players and
the spectators, each a :class:`tablas.server.client.ProtocolClient`), so that a latency is always
measured on one process's clock; or socket pairs driving the echo or the frames-only server
the same way."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Coroutine
from typing import Any

import websockets
from tablas.server.client import ProtocolClient, Refused
from tablas.server.server_bench import lag_probe

from tools.load.process import work
from tools.load.sync import CONNECT_CONCURRENCY, STUCK_S, Sync

LOAD_GAMES = ("tictactoe", "connect4")
SLOW_MS = 100.0


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


async def _client_worker_async(url: str, slots: list[int], watchers: list[int],
                               think: tuple[float, float], seconds: float, seed: int,
                               mode: str, sync: Sync) -> dict[str, Any]:
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


def client_worker(url: str, slots: list[int], watchers: list[int], think: tuple[float, float],
                  seconds: float, seed: int, mode: str, sync: Sync, out: Any,
                  loop: str) -> None:
    """A game clients' process: the games of ``slots`` (each with its ``watchers``), or, by
    ``mode``, socket pairs for the ``echo`` or ``frames`` server; its figures put on ``out``."""
    work(_client_worker_async(url, slots, watchers, think, seconds, seed, mode, sync), sync,
         out, loop)
