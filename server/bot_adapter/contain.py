"""Engines contained (contract section 15): nothing an engine started outlives it.

An engine is a program somebody else wrote. When its game ends (or the adapter stops) the
engine and every process it started must end, even one that left the engine's session with
``setsid``, which a process-group kill cannot reach. Linux offers what it takes:

- the adapter becomes a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``, done once by
  the command that runs engines, :func:`take_charge`): a process whose parent dies is handed
  to the adapter, not to init, so it stays among the adapter's descendants;
- the descendants of a process are read from ``/proc/PID/task/TID/children``;
- each engine runs with a mark in its environment (``TABLAS_ENGINE=TOKEN``), read back from
  ``/proc/PID/environ``, so that a process handed to the adapter (its parent gone) is told
  apart as another live engine's, which is spared, or anybody's else, which is ended.

:func:`end_tree` first stops every process of the tree (``SIGSTOP``: a stopped process cannot
fork), looking again until no new one appears, then kills them all; the dead are collected
(``waitpid``) when they are the adapter's children, so no zombie piles up.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from collections.abc import Iterable

MARK = "TABLAS_ENGINE"
PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>

_live: dict[int, str] = {}  # the pids of the engines running now -> their marks
_charged = False


def take_charge() -> bool:
    """Makes this process a child subreaper (Linux); False where it cannot be one. Called
    by the commands that run engines (``tablas bot``, ``tablas match``), never by a library
    user's process, whose orphans are not ours to collect."""
    global _charged
    if _charged:
        return True
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        _charged = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _charged = False
    return _charged


def started(pid: int, mark: str) -> None:
    """An engine runs as ``pid`` with ``mark`` in its environment."""
    _live[pid] = mark


def children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (any of its threads)."""
    found: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                found.update(int(p) for p in f.read().split())
        except OSError:
            continue
    return found


def descendants(roots: Iterable[int]) -> set[int]:
    """``roots``' children, their children, and so on (the roots not included)."""
    found: set[int] = set()
    todo = list(roots)
    while todo:
        for child in children(todo.pop()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def mark_of(pid: int) -> str | None:
    """The engine mark in ``pid``'s environment, if it has one (a process may drop it)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read()
    except OSError:
        return None
    key = MARK.encode() + b"="
    for item in env.split(b"\0"):
        if item.startswith(key):
            return item[len(key):].decode("ascii", "replace")
    return None


def marked(mark: str) -> set[int]:
    """Every process of this user that carries ``mark`` (a look through all of /proc)."""
    found: set[int] = set()
    for name in os.listdir("/proc"):
        if name.isdigit() and mark_of(int(name)) == mark:
            found.add(int(name))
    return found


def orphans(mark: str | None) -> set[int]:
    """This process's children that no live engine is: processes handed to it when their
    parent died. With ``mark``: those carrying it, or no mark at all, or a mark of no live
    engine (another live engine's are spared); without: all of them."""
    if not _charged:
        return set()  # a process handed over went to init, or to whoever is in charge
    spared = set(_live.values()) - ({mark} if mark is not None else set())
    found: set[int] = set()
    for pid in children(os.getpid()) - set(_live):
        if mark is None or mark_of(pid) not in spared:
            found.add(pid)
    return found


def end_tree(pid: int | None, mark: str | None) -> set[int]:
    """Ends the engine ``pid`` (None: it is gone already) and every process it started:
    its descendants, and the adapter's orphans that ``mark`` says are its (``mark`` None:
    every orphan, as when the adapter stops). The pids ended."""
    roots = ({pid} if pid is not None else set()) | orphans(mark)
    if not _charged and mark is not None:
        roots |= marked(mark)  # what left the tree went to init: found by its mark
    stopped: set[int] = set()
    while True:
        fresh = (roots | descendants(roots | stopped)) - stopped
        if not fresh:
            break
        for p in fresh:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p, signal.SIGSTOP)
        stopped |= fresh
        roots = set()
    for p in stopped:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, signal.SIGKILL)
    if pid is not None:
        _live.pop(pid, None)
    collect(stopped - {pid} if pid is not None else stopped)
    return stopped


def collect(pids: Iterable[int], within_s: float = 1.0) -> None:
    """Waits until each of ``pids`` (killed: they end at once) is gone, collecting the exit
    of those that are, or become, this process's children (a killed process whose parent
    was killed with it is handed over to us once that parent is gone), so that no zombie
    stays. The engine itself is its own object's to wait for."""
    pending = set(pids) - set(_live)
    me = os.getpid()
    end = time.monotonic() + within_s
    while pending:
        mine = children(me) if _charged else set()
        for p in list(pending):
            if p in mine:
                with contextlib.suppress(ChildProcessError, OSError):
                    if os.waitpid(p, os.WNOHANG)[0] == p:
                        pending.discard(p)
                continue
            state, parent = _state(p)
            if state is None:
                pending.discard(p)  # gone
            elif state == "Z" and parent not in pending and parent != me:
                pending.discard(p)  # a zombie whose parent lives on: its to collect
        if not pending or time.monotonic() > end:
            return
        time.sleep(0.002)


def _state(pid: int) -> tuple[str | None, int]:
    """The process's state letter (``Z``: a zombie) and its parent; None if there is no
    such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), int(fields[1])
    except (OSError, IndexError, ValueError):
        return None, 0


def forget(pid: int) -> None:
    _live.pop(pid, None)


def end_all() -> None:
    """The adapter stops: every engine and everything they started ends."""
    for pid in list(_live):
        end_tree(pid, _live.get(pid))
    end_tree(None, None)
