"""The lobby: the rooms a player can join or watch (waiting or being played), as
``list_rooms`` and ``/api/rooms`` answer them; each summary carries the room's options."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from server.connections import Conn
from server.hub import Hub
from server.protocol import ListRooms, Rooms, with_re

LOBBY_SIZE = 200
# The answers are built at most once a second and the same text is sent to every asker
# meanwhile, so that a flood of lobby requests costs one build a second, not one a request.
MAX_AGE = 1.0
_ORDER = {"waiting": 0, "playing": 1}


class Lobby:
    def __init__(self, hub: Hub, *, max_age: float = MAX_AGE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """``max_age``: seconds an answer may be reused; ``clock``: the time it is told by."""
        self.hub = hub
        self.max_age = max_age
        self.clock = clock
        self._built: tuple[float, str, bytes] | None = None  # when, rooms message, HTTP body

    def rooms(self) -> list[dict[str, Any]]:
        """The live rooms (all in memory) as ROOM_SUMMARYs: waiting first, then playing,
        newest first within each, :data:`LOBBY_SIZE` at most. Built afresh at each call."""
        live = sorted((r for r in self.hub.rooms.values() if r.room.status in _ORDER),
                      key=lambda r: (_ORDER[r.room.status], -r.room.created_at))[:LOBBY_SIZE]
        return [r.room.summary(len(r.spectators)).model_dump(mode="json") for r in live]

    def http_body(self) -> bytes:
        """``GET /api/rooms``'s body, ``{"rooms": [...]}``, at most ``max_age`` old."""
        return self._answers()[2]

    async def list_rooms(self, conn: Conn, msg: ListRooms) -> None:
        """Answers ``list_rooms`` with the lobby at most ``max_age`` old."""
        conn.send(with_re(self._answers()[1], msg.id))

    def _answers(self) -> tuple[float, str, bytes]:
        now = self.clock()
        built = self._built
        if built is None or not 0 <= now - built[0] < self.max_age:
            rooms = self.rooms()
            text = Rooms.model_validate({"rooms": rooms}).to_json()
            built = self._built = (now, text, json.dumps({"rooms": rooms}).encode())
        return built
