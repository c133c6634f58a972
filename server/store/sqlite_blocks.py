"""The blocks' table on SQLite (:class:`~tablas.server.store.blocks.BlockStore`); every method
holds the store's lock, as every other statement on its one connection does."""

from __future__ import annotations

import asyncio

import aiosqlite
from tablas.server.store.blocks import BlockStore


class SqliteBlocks(BlockStore):
    def __init__(self, db: aiosqlite.Connection, lock: asyncio.Lock) -> None:
        self.db = db
        self.lock = lock

    async def block(self, player_id: str, blocked_id: str, when: float) -> None:
        async with self.lock:
            await self.db.execute(
                "INSERT INTO blocks (player_id, blocked_id, created_at) VALUES (?, ?, ?)"
                " ON CONFLICT DO NOTHING", (player_id, blocked_id, when))

    async def unblock(self, player_id: str, blocked_id: str) -> bool:
        async with self.lock:
            async with self.db.execute(
                    "DELETE FROM blocks WHERE player_id = ? AND blocked_id = ?"
                    " RETURNING blocked_id", (player_id, blocked_id)) as cur:
                gone = await cur.fetchone() is not None
        return gone

    async def names(self, player_id: str) -> list[str]:
        async with self.lock, self.db.execute(
                "SELECT p.name FROM blocks b JOIN players p ON p.id = b.blocked_id"
                " WHERE b.player_id = ? ORDER BY b.created_at, p.name", (player_id,)) as cur:
            return [str(r[0]) for r in await cur.fetchall()]

    async def blocked_by(self, player_id: str) -> set[str]:
        async with self.lock, self.db.execute(
                "SELECT blocked_id FROM blocks WHERE player_id = ?", (player_id,)) as cur:
            return {str(r[0]) for r in await cur.fetchall()}

    async def either(self, a: str, b: str) -> bool:
        async with self.lock, self.db.execute(
                "SELECT 1 FROM blocks WHERE (player_id = ? AND blocked_id = ?)"
                " OR (player_id = ? AND blocked_id = ?) LIMIT 1", (a, b, b, a)) as cur:
            return await cur.fetchone() is not None
