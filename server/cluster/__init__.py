"""A node of a cluster (contract section 9): several ``tablas serve`` share one PostgreSQL
database and one Redis; every node serves every room, each room is owned by one node.

Split by job, each part handed what it needs by the composition root (``tablas.server.app``):

- :mod:`~tablas.server.cluster.leases`: ownership (the :class:`~tablas.server.ownership.Ownership`
  port): a lease per room in PostgreSQL, claimed before a room is loaded or opened, renewed in one
  statement, a fence on every write;
- :mod:`~tablas.server.cluster.bus`: the nodes' messages over Redis, in order;
- :mod:`~tablas.server.cluster.relay`: commands forwarded to a room's owner and answered, presence
  across nodes, followers of a room that moved or was lost;
- :mod:`~tablas.server.cluster.takeover`: rooms of dead nodes taken over;
- :mod:`~tablas.server.cluster.redirect`: clients told where their rooms live (``owner``);
- :mod:`~tablas.server.cluster.listing`: the lobby's listing of every node's rooms;
- :mod:`~tablas.server.cluster.reach`: seeks' and challenges' players and connections on
  every node (the :class:`~tablas.server.meet.reach.Reach` port), players online.

:class:`Cluster` runs them together: it starts and stops their work.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from tablas.server.cluster.bus import Bus, Listeners, _channel, _pack
from tablas.server.cluster.leases import LEASE_S, Leases
from tablas.server.cluster.listing import SharedListing
from tablas.server.cluster.reach import MeetListener, SharedReach
from tablas.server.cluster.relay import Relay, RemoteConn
from tablas.server.cluster.takeover import take_over

__all__ = ["LEASE_S", "Bus", "Cluster", "Leases", "MeetListener", "Relay", "RemoteConn",
           "SharedListing", "SharedReach", "_channel", "_pack"]


class Cluster:
    """This node's cluster parts, started and stopped together."""

    def __init__(self, leases: Leases, bus: Bus, relay: Relay, listing: SharedListing,
                 meet: MeetListener, *, in_use: Callable[[str], bool]) -> None:
        """``in_use(key)``: whether this node holds the room or tournament ``key`` in
        memory (its lease is renewed while it does)."""
        self.leases = leases
        self.bus = bus
        self.relay = relay
        self.meet = meet
        self.listing = listing
        self.in_use = in_use
        self._tasks: list[asyncio.Task[Any]] = []

    async def start(self) -> None:
        """Connects to Redis (a :class:`~tablas.server.errors.StartupError` if it cannot) and
        starts the node's work: the channel's reader, the publisher, renewals, takeovers,
        the lobby, the node's life."""
        await self.bus.connect()
        await self.meet.start()
        loop = asyncio.get_running_loop()
        hears = Listeners(self.relay, self.meet)
        self._tasks = [loop.create_task(job) for job in (
            self.bus.reader(hears), self.bus.writer(),
            self.leases.renewing(self.in_use),
            take_over(self.leases.store, self.relay.hub, self.leases.lease_s),
            self.listing.run(), self.bus.alive(hears), self.meet.watch(self.bus.lease_s))]
        await asyncio.wait_for(self.bus.subscribed.wait(), 10)

    async def close(self) -> None:
        """Lets go of this node's rooms (any node may take them at once) and of Redis; the
        rooms' writes are done by then (the server settles them first)."""
        self.relay.stop()
        await self.bus.drain()
        for task in self._tasks:
            task.cancel()
        self.relay.jobs.cancel()
        self.meet.stop()
        await self.leases.release()
        await self.bus.close()
