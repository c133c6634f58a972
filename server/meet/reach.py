"""The port to players and connections wherever they are connected: this process
(:class:`LocalReach`) or any node of a cluster (:class:`tablas.server.cluster.reach.SharedReach`).

A connection is named by its node and its ``cid`` there (``id(conn)``). What meeting an
opponent needs of other nodes is small: to send a text to every connection of a player
(a challenge, its end), to hand a connection its new room (``paired`` then the room's
snapshot, through the room's owner), to hand a challenge's answer to the node that owns the
challenge, and to count and find the players online.
"""

from __future__ import annotations

from typing import Protocol

from tablas.server.connections import Conn, Player, Presence
from tablas.server.live_room import LiveRoom


class Reach(Protocol):
    """Players and connections on every node; see the module's text."""

    @property
    def node(self) -> str:
        """This process's node name."""
        ...

    def to_player(self, player_id: str, text: str, challenge: tuple[str, str] | None = None
                  ) -> None:
        """Sends ``text`` to every connection of ``player_id``, on every node.
        ``challenge``: (its id, its owner's node), remembered where it lands so that an
        answer from there goes to the owner."""
        ...

    def seat_remote(self, node: str, cid: int, text: str, room_id: str) -> None:
        """Sends ``text`` (``paired``) to connection ``cid`` of ``node`` (not this one),
        which then follows ``room_id`` as its seated player."""
        ...

    def to_conn(self, node: str, cid: int, text: str) -> None:
        """Sends ``text`` to connection ``cid`` of ``node`` (not this one), if still open."""
        ...

    def answer_to(self, challenge_id: str) -> str | None:
        """The node that owns ``challenge_id`` as told with it, if it came from another."""
        ...

    def send_answer(self, owner: str, challenge_id: str, player: Player, cid: int,
                    accept: bool, re: str | int | None) -> None:
        """Hands ``player``'s answer (from this node's connection ``cid``, in its message
        ``re``) to a challenge to the node ``owner`` that holds it."""
        ...

    async def arrived(self, conn: Conn, *_: object) -> None:
        """``conn`` said ``hello``: its player is online here (after ``hello``'s handler)."""
        ...

    async def left(self, conn: Conn) -> None:
        """``conn`` closed (after the goodbye): if it was its player's last one here, they
        are no longer online here."""
        ...

    async def online(self, player_id: str) -> bool:
        """Whether ``player_id`` has a connection open on some node."""
        ...

    async def online_count(self) -> int:
        """How many players have a connection open, on every node."""
        ...

    async def online_ids(self) -> set[str]:
        """The players with a connection open, on every node."""
        ...


class LocalReach:
    """One server: every connection is this process's."""

    def __init__(self, node: str, presence: Presence) -> None:
        self._node = node
        self.presence = presence

    @property
    def node(self) -> str:
        return self._node

    def to_player(self, player_id: str, text: str, challenge: tuple[str, str] | None = None
                  ) -> None:
        for conn in list(self.presence.online.get(player_id, ())):
            conn.send(text)

    def seat_remote(self, node: str, cid: int, text: str, room_id: str) -> None:
        raise AssertionError(f"one server has no node {node!r}")

    def to_conn(self, node: str, cid: int, text: str) -> None:
        raise AssertionError(f"one server has no node {node!r}")

    def answer_to(self, challenge_id: str) -> str | None:
        return None

    def send_answer(self, owner: str, challenge_id: str, player: Player, cid: int,
                    accept: bool, re: str | int | None) -> None:
        raise AssertionError(f"one server has no node {owner!r}")

    async def arrived(self, conn: Conn, *_: object) -> None:
        return None  # Presence knows

    async def left(self, conn: Conn) -> None:
        return None

    async def online(self, player_id: str) -> bool:
        return self.presence.connected(player_id)

    async def online_count(self) -> int:
        return len(self.presence.online)

    async def online_ids(self) -> set[str]:
        return set(self.presence.online)


def seat_here(live: LiveRoom, conn: Conn, text: str) -> None:
    """``conn`` (this process's) is told ``text`` (``paired``), then follows ``live`` as its
    seated player and gets its snapshot."""
    conn.send(text)
    live.subscribe(conn, spectator=False)
    conn.send(live.snapshot_for(conn))
