"""The lobby: the rooms a player can join or watch (waiting or being played), as
``list_rooms`` and ``/api/rooms`` answer them; each summary carries the room's options."""

from __future__ import annotations

from typing import Any

from server.connections import Conn
from server.hub import Hub
from server.protocol import ListRooms, Rooms

LOBBY_SIZE = 200
_ORDER = {"waiting": 0, "playing": 1}


class Lobby:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    def rooms(self) -> list[dict[str, Any]]:
        """The live rooms (all in memory) as ROOM_SUMMARYs: waiting first, then playing,
        newest first within each, :data:`LOBBY_SIZE` at most."""
        live = sorted((r for r in self.hub.rooms.values() if r.room.status in _ORDER),
                      key=lambda r: (_ORDER[r.room.status], -r.room.created_at))[:LOBBY_SIZE]
        return [r.room.summary(len(r.spectators)).model_dump(mode="json") for r in live]

    async def list_rooms(self, conn: Conn, msg: ListRooms) -> None:
        conn.send(Rooms.model_validate({"re": msg.id, "rooms": self.rooms()}))
