"""Rated games: the rating changes a finished rated game makes, computed under per-player
locks so that two games of one player ending together never lose an update.

The owner of a room asks :meth:`RatedGames.settle` for the changes when its game ends and
writes them with the result, in the same transaction (``Store.record_move`` /
``Store.record_result``), still holding the players' locks: a rating is read, moved by one
Glicko-2 period (:func:`server.ratings.rate_game`) and written by one game at a time, and a
game's result is never on disk without its rating change. (The store refuses, besides, a
rating computed from a stale one: migration 0008.)

What is rated: a room created with ``"rated": true`` whose game finishes with a RESULT, both
seats (a person or a bot level: :func:`server.ratings.bot_rating_id`), one period each with
the single game; a resignation, a timeout or an abandonment names the other seat the winner,
so it counts as a loss. An adjourned game that expires (no winner, nobody played it out) is
not rated.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence

from engine.core import Outcome
from server.ratings import RatingChange, rate_game, score_of
from server.room import Room
from server.store import Storage

UNRATED_REASONS = frozenset({"expired"})


class RatedGames:
    def __init__(self, store: Storage) -> None:
        self.store = store
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    async def current(self, room: Room, player_ids: Sequence[str] | None = None
                      ) -> dict[str, float]:
        """The ratings of the room's rated players, or of ``player_ids`` (for the seats'
        ``rating``); nothing for an unrated room."""
        ids = room.rating_ids() if player_ids is None else list(player_ids)
        if not room.rated or not ids:
            return {}
        found = await self.store.ratings_of(room.game_id, ids)
        return {pid: r.rating for pid, r in found.items()}

    @contextlib.asynccontextmanager
    async def settle(self, room: Room, outcome: Outcome | None
                     ) -> AsyncIterator[list[RatingChange]]:
        """The rating changes of ``room``'s game ending with ``outcome`` (none for an unrated
        game); the players' ratings stay locked until the block, which writes them, ends."""
        players = room.rated_players() if outcome is not None else None
        if outcome is None or players is None or outcome.reason in UNRATED_REASONS:
            yield []
            return
        async with self._locked(sorted(set(players))):
            before = await self.store.ratings_of(room.game_id, players)
            a, b = before[players[0]], before[players[1]]
            score = score_of(outcome.winner, 0)
            a_after, b_after = rate_game(a, b, score)
            yield [RatingChange(0, players[0], room.game_id, score, a, a_after),
                   RatingChange(1, players[1], room.game_id, 1.0 - score, b, b_after)]

    @contextlib.asynccontextmanager
    async def _locked(self, player_ids: Sequence[str]) -> AsyncIterator[None]:
        """Holds each player's lock, taken in sorted order (no two games wait for each
        other); a lock nobody holds or waits for is forgotten."""
        for pid in player_ids:
            self._users[pid] = self._users.get(pid, 0) + 1
            self._locks.setdefault(pid, asyncio.Lock())
        try:
            async with contextlib.AsyncExitStack() as stack:
                for pid in player_ids:
                    await stack.enter_async_context(self._locks[pid])
                yield
        finally:
            for pid in player_ids:
                self._users[pid] -= 1
                if not self._users[pid]:
                    del self._users[pid]
                    del self._locks[pid]
