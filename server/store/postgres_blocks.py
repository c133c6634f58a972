"""The blocks' table on PostgreSQL (:class:`~tablas.server.store.blocks.BlockStore`), shared by
every node of a cluster."""

from __future__ import annotations

import asyncpg
from tablas.server.store.blocks import BlockStore


class PostgresBlocks(BlockStore):
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def block(self, player_id: str, blocked_id: str, when: float) -> None:
        await self.pool.execute(
            "INSERT INTO blocks (player_id, blocked_id, created_at) VALUES ($1, $2, $3)"
            " ON CONFLICT DO NOTHING", player_id, blocked_id, when)

    async def unblock(self, player_id: str, blocked_id: str) -> bool:
        row = await self.pool.fetchrow(
            "DELETE FROM blocks WHERE player_id = $1 AND blocked_id = $2 RETURNING blocked_id",
            player_id, blocked_id)
        return row is not None

    async def names(self, player_id: str) -> list[str]:
        rows = await self.pool.fetch(
            "SELECT p.name FROM blocks b JOIN players p ON p.id = b.blocked_id"
            " WHERE b.player_id = $1 ORDER BY b.created_at, p.name", player_id)
        return [str(r[0]) for r in rows]

    async def blocked_by(self, player_id: str) -> set[str]:
        rows = await self.pool.fetch(
            "SELECT blocked_id FROM blocks WHERE player_id = $1", player_id)
        return {str(r[0]) for r in rows}

    async def either(self, a: str, b: str) -> bool:
        row = await self.pool.fetchrow(
            "SELECT 1 FROM blocks WHERE (player_id = $1 AND blocked_id = $2)"
            " OR (player_id = $2 AND blocked_id = $1) LIMIT 1", a, b)
        return row is not None
