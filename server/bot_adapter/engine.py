"""One engine process, spoken to over the engine protocol (contract section 12):

    > tablas 1                     < ready
    > game GAME SEAT OPTIONS_JSON
    > position POSITION
    > state STATE_JSON
    > legal N, then N lines of move texts
    > go TIME_MS                   < move MOVE
    > result WIN|LOSS|DRAW REASON
    > quit                         (killed 2 s later)

Lines are UTF-8 text. What else the engine prints on stdout is skipped; its stderr is the
adapter's. An engine that dies (its stdout ends, or a write finds it gone), or says nothing
in the time it has, raises :class:`EngineFailed`: the game loop resigns for it. The process
runs in a session of its own, so that a Ctrl-C meant for the adapter does not reach it, and
:meth:`Engine.stop` ends its whole process group (a shell script's children too).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import Sequence
from typing import Any

VERSION = "tablas 1"
READY_S = 10.0  # seconds an engine has to answer `tablas 1` with `ready`
QUIT_S = 2.0  # seconds between `quit` and the kill (contract section 12)
LINE_LIMIT = 1 << 20  # the longest line read from an engine


class EngineFailed(Exception):
    """The engine could not play on: it died, or said nothing in time. The text says which,
    for the adapter's log."""


class Engine:
    """One engine process for one game; :meth:`start` it, then :meth:`ask` it for moves."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.argv = list(argv)
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self, game: str, seat: int, options: dict[str, Any]) -> None:
        """Runs the command, waits for ``ready``, then tells it the game."""
        await self.hello()
        await self._write([f"game {game} {seat} {_json(options)}"])

    async def hello(self) -> None:
        """Runs the command and waits for its ``ready``."""
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=None, start_new_session=True, limit=LINE_LIMIT)
        except OSError as e:
            raise EngineFailed(f"could not run {self.argv[0]!r}: {e.strerror or e}") from None
        await self._write([VERSION])
        await self._read_until(lambda line: line.strip() == "ready", time.monotonic() + READY_S,
                               "did not answer `tablas 1` with `ready`")

    async def ask(self, position: str, state: dict[str, Any], legal: Sequence[str],
                  time_ms: int, within_s: float) -> str:
        """Its move (the text after ``move ``), given ``within_s`` seconds."""
        deadline = time.monotonic() + within_s
        await self._write([f"position {position}", f"state {_json(state)}",
                           f"legal {len(legal)}", *legal, f"go {time_ms}"])
        line = await self._read_until(lambda line: line == "move" or line.startswith("move "),
                                      deadline, "said no move in time")
        return line[len("move "):].strip()

    async def tell_result(self, word: str, reason: str) -> None:
        """``result WIN|LOSS|DRAW REASON``: the game is over (a dead engine is not told)."""
        with contextlib.suppress(EngineFailed):
            await self._write([f"result {word} {reason}"])

    async def stop(self) -> None:
        """``quit``, then the kill if the process is still there 2 s later."""
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        with contextlib.suppress(EngineFailed):
            await self._write(["quit"])
        with contextlib.suppress(OSError):
            if proc.stdin is not None:
                proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), QUIT_S)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
        finally:
            # Whatever it started in its session goes with it.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)

    def kill_now(self) -> None:
        """Ends the process group at once (the adapter is stopping)."""
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    async def _write(self, lines: list[str]) -> None:
        proc = self.proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            raise EngineFailed("is not running")
        try:
            proc.stdin.write("".join(f"{line}\n" for line in lines).encode())
            # An engine that reads nothing fills the pipe: that is silence too.
            await asyncio.wait_for(proc.stdin.drain(), READY_S)
        except (BrokenPipeError, ConnectionResetError):
            raise EngineFailed(f"died (exit code {await self._exit_code()})") from None
        except TimeoutError:
            raise EngineFailed("does not read its input") from None

    async def _read_until(self, wanted: Any, deadline: float, silent: str) -> str:
        """The first line ``wanted`` accepts, before ``deadline``; the lines before it are
        skipped (an engine may print what it likes)."""
        proc = self.proc
        assert proc is not None and proc.stdout is not None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise EngineFailed(silent)
            try:
                raw = await asyncio.wait_for(proc.stdout.readline(), left)
            except TimeoutError:
                raise EngineFailed(silent) from None
            except (ValueError, asyncio.LimitOverrunError):
                raise EngineFailed(f"wrote a line longer than {LINE_LIMIT} bytes") from None
            if not raw:
                raise EngineFailed(f"died (exit code {await self._exit_code()})")
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if wanted(line):
                return line

    async def _exit_code(self) -> int | None:
        assert self.proc is not None
        try:
            return await asyncio.wait_for(self.proc.wait(), 1.0)
        except TimeoutError:
            return None


async def check(argv: Sequence[str]) -> None:
    """Runs the engine once as ``tablas bot`` starts: it must answer ``tablas 1`` with
    ``ready`` (then it is told ``quit``), so that a command that cannot work is a bad option,
    said at once, not a game lost later; :class:`EngineFailed` otherwise."""
    engine = Engine(argv)
    try:
        await engine.hello()
    finally:
        await engine.stop()


def _json(value: Any) -> str:
    """JSON on one line (a JSON text never holds a raw newline)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
