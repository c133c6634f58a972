"""The owner of one live room: every change to it goes through :meth:`LiveRoom.run`.

A :class:`LiveRoom` holds the pure :class:`~server.room.Room` (the rules of the room: seats,
history, clocks), its lock, the connections that follow it, its timer and its bot. A command
(a player's ``move``, ``join``, ``resign``…, the bot's decision, the timer's tick) runs under
the room's lock, in this order:

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

The timer also ends rooms people have left (contract section 6,
:meth:`server.rules.presence.Presence.due`): after the server's ``abandon_after`` a game is
won by the present person or adjourned, a waiting room closed. Until then a room waiting or
in play stays in memory; after it, it may leave.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from engine.core import Outcome
from engine.search.decision import Decision, SearchInfo
from engine.search.profiles import profile
from server import views
from server.bots import random_move
from server.connections import Conn, Presence
from server.errors import RoomError
from server.ownership import Fence, Ownership
from server.protocol import (
    Abort,
    Analysis,
    Chat,
    ChatMessage,
    ClaimWin,
    HandToBot,
    Join,
    Leave,
    Left,
    Move,
    RematchOffer,
    Resign,
    Seed,
    Spectate,
    json_text,
    with_re,
)
from server.room import LIVE, Action, BotJob, Flagged, Lapse, Pending, Room, SeatChange

if TYPE_CHECKING:
    from server.bots import BotPool
    from server.rated import RatedGames
    from server.ratings import RatingChange
    from server.store import Storage

log = logging.getLogger("tablas.server")


@dataclass(frozen=True, slots=True)
class BotMove:
    """The bot's decision for ``job`` came back (None: no answer in time)."""

    job: BotJob
    decision: Decision | None


@dataclass(frozen=True, slots=True)
class Tick:
    """The room's timer fired: a flag may have fallen, an absent player's seat be due."""


@dataclass(frozen=True, slots=True)
class PresenceChanged:
    """A player seated here (or its creator, while it waits) came online or went offline."""


@dataclass(frozen=True, slots=True)
class Expire:
    """The game has been adjourned too long: it ends without a winner (``expired``)."""


# A player's command, from a client message; the room's own tasks and the hub send the others.
RoomCommand = Join | Spectate | Leave | Move | Resign | HandToBot | Chat | Seed | Abort | ClaimWin
Command = RoomCommand | BotMove | Tick | PresenceChanged | Expire


@dataclass(frozen=True, slots=True)
class Ending:
    """The end of a game without a move (a resignation, a flag fall)."""

    outcome: Outcome
    clocks: list[int] | None


# What the owner persists, then commits: a move, a seat change, the end of a game without a
# move, a change of status without one.
Change = Pending | SeatChange | Ending | Lapse


class RoomEvents(Protocol):
    """What a live room tells the keeper of the rooms in memory (the hub, which makes it)."""

    def check_waiting_cap(self, player_id: str) -> None:
        """Refuses one more waiting room for ``player_id`` past the cap."""

    def waiting_for(self, player_id: str, room_id: str) -> None:
        """``room_id`` now waits for ``player_id`` (it counts against their cap)."""

    def subscribed(self, conn: Conn) -> None:
        """``conn`` has just subscribed to a room (it lets go of its old finished ones)."""


class GameEvents(Protocol):
    """What a live room tells the lobby."""

    def game_finished(self, room: Room) -> None:
        """``room``'s game has just ended (status ``finished``): told by the room's owner
        after the end is on disk, under the room's lock."""


@dataclass
class RoomServices:
    """What every live room shares, passed in by the composition root (``server.app``):
    where changes are written, who owns the rooms (and so what each write carries), where
    bots think, who is online, the time, who hears of a game's end."""

    store: Storage
    bots: BotPool
    presence: Presence
    clock: Callable[[], float]
    ownership: Ownership = field(kw_only=True)
    games: GameEvents = field(kw_only=True)
    bot_pause: float = 0.0  # seconds a bot waits before its move is played (for people)
    # Seconds without a connection after which a person is absent (None: rooms never end).
    abandon_after: float | None = None
    # Seconds an opponent must have been away before the present player may claim the win.
    claim_after: float = 30.0
    closing: bool = False  # the server is shutting down: no new bot or timer tasks
    # Rates a rated room's finished game (None: no game is rated).
    rated: RatedGames | None = None


class LiveRoom:
    """One room in memory and everything that happens to it."""

    def __init__(self, room: Room, services: RoomServices, events: RoomEvents) -> None:
        self.room = room
        self.services = services
        self.events = events
        self.lock = asyncio.Lock()
        self.conns: set[Conn] = set()
        self.spectators: set[Conn] = set()
        self.bot_task: asyncio.Task[None] | None = None
        self.timer_task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._final_analysis_ply: int | None = None  # no more live analysis for this ply
        # The time (the services' clock) of the room's last use: the grace period before it
        # may leave memory runs from it.
        self.touched = services.clock()

    @property
    def room_id(self) -> str:
        return self.room.room_id

    # --- the one door ----------------------------------------------------------------------

    async def run(self, command: Command, conn: Conn | None = None) -> None:
        """Runs ``command`` (from ``conn``, for a player's): check → persist → commit → send,
        under the room's lock, then reschedule. A refusal raises :class:`RoomError` with
        nothing changed; a failed write raises what the store raised, with nothing changed."""
        try:
            async with self.lock:
                await self._run(command, conn)
        finally:
            self.reschedule()

    async def _run(self, command: Command, conn: Conn | None) -> None:
        room = self.room
        match command:
            case Move():
                assert conn is not None
                try:
                    pending = room.prepare_move(conn.player_id, command.ply, dict(command.move))
                except Flagged as f:  # the move came too late: the game is lost on time
                    await self._apply(Ending(f.outcome, f.clocks))
                    raise
                await self._apply(pending, conn, command.id)
            case BotMove():
                await self._bot_move(command.job, command.decision)
            case Join():
                assert conn is not None and conn.player is not None
                player = conn.player
                if (room.status == "waiting" and room.open_seats > 1
                        and not self.waits_for(player.id)):
                    self.events.check_waiting_cap(player.id)  # the room goes on waiting
                change: SeatChange | Lapse | None = room.presence.prepare_resume(player.id)
                if change is None:
                    if room.rated and player.id not in room.ratings:
                        await self._read_ratings(player.id)
                    change = room.seating.prepare_join(player.id, player.name, command.seat,
                                                       command.seed,
                                                       registered=player.registered)
                    change = await self._pair_capped(change)
                if change is not None:
                    await self._persist(change)
                self.subscribe(conn, spectator=False)
                if change is not None:
                    self._commit(change, conn, command.id)
                else:
                    conn.send(self.snapshot_for(conn, command.id))
                if room.status == "waiting":
                    self.events.waiting_for(player.id, self.room_id)
            case Spectate():
                assert conn is not None
                self.subscribe(conn, spectator=not room.seats_of(conn.player_id))
                conn.send(self.snapshot_for(conn, command.id))
            case Leave():
                assert conn is not None and conn.player is not None
                self.unsubscribe(conn)
                change = room.seating.prepare_leave(conn.player.id)
                if change is not None:
                    await self._apply(change)
                if room.vacant and room.created_by == conn.player.id:
                    # The host leaves their own empty table: nobody is left to wait for.
                    await self._apply(Lapse("closed", self.services.clock()))
                conn.send(Left(re=command.id, room_id=room.room_id))
            case Resign():
                assert conn is not None
                outcome = room.endings.prepare_resign(conn.player_id or "")
                await self._apply(Ending(outcome, room.clocks.live()), conn, command.id)
            case Abort():
                assert conn is not None
                outcome = room.endings.prepare_abort(conn.player_id)
                await self._apply(Ending(outcome, room.clocks.live()), conn, command.id)
            case ClaimWin():
                assert conn is not None
                room.presence.sync(self.services.presence.connected)
                outcome = room.endings.prepare_claim(conn.player_id, self.services.claim_after)
                await self._apply(Ending(outcome, room.clocks.live()), conn, command.id)
            case Seed():
                assert conn is not None
                await self._apply(room.seating.prepare_seed(conn.player_id, command.seed), conn,
                                  command.id)
            case HandToBot():
                assert conn is not None
                room.seating.check_hand_to_bot(conn.player_id, command.seat)
                change = room.seating.prepare_hand_to_bot(command.seat, command.level,
                                                          "hand_to_bot")
                await self._apply(change, conn, command.id)
            case Chat():
                assert conn is not None
                await self._chat(conn, command)
            case Tick():
                await self._tick()
            case PresenceChanged():
                self.touched = self.services.clock()
                # The snapshot says since when each player has been away (claim_win).
                room.presence.sync(self.services.presence.connected)
                self._send_snapshot()
            case Expire():
                if room.status == "adjourned":
                    await self._apply(Ending(Outcome(None, 0, "expired"), room.clocks.live()))

    async def _apply(self, change: Change, answer: Conn | None = None,
                     re: str | int | None = None) -> None:
        """Persist, then commit and send (the caller holds the lock)."""
        ratings = await self._persist(change)
        self.room.commit_ratings(ratings)
        self._commit(change, answer, re)

    async def _pair_capped(self, change: SeatChange | None) -> SeatChange | None:
        """``change``, unrated if it starts a rated game between a pair past its cap."""
        rated, room = self.services.rated, self.room
        if change is None or change.started_at is None or rated is None:
            return change
        players = room.rated_players(change.seats)
        if players is None or not await rated.capped(room, players):
            return change
        return dataclasses.replace(change, unrated=True)

    async def _read_ratings(self, player_id: str) -> None:
        """A player about to sit in this rated room: their rating, for the seat's."""
        rated = self.services.rated
        if rated is not None:
            self.room.ratings.update(await rated.current(self.room, [player_id]))

    def _rating(self, outcome: Outcome | None
                ) -> contextlib.AbstractAsyncContextManager[list[RatingChange]]:
        """The rating changes the end of the game makes (held locked while written)."""
        rated = self.services.rated
        if rated is None or outcome is None:
            return contextlib.nullcontext([])
        return rated.settle(self.room, outcome)

    def _fence(self) -> Fence | None:
        """What a write of this room carries now (:mod:`server.ownership`)."""
        return self.services.ownership.fence(self.room_id)

    async def _persist(self, change: Change) -> list[RatingChange]:
        """Writes ``change``; the rating changes written with it (a rated game's end)."""
        store, room = self.services.store, self.room
        match change:
            case Pending():
                async with self._rating(change.outcome) as ratings:
                    await store.record_move(room.room_id, change.action, change.outcome,
                                            ratings, fence=self._fence())
                return ratings
            case SeatChange(handover=None):
                await store.save_seats(room.room_id, change.seats, change.status,
                                       change.opening_rolls, change.seeds, change.unrated,
                                       fence=self._fence())
            case SeatChange(handover=h) if h is not None:
                await store.hand_seat_to_bot(room.room_id, h.seat, h.level, h.ply,
                                             h.from_player, h.reason, h.time, change.status,
                                             change.opening_rolls, change.seeds,
                                             fence=self._fence())
            case Ending():
                async with self._rating(change.outcome) as ratings:
                    await store.record_result(room.room_id, change.outcome, change.clocks,
                                              self.services.clock(), ratings,
                                              fence=self._fence())
                return ratings
            case Lapse():
                await store.set_status(room.room_id, change.status, change.at,
                                       fence=self._fence())
        return []

    def _commit(self, change: Change, answer: Conn | None = None,
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
        room = self.room
        match change:
            case Pending():
                action = room.commit(change)
                self._send_update(action, answer, re)
                if room.status == "finished":
                    self._game_over()
                    self._send_snapshot()
                return
            case SeatChange():
                room.commit_seats(change)
                if change.handover is not None:  # its former holder stays, watching
                    former = change.handover.from_player
                    for c in self.conns:
                        if c.player_id == former and not room.seats_of(former):
                            self.spectators.add(c)
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
        if answer is not None and answer not in self.conns:
            answer.send(self.snapshot_for(answer, re))
        self._send_snapshot(answer, re)

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

    async def _chat(self, conn: Conn, msg: Chat) -> None:
        assert conn.player is not None
        if conn not in self.conns:
            raise RoomError("not_seated", "join or spectate the room to chat in it")
        text = msg.text.strip()
        if not text:
            raise RoomError("bad_request", "empty chat line")
        now = self.services.clock()
        await self.services.store.record_chat(self.room_id, conn.player.id, text, now,
                                              fence=self._fence())
        line = ChatMessage(room_id=self.room_id, player_id=conn.player.id,
                           name=conn.player.name, text=text, time=now)
        for c in self.conns:
            line.re = msg.id if c is conn else None
            c.send(line.to_json())

    def offer_rematch(self, player_id: str, name: str, new_room_id: str) -> None:
        """Tells everyone following this room that ``player_id`` opened ``new_room_id`` as
        its rematch: the server's word, which no chat line can imitate."""
        offer = RematchOffer(room_id=self.room_id, new_room_id=new_room_id,
                             player_id=player_id, name=name).to_json()
        for c in self.conns:
            c.send(offer)

    # --- followers -------------------------------------------------------------------------

    def subscribe(self, conn: Conn, spectator: bool) -> None:
        """``conn`` follows the room from now on (as a spectator, or as a seated player)."""
        self.conns.add(conn)
        conn.rooms.pop(self.room_id, None)  # the latest subscription goes last
        conn.rooms[self.room_id] = None
        if spectator:
            self.spectators.add(conn)
        else:
            self.spectators.discard(conn)
            if conn.player_id is not None:
                self.services.presence.seated(conn.player_id, self.room_id)
        self.events.subscribed(conn)

    def unsubscribe(self, conn: Conn) -> None:
        self.conns.discard(conn)
        self.spectators.discard(conn)
        conn.rooms.pop(self.room_id, None)
        self.touched = self.services.clock()  # the grace period before eviction starts now

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
        # A held lock is a write in progress; a task still running would go on with a room
        # nobody can reach any more.
        return not self.lock.locked() and all(
            t is None or t.done() for t in (self.bot_task, self.timer_task))

    # --- messages ----------------------------------------------------------------------------

    def _snapshot_text(self, viewer: str | None) -> str:
        return json_text(views.snapshot_data(self.room, viewer, self.services.presence.connected,
                                             len(self.spectators)))

    def snapshot_for(self, conn: Conn, re: str | int | None = None) -> str:
        """The ``room`` message as ``conn`` sees it, answering ``re``."""
        return with_re(self._snapshot_text(conn.player_id), re)

    def _send_snapshot(self, answer: Conn | None = None, re: str | int | None = None) -> None:
        room = self.room
        # Everyone without a seat here sees the same snapshot: written once for them all.
        texts: dict[str | None, str] = {}
        for c in self.conns:
            viewer = c.player_id if room.seats_of(c.player_id) else None
            text = texts.get(viewer)
            if text is None:
                text = texts[viewer] = self._snapshot_text(viewer)
            c.send(with_re(text, re) if c is answer else text)

    def _send_update(self, action: Action, answer: Conn | None, re: str | int | None) -> None:
        room = self.room
        texts: dict[bool, str] = {}  # written once: with the legal moves, and without
        for c in self.conns:
            legal = room.legal_for(c.player_id)
            text = texts.get(bool(legal))
            if text is None:
                text = texts[bool(legal)] = json_text(views.update_data(room, action, legal))
            c.send(with_re(text, re) if c is answer else text)

    def _send_analysis(self, job: BotJob, info: SearchInfo, *, final: bool) -> None:
        """A bot's thoughts to the spectators (and the players, with ``show_analysis``);
        never for a ply the room has left, never live after the final one."""
        room = self.room
        if (room.status != "playing" or room.ply != job.ply or room.bot_to_move() != job.seat
                or self._final_analysis_ply == job.ply):
            return
        if final:
            self._final_analysis_ply = job.ply
        targets = self.conns if room.room_options.show_analysis else self.spectators
        if not targets:
            return
        scale = profile(room.game_id).score
        msg = Analysis(
            room_id=room.room_id, ply=job.ply, seat=job.seat, depth=info.depth,
            score=info.score, pv=list(info.pv), nodes=info.nodes, final=final,
            proven=info.proven, distance=info.distance, score_unit=scale.unit,
            score_typical=scale.typical,
        ).to_json()
        for c in targets:
            c.send(msg)

    # --- reschedule: the timer and the bot -------------------------------------------------

    def reschedule(self) -> None:
        """Times the room again (clocks, absent players) and lets a bot to move think."""
        self._arm_timer()
        self._kick_bot()

    def _arm_timer(self) -> None:
        """(Re)computes when the room's timer must fire; starts its task if needed."""
        if self.services.closing:
            return
        room = self.room
        room.presence.sync(self.services.presence.connected)
        self._wake.set()
        timed = room.clocks.remaining is not None or room.room_options.abandon_to_bot_after_ms \
            is not None or self.services.abandon_after is not None
        if room.status not in LIVE or not timed:
            return
        if self.timer_task is None or self.timer_task.done():
            self.timer_task = asyncio.get_running_loop().create_task(self._timer_loop())

    async def _timer_loop(self) -> None:
        try:
            while not self.services.closing:
                room = self.room
                after = self.services.abandon_after
                waits = [w for w in (room.clocks.seconds_to_flag(),
                                     room.presence.seconds_to_abandon(),
                                     room.presence.seconds_to_due(after)) if w is not None]
                if room.status not in LIVE or not waits:
                    return
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), min(waits) + 0.001)
                    continue  # something changed: compute again
                await self.run(Tick())
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("timer of room %s failed", self.room_id)

    async def _tick(self) -> None:
        room = self.room
        if room.status not in LIVE:
            return
        flagged = room.clocks.flag_fall()
        if flagged is not None:
            await self._apply(Ending(*flagged))
            return
        room.presence.sync(self.services.presence.connected)
        for seat in room.presence.abandoned():
            await self._apply(room.seating.prepare_hand_to_bot(seat, "medium", "abandoned"))
        due = room.presence.due(self.services.abandon_after)
        if isinstance(due, Lapse):
            await self._apply(due)
        elif due is not None:
            await self._apply(Ending(due, room.clocks.live()))

    def _kick_bot(self) -> None:
        if self.services.closing or self.room.bot_to_move() is None:
            return
        if self.bot_task is not None and not self.bot_task.done():
            return
        self.bot_task = asyncio.get_running_loop().create_task(self._bot_loop())

    async def _bot_loop(self) -> None:
        """Plays the bots' turns while a bot is to move (both seats, for bot against bot)."""
        try:
            while not self.services.closing:
                job = BotJob.of(self.room)
                if job is None:
                    return

                def progress(info: SearchInfo, job: BotJob = job) -> None:
                    self._send_analysis(job, info, final=False)

                decision = await self.services.bots.decide(job, progress)
                if self.services.bot_pause:
                    await asyncio.sleep(self.services.bot_pause)
                await self.run(BotMove(job, decision))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("bot loop of room %s failed", self.room_id)

    async def _bot_move(self, job: BotJob, decision: Decision | None) -> None:
        room = self.room
        if room.ply != job.ply or room.bot_to_move() != job.seat:
            return  # the room moved on while the bot thought
        pending = None
        try:
            if decision is not None:
                try:
                    pending = room.prepare_move(None, job.ply, decision.move, bot_seat=job.seat)
                    self._send_analysis(job, decision.info(), final=True)
                except Flagged:
                    raise
                except RoomError as e:
                    log.warning("bot move %s refused in room %s: %s", decision.move,
                                room.room_id, e.message)
            if pending is None:  # no answer in time, or a bad one: a random move
                fallback = random_move(room.game, room.state, job.seed)
                pending = room.prepare_move(None, job.ply, fallback, bot_seat=job.seat)
        except Flagged as f:  # the bot's own clock ran out
            await self._apply(Ending(f.outcome, f.clocks))
            return
        await self._apply(pending)

    # --- shutdown ----------------------------------------------------------------------------

    def stop(self) -> None:
        """Cancels the room's tasks (the server is shutting down)."""
        for task in (self.bot_task, self.timer_task):
            if task is not None:
                task.cancel()

    async def settle(self) -> None:
        """Waits for a write in progress and for the bot task to end."""
        async with self.lock:
            pass
        if self.bot_task is not None:
            with contextlib.suppress(BaseException):
                await self.bot_task
