"""One engine process, spoken to over the engine protocol (contract section 12), shared by
``tablas bot`` and ``tablas match``:

    > tablas 1                     < ready
    > game GAME SEAT OPTIONS_JSON
    > position POSITION
    > state STATE_JSON
    > legal N, then N lines of move texts
    > go TIME_MS                   < move MOVE
    > result WIN|LOSS|DRAW REASON
    > quit                         (killed 2 s later)

Lines are UTF-8 text. What else the engine prints on stdout is skipped; its stderr is the
adapter's. An engine that dies, or says nothing in the time it has, raises
:class:`EngineFailed` (its text says which: the game loop resigns for it, a match scores the
game lost with that reason).

The process runs in a session of its own (a Ctrl-C meant for the adapter does not reach it).
Its end is known from the process itself (a pidfd), never from its stdout's end: a child the
engine started may hold that pipe open for ever, and nothing here waits for it. When the
engine is let go, it and everything it started end (:mod:`.contain`).

Its pipes are this module's own file descriptors, read and written when the loop says they
are ready, and closed here, once. (The loops' pipe transports do not agree on who closes a
pipe: uvloop's closes the descriptor and then has the file object close the same number
again, which by then may be another engine's new pipe.)
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import json
import os
import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any

from tablas.server.bot_adapter import contain

VERSION = "tablas 1"
READY_S = 10.0  # seconds an engine has to answer `tablas 1` with `ready`
QUIT_S = 2.0  # seconds between `quit` and the kill (contract section 12)
LINE_LIMIT = 1 << 20  # the longest line read from an engine
LAST_WORDS_S = 0.05  # after its exit, how long what it wrote before may take to be read


class EngineFailed(Exception):
    """The engine could not play on: it died, or said nothing in time. The text says which,
    for the adapter's log; :attr:`kind` says it in one word (``death``, ``time``)."""

    def __init__(self, text: str, kind: str = "death") -> None:
        super().__init__(text)
        self.kind = kind


class _Lines:
    """The engine's stdout as lines, and one waiter woken by a line, its end or the
    process's."""

    def __init__(self) -> None:
        self.lines: collections.deque[str] = collections.deque()
        self.partial = b""
        self.closed = False
        self.too_long = False
        self.waiter: asyncio.Future[None] | None = None

    def data_received(self, data: bytes) -> None:
        chunks = (self.partial + data).split(b"\n")
        self.partial = chunks.pop()
        if len(self.partial) > LINE_LIMIT:
            self.too_long, self.partial = True, b""
        for c in chunks:
            self.lines.append(c.decode("utf-8", "replace").rstrip("\r"))
        self.wake()

    def eof_received(self) -> None:
        self.closed = True
        self.wake()

    def wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)


class Engine:
    """One engine process for one game; :meth:`start` it, then :meth:`ask` it for moves."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.argv = list(argv)
        self.proc: _Child | None = None
        self.mark = secrets.token_hex(8)
        self._out: _Lines | None = None
        self._unsent = b""  # written to the engine but not yet taken by its pipe
        self._input_open = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._exited: asyncio.Future[int] | None = None
        self._pidfd: int | None = None
        self.ended = False  # let go: it and its processes are gone

    async def start(self, game: str, seat: int, options: dict[str, Any]) -> None:
        """Runs the command, waits for ``ready``, then tells it the game."""
        await self.hello()
        await self._write([f"game {game} {seat} {_json(options)}"])

    async def hello(self) -> None:
        """Runs the command and waits for its ``ready``."""
        loop = asyncio.get_running_loop()
        self.proc = proc = _Child.spawn(self.argv, {**_environment(), contain.MARK: self.mark})
        contain.started(proc.pid, self.mark)
        self._exited = loop.create_future()
        self._watch_exit(loop, proc)
        self._out = _Lines()
        self._loop = loop
        os.set_blocking(proc.stdin, False)
        os.set_blocking(proc.stdout, False)
        self._input_open = True
        loop.add_reader(proc.stdout, self._readable)
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

    async def stop(self, *last: str) -> None:
        """``quit`` (after the ``last`` lines, a match's ``result``: one write), then the
        kill if the process is still there 2 s later; then whatever it started ends too."""
        if self.proc is None or self.ended:
            return
        exited = self._exited
        if exited is not None and not exited.done():
            with contextlib.suppress(EngineFailed):
                await self._write([*last, "quit"])
            self._close_input()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(exited), QUIT_S)
        self.kill_now()

    def kill_now(self) -> None:
        """Ends the engine and everything it started, at once; our ends of its pipes are
        closed (nothing waits for a pipe a child of it may hold)."""
        proc = self.proc
        if proc is None or self.ended:
            return
        self.ended = True
        alive = proc.poll() is None
        contain.end_tree(proc.pid if alive else None, self.mark)
        contain.forget(proc.pid)
        self._close_input()
        if proc.stdout >= 0 and self._loop is not None:
            self._loop.remove_reader(proc.stdout)
            os.close(proc.stdout)
            proc.stdout = -1
        if self._pidfd is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._pidfd)
            with contextlib.suppress(OSError):
                os.close(self._pidfd)
            self._pidfd = None
        proc.wait(1.0)  # killed: at once
        if self._exited is not None and not self._exited.done():
            self._exited.set_result(proc.returncode if proc.returncode is not None else -9)

    def _close_input(self) -> None:
        proc = self.proc
        if proc is not None and self._input_open and self._loop is not None:
            self._input_open = False
            self._loop.remove_writer(proc.stdin)
            os.close(proc.stdin)

    def _readable(self) -> None:
        """The engine's stdout has something: its bytes, or its end."""
        proc, out = self.proc, self._out
        assert proc is not None and out is not None
        try:
            data = os.read(proc.stdout, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            out.data_received(data)
        elif self._loop is not None:
            self._loop.remove_reader(proc.stdout)
            out.eof_received()

    def _flush(self) -> None:
        """The pipe has room again: what is left of the writes goes."""
        proc = self.proc
        assert proc is not None
        try:
            n = os.write(proc.stdin, self._unsent)
        except BlockingIOError:
            return
        except OSError:
            n, self._unsent = 0, b""
        self._unsent = self._unsent[n:]
        if not self._unsent and self._loop is not None:
            self._loop.remove_writer(proc.stdin)

    def _watch_exit(self, loop: asyncio.AbstractEventLoop, proc: _Child) -> None:
        """Sets ``_exited`` when the process ends: a pidfd read by the loop where Linux has
        them, a look every tenth of a second otherwise."""
        def look() -> None:
            code = proc.poll()
            if code is None:
                if self._pidfd is None:
                    loop.call_later(0.1, look)
                return
            if self._pidfd is not None:
                loop.remove_reader(self._pidfd)
                os.close(self._pidfd)
                self._pidfd = None
            if self._exited is not None and not self._exited.done():
                self._exited.set_result(code)
            if self._out is not None:
                self._out.wake()

        try:
            self._pidfd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            loop.call_later(0.1, look)
            return
        loop.add_reader(self._pidfd, look)

    async def _write(self, lines: list[str]) -> None:
        proc, exited = self.proc, self._exited
        if proc is None or exited is None:
            raise EngineFailed("is not running")
        if exited.done() or not self._input_open:
            raise EngineFailed(self._died())
        data = "".join(f"{line}\n" for line in lines).encode()
        if self._unsent:
            self._unsent += data
        else:
            try:
                n = os.write(proc.stdin, data)
            except BlockingIOError:
                n = 0
            except OSError:  # the pipe's reader is gone: the engine, and all it started
                raise EngineFailed(self._died()) from None
            if n < len(data):
                self._unsent = data[n:]
                assert self._loop is not None
                self._loop.add_writer(proc.stdin, self._flush)
        if len(self._unsent) > 1 << 16:
            # An engine that reads nothing fills the pipe: that is silence too.
            end = time.monotonic() + READY_S
            while self._unsent:
                if exited.done():
                    raise EngineFailed(self._died())
                if time.monotonic() > end:
                    raise EngineFailed("does not read its input", "time")
                await asyncio.sleep(0.01)

    async def _read_until(self, wanted: Callable[[str], bool], deadline: float,
                          silent: str) -> str:
        """The first line ``wanted`` accepts, before ``deadline``; the lines before it are
        skipped (an engine may print what it likes)."""
        out, exited = self._out, self._exited
        assert out is not None and exited is not None
        loop = asyncio.get_running_loop()
        last_words: float | None = None  # after its exit: until when its lines may come
        while True:
            while out.lines:
                line = out.lines.popleft()
                if wanted(line):
                    return line
            if out.too_long:
                raise EngineFailed(f"wrote a line longer than {LINE_LIMIT} bytes")
            now = time.monotonic()
            if out.closed or exited.done():
                last_words = last_words if last_words is not None else now + LAST_WORDS_S
                if out.closed or now >= last_words:
                    with contextlib.suppress(TimeoutError):  # for its exit code
                        await asyncio.wait_for(asyncio.shield(exited), 0.5)
                    raise EngineFailed(self._died())
            left = deadline - now
            if left <= 0:
                raise EngineFailed(silent, "time")
            if last_words is not None:
                left = min(left, last_words - now)
            waiter = out.waiter = loop.create_future()
            timer = loop.call_later(left, out.wake)
            try:
                await waiter
            finally:
                timer.cancel()
                out.waiter = None

    def _died(self) -> str:
        code = self.proc.poll() if self.proc is not None else None
        return f"died (exit code {code})"


class _Child:
    """The engine's process: spawned (``posix_spawn``: a vfork and an exec, a fraction of
    what ``subprocess.Popen`` costs, which counts when a match starts two per game) in a
    session of its own, with pipes for its stdin and stdout; its exit collected here."""

    def __init__(self, pid: int, stdin: int, stdout: int) -> None:
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.returncode: int | None = None

    @classmethod
    def spawn(cls, argv: Sequence[str], env: dict[str, str]) -> _Child:
        """Runs ``argv`` (its program looked up on the PATH); :class:`EngineFailed` if it
        cannot run."""
        in_r, in_w = os.pipe2(os.O_CLOEXEC)
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        try:
            pid = os.posix_spawnp(argv[0], list(argv), env, setsid=True, file_actions=[
                (os.POSIX_SPAWN_DUP2, in_r, 0), (os.POSIX_SPAWN_DUP2, out_w, 1)])
        except (OSError, ValueError) as e:
            for fd in (in_r, in_w, out_r, out_w):
                os.close(fd)
            text = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise EngineFailed(f"could not run {argv[0]!r}: {text}", "start") from None
        os.close(in_r)
        os.close(out_w)
        return cls(pid, in_w, out_r)

    def poll(self) -> int | None:
        """Its exit code once it has ended (collected then), else None."""
        if self.returncode is None:
            with contextlib.suppress(ChildProcessError):
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid == self.pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, within_s: float) -> int | None:
        """Its exit code, waiting up to ``within_s`` seconds (it was killed: at once)."""
        end = time.monotonic() + within_s
        while self.poll() is None and time.monotonic() < end:
            time.sleep(0.001)
        return self.returncode


async def check(argv: Sequence[str]) -> None:
    """Runs the engine once as ``tablas bot`` starts: it must answer ``tablas 1`` with
    ``ready`` (then it is told ``quit``), so that a command that cannot work is a bad option,
    said at once, not a game lost later; :class:`EngineFailed` otherwise."""
    engine = Engine(argv)
    try:
        await engine.hello()
    finally:
        await engine.stop()


@functools.cache
def _environment() -> dict[str, str]:
    """This process's environment, read once (an engine gets it, and its mark)."""
    return dict(os.environ)


def _json(value: Any) -> str:
    """JSON on one line (a JSON text never holds a raw newline)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
