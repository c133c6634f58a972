"""How a server process runs: on uvloop where it is installed (asyncio's own loop otherwise),
with the cyclic garbage collector kept from stalling it.

uvloop (libuv, in C) runs the same asyncio code. Under load much of the server's time goes
to the transport (reading, writing, waking tasks), which uvloop does in C: the figures are
in docs/benchmarks.md (the load generator's ``--loop``). Nothing in the server depends on which loop
runs it; the test suite runs in-process servers on asyncio's loop and ``tablas serve``
subprocesses on uvloop, so both are exercised.

The collector: CPython's generational collector walks its older generations when enough
objects have outlived the young one, and a full walk stalls the loop for as long as it takes
to visit every tracked object. With 4,500 to 6,000 open sockets (some 130 objects each in
websockets' connection, its tasks and coroutines) that was 230 to 550 ms on this project's
2-core machine, every 10 to 20 seconds at a human pace: whatever waits out a player's think
time gets promoted. The server makes no reference cycles on its paths, and it breaks the
one websockets' protocol makes for every connection (``tablas.server.app._Connection``: a
suspended parser generator and, when the connection ends badly, an exception's traceback,
both holding the protocol), so those walks buy nothing. :func:`quiet_collector`
keeps the young generation's collections (a few milliseconds; they catch short-lived cycles)
and replaces the automatic older ones by a full collection every
:data:`FULL_COLLECTION_EVERY` seconds, which frees whatever cycles did reach the old
generations, or sooner once resident memory has grown by half (and by 256 MiB) since the
last one (cycles nobody expected, under some input, cannot pile up for an hour). The figures are in
docs/benchmarks.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, TypeVar

log = logging.getLogger("tablas.server")

T = TypeVar("T")

LOOPS = ("auto", "asyncio", "uvloop")

# Seconds between full collections under quiet_collector. An hour: the served load finds
# nothing for them to free (0 objects after 300 s and 10,918 games at 3,000 sockets), and at
# 13,000 sockets each stalls every room for about a second.
FULL_COLLECTION_EVERY = 3600.0
# ... or sooner, once resident memory has grown by half since the last one (looked at every
# few seconds): garbage in cycles then stays under half the live heap, as with CPython's own
# thresholds, which collect everything once the long-lived objects have grown by a quarter.
EARLY_COLLECTION_GROWTH = 1.5
# ... and by this many bytes at least. A server starts at some 40 MiB, so half of it is what
# 2,000 sockets opening take: a rush of visitors brought on a full collection at once, which
# stalled every room for 190 to 330 ms (docs/benchmarks.md, "Bursts"). Garbage in cycles
# stays under this much or under half the live heap, whichever is larger.
EARLY_COLLECTION_MIN_BYTES = 256 * 2**20
MEMORY_CHECK_EVERY = 5.0
# A generation's threshold the count of younger collections never exceeds (a C int).
_NEVER = 2**31 - 1
# A full collection at least this long is logged at INFO: a stall every player felt.
_NOTICEABLE_S = 0.1


def loop_in_use(choice: str = "auto") -> str:
    """The loop :func:`run` would use for ``choice`` (one of :data:`LOOPS`): ``asyncio`` or
    ``uvloop``. Raises ``ValueError`` for an unknown choice and ``ImportError`` when
    ``uvloop`` is asked for and is not installed (``pip install uvloop``; not on Windows)."""
    if choice not in LOOPS:
        raise ValueError(f"unknown event loop {choice!r}: one of {', '.join(LOOPS)}")
    if choice == "asyncio":
        return "asyncio"
    try:
        import uvloop  # noqa: F401
    except ImportError:
        if choice == "uvloop":
            raise
        return "asyncio"
    return "uvloop"


def run(main: Coroutine[Any, Any, T], choice: str = "auto") -> T:
    """``asyncio.run(main)`` on the loop ``choice`` names (see :func:`loop_in_use`)."""
    try:
        name = loop_in_use(choice)
    except BaseException:
        main.close()  # never awaited: say so quietly rather than warn at exit
        raise
    if name == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)


def resident_bytes() -> int | None:
    """The process's resident memory (Linux: ``/proc/self/statm``); None where it cannot be
    read, and then :func:`quiet_collector` keeps to its schedule alone."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@contextlib.asynccontextmanager
async def quiet_collector(
    every: float = FULL_COLLECTION_EVERY,
    collect: Callable[[], int] = gc.collect,
    memory: Callable[[], int | None] = resident_bytes,
    growth: float = EARLY_COLLECTION_GROWTH,
    check_every: float = MEMORY_CHECK_EVERY,
    min_growth: int = EARLY_COLLECTION_MIN_BYTES,
) -> AsyncIterator[None]:
    """Within the block, the cyclic collector's automatic passes stop at the young generation,
    and ``collect`` (a full collection) runs every ``every`` seconds on the running loop, or
    sooner when ``memory()`` (looked at every ``check_every`` seconds) has grown past
    ``growth`` times what it was after the last one, and by ``min_growth`` bytes at least:
    a safety net for cycles nobody expected
    (a library's, under some input), which would otherwise pile up until the schedule.
    The collector is process-wide: enter this in the process's entry point (``tablas serve``
    does), not in library code that shares a process with others. On exit the thresholds in
    force before are restored and the schedule stops.
    """
    before = gc.get_threshold()
    gc.set_threshold(before[0], _NEVER, _NEVER)
    log.info("garbage collector: young generation automatically, everything every %g s"
             " or once memory has grown %g times and by %d MiB", every, growth,
             min_growth // 2**20)
    task = asyncio.get_running_loop().create_task(
        _full_collections(every, collect, memory, growth, check_every, min_growth))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        gc.set_threshold(*before)


async def _full_collections(every: float, collect: Callable[[], int],
                            memory: Callable[[], int | None], growth: float,
                            check_every: float, min_growth: int) -> None:
    loop = asyncio.get_running_loop()
    baseline = memory()
    due = loop.time() + every
    while True:
        await asyncio.sleep(max(0.0, min(check_every, due - loop.time())))
        resident = memory()
        grown = baseline is not None and resident is not None \
            and resident > max(baseline * growth, baseline + min_growth)
        if not grown and loop.time() < due:
            continue
        started = time.perf_counter()
        try:
            found = collect()
        except Exception:  # whatever went wrong once, the schedule goes on
            log.exception("full garbage collection failed")
            due = loop.time() + every
            continue
        took = time.perf_counter() - started
        why = (f"memory grew from {baseline / 2**20:.0f} to {resident / 2**20:.0f} MiB"
               if grown and baseline is not None and resident is not None else "scheduled")
        log.log(logging.INFO if took >= _NOTICEABLE_S or grown else logging.DEBUG,
                "full garbage collection (%s): %.0f ms, %d unreachable objects freed",
                why, took * 1000, found)
        baseline = memory()
        due = loop.time() + every
