"""The owner of one live room: every change to it goes through :meth:`LiveRoom.run`.

A :class:`LiveRoom` holds the pure :class:`~tablas.server.room.Room` (the rules of the room: seats,
history, clocks), its inbox (a lock and the commands waiting for it), its followers
(:class:`~tablas.server.room_feed.Feed`) and its own tasks, the timer and the bot
(:class:`~tablas.server.room_tasks.RoomTasks`). A command (a player's ``move``, ``join``,
``resign``…, the bot's decision, the timer's tick) waits in the inbox, then runs alone, its
verb's helper (:mod:`tablas.server.room_verbs`) called in this order:

1. **check**: the ``Room`` prepares the change (a move, a seat change, the end of the game)
   without changing anything, or refuses it with the contract's error code;
2. **persist**: the store writes the change; if that fails, the error goes to the caller and
   memory is as it was;
3. **commit**: the prepared change becomes part of the ``Room`` in memory;
4. **send**: the update or the fresh snapshot goes to every follower, the asker's copy
   carrying ``re``;
5. **reschedule**: the timer (clocks, absent people) and the bot's next move.

So every message anyone receives describes a state already on disk, every follower sees a
room's messages in order, and the room's life is decided in one place. The bot and the timer
are tasks of the room that come back through the same door (:class:`BotMove`, :class:`Tick`).

The inbox is bounded: at most ``RoomServices.inbox`` (:data:`INBOX`, 64) players' commands
wait for one room; one more is refused at once (``rate_limited``, nothing changed). The
room's own commands (:data:`~tablas.server.room_commands.OWN`) are never refused.

The timer also ends rooms people have left (contract section 6,
:meth:`tablas.server.rules.presence.Presence.due`): after the server's ``abandon_after`` a game is
won by the present person or adjourned, a waiting room closed. Until then a room waiting or
in play stays in memory; after it, it may leave.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING

from tablas.server import views
from tablas.server.connections import Conn
from tablas.server.errors import RoomError
from tablas.server.room import LIVE, Lapse, Pending, SeatChange
from tablas.server.room_commands import (
    OWN,
    BotMove,
    Change,
    Command,
    Ending,
    Expire,
    PresenceChanged,
    RoomCommand,
    Tick,
)
from tablas.server.room_feed import Feed
from tablas.server.room_services import INBOX, GameEvents, RoomEvents, RoomServices
from tablas.server.room_tasks import RoomTasks
from tablas.server.room_verbs import handle

if TYPE_CHECKING:
    from tablas.engine.core import Outcome
    from tablas.server.ownership import Fence
    from tablas.server.ratings import RatingChange
    from tablas.server.room import Room

# What other modules import from here, besides LiveRoom (the commands and the services).
__all__ = [
    "INBOX", "BotMove", "Command", "Ending", "Expire", "GameEvents", "LiveRoom",
    "PresenceChanged", "RoomCommand", "RoomEvents", "RoomServices", "Tick",
]

log = logging.getLogger("tablas.server")

BUSY = "the room is busy: try again"  # a player's command past the inbox's bound


class LiveRoom:
    """One room in memory and everything that happens to it."""

    def __init__(self, room: Room, services: RoomServices, events: RoomEvents) -> None:
        self.room = room
        self.services = services
        self.events = events
        # Held by the command that runs; the others wait for it in line (asyncio's lock
        # wakes its waiters first come, first served): the inbox.
        self.lock = asyncio.Lock()
        self._waiting = 0  # commands waiting for the lock, the room's own included
        self._players_waiting = 0  # players' commands among them: services.inbox at most
        self.feed = Feed(room, services, events)
        self.tasks = RoomTasks(self, services, self.feed)
        # The time (the services' clock) of the room's last use: the grace period before it
        # may leave memory runs from it.
        self.touched = services.clock()

    @property
    def room_id(self) -> str:
        return self.room.room_id

    @property
    def conns(self) -> set[Conn]:
        """The connections following the room (players and spectators)."""
        return self.feed.conns

    @property
    def spectators(self) -> set[Conn]:
        return self.feed.spectators

    @property
    def waiting(self) -> int:
        """How many commands wait for the room (players' and its own)."""
        return self._waiting

    # --- the one door ----------------------------------------------------------------------

    async def run(self, command: Command, conn: Conn | None = None) -> None:
        """Runs ``command`` (from ``conn``, for a player's): check → persist → commit → send,
        alone (it waits in the inbox for the room's lock), then reschedule. A player's
        command finding ``services.inbox`` others waiting is refused at once
        (``rate_limited``); the room's own never are: each of its tasks (timer, bot) sends
        one command at a time and the hub one per change of presence or expiry, a few per
        room, while players' connections are many. A refusal raises :class:`RoomError`
        with nothing changed; a failed write raises what the store raised, with nothing
        changed."""
        own = isinstance(command, OWN)
        if not own and self._players_waiting >= self.services.inbox:
            raise RoomError("rate_limited", BUSY)
        try:
            await self._wait_turn(0 if own else 1)
            try:
                await handle(self, command, conn)
            finally:
                self.lock.release()
        finally:
            self.tasks.reschedule()

    async def _wait_turn(self, player: int) -> None:
        """Waits in the inbox for the room's lock, counted while it waits (``player``: 1 for
        a player's command, 0 for the room's own)."""
        self._waiting += 1
        self._players_waiting += player
        try:
            await self.lock.acquire()
        finally:
            self._waiting -= 1
            self._players_waiting -= player

    # --- persist, commit, send: the verbs' (server.room_verbs), under the lock ---------------

    async def apply(self, change: Change, answer: Conn | None = None,
                    re: str | int | None = None) -> None:
        """Persist, then commit and send (the caller holds the lock)."""
        ratings = await self.persist(change)
        # The ratings a finished rated game left (shown in the final snapshot).
        self.room.ratings.update({c.player_id: c.after.rating for c in ratings})
        if len(ratings) == 2:
            self.room.rating_change = [{"before": c.before.rating, "after": c.after.rating}
                                       for c in sorted(ratings, key=lambda c: c.seat)]
        self.commit(change, answer, re)

    def _rating(self, outcome: Outcome | None
                ) -> contextlib.AbstractAsyncContextManager[list[RatingChange]]:
        """The rating changes the end of the game makes (held locked while written)."""
        rated = self.services.rated
        if rated is None or outcome is None:
            return contextlib.nullcontext([])
        return rated.rating_changes(self.room, outcome)

    def _unrated_at_end(self, was_rated: bool) -> str | None:
        """Why a game rated until its end rates nobody after all (the rating changes unrated
        it: :meth:`tablas.server.rated.RatedGames.rating_changes`), written with its result."""
        return self.room.room_options.unrated_reason if was_rated and not self.room.rated \
            else None

    def fence(self) -> Fence | None:
        """What a write of this room carries now (:mod:`tablas.server.ownership`)."""
        return self.services.ownership.fence(self.room_id)

    async def persist(self, change: Change) -> list[RatingChange]:
        """Writes ``change``; the rating changes written with it (a rated game's end)."""
        store, room = self.services.store, self.room
        match change:
            case Pending():
                was_rated = room.rated
                async with self._rating(change.outcome) as ratings:
                    await store.record_move(room.room_id, change.action, change.outcome,
                                            ratings, unrated=self._unrated_at_end(was_rated),
                                            fence=self.fence())
                return ratings
            case SeatChange(handover=None):
                await store.save_seats(room.room_id, change.seats, change.status,
                                       change.opening_rolls, change.seeds, change.unrated,
                                       fence=self.fence())
            case SeatChange(handover=h) if h is not None:
                await store.hand_seat_to_bot(room.room_id, h.seat, h.level, h.ply,
                                             h.from_player, h.reason, h.time, change.status,
                                             change.opening_rolls, change.seeds,
                                             fence=self.fence())
            case Ending():
                was_rated = room.rated
                async with self._rating(change.outcome) as ratings:
                    await store.record_result(room.room_id, change.outcome, change.clocks,
                                              self.services.clock(), ratings,
                                              unrated=self._unrated_at_end(was_rated),
                                              fence=self.fence())
                return ratings
            case Lapse():
                await store.set_status(room.room_id, change.status, change.at,
                                       fence=self.fence())
        return []

    def commit(self, change: Change, answer: Conn | None = None,
               re: str | int | None = None) -> None:
        """Makes a persisted change part of the room and tells its followers."""
        room = self.room
        before = room.status
        try:
            self._commit_change(change, answer, re)
        finally:
            if room.status != before:
                self._log_status(before)

    def _commit_change(self, change: Change, answer: Conn | None,
                       re: str | int | None) -> None:
        room, feed = self.room, self.feed
        match change:
            case Pending():
                action = room.commit(change)
                feed.send_update(action, answer, re)
                if self.services.moves is not None:
                    self.services.moves.moved(room)
                metrics = self.services.metrics
                metrics.move(room.game_id)
                if answer is not None:  # a person's move: its update has just been sent
                    metrics.move_seconds.observe(time.perf_counter() - answer.received)
                if room.status == "finished":
                    self._game_over()
                    feed.send_snapshot()
                return
            case SeatChange():
                room.commit_seats(change)
                if change.handover is not None:  # its former holder stays, watching
                    feed.watch(change.handover.from_player)
            case Ending():
                room.finish(change.outcome, change.clocks)
                self._game_over()
            case Lapse(status="playing"):
                room.commit_lapse(change)
                for s in room.seats:  # their going offline concerns the room again
                    if s.player_id is not None:
                        self.services.presence.seated(s.player_id, self.room_id)
            case Lapse():
                room.commit_lapse(change)
                self._game_over()
        if answer is not None and answer not in feed.conns:
            answer.send(feed.snapshot_for(answer, re))
        feed.send_snapshot(answer, re)

    def _log_status(self, before: str) -> None:
        """One line of the server's log per change of status (docs/server.md, "Logs")."""
        room = self.room
        event = ("started" if before == "waiting" else "resumed") if room.status == "playing" \
            else room.status
        result = views.result_data(room.result)
        outcome = ""
        if result is not None:
            who = "no winner" if result["winner"] is None else f"seat {result['winner']} won"
            outcome = f": {who} ({result['reason']}, {result['points']} point(s))"
        log.info("room %s (%s) %s%s", room.room_id, room.game_id, event, outcome,
                 extra={"room_id": room.room_id, "event": event, "game": room.game_id,
                        "status": room.status, "result": result})

    def _game_over(self) -> None:
        """The game has just ended, been adjourned or closed: the grace period before the room
        may leave memory starts, and its people's comings and goings no longer concern it."""
        self.touched = self.services.clock()
        room = self.room
        if room.status == "finished":
            self.services.games.game_finished(room)
        self.services.presence.game_over(
            self.room_id, {p for p in (room.created_by, *(s.player_id for s in room.seats))
                           if p is not None})

    # --- followers (server.room_feed) ------------------------------------------------------

    def subscribe(self, conn: Conn, spectator: bool) -> None:
        """``conn`` follows the room from now on (as a spectator, or as a seated player)."""
        self.feed.subscribe(conn, spectator)

    def unsubscribe(self, conn: Conn) -> None:
        self.feed.unsubscribe(conn)
        self.touched = self.services.clock()  # the grace period before eviction starts now

    def snapshot_for(self, conn: Conn, re: str | int | None = None) -> str:
        """The ``room`` message as ``conn`` sees it, answering ``re``."""
        return self.feed.snapshot_for(conn, re)

    def offer_rematch(self, player_id: str, name: str, new_room_id: str) -> None:
        """Tells everyone following this room that ``player_id`` opened ``new_room_id`` as
        its rematch."""
        self.feed.offer_rematch(player_id, name, new_room_id)

    def waits_for(self, player_id: str) -> bool:
        """Whether this room, waiting, counts against ``player_id``'s cap: they opened it (a
        vacant room counts for its creator until it starts or closes) or sit in it."""
        room = self.room
        return room.created_by == player_id or bool(room.seats_of(player_id))

    def concerns(self, player_id: str) -> bool:
        """Whether ``player_id``'s coming and going matters here: they sit in its game, or
        opened it and it waits."""
        room = self.room
        return room.status in LIVE and (
            bool(room.seats_of(player_id))
            or (room.status == "waiting" and room.created_by == player_id))

    def evictable(self) -> bool:
        """Whether the room may leave memory: nobody follows it, its people are gone (the
        game is over, adjourned or closed; without an ``abandon_after``, also a live room
        nobody seated in is online), and no write or task of its is under way. The store
        keeps it; the next command that names it loads it again."""
        if self.conns or self.spectators:
            return False
        room = self.room
        if room.status in LIVE:
            if self.services.abandon_after is not None:
                return False  # the timer ends it once its people are absent
            connected = self.services.presence.connected
            if any(s.player_id is not None and connected(s.player_id) for s in room.seats):
                return False
        # A held lock is a write in progress (and perhaps commands waiting for it); a task
        # still running would go on with a room nobody can reach any more.
        return not self.lock.locked() and self.tasks.idle()

    # --- its tasks (server.room_tasks) and shutdown ----------------------------------------

    def reschedule(self) -> None:
        """Times the room again (clocks, absent players) and lets a bot to move think."""
        self.tasks.reschedule()

    def stop(self) -> None:
        """Cancels the room's tasks (the server is shutting down, or the room was lost)."""
        self.tasks.stop()

    async def drain(self) -> None:
        """Waits for a write in progress, then for the bot's task to end (at shutdown)."""
        async with self.lock:
            pass
        await self.tasks.drain()

