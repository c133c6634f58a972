"""Tournaments, owned like rooms (contract section 13): one owner per tournament, through the
ownership port (key ``tour:ID``; on one server the server, on a cluster the node holding the
lease), which pairs its rounds, opens their rooms and ends it.

Any node takes the commands (create, join, leave, start): each is one conditional change in
the database (the tournament still waiting, with room, …), so nothing needs forwarding. The
owner looks at its tournaments every :data:`TICK` seconds (and at once when told of a start
or an arena's newcomer) and does what the tournament's format (:mod:`.formats`) says, from the
games stored: pair a round or the next games, end it, or wait. Everything it decides is read
back from the database, so a node that takes a tournament over (its owner killed) carries on
where the database says: pairings are written, room ids included, before their rooms are
made, and rooms missing when it looks are made then, so no game is paired twice or lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

from tablas.engine.search.decision import Level, check_level
from tablas.server.connections import Conn, Player
from tablas.server.errors import LeaseLost, MeetError
from tablas.server.hub import Hub
from tablas.server.meet.reach import Reach
from tablas.server.ownership import Ownership
from tablas.server.protocol import (
    ClockSpec,
    CreateTournament,
    JoinTournament,
    LeaveTournament,
    RoomOptions,
    StartTournament,
    TournamentChanged,
    TournamentCreated,
    TournamentGame,
)
from tablas.server.room import game_for, initial_state
from tablas.server.store import Storage
from tablas.server.store.seeks import canonical
from tablas.server.store.tournaments import EntrantRow, PairingRow, TournamentRow
from tablas.server.tournaments.entry import Entries
from tablas.server.tournaments.formats import format_of
from tablas.server.views import bot_name

log = logging.getLogger("tablas.server")

TICK = 0.5  # seconds between looks at the tournaments this process owns
# Tournaments waiting or playing that one player, and one client address, may have created
# (contract section 15): a tournament of house bots keeps bots thinking for its every round.
MAX_CREATED_PER_PLAYER = 2
MAX_CREATED_PER_ADDRESS = 4
ADOPT_EVERY = 2.0  # seconds between looks for tournaments nobody owns
_PREFIX = "tour:"


def lease_key(tournament_id: str) -> str:
    return _PREFIX + tournament_id


class Tournaments:
    def __init__(self, store: Storage, hub: Hub, reach: Reach, ownership: Ownership,
                 clock: Callable[[], float] = time.time, *, tick: float = TICK,
                 minute_s: float = 60.0) -> None:
        self.pool = store.tournaments
        self.entries = Entries(store)
        self.hub = hub
        self.reach = reach
        self.ownership = ownership
        self.clock = clock
        self.tick = tick
        self.minute_ms = round(minute_s * 1000)  # an arena's minute (tablas serve --arena-minute-s)
        self.held: set[str] = set()
        self._nudged = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        ownership.lost(self._lost)

    # --- commands, on any node -------------------------------------------------------------

    async def create(self, conn: Conn, msg: CreateTournament) -> None:
        me = self._registered(conn, msg.id, "creates a tournament")
        initial_state(game_for(msg.game), dict(msg.options))  # unknown_game, bad options
        mine, from_address = await self.pool.live_created(me.id, conn.address)
        if mine >= MAX_CREATED_PER_PLAYER:
            raise MeetError("rate_limited", f"you have {mine} tournaments waiting or playing:"
                            f" at most {MAX_CREATED_PER_PLAYER}; let one finish first", msg.id)
        if from_address >= MAX_CREATED_PER_ADDRESS:
            raise MeetError("rate_limited", f"{from_address} tournaments made from your address"
                            f" are waiting or playing: at most {MAX_CREATED_PER_ADDRESS}",
                            msg.id)
        invited = self.entries.checked(msg.entry, msg.invited, msg.id)
        tid = secrets.token_hex(6)
        entrants = [EntrantRow(f"bot:{msg.game}:{lv}", bot_name(lv), False, True, lv)
                    for lv in msg.house_bots]
        row = TournamentRow(tid, msg.game, canonical(msg.options),
                            canonical(msg.clock.model_dump()), msg.format,
                            msg.rounds or 0 if format_of(msg.format).asks_rounds else 0,
                            msg.games_per_pairing, msg.rated, msg.max_players, me.id,
                            "waiting", 0, self.clock(), msg.minutes or 0)
        if await self.ownership.claim(lease_key(tid), True) is not None:
            raise MeetError("internal", "the new tournament's id is taken: try again", msg.id)
        await self.entries.created(tid, msg.entry, invited)
        await self.pool.create(row, entrants, conn.address)
        self.held.add(tid)
        conn.send(TournamentCreated(re=msg.id, tournament_id=tid))

    async def join(self, conn: Conn, msg: JoinTournament) -> None:
        player = self._registered(conn, msg.id, "enters a tournament")
        await self.entries.check(msg.tournament_id, player, msg.id)
        done = await self.pool.join(msg.tournament_id, EntrantRow(
            player.id, player.name, player.registered, player.bot, None))
        if done != "joined":
            raise MeetError(*_REFUSED[done], msg.id)
        conn.send(TournamentChanged(type="tournament_joined", re=msg.id,
                                    tournament_id=msg.tournament_id))
        self._nudged.set()  # an arena that plays pairs its newcomer at once

    async def leave(self, conn: Conn, msg: LeaveTournament) -> None:
        assert conn.player is not None
        done = await self.pool.leave(msg.tournament_id, conn.player.id)
        if done != "left":
            raise MeetError(*_REFUSED[done], msg.id)
        conn.send(TournamentChanged(type="tournament_left", re=msg.id,
                                    tournament_id=msg.tournament_id))

    async def start(self, conn: Conn, msg: StartTournament) -> None:
        assert conn.player is not None
        done = await self.pool.start(msg.tournament_id, conn.player.id,
                                     now_ms=round(self.clock() * 1000),
                                     minute_ms=self.minute_ms)
        if done != "started":
            raise MeetError(*_REFUSED[done], msg.id)
        conn.send(TournamentChanged(type="tournament_started", re=msg.id,
                                    tournament_id=msg.tournament_id))
        self._nudged.set()

    async def arrived(self, conn: Conn, *_: object) -> None:
        """A player said hello: their tournament games still being played, again."""
        if conn.player is None:
            return
        for tid, round_, room_id, seat in await self.pool.current_games(conn.player.id):
            conn.send(TournamentGame(tournament_id=tid, round=round_, room_id=room_id,
                                     seat=seat))

    def _registered(self, conn: Conn, re: str | int | None, what: str) -> Player:
        player = conn.player
        assert player is not None
        if not player.registered:
            raise MeetError("not_authenticated", f"only a registered player {what}: "
                            "register (or log in) first", re)
        return player

    # --- owning ------------------------------------------------------------------------------

    def in_use(self, key: str) -> bool:
        """Whether ``key`` is a tournament this process owns (its lease is renewed)."""
        return key.startswith(_PREFIX) and key[len(_PREFIX):] in self.held

    def _lost(self, key: str) -> None:
        if key.startswith(_PREFIX):
            self.held.discard(key[len(_PREFIX):])

    def start_owning(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _run(self) -> None:
        adopted_at = -ADOPT_EVERY
        loop = asyncio.get_running_loop()
        while True:
            # Cleared before the look, so that a nudge during it (pairs written: their rooms
            # are made at the next look) brings the next look at once.
            self._nudged.clear()
            try:
                if loop.time() - adopted_at >= ADOPT_EVERY:
                    adopted_at = loop.time()
                    await self._adopt()
                for tid in sorted(self.held):
                    await self._advance(tid)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("tournaments: a look failed; looking again")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._nudged.wait(), self.tick)

    async def _adopt(self) -> None:
        """Claims the tournaments waiting or playing that nobody owns (at a single
        server's start, all of them; on a cluster, those whose owner died)."""
        for tid in await self.pool.adoptable(100):
            if tid not in self.held and await self.ownership.claim(lease_key(tid), True) is None:
                self.held.add(tid)
                log.info("tournament %s taken", tid, extra={"event": "tournament_taken"})

    async def _advance(self, tid: str) -> None:
        """Looks at ``tid``: makes its games' missing rooms; then does what its format says
        (pairs a round or the next games, ends it, or waits)."""
        found = await self.pool.load(tid)
        if found is None or found[0].status == "finished":
            self.held.discard(tid)
            return
        t, entrants, pairings = found
        if t.status != "playing":
            return
        for p in pairings:
            if p.room_id is not None and p.room_status is None:
                await self._open(t, entrants, p)
        step = format_of(t.format).step(t, entrants, pairings, round(self.clock() * 1000))
        fence = self.ownership.fence(lease_key(tid))
        try:
            if step.finish:
                await self.pool.finish(tid, fence)
                self.held.discard(tid)
                log.info("tournament %s finished", tid, extra={"event": "tournament_finished"})
                return
            if not step.pairs:
                return
            if step.round:
                await self.pool.write_round(tid, step.round, step.rounds, [
                    PairingRow(step.round, i, None if b is None else self._room_id(), a, b)
                    for i, (a, b) in enumerate(step.pairs)], fence)
            else:
                await self.pool.write_games(tid, t.round, [
                    PairingRow(t.round + 1 + i, 0, self._room_id(), a, b)
                    for i, (a, b) in enumerate(step.pairs)], fence)
        except LeaseLost:
            self.held.discard(tid)
            return
        self._nudged.set()  # its rooms are made at the next look, from what was written

    def _room_id(self) -> str:
        return f"{int(self.clock()) & 0xFFFF_FFFF:08x}{secrets.token_hex(4)}"

    async def _open(self, t: TournamentRow, entrants: list[EntrantRow], p: PairingRow) -> None:
        """The room of pairing ``p``, seats filled, clock set; each person told."""
        assert p.room_id is not None and p.p1 is not None
        by_id = {e.player_id: e for e in entrants}
        sides: list[Player | Level] = []
        for pid in (p.p0, p.p1):
            e = by_id[pid]
            sides.append(check_level(e.level) if e.level is not None else
                         Player(e.player_id, e.name, e.registered, e.bot))
        clock: dict[str, Any] = json.loads(t.clock)
        people = [s for s in sides if isinstance(s, Player)]
        options = RoomOptions(clock=ClockSpec(**clock), rated=t.rated and bool(people),
                              tournament_id=t.tournament_id)
        address = await self.pool.created_from(t.tournament_id)
        await self.hub.open_paired(t.game, json.loads(t.options), options, sides,
                                   room_id=p.room_id)
        # Its creator's: the room counts against that address's rooms, and its bots think
        # in that address's line (contract section 15).
        self.hub.caps.opened_from(address, p.room_id)
        for seat, side in enumerate(sides):
            if isinstance(side, Player):
                self.reach.to_player(side.id, TournamentGame(
                    tournament_id=t.tournament_id, round=p.round, room_id=p.room_id,
                    seat=seat).to_json())


_REFUSED: dict[str, tuple[Any, str]] = {
    "unknown": ("bad_request", "no such tournament"),
    "not_waiting": ("bad_request", "the tournament has started (or ended): no more changes"),
    "full": ("rate_limited", "the tournament is full"),
    "already": ("bad_request", "you have entered it already"),
    "not_entered": ("bad_request", "you have not entered it"),
    "not_creator": ("bad_request", "only its creator starts a tournament"),
    "too_few": ("bad_request", "a tournament starts with 2 entrants at least"),
    "too_many_bots": ("bad_request", "house bots may be at most half of a tournament's "
                      "entrants: wait for more players to join"),
}
