"""The caps on rooms, :class:`RoomCaps`: how many rooms may wait for one player, and how many
one client address may have waiting or in play (contract section 10).

The hub holds one, over its rooms in memory: it tells it of each room that starts waiting for
a player (:meth:`RoomCaps.waiting_for`) or is opened from an address
(:meth:`RoomCaps.opened_from`), and asks it before a room is opened or joined
(:meth:`RoomCaps.check_waiting_cap`, :meth:`RoomCaps.check_address_rooms`). The caps keep only
the ids they were told of, and look each up again in the hub's rooms when asked: a room that
started, ended or left memory since no longer counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from tablas.server.bot_turns import RoomShares
from tablas.server.errors import RoomError
from tablas.server.room import LIVE

if TYPE_CHECKING:
    from tablas.server.live_room import LiveRoom

MAX_WAITING_ROOMS = 20  # per player
# Rooms waiting or in play opened from one client address, over all of its players: guests
# cost nothing to make, so a cap per player alone lets one address fill the lobby.
MAX_ROOMS_PER_ADDRESS = 40


class RoomCaps:
    """The cap on waiting rooms per player and on live rooms per address, over ``rooms`` (the
    hub's rooms in memory, by id); None for a cap lifts it."""

    def __init__(self, rooms: Mapping[str, LiveRoom], *,
                 max_waiting_rooms: int | None = MAX_WAITING_ROOMS,
                 max_rooms_per_address: int | None = MAX_ROOMS_PER_ADDRESS,
                 shares: RoomShares | None = None) -> None:
        """``shares``: told the address each room was opened from (its bots' line)."""
        self.rooms = rooms
        self.shares = shares or RoomShares()
        self.max_waiting_rooms = max_waiting_rooms
        self.max_rooms_per_address = max_rooms_per_address
        # For each player, the rooms that waited for them when last looked at (opened by them
        # or with them seated; a room never waits again once it starts): the cap on waiting
        # rooms looks at a player's own, not at every room.
        self._waiting_of: dict[str, set[str]] = {}
        # The rooms opened from each client address that were live when last looked at.
        self._rooms_of_address: dict[str, set[str]] = {}

    def waiting_for(self, player_id: str, room_id: str) -> None:
        """``room_id``, waiting, counts against ``player_id``'s cap from now on."""
        self._waiting_of.setdefault(player_id, set()).add(room_id)

    def opened_from(self, address: str, room_id: str) -> None:
        """``room_id``, just opened from ``address``, counts against its cap while live; its
        bots' decisions wait in that address's line."""
        self.shares.opened_from(room_id, address)
        if address:
            self._rooms_of_address.setdefault(address, set()).add(room_id)

    def check_waiting_cap(self, player_id: str) -> None:
        """Refuses one more waiting room for ``player_id`` past ``max_waiting_rooms``: those
        they opened (seated in them or not) or sit in. A waiting room stays in memory while
        its creator is around, and a returning player's are loaded by their ``hello``, so
        all of theirs are here; only theirs are looked at."""
        cap = self.max_waiting_rooms
        if cap is None:
            return
        n = 0
        mine = self._waiting_of.get(player_id, set())
        for room_id in list(mine):
            live = self.rooms.get(room_id)
            if live is None or live.room.status != "waiting" or not live.waits_for(player_id):
                mine.discard(room_id)
            else:
                n += 1
        if not mine:
            self._waiting_of.pop(player_id, None)
        if n >= cap:
            raise RoomError("bad_request", (
                f"{n} rooms of yours are waiting for an opponent (at most {cap}): leave one"
                " or let it start before you open or join another"),
                reason="waiting_rooms", params={"count": n, "limit": cap})

    def live_with(self, address: str, player_id: str) -> int:
        """The rooms waiting or in play opened from ``address`` in which ``player_id`` holds
        a seat (a bot account's games against one address, contract section 15)."""
        return sum(1 for room_id in self._rooms_of_address.get(address, ())
                   if (live := self.rooms.get(room_id)) is not None
                   and live.room.status in LIVE and live.room.seats_of(player_id))

    def check_address_rooms(self, address: str) -> None:
        """Refuses (``rate_limited``) one more room opened from ``address`` past
        ``max_rooms_per_address`` rooms of its, waiting or in play (contract section 10).
        Those are in memory while their people are around; one that left memory is no
        longer counted."""
        cap = self.max_rooms_per_address
        mine = self._rooms_of_address.get(address)
        if cap is None or not address or mine is None:
            return
        for room_id in list(mine):
            live = self.rooms.get(room_id)
            if live is None or live.room.status not in LIVE:
                mine.discard(room_id)
        if not mine:
            del self._rooms_of_address[address]
        elif len(mine) >= cap:
            raise RoomError("rate_limited", (
                f"{len(mine)} rooms opened from your address are waiting or being played (at"
                f" most {cap}): finish or leave one before you open another"),
                reason="address_rooms", params={"count": len(mine), "limit": cap})
