"""The address hashes on PostgreSQL (:class:`~tablas.server.store.addresses.AddressStore`),
shared by every node of a cluster: the key is made once (the first insert wins, every node
reads the same row), and any node sees the hashes every node wrote."""

from __future__ import annotations

import asyncpg
from tablas.server.store.addresses import ADDRESS_KEY, AddressStore, new_key

# One hash both players were seen at since the time given (each row's own time).
_SHARED = (
    "SELECT 1 FROM address_seen a JOIN address_seen b"
    " ON b.player_id = $1 AND b.address_hash = a.address_hash AND b.seen_at >= $2"
    " WHERE a.player_id = $3 AND a.seen_at >= $2 LIMIT 1"
)


class PostgresAddresses(AddressStore):
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def key(self) -> bytes:
        async with self.pool.acquire() as con:
            await con.execute("INSERT INTO server_secrets (name, value) VALUES ($1, $2)"
                              " ON CONFLICT (name) DO NOTHING", ADDRESS_KEY, new_key())
            value = await con.fetchval("SELECT value FROM server_secrets WHERE name = $1",
                                       ADDRESS_KEY)
        return bytes.fromhex(str(value))

    async def shared(self, a: str, b: str, since: float) -> bool:
        async with self.pool.acquire() as con:
            return await con.fetchval(_SHARED, b, since, a) is not None

    async def forget_before(self, before: float) -> int:
        async with self.pool.acquire() as con:
            status = await con.execute("DELETE FROM address_seen WHERE seen_at < $1", before)
        return int(status.split()[-1])

    async def hashes_of(self, player_id: str) -> list[tuple[str, float]]:
        async with self.pool.acquire() as con:
            rows = await con.fetch("SELECT address_hash, seen_at FROM address_seen"
                                   " WHERE player_id = $1 ORDER BY address_hash", player_id)
        return [(str(r[0]), float(r[1])) for r in rows]
