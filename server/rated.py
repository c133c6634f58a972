"""Rated games: the rating changes a finished rated game makes, computed under per-player
locks so that two games of one player ending together never lose an update.

The owner of a room asks :meth:`RatedGames.rating_changes` for the changes when its game ends and
writes them with the result, in the same transaction (``Store.record_move`` /
``Store.record_result``), still holding the players' locks: a rating is read, moved by one
Glicko-2 period (:func:`tablas.server.ratings.rate_game`) and written by one game at a time, and a
game's result is never on disk without its rating change. (The store refuses, besides, a
rating computed from a stale one: migration 0008.)

What is rated: a room created with ``"rated": true`` whose game finishes with a RESULT, both
seats (a person or a bot level: :func:`tablas.server.ratings.bot_rating_id`), one period each with
the single game; a resignation, a timeout or an abandonment names the other seat the winner,
so it counts as a loss. An adjourned game that expires (no winner, nobody played it out) is
not rated, nor is an aborted one (ended before each seat had made its first play).

Fair rated play (contract section 10, docs/ratings.md): a house bot level is an anchor, whose
rating and RD are fixed (its game's profile, ``bot_ratings``): a game against it moves only
the person's rating. Between the same two players (a bot level counts as one) only
:data:`PAIR_CAP` rated games that finish within :data:`PAIR_WINDOW` seconds change ratings:
a room that would be a later one is made unrated when it is paired
(:meth:`RatedGames.unrated_reason`: ``pair_cap``), and one that finishes past the cap anyway
(two paired at once on two nodes) leaves the ratings as they were, unrated then.

Ratings that one address cannot farm (contract section 16): two players who connected from one
address within 30 days (:class:`tablas.server.addresses.AddressBook`) do not rate each other.
Their room is made unrated when it is paired (``shared_address``), and again when it ends if
they shared an address meanwhile (a helper who logs in from the farmer's address mid-game):
the game changes no rating, its final snapshot says ``rated: false`` and why. A game's end is
when its rating would be written, so that is the last moment to look.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace

from tablas.engine.core import Outcome
from tablas.engine.search.profiles import profile
from tablas.server.addresses import AddressBook
from tablas.server.protocol import UnratedReason
from tablas.server.ratings import NEW, Rating, RatingChange, bot_level, rate_game, score_of
from tablas.server.room import Room, SeatState
from tablas.server.rules.seats import rating_id
from tablas.server.store import Storage

UNRATED_REASONS = frozenset({"expired", "aborted"})
PAIR_CAP = 10  # rated games between the same two players that change ratings ...
PAIR_WINDOW = 86400.0  # ... among those finished within this many seconds


def anchored(game_id: str, player_id: str, stored: Rating) -> Rating:
    """``stored`` as the game rates it: a house bot level's is its fixed rating and RD (its
    ``games`` still count); a person's is as stored."""
    level = bot_level(player_id)
    if level is None:
        return stored
    rating, rd = profile(game_id).bot_ratings[level]
    return Rating(float(rating), float(rd), NEW.volatility, stored.games)


def rating_ids(room: Room) -> list[str]:
    """The rated players of the room's seats (people and house bot levels) as seated now."""
    return [pid for s in room.seats if (pid := rating_id(room.game_id, s)) is not None]


def rated_players(room: Room, seats: Sequence[SeatState] | None = None
                  ) -> tuple[str, str] | None:
    """Both seats' rated players (of ``seats``, default the room's), once the game is rated
    and both seats are filled."""
    if not room.rated:
        return None
    a, b = (rating_id(room.game_id, s) for s in (room.seats if seats is None else seats))
    return None if a is None or b is None else (a, b)


class RatedGames:
    def __init__(self, store: Storage, clock: Callable[[], float] = time.time,
                 addresses: AddressBook | None = None) -> None:
        """``addresses``: who shared an address (None: nobody, as in tests of the cap)."""
        self.store = store
        self.clock = clock
        self.addresses = addresses
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    async def current(self, room: Room, player_ids: Sequence[str] | None = None
                      ) -> dict[str, float]:
        """The ratings of the room's rated players, or of ``player_ids`` (for the seats'
        ``rating``); nothing for an unrated room."""
        ids = rating_ids(room) if player_ids is None else list(player_ids)
        if not room.rated or not ids:
            return {}
        found = await self.store.ratings_of(room.game_id, ids)
        return {pid: anchored(room.game_id, pid, r).rating for pid, r in found.items()}

    async def unrated_reason(self, room: Room, seats: Sequence[SeatState] | None = None
                             ) -> UnratedReason | None:
        """Why ``room``, rated, pairing two players (its ``seats``, default its own), must be
        unrated from now on: they shared an address (``shared_address``), or the pair is past
        its cap (``pair_cap``: :data:`PAIR_CAP` of their rated games finished within the
        window or still being played, any of which may finish within it). None while a seat
        is open, or when the game may be rated."""
        players = rated_players(room, seats)
        if players is None:
            return None
        if await self._shared(players):
            return "shared_address"
        n = await self.store.rated_games_between(
            room.game_id, players, self.clock() - PAIR_WINDOW, playing=True)
        return "pair_cap" if n >= PAIR_CAP else None

    async def _shared(self, players: tuple[str, str]) -> bool:
        """Whether the two people (never a house bot level) shared an address lately."""
        a, b = players
        if self.addresses is None or bot_level(a) is not None or bot_level(b) is not None:
            return False
        return await self.addresses.shared(a, b)

    @contextlib.asynccontextmanager
    async def rating_changes(self, room: Room, outcome: Outcome | None
                             ) -> AsyncIterator[list[RatingChange]]:
        """The rating changes of ``room``'s game ending with ``outcome`` (none for an unrated
        game); the players' ratings stay locked until the block, which writes them, ends. A
        game that may not be rated after all (past the cap, or its players shared an address
        since it was paired) is unrated here, with its reason, and changes nothing."""
        players = rated_players(room) if outcome is not None else None
        if outcome is None or players is None or outcome.reason in UNRATED_REASONS:
            yield []
            return
        async with self._locked(sorted(set(players))):
            game = room.game_id
            past = await self.store.rated_games_between(
                game, players, self.clock() - PAIR_WINDOW, playing=False)
            reason: UnratedReason | None = "pair_cap" if past >= PAIR_CAP else None
            if await self._shared(players):
                reason = "shared_address"
            if reason is not None:
                before = room.room_options
                room.unrate(reason)  # the caller writes why with the result
                try:
                    yield []
                except BaseException:
                    room.room_options = before  # not written: the room is as it was
                    raise
                return
            stored = await self.store.ratings_of(game, players)
            a, b = (anchored(game, pid, stored[pid]) for pid in players)
            score = score_of(outcome.winner, 0)
            a_after, b_after = rate_game(a, b, score)
            # An anchor does not move: its rating and RD stay; its games count.
            if bot_level(players[0]) is not None:
                a_after = replace(a, games=a.games + 1)
            if bot_level(players[1]) is not None:
                b_after = replace(b, games=b.games + 1)
            yield [RatingChange(0, players[0], game, score, a, a_after),
                   RatingChange(1, players[1], game, 1.0 - score, b, b_after)]

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
