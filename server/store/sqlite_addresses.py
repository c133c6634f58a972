"""The address hashes on SQLite (:class:`~tablas.server.store.addresses.AddressStore`): one
server, one connection; every statement holds the store's lock, and each commits alone."""

from __future__ import annotations

import asyncio

import aiosqlite
from tablas.server.store.addresses import ADDRESS_KEY, AddressStore, new_key

_KEY = "SELECT value FROM server_secrets WHERE name = ?"
# One hash both players were seen at since the time given (each row's own time).
_SHARED = (
    "SELECT 1 FROM address_seen a JOIN address_seen b"
    " ON b.player_id = ? AND b.address_hash = a.address_hash AND b.seen_at >= ?"
    " WHERE a.player_id = ? AND a.seen_at >= ? LIMIT 1"
)


class SqliteAddresses(AddressStore):
    def __init__(self, db: aiosqlite.Connection, lock: asyncio.Lock) -> None:
        self.db = db
        self.lock = lock

    async def key(self) -> bytes:
        async with self.lock:
            await self.db.execute(
                "INSERT INTO server_secrets (name, value) VALUES (?, ?)"
                " ON CONFLICT (name) DO NOTHING", (ADDRESS_KEY, new_key()))
            async with self.db.execute(_KEY, (ADDRESS_KEY,)) as cur:
                row = await cur.fetchone()
        assert row is not None
        return bytes.fromhex(str(row[0]))

    async def shared(self, a: str, b: str, since: float) -> bool:
        async with self.lock, self.db.execute(_SHARED, (b, since, a, since)) as cur:
            return await cur.fetchone() is not None

    async def forget_before(self, before: float) -> int:
        async with self.lock, self.db.execute(
                "DELETE FROM address_seen WHERE seen_at < ?", (before,)) as cur:
            return int(cur.rowcount)

    async def hashes_of(self, player_id: str) -> list[tuple[str, float]]:
        async with self.lock, self.db.execute(
                "SELECT address_hash, seen_at FROM address_seen WHERE player_id = ?"
                " ORDER BY address_hash", (player_id,)) as cur:
            return [(str(h), float(t)) for h, t in await cur.fetchall()]
