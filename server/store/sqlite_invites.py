"""Who may enter a tournament, on SQLite (:class:`~tablas.server.store.invites.InviteStore`);
every method holds the store's lock."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import aiosqlite
from tablas.server.store.invites import Entry, InviteStore


class SqliteInvites(InviteStore):
    def __init__(self, db: aiosqlite.Connection, lock: asyncio.Lock) -> None:
        self.db = db
        self.lock = lock

    async def set_entry(self, tournament_id: str, entry: Entry,
                        names: Sequence[tuple[str, str]]) -> None:
        async with self.lock:
            await self.db.execute("BEGIN IMMEDIATE")
            try:
                await self.db.execute(
                    "INSERT INTO tournament_entry (tournament_id, entry) VALUES (?, ?)",
                    (tournament_id, entry))
                await self._add(tournament_id, names)
                await self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:
                    await self.db.execute("ROLLBACK")
                raise

    async def invite(self, tournament_id: str, names: Sequence[tuple[str, str]]) -> None:
        async with self.lock:
            await self._add(tournament_id, names)

    async def _add(self, tournament_id: str, names: Sequence[tuple[str, str]]) -> None:
        await self.db.executemany(
            "INSERT INTO tournament_invites (tournament_id, name_key, name) VALUES (?, ?, ?)"
            " ON CONFLICT (tournament_id, name_key) DO NOTHING",
            [(tournament_id, key, name) for key, name in names])

    async def entry(self, tournament_id: str) -> Entry:
        async with self.lock, self.db.execute(
                "SELECT entry FROM tournament_entry WHERE tournament_id = ?",
                (tournament_id,)) as cur:
            row = await cur.fetchone()
        return "invite" if row is not None and row[0] == "invite" else "open"

    async def invited(self, tournament_id: str, name_key: str) -> bool:
        async with self.lock, self.db.execute(
                "SELECT 1 FROM tournament_invites WHERE tournament_id = ? AND name_key = ?",
                (tournament_id, name_key)) as cur:
            return await cur.fetchone() is not None

    async def names(self, tournament_id: str) -> list[str]:
        async with self.lock, self.db.execute(
                "SELECT name FROM tournament_invites WHERE tournament_id = ? ORDER BY name_key",
                (tournament_id,)) as cur:
            return [str(r[0]) for r in await cur.fetchall()]
