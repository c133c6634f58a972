"""``GET /api/online`` (contract section 8): the registered players connected now, on every
node, each with their ratings, whether a bot account and whether playing a game now; the
lobby lists them, each with a challenge button (one can only challenge a player online).
Who is online comes from the :class:`~.reach.Reach`, what they are from the shared database.
"""

from __future__ import annotations

import json

from tablas.server.meet.reach import Reach
from tablas.server.store import Storage

ONLINE_LIMIT = 200  # the list names at most this many players (by name)


class Online:
    def __init__(self, store: Storage, reach: Reach) -> None:
        self.store = store
        self.reach = reach

    async def http_body(self) -> bytes:
        ids = sorted(await self.reach.online_ids())
        rows = await self.store.online_players(ids) if ids else []
        players = [{"player_id": pid, "name": name,
                    "ratings": {g: {"rating": r.rating, "rd": r.rd, "games": r.games}
                                for g, r in ratings.items()},
                    "bot": bot, "playing": playing}
                   for pid, name, bot, playing, ratings in rows[:ONLINE_LIMIT]]
        return json.dumps({"players": players}, separators=(",", ":")).encode()
