"""``GET /api/stats`` (contract section 11): players online, rooms in play, open seeks, on
every node: the first from the :class:`~.reach.Reach`, the others from the shared database."""

from __future__ import annotations

import json

from tablas.server.meet.reach import Reach
from tablas.server.store import Storage


class Stats:
    def __init__(self, store: Storage, reach: Reach) -> None:
        self.store = store
        self.reach = reach

    async def http_body(self) -> bytes:
        body = {"online": await self.reach.online_count(),
                "playing": await self.store.count_playing(),
                "seeks": await self.store.seeks.total()}
        return json.dumps(body, separators=(",", ":")).encode()
