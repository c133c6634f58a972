"""The seeks' table on PostgreSQL (:class:`~tablas.server.store.seeks.SeekStore`), shared by
every node of a cluster. Pairing and taking by hand each run in a transaction that first
takes one advisory lock (:data:`_PAIRING`), so two nodes never pair at once: one's
take-or-add sees the other's result, and a seek is taken once."""

from __future__ import annotations

import asyncpg
from tablas.server.store.seeks import ANY_HIGH, ANY_LOW, SeekRow, SeekStore

# pg_advisory_xact_lock's key for pairing (any fixed number the server uses for nothing else).
_PAIRING = 0x7461_626C_6173  # "tablas"

_INSERT = (
    "INSERT INTO seeks (seek_id, node, cid, player_id, name, registered, bot, address, rating,"
    " game, options, clock, rated, lo, hi, created_at)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
)
_TAKE_COMPATIBLE = (
    "DELETE FROM seeks WHERE seq = (SELECT seq FROM seeks WHERE game = $1 AND rated = $2"
    " AND options = $3 AND clock = $4 AND player_id <> $5 AND (lo IS NULL OR lo <= $6)"
    " AND (hi IS NULL OR $6 <= hi) AND rating BETWEEN $7 AND $8"
    # never two players one of whom blocked the other (contract section 15)
    " AND player_id NOT IN (SELECT blocked_id FROM blocks WHERE player_id = $5)"
    " AND player_id NOT IN (SELECT player_id FROM blocks WHERE blocked_id = $5)"
    " ORDER BY seq LIMIT 1)"
    " RETURNING seek_id, node, cid, player_id, name, registered, bot, address, rating, game,"
    " options, clock, rated, lo, hi, created_at"
)


class PostgresSeeks(SeekStore):
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def pair_or_add(self, seek: SeekRow) -> SeekRow | None:
        async with self.pool.acquire() as con, con.transaction():
            await con.execute("SELECT pg_advisory_xact_lock($1)", _PAIRING)
            row = await con.fetchrow(
                _TAKE_COMPATIBLE, seek.game, int(seek.rated), seek.options, seek.clock,
                seek.player_id, seek.rating, ANY_LOW if seek.lo is None else seek.lo,
                ANY_HIGH if seek.hi is None else seek.hi)
            if row is None:
                await con.execute(_INSERT, *seek.values())
        return None if row is None else SeekRow.of(row)

    async def take(self, seek_id: str) -> SeekRow | None:
        async with self.pool.acquire() as con, con.transaction():
            await con.execute("SELECT pg_advisory_xact_lock($1)", _PAIRING)
            row = await con.fetchrow(
                "DELETE FROM seeks WHERE seek_id = $1 RETURNING seek_id, node, cid, player_id,"
                " name, registered, bot, address, rating, game, options, clock, rated, lo, hi,"
                " created_at", seek_id)
        return None if row is None else SeekRow.of(row)

    async def find(self, seek_id: str) -> SeekRow | None:
        row = await self.pool.fetchrow(
            "SELECT seek_id, node, cid, player_id, name, registered, bot, address, rating,"
            " game, options, clock, rated, lo, hi, created_at FROM seeks WHERE seek_id = $1",
            seek_id)
        return None if row is None else SeekRow.of(row)

    async def cancel(self, seek_id: str, player_id: str) -> bool:
        row = await self.pool.fetchrow(
            "DELETE FROM seeks WHERE seek_id = $1 AND player_id = $2 RETURNING seek_id",
            seek_id, player_id)
        return row is not None

    async def drop_connection(self, node: str, cid: int) -> list[str]:
        rows = await self.pool.fetch(
            "DELETE FROM seeks WHERE node = $1 AND cid = $2 RETURNING seek_id", node, cid)
        return [str(r[0]) for r in rows]

    async def drop_node(self, node: str | None) -> int:
        rows = await self.pool.fetch(
            "DELETE FROM seeks WHERE $1::text IS NULL OR node = $1 RETURNING seek_id", node)
        return len(rows)

    async def nodes(self) -> list[str]:
        return [str(r[0]) for r in await self.pool.fetch("SELECT DISTINCT node FROM seeks")]

    async def open_seeks(self, limit: int) -> list[SeekRow]:
        rows = await self.pool.fetch(
            "SELECT seek_id, node, cid, player_id, name, registered, bot, address, rating,"
            " game, options, clock, rated, lo, hi, created_at FROM seeks ORDER BY seq"
            " LIMIT $1", limit)
        return [SeekRow.of(r) for r in rows]

    async def counts(self, player_id: str, address: str) -> tuple[int, int]:
        row = await self.pool.fetchrow(
            "SELECT (SELECT COUNT(*) FROM seeks WHERE player_id = $1),"
            " (SELECT COUNT(*) FROM seeks WHERE address = $2)", player_id, address)
        assert row is not None
        return int(row[0]), int(row[1])

    async def total(self) -> int:
        return int(await self.pool.fetchval("SELECT COUNT(*) FROM seeks"))
