"""A live room's own tasks: its timer and its bot.

Both come back to the room through its one door (:meth:`tablas.server.live_room.LiveRoom.run`):
the timer with a :class:`~tablas.server.room_commands.Tick` when a clock's flag may have fallen or
an absent person's seat is due (contract section 6), the bot with a
:class:`~tablas.server.room_commands.BotMove` once the pool (:mod:`tablas.server.bot_pool`) has
decided. The owner calls :meth:`RoomTasks.reschedule` after every command; at shutdown :meth:`stop`
cancels the tasks and :meth:`drain` waits for the bot's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

from tablas.engine.search.decision import SearchInfo
from tablas.server.connections import Conn
from tablas.server.room import LIVE, BotJob, Room
from tablas.server.room_commands import BotMove, Command, Tick
from tablas.server.room_feed import Feed
from tablas.server.room_services import RoomServices

log = logging.getLogger("tablas.server")

# Seconds at least between two moves of the bots playing out a game a person handed over
# ("Let a bot finish"), thinking included: the person can follow it move by move.
HANDED_PACE = 0.8


class Door(Protocol):
    """The room's owner, as its tasks see it: the room, and the door they come back by."""

    room: Room

    async def run(self, command: Command, conn: Conn | None = None) -> None: ...


class RoomTasks:
    """The timer and the bot of one room."""

    def __init__(self, owner: Door, services: RoomServices, feed: Feed) -> None:
        self.owner = owner
        self.services = services
        self.feed = feed
        self.bot_task: asyncio.Task[None] | None = None
        # The timer is a call on the loop at the next moment something may be due, moved at
        # every reschedule, not a task woken by every command: a move then costs a
        # computation and a timer handle, where a task's wake-up and a new wait cost a few
        # turns of the loop (docs/notes/benchmarks-method.md, "A move's cost").
        self._timer: asyncio.TimerHandle | None = None
        # The timer's Tick on its way through the door (the timer waits for it).
        self._tick_task: asyncio.Task[None] | None = None

    def reschedule(self) -> None:
        """Times the room again (clocks, absent players) and lets a bot to move think."""
        self._arm_timer()
        self._kick_bot()

    def idle(self) -> bool:
        """Whether neither the bot nor the timer is at work (either would go on with the
        room): no bot task running, no timer set, no Tick on its way."""
        return self._timer is None and all(
            t is None or t.done() for t in (self.bot_task, self._tick_task))

    # --- the timer -------------------------------------------------------------------------

    def _arm_timer(self) -> None:
        """(Re)computes when the room's timer must fire and sets it for then (or for never);
        while its Tick is on its way, that Tick sets it again once through."""
        if self.services.closing:
            return
        self.owner.room.presence.sync(self.services.presence.connected)
        if self._tick_task is not None:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        wait = self._next_wait()
        if wait is not None:
            self._timer = asyncio.get_running_loop().call_later(wait + 0.001, self._fire)

    def _next_wait(self) -> float | None:
        """Seconds until a flag may fall, an away player's seat go to a bot or an absence be
        due (contract section 6), whichever comes first; None: nothing to wait for."""
        room = self.owner.room
        if room.status not in LIVE:
            return None
        after = self.services.abandon_after
        if room.clocks.remaining is None and room.room_options.abandon_to_bot_after_ms is None \
                and after is None:
            return None
        waits = [w for w in (room.clocks.seconds_to_flag(), room.presence.seconds_to_abandon(),
                             room.presence.seconds_to_due(after)) if w is not None]
        return min(waits) if waits else None

    def _fire(self) -> None:
        self._timer = None
        if not self.services.closing:
            self._tick_task = asyncio.get_running_loop().create_task(self._tick())

    async def _tick(self) -> None:
        """The Tick through the door, then the timer set again (not after a failure: the
        next command sets it, rather than a failing Tick every millisecond)."""
        try:
            await self.owner.run(Tick())
        except Exception:
            log.exception("timer of room %s failed", self.owner.room.room_id)
            return
        finally:
            self._tick_task = None  # cancelled, failed or done: no Tick on its way
        self._arm_timer()

    # --- the bot ---------------------------------------------------------------------------

    def _kick_bot(self) -> None:
        if self.services.closing or self.owner.room.bot_to_move() is None:
            return
        if self.bot_task is not None and not self.bot_task.done():
            return
        self.bot_task = asyncio.get_running_loop().create_task(self._bot_loop())

    def _finishing_for_a_person(self) -> bool:
        """Both seats are bots, one of them handed over by a person who may be watching."""
        seats = self.owner.room.seats
        return all(s.kind == "bot" for s in seats) and any(s.stands_for for s in seats)

    async def _bot_loop(self) -> None:
        """Plays the bots' turns while a bot is to move (both seats, for bot against bot)."""
        loop = asyncio.get_running_loop()
        try:
            while not self.services.closing:
                job = BotJob.of(self.owner.room)
                if job is None:
                    return

                def progress(info: SearchInfo, job: BotJob = job) -> None:
                    self.feed.send_analysis(job, info, final=False)

                started = loop.time()
                share = self.services.shares.of(self.owner.room.room_id)
                decision = await self.services.bots.decide(job, progress, share)
                pause = self.services.bot_pause
                if self._finishing_for_a_person():
                    # "Let a bot finish": the person watches the bots play their game out, a
                    # move at a pace one can follow, not a whole game in two seconds.
                    pause = max(pause, HANDED_PACE - (loop.time() - started))
                if pause > 0:
                    await asyncio.sleep(pause)
                await self.owner.run(BotMove(job, decision))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("bot loop of room %s failed", self.owner.room.room_id)

    # --- shutdown --------------------------------------------------------------------------

    def stop(self) -> None:
        """Cancels the timer and both tasks (the server is shutting down, or the room was
        lost)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for task in (self.bot_task, self._tick_task):
            if task is not None:
                task.cancel()

    async def drain(self) -> None:
        """Waits for the bot's task to end."""
        if self.bot_task is not None:
            with contextlib.suppress(BaseException):
                await self.bot_task
