"""How each process of the load starts: open files enough for thousands of sockets, the
collector as ``tablas serve`` sets it, and the event loop chosen."""

from __future__ import annotations

import contextlib
from collections.abc import Coroutine
from typing import Any, TypeVar

from tablas.server.loop import quiet_collector
from tablas.server.loop import run as run_on_loop

T = TypeVar("T")


def raise_nofile() -> int:
    """Raises the soft limit on open files to the hard one; the new soft limit."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            return target
    return soft


async def quietly(main: Coroutine[Any, Any, T]) -> T:
    """``main`` under the collector as ``tablas serve`` sets it: the server child is served
    so, and the echo server and the clients alike, lest their own collector's pauses (they
    hold as many sockets) show up as the server's latency."""
    async with quiet_collector():
        return await main


def serve(main: Coroutine[Any, Any, None], loop: str) -> None:
    """A child server's process: ``main`` run quietly on ``loop``."""
    raise_nofile()
    run_on_loop(quietly(main), loop)


def work(main: Coroutine[Any, Any, dict[str, Any]], sync: Any, out: Any, loop: str) -> None:
    """A client worker's process: ``main`` run quietly on ``loop``, its result put on ``out``.
    Should it fail, ``sync`` (a :class:`~tools.load.sync.Sync`) is told so at each step the
    parent waits on, and the parent reports it."""
    raise_nofile()
    try:
        result = run_on_loop(quietly(main), loop)
    except BaseException as e:  # the parent reports it
        sync.ready.put(-1)
        sync.done.put(-1)
        result = {"failed": repr(e)}
    out.put(result)
