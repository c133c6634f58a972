"""The lobby: the rooms a player can join or watch (waiting or being played), as
``list_rooms`` and ``/api/rooms`` answer them; each summary carries the room's options. With
them, the games that ended last (``recent``), for their reviews: the rooms' owners tell the
lobby when a game ends (``RoomServices.game_finished``), so that the lobby is built from
memory, never from the store; the list starts empty when the server starts."""

from __future__ import annotations

import collections
import json
import time
from collections.abc import Callable
from typing import Any

from server.connections import Conn
from server.hub import Hub
from server.protocol import ListRooms, RecentGame, Rooms, with_re
from server.room import Room
from server.views import result_data, summary

LOBBY_SIZE = 200
RECENT_SIZE = 10  # the games that ended last, listed for their reviews
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
        self._recent: collections.deque[dict[str, Any]] = collections.deque(maxlen=RECENT_SIZE)
        hub.services.game_finished = self.game_finished
        # A node of a cluster lists every node's rooms, read from the database
        # (server.cluster refreshes it every MAX_AGE): None on a single server.
        self.shared: list[dict[str, Any]] | None = None

    def rooms(self) -> list[dict[str, Any]]:
        """The live rooms (all in memory) as ROOM_SUMMARYs: waiting first, then playing,
        newest first within each, :data:`LOBBY_SIZE` at most. Built afresh at each call
        (a cluster's node: the list it last read from the database)."""
        if self.shared is not None:
            return self.shared
        live = sorted((r for r in self.hub.rooms.values() if r.room.status in _ORDER),
                      key=lambda r: (_ORDER[r.room.status], -r.room.created_at))[:LOBBY_SIZE]
        return [summary(r.room, len(r.spectators)) for r in live]

    def game_finished(self, room: Room) -> None:
        """``room``'s game has just ended: it heads the recent games (as it is now: a player
        who renames later keeps the name they played under)."""
        entry = RecentGame.model_validate({
            "room_id": room.room_id, "game": room.game_id, "seats": summary(room)["seats"],
            "result": result_data(room.result), "plies": room.ply,
            "ended_at": self.hub.services.clock()}).model_dump(mode="json")
        for old in [e for e in self._recent if e["room_id"] == room.room_id]:
            self._recent.remove(old)
        self._recent.appendleft(entry)

    def recent(self) -> list[dict[str, Any]]:
        """The games that ended last, newest first, :data:`RECENT_SIZE` at most."""
        return list(self._recent)

    def http_body(self) -> bytes:
        """``GET /api/rooms``'s body, ``{"rooms": [...], "recent": [...]}``, at most
        ``max_age`` old."""
        return self._answers()[2]

    async def list_rooms(self, conn: Conn, msg: ListRooms) -> None:
        """Answers ``list_rooms`` with the lobby at most ``max_age`` old."""
        conn.send(with_re(self._answers()[1], msg.id))

    def _answers(self) -> tuple[float, str, bytes]:
        now = self.clock()
        built = self._built
        if built is None or not 0 <= now - built[0] < self.max_age:
            body = {"rooms": self.rooms(), "recent": self.recent()}
            text = Rooms.model_validate(body).to_json()
            built = self._built = (now, text, json.dumps(body).encode())
        return built
