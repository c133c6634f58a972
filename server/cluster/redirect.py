"""Telling a client where its room lives: the ``owner`` hint (docs/protocol.md "Several
nodes").

A command for a room another node owns is forwarded there and its answers come back (the
relay): every node serves every room. That hop costs the cluster about as much again as the
command itself. So a client whose command went to another node is told, once per room and
owner, which node that is and its ``--public-url``; a client that connects there plays with
no hop, one that stays is served as before. A node without ``--public-url`` is never named.
"""

from __future__ import annotations

from tablas.server.cluster.bus import Bus
from tablas.server.cluster.jobs import remember_recent
from tablas.server.connections import Conn
from tablas.server.protocol import AnyClientMessage, Leave, Owner

ROOMS_TOLD = 100  # rooms a connection was told of, remembered (the oldest forgotten)


class Redirects:
    """The hints this node sends its connections."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self._told: dict[Conn, dict[str, str]] = {}  # connection -> room -> owner told

    async def tell(self, conn: Conn, msg: AnyClientMessage, owner: str) -> None:
        """``conn``'s command ``msg`` was run by ``owner``: ``conn`` hears where its room
        lives, unless it heard so already, it left the room, or ``owner`` has no URL."""
        room_id = getattr(msg, "room_id", "")
        told = self._told.get(conn)
        if not room_id or isinstance(msg, Leave) or (
                told is not None and told.get(room_id) == owner):
            return
        url = await self.bus.node_url(owner)
        if url is None or conn.closing:
            return
        remember_recent(self._told.setdefault(conn, {}), room_id, owner, ROOMS_TOLD)
        conn.send(Owner(room_id=room_id, node=owner, url=url))

    def forget(self, conn: Conn) -> None:
        """``conn`` closed."""
        self._told.pop(conn, None)
