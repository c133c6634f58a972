"""Failover: a node's look for the live rooms nobody owns (their node died, or never was),
which it claims and loads (docs/server.md "Several nodes", "Failover")."""

from __future__ import annotations

import asyncio
import logging
import random

from tablas.server.hub import Hub
from tablas.server.store.postgres import PostgresStore

log = logging.getLogger("tablas.server")

ORPHAN_BATCH = 500  # rooms taken over per look


async def take_over(store: PostgresStore, hub: Hub, lease_s: float) -> None:
    """Every ``lease_s / 3`` (with jitter), claims and loads the rooms waiting or being
    played that no node holds a live lease on, for ever (until the hub closes). Loaded, a
    room resumes as after a restart; a claim is atomic, so one node wins each room."""
    while True:
        # Nodes look at different moments: fewer of them race for the same rooms.
        await asyncio.sleep(lease_s / 3 * random.uniform(0.5, 1.0))
        if hub.services.closing:
            return
        try:
            for room_id in await store.orphaned_rooms(ORPHAN_BATCH):
                if await hub.reload(room_id):
                    log.info("room %s taken over", room_id,
                             extra={"room_id": room_id, "event": "taken_over"})
        except Exception as e:
            log.warning("looking for rooms to take over failed: %s", e)
