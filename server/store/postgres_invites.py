"""Who may enter a tournament, on PostgreSQL (:class:`~tablas.server.store.invites.
InviteStore`), shared by every node."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg
from tablas.server.store.invites import Entry, InviteStore

_ADD = ("INSERT INTO tournament_invites (tournament_id, name_key, name) VALUES ($1, $2, $3)"
        " ON CONFLICT (tournament_id, name_key) DO NOTHING")


class PostgresInvites(InviteStore):
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def set_entry(self, tournament_id: str, entry: Entry,
                        names: Sequence[tuple[str, str]]) -> None:
        async with self.pool.acquire() as con, con.transaction():
            await con.execute("INSERT INTO tournament_entry (tournament_id, entry)"
                              " VALUES ($1, $2)", tournament_id, entry)
            await con.executemany(_ADD, [(tournament_id, k, n) for k, n in names])

    async def invite(self, tournament_id: str, names: Sequence[tuple[str, str]]) -> None:
        async with self.pool.acquire() as con:
            await con.executemany(_ADD, [(tournament_id, k, n) for k, n in names])

    async def entry(self, tournament_id: str) -> Entry:
        async with self.pool.acquire() as con:
            found = await con.fetchval(
                "SELECT entry FROM tournament_entry WHERE tournament_id = $1", tournament_id)
        return "invite" if found == "invite" else "open"

    async def invited(self, tournament_id: str, name_key: str) -> bool:
        async with self.pool.acquire() as con:
            return await con.fetchval(
                "SELECT 1 FROM tournament_invites WHERE tournament_id = $1 AND name_key = $2",
                tournament_id, name_key) is not None

    async def names(self, tournament_id: str) -> list[str]:
        async with self.pool.acquire() as con:
            rows = await con.fetch("SELECT name FROM tournament_invites WHERE tournament_id = $1"
                                   " ORDER BY name_key", tournament_id)
        return [str(r[0]) for r in rows]
