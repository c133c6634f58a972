"""Helpers for the server tests: a server on an ephemeral port, and a protocol client."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import websockets
from tablas.server.app import TablasServer
from tablas.server.store import open_store

ROOT = Path(__file__).resolve().parent.parent


@asynccontextmanager
async def running(db: Path | str, workers: int = 2, **kw: Any
                  ) -> AsyncIterator[tuple[TablasServer, str]]:
    """A server in this process on a free port, on the database ``db`` (a SQLite file, or
    what ``--db`` takes); yields it and its ws:// URL."""
    store = await open_store(str(db))
    srv = TablasServer(store, workers, **kw)
    port = await srv.start("127.0.0.1", 0)
    try:
        yield srv, f"ws://127.0.0.1:{port}/ws"
    finally:
        await srv.close()


class FakeClock:
    """The time rooms see (``TablasServer(clock=...)``), moved by the test: ``t += 10``. A
    room's timer sleeps in real time, so after moving the clock, poke the room (any command
    to it) to have it look again."""

    def __init__(self, t: float = 1_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


class Client:
    def __init__(self, url: str, source: str | None = None) -> None:
        """``source``: the client's own address (any of 127.0.0.0/8: each an address of its
        own to the server; default the system's choice, 127.0.0.1)."""
        self.url = url
        self.source = source
        self.ws: Any = None
        self.n = 0
        self.inbox: list[dict[str, Any]] = []

    async def connect(self, name: str = "Ana", token: str | None = None) -> dict[str, Any]:
        await self.open()
        await self.send({"type": "hello", "name": name, "token": token})
        return await self.expect("welcome")

    async def open(self) -> None:
        if self.source is None:
            self.ws = await websockets.connect(self.url, max_size=2**22)
        else:
            self.ws = await connect_from(self.url, self.source, max_size=2**22)

    async def send(self, msg: dict[str, Any]) -> int:
        self.n += 1
        await self.ws.send(json.dumps(dict(msg, id=self.n)))
        return self.n

    async def send_raw(self, raw: str) -> None:
        await self.ws.send(raw)

    async def recv(self, timeout: float = 20) -> dict[str, Any]:
        m: dict[str, Any] = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        self.inbox.append(m)
        return m

    async def expect(self, *types: str, timeout: float = 20) -> dict[str, Any]:
        """The next message of one of ``types``; other messages are skipped (kept in inbox)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            m = await self.recv(max(0.01, end - loop.time()))
            if m.get("type") in types:
                return m
            if m.get("type") == "error" and "error" not in types:
                raise AssertionError(f"unexpected error while waiting for {types}: {m}")

    async def error(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Sends ``msg`` and returns the error answering it."""
        rid = await self.send(msg)
        while True:
            m = await self.recv()
            if m.get("type") == "error" and m.get("re") == rid:
                return m
            assert m.get("re") != rid, f"expected an error for {msg}, got {m}"

    async def request(self, msg: dict[str, Any], *types: str) -> dict[str, Any]:
        """Sends ``msg`` and returns the answer (``re``) of one of ``types``."""
        rid = await self.send(msg)
        while True:
            m = await self.recv()
            if m.get("re") == rid:
                assert m.get("type") in types, f"{msg} answered with {m}"
                return m

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()


async def connected(url: str, *names: str) -> list[Client]:
    """One client per name, each past its ``welcome``."""
    clients = [Client(url) for _ in names]
    for c, name in zip(clients, names, strict=True):
        await c.connect(name)
    return clients


async def create(c: Client, game: str, seats: list[dict[str, Any]], join_seat: int | None = 0,
                 options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    msg: dict[str, Any] = {"type": "create_room", "game": game, "options": options or {},
                           "seats": seats}
    if join_seat is not None:
        msg["join_seat"] = join_seat
    created = await c.request(msg, "room_created")
    snap = await c.expect("room")
    return created["room_id"], snap


async def play_vs_bot(c: Client, room: str, view: dict[str, Any], seat: int = 0,
                      limit: int = 3000, pick: Any = None) -> dict[str, Any]:
    """Plays seat ``seat`` (first legal move, or ``pick``) until the game ends."""
    for _ in range(limit):
        if view["status"] == "finished":
            return view
        if view.get("to_move") == seat and view.get("legal_moves"):
            moves = view["legal_moves"]
            await c.send({"type": "move", "room_id": room, "ply": view["ply"],
                          "move": pick(moves) if pick else moves[0]})
        view = await c.expect("update", timeout=60)
    raise AssertionError("game did not finish")


async def connect_from(url: str, address: str, **kw: Any) -> Any:
    """A WebSocket whose client end is bound to ``address`` (127.0.0.0/8 is all loopback on
    Linux, so each of its addresses is a client address of its own to the server)."""
    port = int(url.split(":")[2].split("/")[0])
    sock = socket.socket()
    sock.bind((address, 0))
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    return await websockets.connect(url, sock=sock, **kw)


async def http_exchange(port: int, raw: bytes, timeout: float = 10,
                        source: str | None = None) -> tuple[bytes, bytes]:
    """Sends ``raw`` as it is on a fresh TCP connection to the server: the answer's head (the
    status line and headers, b"" if the server closed without one) and whatever followed it
    until the server closed (b"" after a 101, which keeps the connection). ``source``: the
    client's address (any of 127.0.0.0/8, each a client address of its own)."""
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, local_addr=None if source is None else (source, 0))
    try:
        writer.write(raw)
        await writer.drain()
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
        except asyncio.IncompleteReadError as e:
            return e.partial, b""
        if head.startswith(b"HTTP/1.1 101 "):
            return head, b""
        return head, await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()


def http_base(ws_url: str) -> str:
    """``http://HOST:PORT`` of the server whose WebSocket is ``ws_url`` (``ws://…/ws``)."""
    return ws_url.replace("ws://", "http://").removesuffix("/ws")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Subprocess:
    """``tablas serve`` as a real process (for kill -9)."""

    def __init__(self, db: Path | str, log: Path, workers: int = 1, args: Sequence[str] = ()
                 ) -> None:
        """``db``: a SQLite file or what ``--db`` takes; ``args``: more options for
        ``tablas serve``."""
        self.db, self.log, self.workers, self.args = db, log, workers, list(args)
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def launch(self) -> None:
        """Spawns it and returns at once (:meth:`start` waits until it is ready)."""
        out = open(self.log, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tablas.server.cli", "serve", "--port", str(self.port),
             "--db", str(self.db), "--bot-workers", str(self.workers), *self.args],
            cwd=ROOT, stdout=out, stderr=out, start_new_session=True,
        )

    def start(self) -> None:
        self.launch()
        assert self.proc is not None
        deadline = time.time() + 30
        while time.time() < deadline:
            assert self.proc.poll() is None, self.log.read_text()[-2000:]
            # Ready, not only alive: it listens before it serves (a 503 raises, as does
            # a refused connection).
            with suppress(Exception), urllib.request.urlopen(
                f"http://127.0.0.1:{self.port}/readyz", timeout=1
            ) as r:
                if r.status == 200:
                    return
            time.sleep(0.1)
        raise AssertionError("server did not start: " + self.log.read_text()[-2000:])

    def kill9(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def terminate(self) -> int | None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                return self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill9()
        return self.proc.returncode if self.proc else None


def contract_roll(server_seed: bytes, room_id: str, ply: int, attempt: int = 0,
                  seeds: Sequence[str] | None = ("", "")) -> tuple[int, int]:
    """The dice of contract section 8 in its own words, written here independently of
    server/dice.py (the tests' oracle): the bytes of HMAC-SHA256(server_seed, M), then of
    M#1, M#2…, where M = ROOM_ID:PLY (+ :a when a > 0) + :SEED0:SEED1 (``seeds`` None: a room
    stored before seat seeds, whose M has no seed part); a byte b < 252 gives b % 6 + 1."""
    m = f"{room_id}:{ply}" + (f":{attempt}" if attempt > 0 else "")
    if seeds is not None:
        m += f":{seeds[0]}:{seeds[1]}"
    dice: list[int] = []
    block = 0
    while len(dice) < 2:
        text = m if block == 0 else f"{m}#{block}"
        for b in hmac.new(server_seed, text.encode(), hashlib.sha256).digest():
            if b < 252 and len(dice) < 2:
                dice.append(b % 6 + 1)
        block += 1
    return dice[0], dice[1]
