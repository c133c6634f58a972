"""The event loop: ``tablas serve`` runs on uvloop when it is installed (it is a dependency
off Windows), ``--loop`` chooses, and the server behaves the same on either loop: a game is
played and a reader that stops reading is dropped, on uvloop too (the rest of the suite runs
in-process servers on asyncio's loop). And the collector as serving sets it: young
collections only, a full one on a schedule."""

from __future__ import annotations

import asyncio
import gc
import socket
import struct
import subprocess
import sys
import weakref
from pathlib import Path

import pytest
import test_server_security
import websockets
from server_support import ROOT, Client, Subprocess, create, running
from tablas.server.connections import Conn
from tablas.server.edge.websocket import _Connection
from tablas.server.loop import loop_in_use, quiet_collector, run
from websockets.server import ServerProtocol

from tools.load import REFUSED_REQUEST, UPGRADE_REQUEST

uvloop = pytest.importorskip("uvloop")
HUMAN = {"kind": "human"}


def test_auto_prefers_uvloop_and_each_choice_runs_its_loop() -> None:
    assert loop_in_use("auto") == "uvloop"
    assert loop_in_use("asyncio") == "asyncio"
    assert loop_in_use("uvloop") == "uvloop"

    async def which() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert run(which(), "asyncio").startswith("asyncio")
    assert run(which(), "uvloop").startswith("uvloop")
    assert run(which()).startswith("uvloop")
    with pytest.raises(ValueError, match="unknown event loop 'trio'"):
        run(which(), "trio")


def test_serve_refuses_an_unknown_loop() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tablas.server.cli", "serve", "--loop", "trio", "--port", "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 2
    assert "invalid choice: 'trio'" in out.stderr


def test_served_server_says_its_loop_and_plays_on_it(tmp_path: Path) -> None:
    server = Subprocess(tmp_path / "t.db", tmp_path / "serve.log")
    server.start()
    try:
        async def game() -> dict[str, object]:
            a, b = Client(server.url), Client(server.url)
            await a.connect("Ana")
            await b.connect("Bo")
            room, _ = await create(a, "tictactoe", [HUMAN, HUMAN])
            view = await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
            players = {0: a, 1: b}
            for cell in (0, 3, 1, 4, 2):  # seat 0 wins on the top row
                view = await players[view["to_move"]].request(
                    {"type": "move", "room_id": room, "ply": view["ply"],
                     "move": {"cell": cell}}, "update")
            return view

        view = asyncio.run(game())
    finally:
        assert server.terminate() == 0
    assert view["status"] == "finished" and view["result"]["winner"] == 0
    log = (tmp_path / "serve.log").read_text()
    assert "event loop: uvloop" in log
    assert ("garbage collector: young generation automatically, everything every 3600 s or once"
            " memory has grown 1.5 times") in log


def test_slow_reader_is_dropped_on_uvloop_too(tmp_path: Path) -> None:
    """uvloop writes what it can at once and buffers the rest, as asyncio does: the bound
    on what a connection holds unread works the same (the security test, on uvloop)."""
    run(test_server_security.test_slow_spectator_is_dropped_without_delaying_anyone(tmp_path),
        "uvloop")


class _Node:
    def __init__(self) -> None:
        self.me = self


def _old_cycle() -> weakref.ref[_Node]:
    """A reference cycle that outlived young collections (as a closed connection's protocol
    did before ``tablas.server.edge.websocket._Connection`` broke it), then became garbage: only an
    older generation's pass can free it."""
    node = _Node()
    gc.collect(0)  # survivors move on to generation 1
    return weakref.ref(node)


def _allocate_through_young_collections() -> None:
    kept = [[i] for i in range(50_000)]  # ~70 young collections' worth of tracked objects
    del kept


async def test_quiet_collector_leaves_old_cycles_to_the_scheduled_full_collection() -> None:
    before = gc.get_threshold()
    assert before[1] < 100, "the control below needs the default generation-1 threshold"
    # Control: with the thresholds as they were, young collections soon bring on a pass over
    # generation 1 that frees the cycle.
    ref = _old_cycle()
    _allocate_through_young_collections()
    assert ref() is None

    ran: list[int] = []

    def collect() -> int:
        ran.append(gc.collect())
        return ran[-1]

    async with quiet_collector(every=0.2, collect=collect):
        assert gc.get_threshold()[0] == before[0]  # the young generation as before
        ref = _old_cycle()
        _allocate_through_young_collections()
        assert ref() is not None and not ran  # no automatic pass reached it
        for _ in range(100):
            if ran:
                break
            await asyncio.sleep(0.05)
        assert ran and ran[0] >= 1 and ref() is None  # the schedule's full collection did
    assert gc.get_threshold() == before
    runs = len(ran)
    await asyncio.sleep(0.3)
    assert len(ran) == runs  # the schedule ends with the block


async def test_quiet_collector_collects_early_when_memory_grows() -> None:
    """The safety net: between two scheduled collections, a full one as soon as resident
    memory has grown past ``growth`` times what it was after the last one (then measured
    again); nothing early where memory cannot be read."""
    readings = [100, 120, 149, 151, 151, 160, 230, 230]  # the first is the baseline
    ran: list[int] = []

    def memory() -> int:
        return readings.pop(0) if len(readings) > 1 else readings[0]

    def collect() -> int:
        ran.append(len(readings))
        return 0

    async with quiet_collector(every=3600, collect=collect, memory=memory, growth=1.5,
                               check_every=0.01, min_growth=0):
        for _ in range(200):
            if len(ran) == 2:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)
    # 151 > 1.5 x 100: collected, and 151 (read after it) is the new baseline; 160 is not
    # past 226.5, 230 is.
    assert ran == [4, 1], ran

    # ... and by min_growth at least: 151 and 160 are not 100 past 100, 230 is (and then
    # nothing is 100 past 230).
    readings[:] = [100, 120, 149, 151, 151, 160, 230, 230]
    ran.clear()
    async with quiet_collector(every=3600, collect=collect, memory=memory, growth=1.5,
                               check_every=0.01, min_growth=100):
        for _ in range(200):
            if ran:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)
    assert ran == [1], ran

    ran.clear()
    async with quiet_collector(every=3600, collect=collect, memory=lambda: None,
                               check_every=0.01):
        await asyncio.sleep(0.2)
    assert ran == []


def _per_connection_objects() -> int:
    """The server side's per-connection objects alive: websockets' protocol and connection,
    the server's ``Conn`` (``type()`` on purpose: ``isinstance`` would call a dead proxy)."""
    kinds = (ServerProtocol, _Connection, Conn)
    return sum(type(o) in kinds for o in gc.get_objects())


def _refused_handshake(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(REFUSED_REQUEST)  # no Upgrade: 426
        assert s.recv(4096).startswith(b"HTTP/1.1 426")


def _half_sent_handshake(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"GET /ws HTTP/1.1\r\nHost: x\r\n")


def _reset_after_handshake(port: int) -> None:
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(UPGRADE_REQUEST)
    assert s.recv(4096).startswith(b"HTTP/1.1 101")
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()  # RST


def test_closed_connections_leave_no_reference_cycles(tmp_path: Path) -> None:
    """websockets' sans-I/O protocol ends every connection in a reference cycle (its parser,
    a generator left suspended, holds it), and one that ends badly in more (the exception
    that broke its parser or handshake, whose traceback holds the parser's frames). The
    served collector frees cycles of long-lived objects only on its hourly schedule or once
    memory has grown by half (a stream of refused handshakes grew the served server by 388
    MiB in 20 s). With the cyclic collector off, every closed connection's protocol must go
    by reference counting alone: cleanly closed, refused, half-sent, reset, closed for a
    frame too large."""

    async def scenario() -> None:
        async with running(tmp_path / "t.db") as (_, url):
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            before = _per_connection_objects()
            for bad in (_refused_handshake, _half_sent_handshake, _reset_after_handshake):
                for _ in range(5):
                    await asyncio.to_thread(bad, port)
            for _ in range(5):
                client = Client(url)
                await client.connect("Ana")
                await client.close()
            for _ in range(5):  # a frame over the limit: closed with 1009
                ws = await websockets.connect(url, max_size=None)
                await ws.send("x" * 70_000)
                with pytest.raises(websockets.ConnectionClosed):
                    await ws.recv()
            loop = asyncio.get_running_loop()
            end = loop.time() + 20
            while _per_connection_objects() > before and loop.time() < end:
                await asyncio.sleep(0.05)
            assert _per_connection_objects() == before

    gc.collect()
    gc.disable()
    try:
        run(scenario(), "uvloop")
    finally:
        gc.enable()
