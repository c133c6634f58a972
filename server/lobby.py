"""The lobby: the rooms a player can join or watch (waiting or being played), as
``list_rooms`` and ``/api/rooms`` answer them; each summary carries the room's options. With
them, the games that ended last (``recent``), for their reviews: the rooms' owners tell the
lobby when a game ends (:class:`RecentGames`, the rooms' ``GameEvents``), so that the list is
built from memory, never from the store; it starts empty when the server starts.

Where the rooms come from is the :class:`Listing` the composition root hands the lobby: a
single server lists the rooms in its memory (:class:`LocalRooms`), a node of a cluster every
node's rooms (``tablas.server.cluster.listing.SharedListing``)."""

from __future__ import annotations

import collections
import json
import time
from collections.abc import Callable
from typing import Any, Protocol

from tablas.server.connections import Conn
from tablas.server.hub import Hub
from tablas.server.protocol import ListRooms, RecentGame, Rooms, with_re
from tablas.server.room import Room
from tablas.server.views import result_data, summary

LOBBY_SIZE = 200
RECENT_SIZE = 10  # the games that ended last, listed for their reviews
# The answers are built at most once a second and the same text is sent to every asker
# meanwhile, so that a flood of lobby requests costs one build a second, not one a request.
MAX_AGE = 1.0
_ORDER = {"waiting": 0, "playing": 1}


class Listing(Protocol):
    """Where the lobby's rooms come from."""

    def rooms(self) -> list[dict[str, Any]]:
        """The live rooms as ROOM_SUMMARYs: waiting first, then playing, newest first
        within each, :data:`LOBBY_SIZE` at most."""
        ...


class LocalRooms:
    """The rooms in this server's memory (all of a single server's live rooms)."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    def rooms(self) -> list[dict[str, Any]]:
        """Built afresh at each call."""
        live = sorted((r for r in self.hub.rooms.values() if r.room.status in _ORDER),
                      key=lambda r: (_ORDER[r.room.status], -r.room.created_at))[:LOBBY_SIZE]
        return [summary(r.room, len(r.spectators)) for r in live]


class RecentGames:
    """The games that ended last (the rooms' :class:`~tablas.server.live_room.GameEvents`)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        """``clock``: the rooms' time (``ended_at``)."""
        self.clock = clock
        self._recent: collections.deque[dict[str, Any]] = collections.deque(maxlen=RECENT_SIZE)

    def game_finished(self, room: Room) -> None:
        """``room``'s game has just ended: it heads the recent games (as it is now: a player
        who renames later keeps the name they played under)."""
        entry = RecentGame.model_validate({
            "room_id": room.room_id, "game": room.game_id, "seats": summary(room)["seats"],
            "result": result_data(room.result), "plies": room.ply,
            "ended_at": self.clock()}).model_dump(mode="json")
        for old in [e for e in self._recent if e["room_id"] == room.room_id]:
            self._recent.remove(old)
        self._recent.appendleft(entry)

    def recent(self) -> list[dict[str, Any]]:
        """The games that ended last, newest first, :data:`RECENT_SIZE` at most."""
        return list(self._recent)


class Lobby:
    def __init__(self, listing: Listing, recent: RecentGames, *, max_age: float = MAX_AGE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """``max_age``: seconds an answer may be reused; ``clock``: the time it is told by."""
        self.listing = listing
        self.recent_games = recent
        self.max_age = max_age
        self.clock = clock
        self._built: tuple[float, str, bytes] | None = None  # when, rooms message, HTTP body

    def rooms(self) -> list[dict[str, Any]]:
        """The live rooms as ROOM_SUMMARYs (:meth:`Listing.rooms`)."""
        return self.listing.rooms()

    def recent(self) -> list[dict[str, Any]]:
        """The games that ended last, newest first, :data:`RECENT_SIZE` at most."""
        return self.recent_games.recent()

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
