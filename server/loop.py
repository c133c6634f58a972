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
one websockets' protocol makes for every connection (``server.app._Connection``: a
suspended parser generator and, when the connection ends badly, an exception's traceback,
both holding the protocol), so those walks buy nothing. :func:`quiet_collector`
keeps the young generation's collections (a few milliseconds; they catch short-lived cycles)
and replaces the automatic older ones by a full collection every
:data:`FULL_COLLECTION_EVERY` seconds, which frees whatever cycles did reach the old
generations. The figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, TypeVar

log = logging.getLogger("tablas.server")

T = TypeVar("T")

LOOPS = ("auto", "asyncio", "uvloop")

FULL_COLLECTION_EVERY = 600.0  # seconds between full collections under quiet_collector
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


@contextlib.asynccontextmanager
async def quiet_collector(
    every: float = FULL_COLLECTION_EVERY,
    collect: Callable[[], int] = gc.collect,
) -> AsyncIterator[None]:
    """Within the block, the cyclic collector's automatic passes stop at the young generation,
    and ``collect`` (a full collection) runs every ``every`` seconds on the running loop.

    The collector is process-wide: enter this in the process's entry point (``tablas serve``
    does), not in library code that shares a process with others. On exit the thresholds in
    force before are restored and the schedule stops.
    """
    before = gc.get_threshold()
    gc.set_threshold(before[0], _NEVER, _NEVER)
    log.info("garbage collector: young generation automatically, everything every %g s", every)
    task = asyncio.get_running_loop().create_task(_full_collections(every, collect))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        gc.set_threshold(*before)


async def _full_collections(every: float, collect: Callable[[], int]) -> None:
    while True:
        await asyncio.sleep(every)
        started = time.perf_counter()
        try:
            found = collect()
        except Exception:  # whatever went wrong once, the schedule goes on
            log.exception("full garbage collection failed")
            continue
        took = time.perf_counter() - started
        log.log(logging.INFO if took >= _NOTICEABLE_S else logging.DEBUG,
                "full garbage collection: %.0f ms, %d unreachable objects freed",
                took * 1000, found)
