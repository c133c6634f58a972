"""Who shared an address (contract section 16): per player, the keyed hashes of the addresses
they connected from, so that accounts of one address do not rate each other.

An address here is the connection's key (:class:`tablas.server.edge.networks.AddressKeys`): an
IPv4 address, an IPv6 /64, or for a network the operator vouches for (``--shared-address-ok``)
the address and the connection's number, which is nobody else's: such keys (they hold ``#``)
are never recorded, so a player seen only from there shares no address with anyone.

The store keeps HMAC-SHA256(key, address) in hex, never the address, under the server's own
key (made once and kept in the database, so every node of a cluster has the same one and a
copy of the table alone tells no address without it). A hash is written at each ``hello``
(a login, a token, a new guest) and counts for :data:`ADDRESS_WINDOW` seconds after it was
last seen; older ones are deleted every :data:`FORGET_EVERY` seconds.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import time
from collections.abc import Callable

from tablas.server.store import Storage

log = logging.getLogger("tablas.server")

ADDRESS_WINDOW = 30 * 86400.0  # seconds a player's address counts after it was last seen
FORGET_EVERY = 3600.0  # how often (real seconds) hashes past the window are deleted


def exempt(address: str) -> bool:
    """Whether ``address`` is one connection of a network the operator vouches for (or no
    address at all): never recorded, never shared."""
    return not address or "#" in address


def address_hash(key: bytes, address: str) -> str:
    """The keyed hash of ``address`` under ``key``, as stored (hex)."""
    return hmac.new(key, address.encode(), hashlib.sha256).hexdigest()


class AddressBook:
    """The players' address hashes: recorded at ``hello``, compared when a rated game is paired
    and when it ends, forgotten after :data:`ADDRESS_WINDOW`."""

    def __init__(self, store: Storage, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock
        self._key: bytes | None = None
        self._key_lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None

    async def key(self) -> bytes:
        """The server's address key, read (or made) once."""
        async with self._key_lock:
            if self._key is None:
                self._key = await self.store.addresses.key()
            return self._key

    async def seen(self, player_id: str, address: str) -> None:
        """``player_id`` connected from ``address`` now (an exempt address: nothing)."""
        if exempt(address):
            return
        digest = address_hash(await self.key(), address)
        await self.store.address_seen(player_id, digest, self.clock())

    async def shared(self, a: str, b: str) -> bool:
        """Whether players ``a`` and ``b`` connected from one address within the window."""
        if a == b:
            return False
        return await self.store.addresses.shared(a, b, self.clock() - ADDRESS_WINDOW)

    async def forget_old(self) -> int:
        """Deletes the hashes last seen before the window; how many."""
        return await self.store.addresses.forget_before(self.clock() - ADDRESS_WINDOW)

    def start(self) -> None:
        """Forgets old hashes now and every :data:`FORGET_EVERY` seconds."""
        self._task = asyncio.get_running_loop().create_task(self._forget_loop())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _forget_loop(self) -> None:
        while True:
            try:
                n = await self.forget_old()
                if n:
                    log.info("%d address hashes older than %d days forgotten", n,
                             ADDRESS_WINDOW // 86400)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("forgetting old address hashes failed; trying again later")
            await asyncio.sleep(FORGET_EVERY)
