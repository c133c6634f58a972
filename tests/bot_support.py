"""Helpers for the tests of ``tablas bot`` (contract section 12): an engine written here that
logs every line it is told, ``tablas bot`` as a real process, a person who challenges it,
and what an engine should have been told, computed from a finished room with the engine
package (independently of the adapter's own following of the room)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from server_support import ROOT, Client
from tablas.engine.games import get_game
from tablas.engine.records import replay

PASSWORD = "engine password"

# The test's engine: logs every line it reads into LOG_DIR/GAME-PID.log; plays the first
# legal move, but takes a double and redoubles once it owns the cube; MODES (JSON) may make
# it misbehave in a game: "illegal" (answers a move not listed), "silent" (never answers),
# "die" (exits at its first turn). It says something besides its answers, which the adapter
# must skip.
ENGINE = r'''
import json, os, sys

log_dir = sys.argv[1]
modes = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
log = None
game, seat, mode, state, legal = None, None, "good", {}, []

def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()

def note(line):
    if log is not None:
        log.write(line + "\n")
        log.flush()

def choose():
    if "take" in legal:
        return "take"
    if "double" in legal:
        owner = state.get("cube", {}).get("owner")
        return "double" if owner == seat else "roll"
    return legal[0]

for raw in iter(sys.stdin.readline, ""):
    line = raw.rstrip("\n")
    if line == "tablas 1":
        say("hello: this line is not an answer")
        say("ready")
        continue
    if line.startswith("game "):
        _, game, seat_text, _options = line.split(" ", 3)
        seat, mode = int(seat_text), modes.get(game, "good")
        log = open(os.path.join(log_dir, f"{game}-{os.getpid()}.log"), "w")
    note(line)
    if line.startswith("state "):
        state = json.loads(line[len("state "):])
    elif line.startswith("legal "):
        legal = [sys.stdin.readline().rstrip("\n") for _ in range(int(line.split()[1]))]
        for m in legal:
            note(m)
    elif line.startswith("go "):
        if mode == "illegal":
            say("move certainly not a move")
        elif mode == "die":
            sys.exit(3)
        elif mode != "silent":
            say("thinking...")
            say("move " + choose())
    elif line == "quit":
        break
'''


def write_engine(folder: Path) -> tuple[Path, Path]:
    """The test engine's file and the folder its logs go to."""
    logs = folder / "engine-logs"
    logs.mkdir(exist_ok=True)
    path = folder / "test_engine.py"
    path.write_text(ENGINE, encoding="utf-8")
    return path, logs


def engine_command(path: Path, logs: Path, modes: str = "{}") -> str:
    return f"{sys.executable} {path} {logs} '{modes}'"


class Adapter:
    """``tablas bot`` as a real process; its stdout read line by line as it comes. Every one
    started is ended after its test, whatever happened in it (:func:`end_adapters`)."""

    started: ClassVar[list[asyncio.subprocess.Process]] = []

    def __init__(self, url: str, name: str, engine: str, *args: str,
                 stderr: Path | None = None) -> None:
        self.argv = [sys.executable, "-m", "tablas.server.cli", "bot", "--server", url,
                     "--name", name, "--password", PASSWORD, "--engine", engine, *args]
        self.stderr = stderr
        self.proc: asyncio.subprocess.Process | None = None
        self.lines: list[str] = []
        self._new = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> Adapter:
        err = open(self.stderr, "ab") if self.stderr is not None else None
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv, cwd=ROOT, stdout=asyncio.subprocess.PIPE,
            stderr=err if err is not None else asyncio.subprocess.DEVNULL,
            start_new_session=True)
        Adapter.started.append(self.proc)
        if err is not None:
            err.close()
        self._reader = asyncio.get_running_loop().create_task(self._read())
        return self

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        async for raw in self.proc.stdout:
            self.lines.append(raw.decode().rstrip("\n"))
            self._new.set()

    async def line(self, pred: Callable[[list[str]], bool], timeout: float = 60,
                   start: int = 0) -> str:
        """The first line from ``start`` on whose words ``pred`` accepts (waiting for it)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        seen = start
        while True:
            for line in self.lines[seen:]:
                if pred(line.split()):
                    return line
            seen = len(self.lines)
            assert self.proc is not None
            if self.proc.returncode is not None and self._reader is not None \
                    and self._reader.done():
                raise AssertionError(f"tablas bot ended ({self.proc.returncode}): "
                                     f"{self.lines} {self.err_text()}")
            self._new.clear()
            left = end - loop.time()
            if left <= 0:
                raise AssertionError(f"no such line in {timeout} s: {self.lines} "
                                     f"{self.err_text()}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._new.wait(), min(left, 0.5))

    async def finished(self, room_id: str, timeout: float = 60) -> list[str]:
        """The words of the adapter's line saying the game in ``room_id`` finished."""
        line = await self.line(lambda w: w[:1] == ["finished"] and w[2:3] == [room_id],
                               timeout)
        return line.split()

    def err_text(self) -> str:
        return self.stderr.read_text()[-3000:] if self.stderr and self.stderr.exists() else ""

    async def stop(self) -> int | None:
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 15)
            except TimeoutError:
                os.killpg(self.proc.pid, signal.SIGKILL)
                await self.proc.wait()
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._reader, 5)
        return self.proc.returncode if self.proc is not None else None


async def until_online(client: Client, name: str, game: str = "tictactoe",
                       timeout: float = 30, **terms: Any) -> dict[str, Any]:
    """``client`` challenges ``name`` until it is online: the ``paired`` message."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        rid = await client.send({"type": "challenge", "to": name, "game": game, **terms})
        while True:
            m = await client.recv()
            if m.get("re") == rid:
                break
        if m["type"] == "challenge_sent":
            return await client.expect("paired")
        assert m["code"] == "unknown_player", m
        assert loop.time() < end, f"{name} never came online"
        await asyncio.sleep(0.2)


@dataclass(frozen=True)
class Turn:
    """What an engine is told at one of its turns."""

    position: str
    state: dict[str, Any]
    legal: list[str]
    go: int | None = None  # the time given (None: not compared)


def expected_turns(record: dict[str, Any], seat: int) -> list[Turn]:
    """Every turn of ``seat`` in a finished room (``GET /api/rooms/{id}``), replayed here
    with the engine package: the position, the state, and the legal moves as the game writes
    them."""
    game = get_game(record["game"])
    rolls: dict[int, list[Sequence[int]]] = {}
    for r in record["rolls"]:
        rolls.setdefault(r["ply"], []).append(r["dice"])
    turns = []
    for ply in range(len(record["history"])):
        actions = [(m, rolls.get(i + 1, [])) for i, m in enumerate(record["history"][:ply])]
        state = replay(game, record["options"], rolls.get(0, []), actions)
        if game.to_move(state) == seat:
            turns.append(Turn(game.position_text(state), game.state_to_json(state),
                              [game.move_text(state, m) for m in game.legal_moves(state)]))
    return turns


def engine_turns(log: Path) -> tuple[str, list[Turn], list[str]]:
    """The engine's log: its ``game`` line, the turns it was told, and the other lines."""
    import json

    lines = log.read_text(encoding="utf-8").splitlines()
    turns: list[Turn] = []
    rest: list[str] = []
    i = 1
    while i < len(lines):
        if lines[i].startswith("position "):
            n = int(lines[i + 2].split()[1])
            assert lines[i + 1].startswith("state ") and lines[i + 3 + n].startswith("go "), \
                lines[i: i + 4 + n]
            turns.append(Turn(lines[i][len("position "):],
                              json.loads(lines[i + 1][len("state "):]),
                              lines[i + 3: i + 3 + n], int(lines[i + 3 + n].split()[1])))
            i += 4 + n
        else:
            rest.append(lines[i])
            i += 1
    return lines[0], turns, rest


def end_adapters() -> None:
    """Kills the process group of every adapter a test started and did not stop (a test
    that failed before its ``stop``), so that none outlives its test."""
    for proc in Adapter.started:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
    Adapter.started.clear()
