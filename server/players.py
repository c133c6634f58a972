"""Who a connection is: ``hello`` makes a new player or restores one by its token, and a
player's coming and going is told to the rooms they sit in.

A token is a secret: the store keeps only its hash, and only its owner's ``welcome`` carries
it. A returning player's seats are read from the store (their rooms may have left memory, or
never been loaded since a restart); their rooms waiting or in play come back at once (their
open tables are in the lobby again and count for the cap on waiting rooms, their games are
timed again), adjourned games when they join them.
"""

from __future__ import annotations

import secrets

from server.connections import Conn, Player, Presence
from server.errors import ProtocolError
from server.hub import Hub
from server.protocol import Hello, Welcome
from server.room import LIVE
from server.store import Storage


class Players:
    def __init__(self, store: Storage, presence: Presence, hub: Hub) -> None:
        self.store = store
        self.presence = presence
        self.hub = hub

    async def hello(self, conn: Conn, msg: Hello) -> None:
        if conn.player is not None:
            raise ProtocolError("bad_request", "hello was already said on this connection",
                                msg.id)
        if msg.token is None:
            token = secrets.token_urlsafe(16)  # 128 random bits
            player = Player(secrets.token_hex(8), msg.name)
            await self.store.create_player(player.id, player.name, token)
        else:
            found = await self.store.player_by_token(msg.token)
            if found is None:
                raise ProtocolError("not_authenticated", "unknown token", msg.id)
            token = msg.token
            player = Player(found[0], msg.name)
            if found[1] != msg.name:
                await self.store.touch_player(player.id, player.name)
        held = [] if msg.token is None else await self.store.seats_held(player.id)
        opened = [] if msg.token is None else await self.store.waiting_rooms_opened_by(player.id)
        live_ids = [r for r, _, status in held if status in LIVE]
        for room_id in dict.fromkeys(live_ids + opened):
            await self.hub.reload(room_id)
        held_ids = {r for r, _, _ in held} | set(opened)
        seated_in = self.hub.in_memory(held_ids)
        for live in seated_in:
            live.room.rename(player.id, player.name)
        first = self.presence.arrive(conn, player, held_ids)
        conn.send(Welcome(re=msg.id, player_id=player.id, name=player.name, token=token,
                          seats=[{"room_id": r, "seat": seat, "status": status}
                                 for r, seat, status in held]))
        if first:
            await self.hub.presence_changed(player.id, seated_in)

    async def goodbye(self, conn: Conn) -> None:
        """``conn`` closed: it leaves its rooms, and if it was its player's last connection,
        the rooms the player sits in see them go."""
        self.hub.unsubscribe_all(conn)
        rooms = self.presence.depart(conn)
        if rooms is not None and conn.player is not None and not self.hub.services.closing:
            await self.hub.presence_changed(conn.player.id, self.hub.in_memory(rooms))
