"""Crash consistency: ``kill -9`` the server (and its bot workers) while people play.

``tablas serve`` runs as a real process on a temporary database. Scripted players play
tic-tac-toe and Connect-4 against each other and against a bot; the server is killed with
SIGKILL at seeded random moments, 20 times, and restarted on the same database and port. After
each restart every player says ``hello`` with its token, takes its seat again (``join``: the
snapshot) and plays on. Every move any client saw in an ``update`` is recorded; at the end each
one must be in the database (a SQLite file; a PostgreSQL database, the same test again), and
every game unfinished at the last kill must resume and finish. A second test kills the bot
worker process in the middle of a bot's thinking: the bot's move must still arrive.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets
from pg_support import Backend
from server_support import Subprocess

HUMAN = {"kind": "human"}
KILLS = 20
SEED = 20261123
THINK_S = 0.03  # the scripted players' pause before a move (stays under the rate limit)


class Gone(Exception):
    """The connection died (the server was killed)."""


class Player:
    """One person: a token that survives restarts, one socket per server life."""

    def __init__(self, name: str, seen: dict[tuple[str, int], Any]) -> None:
        self.name = name
        self.token: str | None = None
        self.held: list[str] = []
        self.ws: Any = None
        self.n = 0
        self.seen = seen  # (room, ply) -> the move, for every update received

    async def connect(self, url: str) -> None:
        self.ws = await websockets.connect(url, max_size=2**22, open_timeout=10)
        welcome = await self.request({"type": "hello", "name": self.name, "token": self.token})
        assert welcome["type"] == "welcome", welcome
        self.token = welcome["token"]
        self.held = [s["room_id"] for s in welcome["seats"]]  # unfinished rooms, seats held

    async def send(self, msg: dict[str, Any]) -> int:
        self.n += 1
        try:
            await self.ws.send(json.dumps(dict(msg, id=self.n)))
        except websockets.ConnectionClosed as e:
            raise Gone from e
        return self.n

    async def recv(self, timeout: float = 30) -> dict[str, Any]:
        try:
            m: dict[str, Any] = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        except websockets.ConnectionClosed as e:
            raise Gone from e
        if m.get("type") == "update":
            prev = self.seen.setdefault((m["room_id"], m["ply"]), m["move"])
            assert prev == m["move"], f"ply {m['ply']} of {m['room_id']} seen twice, differing"
        return m

    async def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        """The first answer (``re``) to ``msg``, or for create_room the snapshot after it."""
        rid = await self.send(msg)
        while True:
            m = await self.recv()
            if m.get("re") == rid and m.get("type") != "room_created":
                return m

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()


@dataclass
class Slot:
    """A table where games follow one another: two people, or one person and a bot."""

    game: str
    players: list[Player]  # seat order; a bot's seat has no player
    bot: bool
    room: str | None = None
    finished: bool = True
    rooms: list[str] = field(default_factory=list)

    async def resume(self) -> list[dict[str, Any]]:
        """After a (re)start: a new game if the last one is over, else every seat rejoined."""
        a = self.players[0]
        if a.held and self.room not in a.held:
            # a game whose creation the last kill hid from us (committed, answer lost)
            self.room = a.held[0]
            self.rooms.append(self.room)
        if self.room is not None:
            views = [await p.request({"type": "join", "room_id": self.room, "seat": i})
                     for i, p in enumerate(self.players)]
            assert all(v["type"] == "room" for v in views), views
            self.finished = views[0]["status"] == "finished"
            if not self.finished:
                return views
        seats = [HUMAN, {"kind": "bot", "level": "easy"}] if self.bot else [HUMAN, HUMAN]
        view = await a.request({"type": "create_room", "game": self.game, "options": {},
                                "seats": seats, "join_seat": 0})
        assert view["type"] == "room", view
        self.room = view["room_id"]
        self.rooms.append(view["room_id"])
        self.finished = False
        if self.bot:
            return [view]
        view_b = await self.players[1].request({"type": "join", "room_id": self.room, "seat": 1})
        assert view_b["type"] == "room", view_b
        view_a = await a.recv()
        while view_a.get("type") != "room" or view_a.get("status") != "playing":
            view_a = await a.recv()
        return [view_a, view_b]


async def play_seat(slot: Slot, seat: int, view: dict[str, Any]) -> None:
    """Plays one seat (random legal moves) until its game ends or the connection dies."""
    me = slot.players[seat]
    rng = random.Random(f"{slot.room}-{seat}")
    ply = -1
    while view["status"] != "finished":
        if view.get("to_move") == seat and view.get("legal_moves") and view["ply"] != ply:
            ply = view["ply"]
            await asyncio.sleep(THINK_S)
            await me.send({"type": "move", "room_id": slot.room, "ply": ply,
                           "move": rng.choice(view["legal_moves"])})
        m = await me.recv()
        if m.get("room_id") != slot.room:
            continue
        if m["type"] in ("update", "room"):
            view = m
        elif m["type"] == "error" and m.get("code") == "rate_limited":
            ply = -1  # send it again
            await asyncio.sleep(0.2)
    slot.finished = True


async def one_life(srv: Subprocess, slots: list[Slot], people: list[Player],
                   kill_after: float | None) -> None:
    """Connects everyone, resumes every slot and plays; ``kill -9`` after ``kill_after``
    seconds, wherever that lands (hello, join, create, a move in flight), or, with None,
    plays until every game is over."""

    async def table(slot: Slot) -> None:
        while True:  # until killed: one game after another (the last life: one game)
            views = await slot.resume()
            seats = [0] if slot.bot else [0, 1]
            await asyncio.gather(*(play_seat(slot, s, v)
                                   for s, v in zip(seats, views, strict=True)))
            if kill_after is None:
                return

    async def work() -> None:
        for p in people:
            await p.connect(srv.url)
        await asyncio.gather(*(table(slot) for slot in slots))

    if kill_after is None:
        await asyncio.wait_for(work(), 60)
        return
    task = asyncio.create_task(work())
    await asyncio.wait([task], timeout=kill_after)
    srv.kill9()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Gone, OSError, TimeoutError,
                             websockets.InvalidHandshake):
        await task


async def rooms_with_status(backend: Backend, *status: str) -> list[str]:
    # The statuses are this file's own literals.
    listed = ", ".join(f"'{s}'" for s in status)
    return [r for (r,) in await backend.rows(f"SELECT id FROM rooms WHERE status IN ({listed})")]


async def stored_moves(backend: Backend) -> dict[tuple[str, int], Any]:
    rows = await backend.rows("SELECT room_id, ply, move FROM moves")
    return {(r, ply + 1): json.loads(mv) for r, ply, mv in rows}  # update ply = stored ply + 1


async def test_kill9_twenty_times_loses_no_seen_move(tmp_path: Path, backend: Backend) -> None:
    """On each backend: a SQLite file, and PostgreSQL (``--db postgresql://…``)."""
    rng = random.Random(SEED)
    srv = Subprocess(backend.where, tmp_path / "server.log", workers=1)
    seen: dict[tuple[str, int], Any] = {}
    people = [Player(f"p{i}", seen) for i in range(7)]
    slots = [
        Slot("tictactoe", people[0:2], bot=False),
        Slot("connect4", people[2:4], bot=False),
        Slot("connect4", people[4:6], bot=False),
        Slot("connect4", people[6:7], bot=True),
    ]
    started = time.monotonic()
    try:
        for _ in range(KILLS):
            srv.start()
            await one_life(srv, slots, people, rng.uniform(0.0, 1.0))
            for p in people:
                await p.close()
        assert srv.proc is not None and srv.proc.returncode == -signal.SIGKILL
        open_rooms = await rooms_with_status(backend, "playing")
        last_statuses = await backend.rows("SELECT status, COUNT(*) FROM rooms GROUP BY status")
        for _ in range(3):  # the last lives: every game resumes and is played to its end
            srv.start()
            await one_life(srv, slots, people, None)
            for p in people:
                await p.close()
            assert srv.terminate() == 0
            if not await rooms_with_status(backend, "playing", "waiting"):
                break
    finally:
        srv.kill9()
    stored = await stored_moves(backend)
    lost = {k: v for k, v in seen.items() if stored.get(k) != v}
    assert not lost, f"moves seen in an update but not on disk: {lost}"
    assert len(seen) > 100, len(seen)
    assert open_rooms, f"no game left open by the last kill: {last_statuses}, {slots}"
    assert not await rooms_with_status(backend, "playing", "waiting")  # every game finished
    results = {r for (r,) in await backend.rows("SELECT room_id FROM results")}
    assert set(open_rooms) <= results
    print(f"{KILLS} kills, {len(seen)} moves seen, {sum(len(s.rooms) for s in slots)} games,"
          f" {time.monotonic() - started:.1f} s")


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (the bot pool's workers are the forkserver's children)."""
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (entry / "stat").read_text()
                parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def cpu_ticks(pid: int) -> int:
    with contextlib.suppress(OSError):
        fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime
    return 0


async def thinking_worker(server_pid: int) -> int | None:
    """The process below the server that burns CPU now (the worker in mid-think), if any."""
    before = {p: cpu_ticks(p) for p in descendants(server_pid)}
    await asyncio.sleep(0.25)
    busy = max(before, key=lambda p: cpu_ticks(p) - before[p], default=None)
    return busy if busy is not None and cpu_ticks(busy) > before[busy] else None


async def test_killed_bot_worker_mid_think_still_moves(tmp_path: Path) -> None:
    db = tmp_path / "bots.db"
    srv = Subprocess(db, tmp_path / "server.log", workers=1)
    seen: dict[tuple[str, int], Any] = {}
    srv.start()
    try:
        assert srv.proc is not None
        me = Player("Ana", seen)
        await me.connect(srv.url)
        rng = random.Random(SEED)
        killed: list[int] = []
        deadline = time.monotonic() + 40
        while len(killed) < 3 and time.monotonic() < deadline:  # a new game when one ends
            view = await me.request({"type": "create_room", "game": "connect4", "options": {},
                                     "seats": [HUMAN, {"kind": "bot", "level": "medium"}],
                                     "join_seat": 0})
            room = view["room_id"]
            while len(killed) < 3 and view["status"] != "finished":
                await me.send({"type": "move", "room_id": room, "ply": view["ply"],
                               "move": rng.choice(view["legal_moves"])})
                mine = await me.recv()
                while mine.get("type") != "update":
                    mine = await me.recv()
                assert mine["seat"] == 0
                if mine["status"] == "finished":
                    break
                # the bot (medium: up to 1.5 s) thinks, unless its opening book answers
                victim = await thinking_worker(srv.proc.pid)
                if victim is not None:
                    os.kill(victim, signal.SIGKILL)
                    killed.append(victim)
                view = await me.recv(timeout=40)
                while view.get("type") != "update":
                    view = await me.recv(timeout=40)
                assert view["seat"] == 1, view  # the bot's move arrived all the same
        assert len(killed) == 3, "the bot never thought long enough to be killed"
        assert srv.proc.poll() is None
        assert len(set(killed)) == len(killed)  # a new worker every time
        # a victim killed mid-decision made the pool rebuild itself and the decision retried
        # (one that had just answered is only noticed at the next decision)
        assert srv.log.read_text().count("bot decision retry") >= 1
        await me.close()
        assert srv.terminate() == 0
    finally:
        srv.kill9()
    stored = await stored_moves(Backend("sqlite", str(db)))
    assert seen and all(stored.get(k) == v for k, v in seen.items())
