"""Engines contained (contract section 15): an engine that starts a child in a session of
its own (``setsid``), which holds the engine's stdout open, neither stops ``tablas bot``
(it logs in, plays, sees an engine die) nor outlives it: every process such an engine started
is gone from /proc when its game ends and when the adapter stops. A real ``tablas serve``,
the adapter and the engines as real processes."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from bot_support import Adapter, until_online
from server_support import Client, Subprocess
from test_bot_adapter import GAME_CLOCK, challenges, play_rooms, server  # noqa: F401

# Forks a child that leaves the session (setsid) and a grandchild in that session, which keep
# the engine's stdin and stdout open, write their pids into PIDS/ and sleep (the engine goes
# on once both are there); the engine plays the first legal move, or with
# "die" as its second argument exits at its first turn (its child still holding stdout).
FORKING_ENGINE = r'''
import os, sys, time
pids, mode = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "good"
told_r, told_w = os.pipe()  # each child says here that it is there
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:  # a grandchild too, in the new session
        open(os.path.join(pids, str(os.getpid())), "w").close()
        os.write(told_w, b"g")
        time.sleep(600)
        os._exit(0)
    open(os.path.join(pids, str(os.getpid())), "w").close()
    os.write(told_w, b"c")
    time.sleep(600)
    os._exit(0)
told = b""
while len(told) < 2:
    told += os.read(told_r, 2)
legal = []
for raw in iter(sys.stdin.readline, ""):
    words = raw.rstrip("\n").split(" ", 1)
    if words[0] == "tablas":
        print("ready", flush=True)
    elif words[0] == "legal":
        legal = [sys.stdin.readline().rstrip("\n") for _ in range(int(words[1]))]
    elif words[0] == "go":
        if mode == "die":
            sys.exit(5)
        print("move " + legal[0], flush=True)
    elif words[0] == "quit":
        break
'''


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not collected, counts as running: its
    parent failed to collect it)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return bool(f.read())
    except OSError:
        return False


async def none_left(pids: Path, timeout: float = 5.0) -> list[int]:
    """The children recorded in ``pids`` still there after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        left = [int(p.name) for p in pids.iterdir() if alive(int(p.name))]
        if not left or loop.time() > end:
            return left
        await asyncio.sleep(0.1)


async def test_an_engine_whose_child_left_its_session_plays_and_leaves_nothing(
        server: Subprocess, tmp_path: Path) -> None:  # noqa: F811
    script = tmp_path / "forking_engine.py"
    script.write_text(FORKING_ENGINE, encoding="utf-8")
    pids = tmp_path / "pids"
    pids.mkdir()
    bot = await Adapter(server.url, "Forker", f"{sys.executable} {script} {pids}",
                        "--games", "tictactoe,connect4", stderr=tmp_path / "forker.err").start()
    try:
        ana = Client(server.url)
        await ana.connect("Ana")
        # It logged in (the engine checked at start-up forked too): it is online and plays.
        first = await until_online(ana, "Forker", clock=GAME_CLOCK)
        rooms = {"tictactoe": (first["room_id"], first["seat"])}
        rooms.update(await challenges(ana, "Forker", [{"game": "connect4", "clock": GAME_CLOCK}]))
        ends = await play_rooms(ana, {room: seat for room, seat in rooms.values()})
        for room, _ in rooms.values():
            assert ends[room]["result"]["reason"] != "resign"
            await bot.finished(room)
        # Three engines (the check, two games): each with a child and a grandchild, all gone.
        assert len(list(pids.iterdir())) == 6
        assert await none_left(pids) == []
        # The adapter plays on after that, and a game in play when it stops leaves nothing.
        more = await challenges(ana, "Forker", [{"game": "tictactoe", "clock": GAME_CLOCK}])
        await bot.line(lambda w: w[:1] == ["started"] and w[2:3] == [more["tictactoe"][0]])
        await asyncio.sleep(0.5)
        assert len(list(pids.iterdir())) == 8
        assert await bot.stop() == 0
        assert await none_left(pids) == []
    finally:
        await bot.stop()
    await ana.close()


async def test_an_engine_that_dies_while_its_child_holds_stdout_loses_at_once(
        server: Subprocess, tmp_path: Path) -> None:  # noqa: F811
    script = tmp_path / "forking_engine.py"
    script.write_text(FORKING_ENGINE, encoding="utf-8")
    pids = tmp_path / "pids"
    pids.mkdir()
    bot = await Adapter(server.url, "Dier", f"{sys.executable} {script} {pids} die",
                        "--games", "connect4", stderr=tmp_path / "dier.err").start()
    try:
        ana = Client(server.url)
        await ana.connect("Ana")
        clock = {"base_ms": 60_000, "increment_ms": 0}
        first = await until_online(ana, "Dier", game="connect4", clock=clock)
        room, seat = first["room_id"], first["seat"]
        loop = asyncio.get_running_loop()
        began = loop.time()
        end = (await play_rooms(ana, {room: seat}))[room]
        # Lost as dead, not after a minute's silence: its child's open stdout did not hide it.
        assert end["result"] == {"winner": seat, "points": 1, "reason": "resign"}
        assert loop.time() - began < 20
        assert "died (exit code 5)" in bot.err_text()
        assert await none_left(pids) == []
        assert await bot.stop() == 0
    finally:
        await bot.stop()
    await ana.close()
