"""How a measurement's processes keep in step: the parent, the game clients' workers and the
rushes' processes."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

STUCK_S = 60.0  # how long after the window a request may still be answered
CONNECT_CONCURRENCY = 32  # the handshakes one process has under way at once, before the window


@dataclasses.dataclass(frozen=True)
class Sync:
    """How a measurement's processes keep in step (``multiprocessing`` objects): each says
    ``ready`` (its sockets, -1 if it failed), and on ``go`` starts its window at ``start_at``
    (a ``perf_counter`` value: the system's monotonic clock, so every process's figures line
    up, second by second); at the end it says ``done`` once its last request is answered,
    and closes its sockets only once the server has ``reported`` (the server's figures are
    the window's, not those of thousands of connections closing, and its report's full
    collection delays no move of the window). ``rooms``: a queue told the id of each room
    the game clients open (None: nobody listens). With a ``warmup``, the clients start at
    ``start_at`` and the window opens ``warmup`` seconds later."""

    ready: Any
    go: Any
    start_at: Any
    done: Any
    reported: Any
    rooms: Any = None
    warmup: float = 0.0

    async def start(self, n: int) -> float:
        """Says ``n`` sockets are ready; when to start, once it is given."""
        self.ready.put(n)
        await asyncio.to_thread(self.go.wait)
        start: float = self.start_at.value
        return start

    async def finish(self) -> None:
        """Says the window is over here; returns once the server has reported."""
        self.done.put(1)
        await asyncio.to_thread(self.reported.wait, STUCK_S)
