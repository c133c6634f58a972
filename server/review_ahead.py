"""A game's review computed while it is played (docs/review.md, "Ahead of the end").

Each move a live room commits is judged in the background: a job of the bot workers' lower
class (:class:`~tablas.server.bot_turns.FairTurns`), which gets a turn only when no bot
decision of any share waits and two turns or more are free (never the last one), run in
processes of its own below the bot workers' priority
(:class:`~tablas.server.bot_pool.BotPool`). Its entry (the one a whole review has for that
action, :func:`tablas.engine.review.review_game` with ``plies``) is
kept in memory under the key of the line of play that led to it: a digest of the game, its
options, its opening rolls and every action up to and including the one judged. Identical
lines give identical positions and the same action, so the key names a position and the move
played in it exactly, whatever each game's state JSON holds; two rooms that played the same
line share the entry. When the game's review is asked for (:mod:`tablas.server.room_records`),
:meth:`ReviewAhead.entries` takes what is cached, waits for the judgements under way, and
computes only what is left, in one job of the room's share, as decisions are.

Nothing is persisted: after a restart the entries of the games still played are computed at
the end, as before. Memory: at most ``keep`` entries (a few kilobytes each, the position
drawn for the review page included), the oldest dropped first; a finished game's are dropped
once its review is stored. ``on=False`` (``tablas serve --review-ahead off``) judges nothing
while games are played: every review is computed whole when first asked for.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tablas.engine.core import JSON
from tablas.engine.review import review_game
from tablas.server.bot_turns import RoomShares
from tablas.server.room import Room

if TYPE_CHECKING:
    from tablas.server.bot_pool import BotPool

log = logging.getLogger("tablas.server")

REVIEW_SECONDS_PER_MOVE = 0.5  # the search budget of each action a review judges
KEEP_ENTRIES = 20_000  # entries kept at most (the oldest go first)
# Background judgements waiting or running at most; past it a move is left for the end.
MAX_JOBS = 2_000
KEEP_LINES = 10_000  # rooms whose last key is remembered (the live ones)
# Seconds a move's judgement waits before it asks for its turn: the bot's answer to the move,
# asked for at once, takes the workers first (FairTurns lets background work in only beside
# two free slots), so that the bot does not share the CPU with it.
AFTER_MOVE_S = 0.05

Actions = list[tuple[JSON, list[list[int]]]]


def review_entries(game_id: str, options: JSON, opening_rolls: Sequence[Sequence[int]],
                   actions: Sequence[tuple[JSON, Sequence[Sequence[int]]]],
                   plies: Sequence[int] | None = None) -> list[JSON]:
    """A game's review entries (those of ``plies`` only, if given); runs in a worker process
    (plain data in and out)."""
    return [m.to_json() for m in review_game(
        game_id, options, opening_rolls, actions, seconds_per_move=REVIEW_SECONDS_PER_MOVE,
        plies=None if plies is None else frozenset(plies))]


def _canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def root_key(game_id: str, options: JSON, opening_rolls: Sequence[Sequence[int]]) -> str:
    """The key of a game before its first action."""
    return hashlib.sha256(_canonical([game_id, options, opening_rolls])).hexdigest()


def next_key(key: str, move: JSON, rolls: Sequence[Sequence[int]]) -> str:
    """The key of the line ``key`` followed by one more action (its move and the rolls
    after it)."""
    return hashlib.sha256(key.encode() + _canonical([move, rolls])).hexdigest()


def _actions(room: Room, upto: int) -> Actions:
    return [(a.move, [list(r) for r in a.rolls]) for a in room.history[:upto]]


class ReviewAhead:
    """The entries judged while games are played, by the key of their line (see the module)."""

    def __init__(self, bots: BotPool, shares: RoomShares, *, on: bool = True,
                 keep: int = KEEP_ENTRIES, max_jobs: int = MAX_JOBS) -> None:
        self.bots = bots
        self.shares = shares
        self.on = on
        self.keep = keep
        self.max_jobs = max_jobs
        self._entries: OrderedDict[str, JSON] = OrderedDict()
        self._jobs: dict[str, asyncio.Task[JSON]] = {}
        self._started: set[str] = set()  # jobs that hold a worker (the others wait in line)
        # Each live room's actions so far and the key of the last one (the next one's start).
        self._tips: OrderedDict[str, tuple[int, str]] = OrderedDict()

    def keys(self, room: Room) -> list[str]:
        """The key of each action of ``room``'s history, in order."""
        key = root_key(room.game_id, dict(room.options), [list(r) for r in room.opening_rolls])
        line = []
        for action in room.history:
            key = next_key(key, action.move, [list(r) for r in action.rolls])
            line.append(key)
        return line

    def _last_key(self, room: Room) -> str:
        """The key of ``room``'s last action: from the one before it when that was the last
        one seen here (each move), else from the start."""
        history = room.history
        tip = self._tips.pop(room.room_id, None)
        if tip is not None and tip[0] == len(history) - 1:
            last = history[-1]
            key = next_key(tip[1], last.move, [list(r) for r in last.rolls])
        else:
            key = self.keys(room)[-1]
        self._tips[room.room_id] = (len(history), key)
        while len(self._tips) > KEEP_LINES:
            self._tips.popitem(last=False)
        return key

    def moved(self, room: Room) -> None:
        """``room`` has just committed an action: judge it in the background."""
        if not self.on or not room.history:
            return
        key = self._last_key(room)
        ply = len(room.history) - 1
        if key in self._entries or key in self._jobs or len(self._jobs) >= self.max_jobs:
            return
        fn = functools.partial(review_entries, room.game_id, dict(room.options),
                               [list(r) for r in room.opening_rolls], _actions(room, ply + 1),
                               [ply])
        task = asyncio.get_running_loop().create_task(
            self._judge(self.shares.of(room.room_id), key, fn))
        self._jobs[key] = task
        task.add_done_callback(functools.partial(self._judged, key))

    async def _judge(self, share: str, key: str, fn: functools.partial[list[JSON]]) -> JSON:
        await asyncio.sleep(AFTER_MOVE_S)
        (entry,) = await self.bots.compute_for(
            share, fn, background=True, on_start=functools.partial(self._started.add, key))
        return entry

    def _judged(self, key: str, task: asyncio.Task[JSON]) -> None:
        self._jobs.pop(key, None)
        self._started.discard(key)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            log.warning("a move's judgement in the background failed: %r", error)
            return
        self._entries[key] = task.result()
        while len(self._entries) > self.keep:
            self._entries.popitem(last=False)

    async def entries(self, room: Room, slots: asyncio.Semaphore) -> list[JSON]:
        """Every entry of ``room``'s finished game, in order: the cached ones, the ones being
        judged (waited for), and the rest computed now in one job of the room's share (under
        ``slots``, the reviews' share of the workers). A judgement still waiting for a worker
        is withdrawn and done in that job."""
        line = self.keys(room)
        found: dict[int, JSON] = {}
        running: dict[int, asyncio.Task[JSON]] = {}
        for ply, key in enumerate(line):
            entry = self._entries.get(key)
            task = self._jobs.get(key)
            if entry is not None:
                found[ply] = entry
            elif task is not None and key in self._started:
                running[ply] = task
            elif task is not None:
                task.cancel()
        left = [ply for ply in range(len(line)) if ply not in found and ply not in running]
        share = self.shares.of(room.room_id)
        computing = asyncio.ensure_future(self._compute(room, share, slots, left))
        try:
            waited = await asyncio.gather(*running.values(), return_exceptions=True)
        except asyncio.CancelledError:
            computing.cancel()
            raise
        failed = []
        for ply, result in zip(running, waited, strict=True):
            if isinstance(result, BaseException):
                failed.append(ply)
            else:
                found[ply] = result
        for entry in await computing:
            found[entry["ply"]] = entry
        if failed:  # judged again, in the foreground
            for entry in await self._compute(room, share, slots, failed):
                found[entry["ply"]] = entry
        return [found[ply] for ply in range(len(line))]

    async def _compute(self, room: Room, share: str, slots: asyncio.Semaphore,
                       plies: list[int]) -> list[JSON]:
        if not plies:
            return []
        async with slots:
            return await self.bots.compute_for(share, functools.partial(
                review_entries, room.game_id, dict(room.options),
                [list(r) for r in room.opening_rolls], _actions(room, max(plies) + 1),
                None if len(plies) == max(plies) + 1 else plies))

    def forget(self, room: Room) -> None:
        """``room``'s review is stored: its entries and its line are no longer needed."""
        self._tips.pop(room.room_id, None)
        for key in self.keys(room):
            self._entries.pop(key, None)

    def stop(self) -> None:
        """Cancels the judgements under way (the server is shutting down)."""
        for task in list(self._jobs.values()):
            task.cancel()
