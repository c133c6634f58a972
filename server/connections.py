"""A connection and who is behind it: what it is sent, the rooms it follows, who is online.

A :class:`Conn` writes a message the moment it is made (in the order of the calls), so every
connection sees a room's messages in the order the room made them; a reader too slow to keep
up is dropped rather than buffered without end. :class:`Presence` knows which players have a
connection open and which rooms each may sit in, so that a player's coming and going is told
to those rooms only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from tablas.server.protocol import ServerMessage
from websockets.asyncio.server import ServerConnection, broadcast

log = logging.getLogger("tablas.server")

# What a connection may have written and not yet sent (websockets' transport buffer): past
# it the reader is too slow and is dropped. This buffer is the only outgoing queue a
# connection has.
OUT_BUFFER = 256 * 1024


@dataclass(eq=False)
class Player:
    id: str
    name: str
    registered: bool = False
    bot: bool = False  # a bot account (contract section 12): registered, driven by a program


@dataclass(eq=False)
class Conn:
    """One open WebSocket: its player once ``hello`` is said, and the rooms it follows, in
    the order it subscribed to them (a dict: ordered)."""

    ws: ServerConnection
    player: Player | None = None
    address: str = ""  # the peer's address without its port (login limits count by it)
    rooms: dict[str, None] = field(default_factory=dict)
    closing: bool = False
    # When its last frame was received (``perf_counter``; on a cluster's owner, when the
    # forwarded command arrived): a move's update to its mover is timed from it.
    received: float = 0.0

    @property
    def player_id(self) -> str | None:
        return self.player.id if self.player else None

    def send(self, msg: ServerMessage | str) -> None:
        """Writes a message now, in the order of the calls; a client that has let
        ``OUT_BUFFER`` bytes pile up unread is disconnected instead (1008)."""
        if self.closing:
            return
        if self.ws.transport.get_write_buffer_size() > OUT_BUFFER:
            self.closing = True
            log.warning("closing %s: %d bytes unread", self.ws.remote_address,
                        self.ws.transport.get_write_buffer_size())
            asyncio.get_running_loop().create_task(self.ws.close(1008, "too slow"))
            return
        # websockets' broadcast() is its synchronous send: no writer task to wake per
        # message, no waiting in drain() (the bound above replaces that back-pressure), and
        # a connection already closing is skipped.
        broadcast((self.ws,), msg if isinstance(msg, str) else msg.to_json())


class Presence:
    """The open connections, the players online, and for each the rooms they may sit in.

    ``rooms_of[player]`` is read from the store at the player's ``hello`` and grown by every
    seat taken since; a superset (the room decides with ``seats_of``), so that going offline
    touches these rooms only, not every room in memory. A finished game leaves it."""

    def __init__(self) -> None:
        # Every open connection of this process, by its ``cid`` (a cluster names a
        # connection by its node and this number).
        self.conns: dict[int, Conn] = {}
        self.online: dict[str, set[Conn]] = {}
        self.rooms_of: dict[str, set[str]] = {}

    def opened(self, conn: Conn) -> None:
        """``conn`` is open (no player yet)."""
        self.conns[id(conn)] = conn

    def local_conn(self, cid: int) -> Conn | None:
        """This process's open connection ``cid`` (:meth:`opened`), if it is still open."""
        conn = self.conns.get(cid)
        return None if conn is None or conn.closing else conn

    def connected(self, player_id: str) -> bool:
        return bool(self.online.get(player_id))

    def arrive(self, conn: Conn, player: Player, room_ids: Iterable[str]) -> bool:
        """``conn`` is ``player``'s from now on; True if the player was offline until now."""
        conn.player = player
        first = not self.online.get(player.id)
        self.online.setdefault(player.id, set()).add(conn)
        self.rooms_of.setdefault(player.id, set()).update(room_ids)
        return first

    def depart(self, conn: Conn) -> set[str] | None:
        """``conn`` closed: the rooms its player may sit in if that was the player's last
        connection (they are offline now), else None."""
        self.conns.pop(id(conn), None)
        pid = conn.player_id
        if pid is None:
            return None
        conns = self.online.get(pid, set())
        conns.discard(conn)
        if conns:
            return None
        self.online.pop(pid, None)
        return self.rooms_of.pop(pid, set())

    def may_sit_in(self, player_id: str, room_ids: Iterable[str]) -> None:
        """``player_id`` may sit in ``room_ids`` too (learnt from another node)."""
        self.rooms_of.setdefault(player_id, set()).update(room_ids)

    def rooms_of_player(self, player_id: str) -> list[str]:
        """The rooms ``player_id`` may sit in, as known now."""
        return list(self.rooms_of.get(player_id, ()))

    def seated(self, player_id: str, room_id: str) -> None:
        """``player_id`` (online) now sits in ``room_id``."""
        if (rooms := self.rooms_of.get(player_id)) is not None:
            rooms.add(room_id)

    def game_over(self, room_id: str, player_ids: Iterable[str]) -> None:
        """The game in ``room_id`` ended: its players' comings and goings no longer concern
        it (the sets would otherwise grow with every game a connection plays)."""
        for pid in player_ids:
            self.rooms_of.get(pid, set()).discard(room_id)
