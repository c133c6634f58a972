"""The rooms in memory: find a :class:`~server.live_room.LiveRoom` by id (loading it from the
store when it is not in memory), open new ones, and let idle ones go.

Memory follows the rooms that are live, not the server's history. A room nobody follows, whose
players are gone (it is finished, waiting with nobody seated, or everyone seated in it is
offline), leaves memory once it has not been used for ``evict_idle_after`` seconds (of the
injected clock), or sooner, least recently used first, while more than ``max_idle_rooms`` such
rooms wait for it; the store still has it, and the next command that names it loads it again.
A starting server loads only the games in play and the waiting rooms someone sits in.

Whenever a connection subscribes to a room, it stops following all but the last
``max_finished_followed`` finished rooms it subscribed to (each let go of with an unprompted
``left``): a client that never sends ``leave`` would otherwise hold every room it ever played in
memory until it hangs up.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Iterable
from typing import Any

from server.connections import Conn
from server.dice import SeedFactory
from server.errors import RoomError
from server.live_room import LiveRoom, PresenceChanged, RoomCommand, RoomServices
from server.protocol import (
    BotSeat,
    CreateRoom,
    Left,
    Rematch,
    RoomCreated,
    RoomOptions,
)
from server.room import Room, SeatState, game_for

log = logging.getLogger("tablas.server")

EVICT_IDLE_AFTER = 600.0  # seconds an idle room stays in memory after its last use
MAX_IDLE_ROOMS = 1000  # idle rooms kept in memory at most (the lobby shows 200 rooms)
MAX_FINISHED_FOLLOWED = 2  # finished rooms one connection follows at most
# How often (real seconds) idle rooms are looked for: a scan of the rooms in memory (~5 ms
# for 8,000).
SWEEP_EVERY = 5.0
MAX_WAITING_ROOMS = 20  # per player


class Hub:
    """Every live room, by id."""

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
    ) -> None:
        """``max_waiting_rooms``: None lifts the cap."""
        self.store = services.store
        self.services = services
        services.check_waiting_cap = self.check_waiting_rooms
        services.subscribed = self._let_go_of_finished
        self.seed_factory = seed_factory
        self.evict_idle_after = evict_idle_after
        self.sweep_every = sweep_every
        self.max_idle_rooms = max_idle_rooms
        self.max_finished_followed = max_finished_followed
        self.max_waiting_rooms = max_waiting_rooms
        self.rooms: dict[str, LiveRoom] = {}
        # Ids of the rooms that were waiting when last looked at (a room never waits again
        # once it starts): the cap on waiting rooms looks at these, not at every room.
        self._waiting: set[str] = set()
        self._sweeper: asyncio.Task[None] | None = None

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
        record = await self.store.load_room(room_id)
        if record is None:
            return None
        if room_id in self.rooms:  # loaded by another command meanwhile
            return self.rooms[room_id]
        live = LiveRoom(record.to_room(self.services.clock), self.services)
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
        except Exception:
            log.exception("room %s could not be reloaded; it stays on disk", room_id)
            return False

    async def load_rooms(self) -> int:
        """At start: every game in play and every waiting room someone sits in, replaying its
        moves; bots to move think again. The number loaded."""
        n = 0
        for room_id in await self.store.rooms_to_resume():
            n += await self.reload(room_id)
        return n

    def _add(self, live: LiveRoom) -> None:
        self.rooms[live.room_id] = live
        if live.room.status == "waiting":
            self._waiting.add(live.room_id)

    def in_memory(self, room_ids: Iterable[str]) -> list[LiveRoom]:
        """Those of ``room_ids`` that are in memory."""
        return [live for r in room_ids if (live := self.rooms.get(r)) is not None]

    # --- opening rooms -------------------------------------------------------------------

    async def create_room(self, conn: Conn, msg: CreateRoom) -> None:
        seats = [SeatState("bot", s.level) if isinstance(s, BotSeat) else SeatState("human")
                 for s in msg.seats]
        await self.open_room(conn, msg.game, dict(msg.options), seats, msg.join_seat, msg.id,
                             msg.room_options())

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
                                      msg.id, old.room_options)
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
    ) -> str:
        """A new room: made in private, written, then added to memory and announced; its id."""
        assert conn.player is not None
        game_for(game_id)  # unknown_game before anything else
        room_id = self._new_room_id()
        seed = self.seed_factory() if self.seed_factory is not None else None
        room = Room(room_id, game_id, options, seats, clock=self.services.clock, seed=seed,
                    room_options=room_options)
        if join_seat is not None:
            if room.seats[join_seat].kind != "human":
                raise RoomError("seat_taken", f"seat {join_seat} is a bot's")
            room.join(conn.player.id, conn.player.name, join_seat)
        if room.ready:
            room.start()
        if room.status == "waiting":
            self.check_waiting_rooms(conn.player.id)
        await self.store.create_room(
            room_id, room.game_id, room.options, room.seats, room.status, room.seed,
            room.opening_rolls, room.created_at, room.room_options,
        )
        seated = bool(room.seats_of(conn.player.id))
        live = LiveRoom(room, self.services, host=None if seated else conn.player.id)
        self._add(live)
        live.subscribe(conn, spectator=not seated)
        conn.send(RoomCreated(re=re, room_id=room_id))
        conn.send(live.snapshot_for(conn, re))
        live.reschedule()
        return room_id

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

    # --- the cap on waiting rooms --------------------------------------------------------

    def check_waiting_rooms(self, player_id: str) -> None:
        """Refuses one more waiting room for ``player_id`` past ``max_waiting_rooms`` (a
        waiting room someone sits in never leaves memory while they are online, so all of
        theirs are here; a vacant one counts for its host until it leaves)."""
        cap = self.max_waiting_rooms
        if cap is None:
            return
        n = 0
        for room_id in list(self._waiting):
            live = self.rooms.get(room_id)
            if live is None or live.room.status != "waiting":
                self._waiting.discard(room_id)
            elif live.waits_for(player_id):
                n += 1
        if n >= cap:
            raise RoomError("bad_request", (
                f"{n} rooms of yours are waiting for an opponent (at most {cap}): leave one"
                " or let it start before you open or join another"))

    # --- followers and presence ----------------------------------------------------------

    def _let_go_of_finished(self, conn: Conn) -> None:
        """Past ``max_finished_followed`` finished rooms, ``conn`` stops following the ones
        it subscribed to first, and is told so by a ``left`` (a finished room has only its
        chat left to send)."""
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
        """A player came online or went offline: of ``rooms``, those where they sit in a game
        not over see a fresh ``connected`` flag, and the grace period before a room whose
        players are all away leaves memory starts now."""
        for live in rooms:
            if live.room.status != "finished" and live.room.seats_of(player_id):
                await live.run(PresenceChanged())

    # --- letting idle rooms go -----------------------------------------------------------

    def start(self) -> None:
        """Starts looking for idle rooms every ``sweep_every`` seconds."""
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep_loop())

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

    # --- shutdown ------------------------------------------------------------------------

    def stop(self) -> None:
        """No more sweeps, bots or timers (the services say ``closing``)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
        for live in self.rooms.values():
            live.stop()

    async def settle(self) -> None:
        """Waits for the writes in progress."""
        for live in list(self.rooms.values()):
            await live.settle()
