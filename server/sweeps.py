"""The rooms on disk that nobody names: what becomes of them without a command.

A starting server loads no room before it answers (:mod:`tablas.server.hub`). In the background,
:class:`Sweeps` loads the games that play on by themselves (no person in them, or absent
people's seats go to bots: :meth:`Sweeps.resume_alone`); ``abandon_after`` seconds after the
start it adjourns (games) or closes (waiting rooms) on disk the live rooms whose people have
not come back, as their owners would have done (:meth:`Sweeps.settle_backlog`); and every
hour it ends the games adjourned more than ``keep_adjourned`` seconds ago
(:meth:`Sweeps.expire_adjourned`).

A room in memory is changed only through its owner (its :class:`~tablas.server.live_room.LiveRoom`);
one on disk only where the ownership port says that this process settles what it finds there
(:attr:`~tablas.server.ownership.Ownership.settles_backlog`: a single server). A node of a cluster
claims such a room first, loading it, and ends it through its owner; the rooms of the backlog
are left to their owners' timers (a room whose node died is taken over, loaded, by another).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from tablas.server.hub import Hub
from tablas.server.live_room import Expire
from tablas.server.room import Status

log = logging.getLogger("tablas.server")

KEEP_ADJOURNED = 30 * 86400.0  # seconds an adjourned game waits to be resumed
EXPIRE_EVERY = 3600.0  # how often (real seconds) adjourned games are looked at for expiry
EXPIRE_BATCH = 500  # adjourned games ended per write


class Sweeps:
    """The background work on the rooms on disk; see the module's text."""

    def __init__(self, hub: Hub, *, keep_adjourned: float | None = None) -> None:
        """``keep_adjourned``: seconds an adjourned game waits to be resumed (None: for
        ever)."""
        self.hub = hub
        self.store = hub.store
        self.services = hub.services
        self.keep_adjourned = keep_adjourned
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        """The games that play by themselves loaded, the backlog of rooms nobody came back
        to settled after ``abandon_after``, adjourned games expired every hour."""
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._background(self.resume_alone, "resuming games")),
                       loop.create_task(self._lifecycle_loop())]

    def stop(self) -> None:
        for task in self._tasks:
            task.cancel()

    async def resume_alone(self) -> int:
        """The games that play on by themselves (no person in them, or absent people's seats
        go to bots), loaded so that their bots go on; the number loaded."""
        n = 0
        for room_id, status, alone in await self.store.live_rooms():
            if status == "playing" and alone:
                n += await self.hub.reload(room_id)
        return n

    async def settle_backlog(self) -> int:
        """The live rooms on disk that nobody has named since the server started (call it
        ``abandon_after`` seconds after the start): their people are absent, so their games
        are adjourned and their waiting rooms closed, on disk, in one write. The number."""
        now = self.services.clock()
        changes: list[tuple[str, Status]] = [
            (room_id, "adjourned" if status == "playing" else "closed")
            for room_id, status, alone in await self.store.live_rooms()
            if not self.hub.in_use(room_id) and not (alone and status == "playing")]
        async with self.hub.on_disk([r for r, _ in changes]):
            await self.store.set_statuses(changes, now)
        if changes:
            log.info("%d rooms nobody came back to since the start: adjourned or closed",
                     len(changes))
        return len(changes)

    async def expire_adjourned(self) -> int:
        """Ends the games adjourned more than ``keep_adjourned`` seconds ago (reason
        ``expired``, no winner); one in memory goes through its owner. The number ended."""
        if self.keep_adjourned is None:
            return 0
        on_disk_here = self.services.ownership.settles_backlog
        now = self.services.clock()
        n = 0
        while True:
            due = await self.store.adjourned_before(now - self.keep_adjourned, EXPIRE_BATCH)
            for room_id in due:
                if not on_disk_here:
                    # Claimed and loaded first: only a room's owner ends it (a room another
                    # node owns is that node's to end).
                    await self.hub.reload(room_id)
                if (live := self.hub.rooms.get(room_id)) is not None:
                    await live.run(Expire())
            n += len(due)
            if not on_disk_here:
                return n
            # Looked at after those awaits: a room loaded meanwhile is its owner's to end.
            on_disk = [r for r in due if not self.hub.in_use(r)]
            async with self.hub.on_disk(on_disk):
                await self.store.expire(on_disk, now)
            if len(due) < EXPIRE_BATCH:
                return n

    async def _background(self, job: Callable[[], Awaitable[int]], what: str) -> None:
        try:
            await job()
        except Exception:
            log.exception("%s failed", what)

    async def _lifecycle_loop(self) -> None:
        after = self.services.abandon_after
        if after is None:
            return
        await asyncio.sleep(after)
        if self.services.ownership.settles_backlog:
            await self._background(self.settle_backlog,
                                   "settling the rooms nobody came back to")
        while not self.services.closing:
            await self._background(self.expire_adjourned, "expiring adjourned games")
            await asyncio.sleep(EXPIRE_EVERY)
