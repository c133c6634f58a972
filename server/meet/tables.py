"""A pair that met (two seeks, or a challenge accepted) sits down: a new room with both seats
taken, drawn at random, the game started; each player is sent ``paired`` and then the room's
snapshot, on the node their connection is on."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from tablas.engine.search.decision import Level
from tablas.server.bot_accounts import BotAccounts
from tablas.server.connections import Player
from tablas.server.hub import Hub
from tablas.server.meet.reach import Reach, seat_here
from tablas.server.protocol import Paired, RoomOptions


@dataclass(frozen=True, slots=True)
class Party:
    """One side of a pairing: the player, the connection (``cid`` on ``node``) that gets the
    room, and the seek or challenge that brought them (for ``paired``)."""

    player: Player
    node: str
    cid: int
    seek_id: str | None = None
    challenge_id: str | None = None
    address: str = ""  # its client address, on this node (the cap on rooms per address)


class Tables:
    def __init__(self, hub: Hub, reach: Reach) -> None:
        self.hub = hub
        self.reach = reach
        self.bots = BotAccounts(hub.store)

    def check_cap(self, address: str) -> None:
        """Refuses (``rate_limited``) a pairing that would open one more room from
        ``address`` than ``--max-rooms-per-address`` allows: rooms made by meeting count as
        rooms opened from there, as ``create_room``'s do."""
        self.hub.caps.check_address_rooms(address)

    async def sit(self, game: str, options: dict[str, Any], room_options: RoomOptions,
                  a: Party, b: Party | Level) -> str:
        """Opens the room for ``a`` and ``b`` (a person, or a house bot's level), which of
        them has seat 0 drawn at random; tells each person. The room's id."""
        sides: list[Party | Level] = [a, b] if secrets.randbelow(2) == 0 else [b, a]
        for side in sides:  # a bot account's seat says so, whichever node it came from
            if not isinstance(side, str):
                await self.bots.is_bot(side.player)
        live = await self.hub.open_paired(
            game, options, room_options,
            [s if isinstance(s, str) else s.player for s in sides])
        for seat, side in enumerate(sides):
            if isinstance(side, str):
                continue
            text = Paired(seek_id=side.seek_id, challenge_id=side.challenge_id,
                          room_id=live.room_id, seat=seat).to_json()
            if side.address:
                self.hub.caps.opened_from(side.address, live.room_id)
            if side.node != self.reach.node:
                self.reach.seat_remote(side.node, side.cid, text, live.room_id)
            elif (conn := self.hub.services.presence.local_conn(side.cid)) is not None:
                seat_here(live, conn, text)
        return live.room_id
