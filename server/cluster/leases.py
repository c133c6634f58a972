"""A cluster's ownership port (:mod:`tablas.server.ownership`): a lease per live thing in
PostgreSQL.

A lease (``room_leases``: node, fence, expiry by the database's clock) is claimed before the
thing is loaded (:meth:`Leases.claim`), or made by a new thing's first write
(:meth:`Leases.opening`), and all of a node's leases are renewed in
one statement every ``lease_s / 3`` (:meth:`Leases.renewing`). Every write of a change
carries the node's :class:`~tablas.server.ownership.Fence` and fails in the database once another
node has claimed the thing; the node then lets go of it (:meth:`Leases.let_go`: every
listener of :meth:`Leases.lost` hears it). A node that cannot renew lets go of everything
once its leases would have expired (:meth:`Leases.check`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from tablas.server.errors import LeaseLost
from tablas.server.ownership import Fence, Lost
from tablas.server.store.postgres import PostgresStore

log = logging.getLogger("tablas.server")

LEASE_S = 10.0  # --lease-s: seconds a lease lasts unless renewed


class Leases:
    """This node's leases: an :class:`~tablas.server.ownership.Ownership`."""

    # A cluster's rooms live on every node: only their owners settle them, never a node
    # that merely finds them on disk.
    settles_backlog = False

    def __init__(self, store: PostgresStore, node: str, lease_s: float = LEASE_S) -> None:
        self.store = store
        self.node = node
        self.lease_s = lease_s
        self._fences: dict[str, int] = {}  # the fence of each thing this node holds
        self._lost: list[Lost] = []
        self._taken: list[Lost] = []
        self._renewed_at = time.monotonic()

    # --- the port --------------------------------------------------------------------------

    async def claim(self, key: str, new: bool) -> str | None:
        """Takes ``key``'s lease (None: this node's now; else the node that holds it, ""
        for no such thing). A thing taken from another node (not ``new``) is told to every
        listener of :meth:`taken`."""
        holder, fence = await self.store.claim_room(key, self.node, self.lease_s, new)
        if fence is None:
            return holder
        self._fences[key] = max(fence, self._fences.get(key, 0))
        if not new:
            for callback in self._taken:
                callback(key)
        return None

    def fence(self, key: str) -> Fence:
        number = self._fences.get(key)
        if number is None:
            raise LeaseLost(key)
        return Fence(key, self.node, number, self._refused)

    def opening(self, key: str) -> Fence:
        # Nobody held ``key`` before: its first fence is 1, as a claim of a new row gets.
        return Fence(key, self.node, 1, self._refused, opens=self.lease_s)

    def opened(self, key: str) -> None:
        self._fences[key] = max(1, self._fences.get(key, 0))

    def lost(self, callback: Lost) -> None:
        self._lost.append(callback)

    # --- the cluster's own -----------------------------------------------------------------

    def taken(self, callback: Lost) -> None:
        """``callback(key)`` is called whenever this node claims a thing that may have
        been another node's (the other nodes' followers of it follow it here)."""
        self._taken.append(callback)

    def held(self) -> list[str]:
        return list(self._fences)

    def let_go(self, key: str) -> None:
        """This node no longer owns ``key``: every listener of :meth:`lost` hears it."""
        self._fences.pop(key, None)
        for callback in self._lost:
            callback(key)

    def _refused(self, fence: Fence) -> None:
        """The database refused a write carrying ``fence``: the first such write lets go."""
        if self._fences.get(fence.key) == fence.number:
            self.let_go(fence.key)

    def fresh(self) -> bool:
        """Whether this node's leases are surely still its own: renewed less than
        ``lease_s`` ago (by this node's monotonic clock, which a pause does not stop)."""
        return time.monotonic() - self._renewed_at <= self.lease_s

    def check(self) -> None:
        """Past ``lease_s`` since the last renewal (a pause, the database out of reach),
        everything held may be another node's: all is let go of before anything else."""
        if self.fresh():
            return
        if self._fences:
            log.warning("leases not renewed for %.1f s: letting go of %d rooms",
                        time.monotonic() - self._renewed_at, len(self._fences))
            for key in list(self._fences):
                self.let_go(key)
        # None is held now: every lease from here on is claimed afresh.
        self._renewed_at = time.monotonic()

    async def renewing(self, in_use: Callable[[str], bool]) -> None:
        """Renews the leases every ``lease_s / 3``, for ever; a thing no longer
        ``in_use`` here (it left memory, idle) lets its lease run out."""
        while True:
            await asyncio.sleep(self.lease_s / 3)
            fences = self._fences
            for key in [k for k in fences if not in_use(k)]:
                del fences[key]
            ids = list(fences)
            started = time.monotonic()
            try:
                held = await asyncio.wait_for(
                    self.store.renew_leases(self.node, ids, self.lease_s), self.lease_s / 3)
            except Exception as e:
                log.warning("cannot renew the room leases: %s", e)
                self.check()  # they may be another node's by now
                continue
            self._renewed_at = started
            for key in ids:
                if key not in held and key in fences:
                    self.let_go(key)

    async def release(self) -> None:
        """Lets go of every lease in the database (shutting down): any node may take them."""
        with contextlib.suppress(Exception):
            await self.store.release_leases(self.node, list(self._fences))
