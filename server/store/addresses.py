"""The addresses players connected from, as stored (contract section 16): per player, the keyed
hashes of their addresses (never the addresses) and when each was last seen, and the server's
own secret key that makes those hashes.

A backend gives :class:`AddressStore` (``store.addresses``). A hash seen is written with the
group commit (kind ``address_seen``, :meth:`tablas.server.store.base.Storage.address_seen`), so
a rush of ``hello`` joins the moves' transactions; what is here reads, makes the key once, and
forgets. On PostgreSQL every node of a cluster shares the key and the hashes.
"""

from __future__ import annotations

import secrets
from abc import ABC, abstractmethod

ADDRESS_KEY = "address_key"  # the name of the HMAC key's row in server_secrets


def new_key() -> str:
    """A fresh secret key: 256 random bits, hex."""
    return secrets.token_hex(32)


class AddressStore(ABC):
    @abstractmethod
    async def key(self) -> bytes:
        """The server's address key: made by the first caller ever (kept in the database),
        the same for every later caller and every node."""

    @abstractmethod
    async def shared(self, a: str, b: str, since: float) -> bool:
        """Whether players ``a`` and ``b`` both have a hash seen at ``since`` or later."""

    @abstractmethod
    async def forget_before(self, before: float) -> int:
        """Deletes the hashes last seen before ``before``; how many."""

    @abstractmethod
    async def hashes_of(self, player_id: str) -> list[tuple[str, float]]:
        """The player's hashes (hex) and when each was last seen (for tests and moderators)."""
