"""The seeks' table on SQLite (:class:`~tablas.server.store.seeks.SeekStore`): one server, so
one connection; every method holds the store's lock (the group commit's too), and pairing's
take-or-add is one transaction under it."""

from __future__ import annotations

import asyncio

import aiosqlite
from tablas.server.store.seeks import ANY_HIGH, ANY_LOW, SeekRow, SeekStore

_INSERT = (
    "INSERT INTO seeks (seek_id, node, cid, player_id, name, registered, bot, address, rating,"
    " game, options, clock, rated, lo, hi, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# The oldest compatible seek of another player: the same kind of game, the new seeker's
# rating in its range, its seeker's rating in the new one's.
_TAKE_COMPATIBLE = (
    "DELETE FROM seeks WHERE seq = (SELECT seq FROM seeks WHERE game = ? AND rated = ?"
    " AND options = ? AND clock = ? AND player_id <> ? AND (lo IS NULL OR lo <= ?)"
    " AND (hi IS NULL OR ? <= hi) AND rating BETWEEN ? AND ?"
    # never two players one of whom blocked the other (contract section 15)
    " AND player_id NOT IN (SELECT blocked_id FROM blocks WHERE player_id = ?)"
    " AND player_id NOT IN (SELECT player_id FROM blocks WHERE blocked_id = ?)"
    " ORDER BY seq LIMIT 1)"
    " RETURNING seek_id, node, cid, player_id, name, registered, bot, address, rating, game,"
    " options, clock, rated, lo, hi, created_at"
)


class SqliteSeeks(SeekStore):
    def __init__(self, db: aiosqlite.Connection, lock: asyncio.Lock) -> None:
        self.db = db
        self.lock = lock

    async def pair_or_add(self, seek: SeekRow) -> SeekRow | None:
        async with self.lock:
            await self.db.execute("BEGIN IMMEDIATE")
            try:
                async with self.db.execute(_TAKE_COMPATIBLE, (
                        seek.game, int(seek.rated), seek.options, seek.clock, seek.player_id,
                        seek.rating, seek.rating, ANY_LOW if seek.lo is None else seek.lo,
                        ANY_HIGH if seek.hi is None else seek.hi, seek.player_id,
                        seek.player_id)) as cur:
                    row = await cur.fetchone()
                if row is None:
                    await self.db.execute(_INSERT, seek.values())
                await self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:
                    await self.db.execute("ROLLBACK")
                raise
        return None if row is None else SeekRow.of(row)

    async def take(self, seek_id: str) -> SeekRow | None:
        async with self.lock, self.db.execute(
                "DELETE FROM seeks WHERE seek_id = ? RETURNING seek_id, node, cid, player_id,"
                " name, registered, bot, address, rating, game, options, clock, rated, lo, hi,"
                " created_at", (seek_id,)) as cur:
            row = await cur.fetchone()
        return None if row is None else SeekRow.of(row)

    async def find(self, seek_id: str) -> SeekRow | None:
        async with self.lock, self.db.execute(
                "SELECT seek_id, node, cid, player_id, name, registered, bot, address, rating,"
                " game, options, clock, rated, lo, hi, created_at FROM seeks WHERE seek_id = ?",
                (seek_id,)) as cur:
            row = await cur.fetchone()
        return None if row is None else SeekRow.of(row)

    async def cancel(self, seek_id: str, player_id: str) -> bool:
        async with self.lock, self.db.execute(
                "DELETE FROM seeks WHERE seek_id = ? AND player_id = ? RETURNING seek_id",
                (seek_id, player_id)) as cur:
            return await cur.fetchone() is not None

    async def drop_connection(self, node: str, cid: int) -> list[str]:
        async with self.lock, self.db.execute(
                "DELETE FROM seeks WHERE node = ? AND cid = ? RETURNING seek_id",
                (node, cid)) as cur:
            return [str(r[0]) for r in await cur.fetchall()]

    async def drop_node(self, node: str | None) -> int:
        async with self.lock, self.db.execute(
                "DELETE FROM seeks WHERE ? IS NULL OR node = ? RETURNING seek_id",
                (node, node)) as cur:
            return len(list(await cur.fetchall()))

    async def nodes(self) -> list[str]:
        async with self.lock, self.db.execute("SELECT DISTINCT node FROM seeks") as cur:
            return [str(r[0]) for r in await cur.fetchall()]

    async def open_seeks(self, limit: int) -> list[SeekRow]:
        async with self.lock, self.db.execute(
                "SELECT seek_id, node, cid, player_id, name, registered, bot, address, rating,"
                " game, options, clock, rated, lo, hi, created_at FROM seeks ORDER BY seq"
                " LIMIT ?", (limit,)) as cur:
            return [SeekRow.of(r) for r in await cur.fetchall()]

    async def counts(self, player_id: str, address: str) -> tuple[int, int]:
        async with self.lock, self.db.execute(
                "SELECT (SELECT COUNT(*) FROM seeks WHERE player_id = ?),"
                " (SELECT COUNT(*) FROM seeks WHERE address = ?)",
                (player_id, address)) as cur:
            row = await cur.fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    async def total(self) -> int:
        async with self.lock, self.db.execute("SELECT COUNT(*) FROM seeks") as cur:
            row = await cur.fetchone()
        return 0 if row is None else int(row[0])
