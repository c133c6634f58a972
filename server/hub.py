"""The rooms in memory: find a :class:`~tablas.server.live_room.LiveRoom` by id (loading it from the
store when it is not in memory), open new ones, and let idle ones go.

Memory follows the rooms that are live, not the server's history. A room nobody follows, whose
people are gone (its game is over, adjourned or closed), leaves memory once it has not been
used for ``evict_idle_after`` seconds (of the injected clock), or sooner, least recently used
first, while more than ``max_idle_rooms`` such rooms wait for it; the store still has it, and
the next command that names it loads it again.

A starting server loads no room before it answers: a player's ``hello`` loads their rooms, a
``join`` or ``spectate`` the room it names, and a task in the background the games that play
on by themselves (no person in them, or absent people's seats go to bots). The other rooms
still live on disk are those whose people have not come back: ``abandon_after`` seconds after
the start they are adjourned (games) or closed (waiting rooms) on disk, as their owners would
have done (:meth:`~tablas.server.sweeps.Sweeps.settle_backlog`). Adjourned games nobody resumes end
after ``keep_adjourned`` seconds (:meth:`~tablas.server.sweeps.Sweeps.expire_adjourned`).

Before it loads or opens a room the hub claims it through the ownership port
(:mod:`tablas.server.ownership`): on a single server every claim is granted; on a node of a cluster
a room another node owns is not loaded here (:class:`~tablas.server.errors.NotOwner`).

Whenever a connection subscribes to a room, it stops following all but the last
``max_finished_followed`` finished rooms it subscribed to (each let go of with an unprompted
``left``): a client that never sends ``leave`` would otherwise hold every room it ever played in
memory until it hangs up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

from tablas.engine.search.decision import Level
from tablas.server.caps import MAX_ROOMS_PER_ADDRESS, MAX_WAITING_ROOMS, RoomCaps
from tablas.server.connections import Conn, Player
from tablas.server.dice import SeedFactory
from tablas.server.errors import NotOwner, RoomError
from tablas.server.live_room import LiveRoom, PresenceChanged, RoomCommand, RoomServices
from tablas.server.protocol import (
    BotSeat,
    CreateRoom,
    Left,
    Rematch,
    RoomCreated,
    RoomOptions,
)
from tablas.server.room import Room, SeatState, as_asked, game_for

log = logging.getLogger("tablas.server")

EVICT_IDLE_AFTER = 600.0  # seconds an idle room stays in memory after its last use
MAX_IDLE_ROOMS = 1000  # idle rooms kept in memory at most (the lobby shows 200 rooms)
MAX_FINISHED_FOLLOWED = 2  # finished rooms one connection follows at most
# How often (real seconds) idle rooms are looked for: a scan of the rooms in memory (~5 ms
# for 8,000).
SWEEP_EVERY = 5.0
CLAIM_AFTER = 30.0  # seconds an opponent must be away before the game may be claimed
ABANDON_AFTER = 120.0  # seconds without a connection after which a person is absent


class Hub:
    """Every live room, by id; the rooms' :class:`~tablas.server.live_room.RoomEvents`."""

    def __init__(
        self,
        services: RoomServices,
        *,
        seed_factory: SeedFactory | None = None,
        evict_idle_after: float = EVICT_IDLE_AFTER,
        sweep_every: float = SWEEP_EVERY,
        max_idle_rooms: int = MAX_IDLE_ROOMS,
        max_finished_followed: int = MAX_FINISHED_FOLLOWED,
        max_waiting_rooms: int | None = MAX_WAITING_ROOMS,
        max_rooms_per_address: int | None = MAX_ROOMS_PER_ADDRESS,
    ) -> None:
        """``max_waiting_rooms``, ``max_rooms_per_address``: None lifts the cap."""
        self.store = services.store
        self.services = services
        self.ownership = services.ownership
        self.seed_factory = seed_factory
        self.evict_idle_after = evict_idle_after
        self.sweep_every = sweep_every
        self.max_idle_rooms = max_idle_rooms
        self.max_finished_followed = max_finished_followed
        self.rooms: dict[str, LiveRoom] = {}
        self.caps = RoomCaps(self.rooms, max_waiting_rooms=max_waiting_rooms,
                             max_rooms_per_address=max_rooms_per_address, shares=services.shares)
        # Rooms whose status is being changed on disk, not in memory: loading one waits; and
        # rooms being read for loading (how many reads), which such a change leaves alone.
        self._settling: set[str] = set()
        self._loading: dict[str, int] = {}
        self._settled = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # --- finding and loading -------------------------------------------------------------

    async def find(self, room_id: str) -> LiveRoom:
        """The live room ``room_id``, loaded from the store if it is not in memory;
        ``unknown_room`` if there is no such room."""
        live = self.rooms.get(room_id)
        if live is None:
            live = await self._load(room_id)
        if live is None:
            raise RoomError("unknown_room", f"no room {room_id!r}")
        # The command holds the room from here on, perhaps waiting for its lock: used now,
        # it does not leave memory for a whole grace period.
        live.touched = self.services.clock()
        return live

    async def command(self, conn: Conn, msg: RoomCommand) -> None:
        """A player's command for a room (``join``, ``move``, ``chat``…), handed to its owner."""
        live = await self.find(msg.room_id)
        await live.run(msg, conn)

    async def _load(self, room_id: str) -> LiveRoom | None:
        while room_id in self._settling:
            await self._settled.wait()
        self._loading[room_id] = self._loading.get(room_id, 0) + 1
        try:
            # The claim first: a write of a former owner's still in flight commits before
            # the claim does (the fence row's lock), so the read below has it.
            owner = await self.ownership.claim(room_id, False)
            if owner == "":
                return None  # no such room
            if owner is not None:
                raise NotOwner(room_id, owner)
            if room_id in self.rooms:
                return self.rooms[room_id]
            record = await self.store.load_room(room_id)
        finally:
            if self._loading[room_id] == 1:
                del self._loading[room_id]
            else:
                self._loading[room_id] -= 1
        if record is None:
            return None
        if room_id in self.rooms:  # loaded by another command meanwhile
            return self.rooms[room_id]
        room = record.to_room(self.services.clock)
        if room.rated and self.services.rated is not None:
            room.ratings = await self.services.rated.current(room)
            if room_id in self.rooms:
                return self.rooms[room_id]
        live = LiveRoom(room, self.services, self)
        self._add(live)
        # As at start: a bot to move thinks, a clock or an absence is timed again.
        live.reschedule()
        return live

    async def reload(self, room_id: str) -> bool:
        """Loads a room someone holds a seat in, if it is not in memory; one that cannot be
        rebuilt is logged and left on disk (whoever names it then gets an error), so it
        stops neither a starting server nor its player's ``hello``."""
        try:
            return room_id in self.rooms or await self._load(room_id) is not None
        except NotOwner:
            return False  # another node's: it stays there
        except Exception:
            log.exception("room %s could not be reloaded; it stays on disk", room_id)
            return False

    def in_use(self, room_id: str) -> bool:
        """Whether ``room_id`` is in memory or being read to be."""
        return room_id in self.rooms or room_id in self._loading

    @contextlib.asynccontextmanager
    async def on_disk(self, room_ids: Iterable[str]) -> AsyncIterator[None]:
        """While the body changes ``room_ids`` on disk (rooms not in memory), loading one of
        them waits, so that nobody loads it as it was."""
        ids = set(room_ids)
        self._settling |= ids
        try:
            yield
        finally:
            self._settling -= ids
            # Wakes every waiting loader (each looks again); the next waiters wait anew.
            self._settled.set()
            self._settled.clear()

    def _add(self, live: LiveRoom) -> None:
        self.rooms[live.room_id] = live
        room = live.room
        if room.status == "waiting":
            for pid in {room.created_by, *(s.player_id for s in room.seats)}:
                if pid is not None:
                    self.caps.waiting_for(pid, live.room_id)

    def in_memory(self, room_ids: Iterable[str]) -> list[LiveRoom]:
        """Those of ``room_ids`` that are in memory."""
        return [live for r in room_ids if (live := self.rooms.get(r)) is not None]

    # --- opening rooms -------------------------------------------------------------------

    async def create_room(self, conn: Conn, msg: CreateRoom) -> None:
        seats = [SeatState("bot", s.level) if isinstance(s, BotSeat) else SeatState("human")
                 for s in msg.seats]
        if msg.seed is not None and msg.join_seat is None:
            raise RoomError("bad_request", "a seed is the join_seat's: give join_seat too")
        await self.open_room(conn, msg.game, dict(msg.options), seats, msg.join_seat, msg.id,
                             msg.room_options(), msg.seed)

    async def rematch(self, conn: Conn, msg: Rematch) -> None:
        """A new room with the same game, options and seat kinds, the seats swapped; everyone
        following the old room is told of it (``rematch_offer``)."""
        live = await self.find(msg.room_id)
        old = live.room
        held = old.seats_of(conn.player_id)
        if not held:
            raise RoomError("not_seated", "only a player of the room can ask for a rematch")
        if old.status != "finished":
            raise RoomError("bad_request", "the game is not over yet")
        seats = [SeatState(s.kind, s.level) for s in reversed(old.seats)]
        new_id = await self.open_room(conn, old.game_id, old.options, seats, 1 - held[0],
                                      msg.id, as_asked(old.room_options))
        assert conn.player is not None
        live.offer_rematch(conn.player.id, conn.player.name, new_id)

    async def open_room(
        self,
        conn: Conn,
        game_id: str,
        options: dict[str, Any],
        seats: list[SeatState],
        join_seat: int | None,
        re: str | int | None,
        room_options: RoomOptions,
        seat_seed: str | None = None,
    ) -> str:
        """A new room: made in private, written, then added to memory and announced; its id."""
        assert conn.player is not None
        game_for(game_id)  # unknown_game before anything else
        if room_options.rated and not conn.player.registered:
            raise RoomError("not_authenticated", "only a registered player opens a rated"
                            " game: register (or log in) first")
        room = self._new_room(game_id, options, seats, room_options, conn.player.id)
        if join_seat is not None:
            if room.seats[join_seat].kind != "human":
                raise RoomError("seat_taken", f"seat {join_seat} is a bot's")
            room.join(conn.player.id, conn.player.name, join_seat, seat_seed,
                      registered=conn.player.registered, bot=conn.player.bot)
        if room.ready:
            room.start()
        if room.status == "waiting":
            self.caps.check_waiting_cap(conn.player.id)
        self.caps.check_address_rooms(conn.address)
        live = await self._write_new(room)
        self.caps.opened_from(conn.address, room.room_id)
        self.services.presence.seated(conn.player.id, room.room_id)  # the creator's absence counts
        seated = bool(room.seats_of(conn.player.id))
        live.subscribe(conn, spectator=not seated)
        conn.send(RoomCreated(re=re, room_id=room.room_id))
        conn.send(live.snapshot_for(conn, re))
        live.reschedule()
        return room.room_id

    async def open_paired(self, game_id: str, options: dict[str, Any],
                          room_options: RoomOptions, players: Sequence[Player | Level],
                          room_id: str | None = None) -> LiveRoom:
        """A new room whose seats are taken already, in the order given (a person, or a
        house bot's level): a seek or a challenge met its opponent, or a tournament paired
        them (``room_id``: the id it chose). The game has started; nobody follows the room
        yet (the caller subscribes the players' connections)."""
        seats = [SeatState("bot", p) if isinstance(p, str) else SeatState("human")
                 for p in players]
        people = [p for p in players if not isinstance(p, str)]
        room = self._new_room(game_id, options, seats, room_options,
                              people[0].id if people else None, room_id)
        for seat, p in enumerate(players):
            if not isinstance(p, str):
                room.join(p.id, p.name, seat, registered=p.registered, bot=p.bot)
        if room.ready:  # a room of bots only would not be; the last join starts it otherwise
            room.start()
        live = await self._write_new(room)
        live.reschedule()
        return live

    def _new_room(self, game_id: str, options: dict[str, Any], seats: list[SeatState],
                  room_options: RoomOptions, created_by: str | None,
                  room_id: str | None = None) -> Room:
        game_for(game_id)  # unknown_game before anything else
        return Room(room_id or self._new_room_id(), game_id, options, seats,
                    clock=self.services.clock,
                    seed=self.seed_factory() if self.seed_factory is not None else None,
                    room_options=room_options, created_by=created_by)

    async def _write_new(self, room: Room) -> LiveRoom:
        """A room made in private: rated as its pair allows (contract sections 10, 16),
        written with its lease, then in memory (its people's absence counts from now on)."""
        rated = self.services.rated
        if rated is not None and (reason := await rated.unrated_reason(room)) is not None:
            room.unrate(reason)  # rated: false from the start
        if room.rated and rated is not None:
            room.ratings = await rated.current(room)
        # Its lease is made by this write (a new id is nobody's): one transaction.
        await self.store.create_room(
            room.room_id, room.game_id, room.options, room.seats, room.status, room.seed,
            room.opening_rolls, room.created_at, room.room_options, room.created_by,
            room.seeds, fence=self.ownership.opening(room.room_id),
        )
        self.ownership.opened(room.room_id)
        live = LiveRoom(room, self.services, self)
        self._add(live)
        for pid in {s.player_id for s in room.seats if s.player_id is not None}:
            self.services.presence.seated(pid, room.room_id)
        log.info("room %s (%s) opened, %s", room.room_id, room.game_id, room.status,
                 extra={"room_id": room.room_id, "event": "opened", "game": room.game_id,
                        "status": room.status})
        return live

    def _new_room_id(self) -> str:
        """The second it is made (8 hex digits), then 32 random bits from :mod:`secrets`.
        Rooms made about the same time sort together, so the rows of the games being played
        (every table is keyed by room id) share a few pages of each index, and a commit
        writes those pages once for all its moves (with ids wholly random, each move dirtied
        a page of its own: docs/benchmarks.md)."""
        while True:
            room_id = f"{int(self.services.clock()) & 0xFFFF_FFFF:08x}{secrets.token_hex(4)}"
            if room_id not in self.rooms:
                return room_id

    # --- the caps, for the rooms (RoomEvents) --------------------------------------------

    def check_waiting_cap(self, player_id: str) -> None:
        """Refuses one more waiting room for ``player_id`` past the cap (:class:`RoomCaps`)."""
        self.caps.check_waiting_cap(player_id)

    def waiting_for(self, player_id: str, room_id: str) -> None:
        """``room_id``, waiting, counts against ``player_id``'s cap from now on."""
        self.caps.waiting_for(player_id, room_id)

    # --- followers and presence ----------------------------------------------------------

    def subscribed(self, conn: Conn) -> None:
        """``conn`` has just subscribed to a room: past ``max_finished_followed`` finished
        rooms, it stops following the ones it subscribed to first, and is told so by a
        ``left`` (a finished room has only its chat left to send)."""
        finished = [live for room_id in conn.rooms if (live := self.rooms.get(room_id))
                    is not None and live.room.status == "finished"]
        for live in finished[:max(0, len(finished) - self.max_finished_followed)]:
            live.unsubscribe(conn)
            conn.send(Left(room_id=live.room_id))

    def unsubscribe_all(self, conn: Conn) -> None:
        """``conn`` closed: it follows no room any more."""
        for live in self.in_memory(list(conn.rooms)):
            live.unsubscribe(conn)

    async def presence_changed(self, player_id: str, rooms: Iterable[LiveRoom]) -> None:
        """A player came online or went offline: of ``rooms``, those their coming and going
        concerns (:meth:`LiveRoom.concerns`) see a fresh ``connected`` flag and time their
        absence."""
        for live in rooms:
            if live.concerns(player_id):
                await live.run(PresenceChanged())

    # --- letting idle rooms go -----------------------------------------------------------

    def start(self) -> None:
        """Starts looking for idle rooms every ``sweep_every`` seconds (the rooms on disk
        nobody named are :mod:`tablas.server.sweeps`' work)."""
        self._task = asyncio.get_running_loop().create_task(self._sweep_loop())

    async def _sweep_loop(self) -> None:
        while not self.services.closing:
            await asyncio.sleep(self.sweep_every)
            try:
                dropped = self.evict_idle_rooms()
            except Exception:
                log.exception("evicting idle rooms failed")
                continue
            if dropped:
                log.debug("evicted %d idle rooms from memory", len(dropped))

    def evict_idle_rooms(self) -> list[str]:
        """Drops from memory every evictable room (:meth:`LiveRoom.evictable`) nobody has
        used for ``evict_idle_after`` seconds, then, while more than ``max_idle_rooms`` such
        rooms are left, the least recently used of them; the ids dropped."""
        now = self.services.clock()
        idle = sorted((live.touched, room_id) for room_id, live in self.rooms.items()
                      if live.evictable())
        over = max(0, len(idle) - self.max_idle_rooms)
        dropped = [room_id for i, (touched, room_id) in enumerate(idle)
                   if i < over or now - touched >= self.evict_idle_after]
        for room_id in dropped:
            del self.rooms[room_id]
        return dropped

    def drop(self, room_id: str) -> LiveRoom | None:
        """Lets go of ``room_id`` at once, its tasks stopped: this node no longer owns it
        (its lease was lost); the room, as its owner keeps it, is elsewhere. The room let go."""
        live = self.rooms.pop(room_id, None)
        if live is not None:
            live.stop()
            # A command under way re-arms the room's timer as it ends: stopped after it too.
            asyncio.get_running_loop().call_soon(live.stop)
        return live

    # --- shutdown ------------------------------------------------------------------------

    def stop(self) -> None:
        """No more sweeps, bots or timers (the services say ``closing``)."""
        if self._task is not None:
            self._task.cancel()
        for live in self.rooms.values():
            live.stop()

    async def drain(self) -> None:
        """Waits for every room's write in progress and bot task (at shutdown)."""
        for live in list(self.rooms.values()):
            await live.drain()
