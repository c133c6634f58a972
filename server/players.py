"""Who a connection is: ``hello`` makes a new player, restores one by its token or logs a
registered one in by name and password; ``register`` makes a player's name theirs; a
player's coming and going is told to the rooms they sit in.

A token is a secret: the store keeps only its hash, and only its owner's ``welcome`` carries
it. So is a password: the store keeps only its scrypt hash (:mod:`tablas.server.accounts`), and
neither is ever sent or logged. A registered player may log in from any device, each login
getting a token of its own; their name is theirs (a ``hello`` with their token and another
name does not rename them), and nobody else may go by a name with the same key (NFKC and
case folding), guest or not.

A returning player's seats are read from the store (their rooms may have left memory, or
never been loaded since a restart); their rooms waiting or in play come back at once (their
open tables are in the lobby again and count for the cap on waiting rooms, their games are
timed again), adjourned games when they join them.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable

from tablas.server.accounts import LoginLimits, hash_password, name_key, verify_password
from tablas.server.addresses import AddressBook
from tablas.server.connections import Conn, Player, Presence
from tablas.server.errors import ProtocolError
from tablas.server.hub import Hub
from tablas.server.names import (
    looks_like_bot_reason,
    looks_like_player_reason,
    reads_as_house_bot,
    skeleton_key,
)
from tablas.server.protocol import Hello, Register, Registered, Welcome
from tablas.server.room import LIVE
from tablas.server.store import Storage

# The same words for an unknown name and a wrong password: a login tells nobody which names
# are registered.
BAD_LOGIN = "Wrong name or password."
# Registered players whose skeletons are written per batch when the server starts.
_BACKFILL_BATCH = 500


class Players:
    def __init__(self, store: Storage, presence: Presence, hub: Hub,
                 clock: Callable[[], float] = time.time,
                 addresses: AddressBook | None = None) -> None:
        """``addresses``: where the addresses players come from are kept (section 16)."""
        self.store = store
        self.addresses = addresses
        self.presence = presence
        self.hub = hub
        self.clock = clock
        self.limits = LoginLimits(clock)

    async def backfill_skeletons(self) -> None:
        """Writes the name skeleton of every player registered before the store had them
        (migration 11), the earliest registered first; nothing to do once done."""
        while True:
            rows = await self.store.names_without_skeleton(_BACKFILL_BATCH)
            if not rows:
                return
            await self.store.set_name_skeletons([(pid, skeleton_key(n)) for pid, n in rows])

    async def hello(self, conn: Conn, msg: Hello) -> None:
        if conn.player is not None:
            raise ProtocolError("bad_request", "hello was already said on this connection",
                                msg.id)
        returning = msg.token is not None or msg.password is not None
        if msg.password is not None:
            player, token = await self._login(conn, msg, msg.password)
        elif msg.token is None:
            await self._check_name_free(msg.name, None, msg.id)
            token = secrets.token_urlsafe(16)  # 128 random bits
            player = Player(secrets.token_hex(8), msg.name)
            await self.store.create_player(player.id, player.name, token)
        else:
            found = await self.store.account_by_token(msg.token)
            if found is None:
                raise ProtocolError("not_authenticated", "unknown token", msg.id)
            token = msg.token
            if found.registered:  # their name is theirs: another one in hello is ignored
                player = Player(found.player_id, found.name, registered=True, bot=found.bot)
            else:
                await self._check_name_free(msg.name, found.player_id, msg.id)
                player = Player(found.player_id, msg.name)
                if found.name != msg.name:
                    await self.store.touch_player(player.id, player.name)
        if self.addresses is not None:  # before anything may pair them: written first
            await self.addresses.seen(player.id, conn.address)
        held = await self.store.seats_held(player.id) if returning else []
        opened = await self.store.waiting_rooms_opened_by(player.id) if returning else []
        live_ids = [r for r, _, status in held if status in LIVE]
        for room_id in dict.fromkeys(live_ids + opened):
            await self.hub.reload(room_id)
        held_ids = {r for r, _, _ in held} | set(opened)
        seated_in = self.hub.in_memory(held_ids)
        for live in seated_in:
            live.room.seating.rename(player.id, player.name)
        first = self.presence.arrive(conn, player, held_ids)
        conn.send(Welcome(re=msg.id, player_id=player.id, name=player.name, token=token,
                          seats=[{"room_id": r, "seat": seat, "status": status}
                                 for r, seat, status in held],
                          registered=player.registered, bot=player.bot))
        if first:
            await self.hub.presence_changed(player.id, seated_in)

    async def _check_name_free(self, name: str, player_id: str | None,
                               re: str | int | None) -> None:
        """Refuses ``name`` if a registered player other than ``player_id`` has a name with
        its key (``name_taken``: it is their name, and a password logs in), if it looks like
        a registered player's (the same skeleton) or reads as a house bot's (``bad_request``:
        a name that deceives)."""
        owner, look_alike = await self.store.name_holders(name_key(name), skeleton_key(name))
        if owner is not None and owner.player_id != player_id:
            raise ProtocolError("name_taken", f"The name {name!r} is a registered player's"
                                " (compared without case and width): log in with its"
                                " password, or choose another name.", re,
                                params={"name": name})
        if reads_as_house_bot(name):
            raise ProtocolError("bad_request", looks_like_bot_reason(name), re,
                                reason="name_like_bot", params={"name": name})
        if look_alike is not None and look_alike.player_id != player_id:
            raise ProtocolError("bad_request", looks_like_player_reason(name), re,
                                reason="name_look_alike", params={"name": name})

    async def _login(self, conn: Conn, msg: Hello, password: str) -> tuple[Player, str]:
        """A registered player by name and password, with a new token for this device."""
        key = name_key(msg.name)
        refused = self.limits.login_refused(key, conn.address)
        if refused is not None:
            raise ProtocolError("rate_limited", refused, msg.id, reason="too_many_logins")
        # A name guessed at from many addresses: every login for it waits, whatever the
        # password (so the wait tells nothing), and none is refused.
        wait = self.limits.delay(key)
        if wait > 0:
            await asyncio.sleep(wait)
        found = await self.store.account_by_key(key)
        # An unknown name costs a hash too (of a dummy): the time does not tell.
        ok = await verify_password(password, None if found is None else found.password_hash)
        if found is None or not ok:
            self.limits.failed(key, conn.address)
            raise ProtocolError("not_authenticated", BAD_LOGIN, msg.id, reason="bad_login")
        token = secrets.token_urlsafe(16)
        await self.store.add_token(found.player_id, token, self.clock())
        return Player(found.player_id, found.name, registered=True, bot=found.bot), token

    async def register(self, conn: Conn, msg: Register) -> None:
        """``register``: the player's current name, or ``msg.name`` (the player is renamed
        to it), becomes theirs, with this password. Refused, nothing changes."""
        player = conn.player
        assert player is not None
        if player.registered:
            raise ProtocolError("bad_request", "You are registered already.", msg.id,
                                reason="registered_already")
        name = player.name if msg.name is None else msg.name
        await self._check_name_free(name, player.id, msg.id)
        refused = self.limits.register_refused(conn.address)
        if refused is not None:
            raise ProtocolError("rate_limited", refused, msg.id, reason="too_many_registrations")
        hashed = await hash_password(msg.password)
        done = await self.store.register_player(player.id, name, name_key(name), hashed,
                                                self.clock(), skeleton_key(name), bot=msg.bot)
        if done == "already_registered":  # from another connection, meanwhile
            raise ProtocolError("bad_request", "You are registered already.", msg.id)
        if done == "name_taken":  # another registration took it meanwhile
            raise ProtocolError("name_taken", f"The name {name!r} was just registered"
                                " by someone else: please choose another name.", msg.id,
                                params={"name": name})
        if done == "look_alike":  # a look-alike was registered meanwhile
            raise ProtocolError("bad_request", looks_like_player_reason(name), msg.id,
                                reason="name_look_alike", params={"name": name})
        # Every connection of the player is registered (and named so, a bot account if it
        # registered as one) from now on, and the rooms they sit in show the name.
        for c in self.presence.online.get(player.id, ()):
            if c.player is not None:
                c.player.registered = True
                c.player.name = name
                c.player.bot = msg.bot
        player.registered = True
        player.name = name
        player.bot = msg.bot
        if msg.name is not None:
            held = await self.store.seats_held(player.id)
            for live in self.hub.in_memory({r for r, _, _ in held}):
                live.room.seating.rename(player.id, name)
        conn.send(Registered(re=msg.id, player_id=player.id, name=name))

    async def goodbye(self, conn: Conn) -> None:
        """``conn`` closed: it leaves its rooms, and if it was its player's last connection,
        the rooms the player sits in see them go."""
        self.hub.unsubscribe_all(conn)
        rooms = self.presence.depart(conn)
        if rooms is not None and conn.player is not None and not self.hub.services.closing:
            await self.hub.presence_changed(conn.player.id, self.hub.in_memory(rooms))
