"""PostgreSQL's reads of players' pages and of who is online (:class:`~.players.PlayerReads`)."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg
from tablas.server.ratings import Rating
from tablas.server.store.players import PlayerReads, online_rows, tally_of

# A player's finished games of a game, by how they ended for them (aborted and expired ones
# left out): $1 the player, $2 the game.
_TALLY = (
    "SELECT res.winner = s.seat, res.winner IS NULL FROM seats s"
    " JOIN rooms r ON r.id = s.room_id JOIN results res ON res.room_id = s.room_id"
    " WHERE s.player_id = $1 AND r.game = $2 AND res.reason NOT IN ('aborted', 'expired')")

class PostgresPlayers(PlayerReads):
    """The reads, through the store's pool."""

    pool: asyncpg.Pool

    async def rating_history(self, player_id: str, game: str, limit: int
                             ) -> list[tuple[float, float, float]]:
        rows = await self.pool.fetch(
            "SELECT res.finished_at, rc.rating_after, rc.rd_after FROM rating_changes rc"
            " JOIN rooms r ON r.id = rc.room_id JOIN results res ON res.room_id = rc.room_id"
            " WHERE rc.player_id = $1 AND r.game = $2 ORDER BY res.finished_at DESC LIMIT $3",
            player_id, game, limit)
        return [(float(t), float(r), float(rd)) for t, r, rd in reversed(rows)]

    async def tally(self, player_id: str, game: str) -> tuple[int, int, int]:
        return tally_of(await self.pool.fetch(_TALLY, player_id, game))

    async def online_players(self, player_ids: Sequence[str]
                             ) -> list[tuple[str, str, bool, bool, dict[str, Rating]]]:
        ids = list(dict.fromkeys(player_ids))
        async with self.pool.acquire() as con, con.transaction(
                isolation="repeatable_read", readonly=True):
            people = await con.fetch(
                "SELECT id, name, bot FROM players WHERE password_hash IS NOT NULL"
                " AND id = ANY($1::text[]) ORDER BY name, id", ids)
            playing = await con.fetch(
                "SELECT DISTINCT s.player_id FROM seats s JOIN rooms r ON r.id = s.room_id"
                " WHERE r.status = 'playing' AND s.player_id = ANY($1::text[])", ids)
            ratings = await con.fetch(
                "SELECT player_id, game, rating, rd, volatility, games FROM ratings"
                " WHERE player_id = ANY($1::text[]) ORDER BY game", ids)
        return online_rows(people, playing, ratings)
