"""Every process ``tablas serve`` starts ends within 5 s of the server's death, kill -9
included: the bot workers, the manager, the forkserver, the resource tracker.

The server is killed alone (never its process group, which would hide orphans), after its
descendants have been read from /proc."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from server_support import Client, Subprocess, create
from tablas.server import bot_pool

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads /proc")

GRACE_S = 5.0
BOT = {"kind": "bot", "level": "medium"}
Proc = tuple[int, bytes]  # a pid and its start time, so a reused pid is not taken for it


def _stat(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command's name (state first), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()
    except OSError:
        return None


def _state(pid: int) -> bytes:
    """The process's state letter (``Z`` for a zombie), or ``-`` once it has no entry."""
    fields = _stat(pid)
    return b"-" if fields is None else fields[0]


def _proc(pid: int) -> Proc | None:
    fields = _stat(pid)
    return None if fields is None else (pid, fields[19])


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as f:
                kids += [int(k) for k in f.read().split()]
    return kids


def _descendants(pid: int) -> set[Proc]:
    """Children, their children and so on, as they are now."""
    found: set[Proc] = set()
    todo = _children(pid)
    while todo:
        kid = todo.pop()
        proc = _proc(kid)
        if proc is not None:
            found.add(proc)
            todo += _children(kid)
    return found


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"


def _running(proc: Proc) -> bool:
    """Whether this very process still runs: a zombie has ended, whoever will reap it."""
    pid, start = proc
    fields = _stat(pid)
    return fields is not None and fields[19] == start and fields[0] not in (b"Z", b"X")


def _serve(tmp_path: Path) -> Subprocess:
    """``tablas serve --bot-workers 2`` in a session of its own, once it answers."""
    srv = Subprocess(tmp_path / "t.db", tmp_path / "server.log", workers=2)
    srv.start()
    return srv


async def _busy_bot_pool(srv: Subprocess) -> set[Proc]:
    """Starts two bot-against-bot games (the manager and both workers start, and are
    thinking) and returns the server's descendants once all five processes are there."""
    assert srv.proc is not None
    c = Client(srv.url)
    await c.connect("Ana")
    for _ in range(2):
        await create(c, "connect4", [BOT, BOT], join_seat=None)
    deadline = time.monotonic() + 30
    while True:
        procs = _descendants(srv.proc.pid)
        cmds = [_cmdline(pid) for pid, _ in procs]
        trackers = sum("resource_tracker" in cmd for cmd in cmds)
        forked = sum("forkserver" in cmd for cmd in cmds)  # the forkserver and its children
        if trackers == 1 and forked == 4:  # the forkserver, the manager, two workers
            await c.close()
            return procs
        assert time.monotonic() < deadline, f"the bot pool did not start: {cmds}"
        await asyncio.sleep(0.1)


def _survivors(procs: set[Proc], since: float) -> list[str]:
    """What of ``procs`` still runs ``GRACE_S`` after ``since``, with its command line."""
    while True:
        left = [f"{pid} {_cmdline(pid)}" for pid, start in procs if _running((pid, start))]
        if not left or time.monotonic() > since + GRACE_S:
            return left
        time.sleep(0.05)


def _clean_up(srv: Subprocess, procs: set[Proc]) -> None:
    """Leaves nothing running on the machine, whatever the test found."""
    proc = srv.proc
    assert proc is not None
    for pid, start in procs:
        if _running((pid, start)):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)  # pgid = the server's pid (start_new_session)
    with contextlib.suppress(OSError):
        proc.kill()
    proc.wait()


@pytest.mark.parametrize("reaped", [True, False], ids=["reaped", "zombie"])
async def test_kill9_of_the_server_ends_every_process_it_started(
        tmp_path: Path, reaped: bool) -> None:
    srv = _serve(tmp_path)
    proc = srv.proc
    assert proc is not None
    procs: set[Proc] = set()
    try:
        procs = await _busy_bot_pool(srv)
        os.kill(proc.pid, signal.SIGKILL)  # the server alone, not its group
        if reaped:
            proc.wait(10)
        else:  # its parent (this test) has not reaped it yet: it stays a zombie meanwhile
            while _state(proc.pid) != b"Z":
                time.sleep(0.01)
        died = time.monotonic()
        left = _survivors(procs, died)
        assert not left, f"still running {GRACE_S} s after the server's death: {left}"
        if not reaped:  # and it was a zombie throughout, not reaped by anyone else
            assert _state(proc.pid) == b"Z"
    finally:
        _clean_up(srv, procs)


async def test_sigterm_of_the_server_ends_every_process_it_started(tmp_path: Path) -> None:
    srv = _serve(tmp_path)
    proc = srv.proc
    assert proc is not None
    procs: set[Proc] = set()
    try:
        procs = await _busy_bot_pool(srv)
        os.kill(proc.pid, signal.SIGTERM)  # the server alone, not its group
        assert proc.wait(15) == 0, srv.log.read_text()[-2000:]
        left = _survivors(procs, time.monotonic())
        assert not left, f"still running {GRACE_S} s after the server's exit: {left}"
    finally:
        _clean_up(srv, procs)


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polling"])
def test_a_watcher_waits_for_its_process_and_no_longer(
        monkeypatch: pytest.MonkeyPatch, pidfd: bool) -> None:
    """``_wait_gone`` returns when the process ends, also while it is an unreaped zombie
    (what a killed server is until its parent reaps it), and not before; with pidfds, or
    polling where there are none."""
    if not pidfd:
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    elif not hasattr(os, "pidfd_open"):
        pytest.skip("no pidfd_open here")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        watcher = threading.Thread(target=bot_pool._wait_gone, args=(child.pid, 0.05), daemon=True)
        watcher.start()
        watcher.join(0.5)
        assert watcher.is_alive(), "returned while the process still runs"
        os.kill(child.pid, signal.SIGKILL)  # not reaped: a zombie until child.wait()
        watcher.join(3)
        assert not watcher.is_alive(), "did not see the zombie"
        assert _state(child.pid) == b"Z"  # what it saw was a zombie
    finally:
        child.kill()
        child.wait()


def test_kill9_of_the_server_ends_its_explain_worker_too(tmp_path: Path) -> None:
    """The explain trees' process (server.edge.http: a pool of its own) watches the server
    as the bot workers do."""
    import urllib.request

    srv = _serve(tmp_path)
    proc = srv.proc
    assert proc is not None
    procs: set[Proc] = set()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{srv.port}/api/explain?game=random",
                                    timeout=30) as r:
            assert r.status == 200
        procs = _descendants(proc.pid)
        # the forkserver and the explain worker (the bots' pool has not started: no bot yet)
        assert sum("forkserver" in _cmdline(pid) for pid, _ in procs) == 2, [
            _cmdline(pid) for pid, _ in procs]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        left = _survivors(procs, time.monotonic())
        assert not left, f"still running {GRACE_S} s after the server's death: {left}"
    finally:
        _clean_up(srv, procs)
