"""SQLite's reads of players' pages and of who is online (:class:`~.players.PlayerReads`)."""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

from tablas.server.ratings import Rating
from tablas.server.store.players import PlayerReads, online_rows, tally_of

# A player's finished games of a game, by how they ended for them (aborted and expired ones
# left out): the player, then the game.
_TALLY = (
    "SELECT res.winner = s.seat, res.winner IS NULL FROM seats s"
    " JOIN rooms r ON r.id = s.room_id JOIN results res ON res.room_id = s.room_id"
    " WHERE s.player_id = ? AND r.game = ? AND res.reason NOT IN ('aborted', 'expired')")

class SqlitePlayers(PlayerReads):
    """The reads, through the store's :meth:`fetch_at_once`."""

    @abstractmethod
    async def fetch_at_once(self, sql: str, params: Sequence[Any]) -> list[Any]: ...

    async def rating_history(self, player_id: str, game: str, limit: int
                             ) -> list[tuple[float, float, float]]:
        rows = await self.fetch_at_once(
            "SELECT res.finished_at, rc.rating_after, rc.rd_after FROM rating_changes rc"
            " JOIN rooms r ON r.id = rc.room_id JOIN results res ON res.room_id = rc.room_id"
            " WHERE rc.player_id = ? AND r.game = ? ORDER BY res.finished_at DESC LIMIT ?",
            (player_id, game, limit))
        return [(float(t), float(r), float(rd)) for t, r, rd in reversed(rows)]

    async def tally(self, player_id: str, game: str) -> tuple[int, int, int]:
        rows = await self.fetch_at_once(_TALLY,
                                        (player_id, game))
        return tally_of(rows)

    async def online_players(self, player_ids: Sequence[str]
                             ) -> list[tuple[str, str, bool, bool, dict[str, Rating]]]:
        ids = json.dumps(list(dict.fromkeys(player_ids)))
        people = await self.fetch_at_once(
            "SELECT id, name, bot FROM players WHERE password_hash IS NOT NULL"
            " AND id IN (SELECT value FROM json_each(?)) ORDER BY name, id", (ids,))
        playing = await self.fetch_at_once(
            "SELECT DISTINCT s.player_id FROM seats s JOIN rooms r ON r.id = s.room_id"
            " WHERE r.status = 'playing' AND s.player_id IN (SELECT value FROM json_each(?))",
            (ids,))
        ratings = await self.fetch_at_once(
            "SELECT player_id, game, rating, rd, volatility, games FROM ratings"
            " WHERE player_id IN (SELECT value FROM json_each(?)) ORDER BY game", (ids,))
        return online_rows(people, playing, ratings)
