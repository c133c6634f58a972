"""A cluster's lobby listing (a :class:`~tablas.server.lobby.Listing`): every node's live rooms,
read from the database every ``MAX_AGE``, with the spectator counts their owners keep in a
Redis hash."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import redis.asyncio as aioredis
from tablas.server.hub import Hub
from tablas.server.lobby import LOBBY_SIZE, MAX_AGE, Listing
from tablas.server.room import LIVE
from tablas.server.store.postgres import PostgresStore
from tablas.server.views import summary

log = logging.getLogger("tablas.server")

SPECTATORS = "tablas:spectators"  # room id -> spectators, kept by the room's owner


class SharedListing:
    """Every node's rooms, as last read; ``local`` (this node's memory) until the first
    read."""

    def __init__(self, store: PostgresStore, redis: aioredis.Redis, hub: Hub,
                 local: Listing) -> None:
        self.store = store
        self.redis = redis
        self.hub = hub
        self.local = local
        self._shared: list[dict[str, Any]] | None = None

    def rooms(self) -> list[dict[str, Any]]:
        return self.local.rooms() if self._shared is None else self._shared

    async def run(self) -> None:
        """Reads the listing every ``MAX_AGE``, for ever."""
        while True:
            try:
                await self._read()
            except Exception as e:
                log.warning("reading the lobby failed: %s", e)
            await asyncio.sleep(MAX_AGE)

    async def _read(self) -> None:
        counts = {r: len(live.spectators) for r, live in self.hub.rooms.items()
                  if live.room.status in LIVE}
        async with self.redis.pipeline(transaction=False) as pipe:
            if counts:
                pipe.hset(SPECTATORS, mapping=counts)  # type: ignore[arg-type]
            pipe.hgetall(SPECTATORS)
            seen: dict[bytes, bytes] = (await pipe.execute())[-1]
        records = await self.store.lobby_rooms(LOBBY_SIZE)
        ids = {r.room_id for r in records}
        gone = [k for k in seen if k.decode() not in ids]
        if gone:
            await self.redis.hdel(SPECTATORS, *gone)
        self._shared = [summary(r, int(seen.get(r.room_id.encode(), 0))) for r in records]
