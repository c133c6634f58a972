"""Seeks (contract section 11): ``seek`` pairs at once with the oldest compatible open seek,
or stays open until paired, canceled, or its connection closes; ``accept_seek`` takes one by
hand; ``GET /api/seeks`` shows them. The pool is the database's table
(:class:`~tablas.server.store.seeks.SeekStore`), which every node shares: whichever node pairs
two seeks takes one off the table in the same step, so none is paired twice.

Caps: 3 open seeks per player (``rate_limited``), and per client address as many as rooms
(``--max-rooms-per-address``), so that many guests from one address cannot fill the lobby.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Any

from tablas.server.connections import Conn, Player
from tablas.server.errors import MeetError
from tablas.server.meet.blocks import Blocks
from tablas.server.meet.reach import Reach
from tablas.server.meet.tables import Party, Tables
from tablas.server.protocol import (
    AcceptSeek,
    CancelSeek,
    ClockSpec,
    RoomOptions,
    SeekCanceled,
    Seeking,
    SeekRequest,
)
from tablas.server.room import game_for, initial_state
from tablas.server.store import Storage
from tablas.server.store.seeks import SeekRow, canonical

MAX_SEEKS_PER_PLAYER = 3
SHOWN = 200  # seeks GET /api/seeks lists at most, oldest first


class Seeks:
    def __init__(self, store: Storage, tables: Tables, reach: Reach, blocks: Blocks,
                 clock: Callable[[], float], *, max_per_address: int | None) -> None:
        """``max_per_address``: open seeks from one client address (None: no cap)."""
        self.blocks = blocks
        self.store = store
        self.pool = store.seeks
        self.tables = tables
        self.reach = reach
        self.clock = clock
        self.max_per_address = max_per_address

    async def start(self, node: str | None) -> None:
        """Withdraws the seeks a previous run left: their connections are gone. ``node``:
        this node's only (a cluster's other nodes keep theirs); None, every seek on disk (a
        single server)."""
        await self.pool.drop_node(node)

    async def seek(self, conn: Conn, msg: SeekRequest) -> None:
        player = self._player(conn, msg.rated, msg.id)
        initial_state(game_for(msg.game), dict(msg.options))  # unknown_game, bad options
        await self.tables.bots.check_room(player, msg.id)
        if msg.clock is None and await self.tables.bots.is_bot(player):
            raise MeetError("bad_request", "a bot account plays clocked games only: give a "
                            "clock", msg.id)
        mine, from_address = await self.pool.counts(player.id, conn.address)
        if mine >= MAX_SEEKS_PER_PLAYER:
            raise MeetError("rate_limited", f"you have {mine} seeks open: at most "
                            f"{MAX_SEEKS_PER_PLAYER}; cancel one first", msg.id,
                            reason="too_many_seeks", params={"limit": MAX_SEEKS_PER_PLAYER})
        if self.max_per_address is not None and from_address >= self.max_per_address:
            raise MeetError("rate_limited", f"{from_address} seeks are open from your "
                            "address: no more until some are paired or canceled", msg.id,
                            reason="address_seeks", params={"count": from_address})
        self.tables.check_cap(conn.address)  # it may pair at once, opening a room
        lo, hi = msg.rating_range if msg.rating_range is not None else (None, None)
        row = SeekRow(secrets.token_hex(8), self.reach.node, id(conn), player.id, player.name,
                      player.registered, player.bot, conn.address,
                      await self._rating(msg.game, player), msg.game,
                      canonical(msg.options), _clock_text(msg.clock), msg.rated, lo, hi,
                      self.clock())
        partner = await self.pool.pair_or_add(row)
        conn.send(Seeking(re=msg.id, seek_id=row.seek_id))
        if partner is not None:
            await self._sit(partner, Party(player, row.node, row.cid, seek_id=row.seek_id,
                                           address=conn.address))

    async def accept(self, conn: Conn, msg: AcceptSeek) -> None:
        """Takes the open seek ``msg.seek_id`` by hand (refused, and left open, when the two
        are not compatible)."""
        found = await self.pool.find(msg.seek_id)
        if found is None:
            raise MeetError("bad_request", f"no open seek {msg.seek_id!r}: it was paired or "
                            "withdrawn", msg.id, reason="seek_gone")
        player = conn.player
        assert player is not None
        if found.rated and not player.registered:
            raise MeetError("bad_request", "that seek is rated: only a registered player may"
                            " take it (register, or log in, first)", msg.id,
                            reason="registered_only")
        if found.player_id == player.id:
            raise MeetError("bad_request", "that seek is your own", msg.id, reason="own_seek")
        await self.tables.bots.check_room(player, msg.id)
        clockless = found.clock == _clock_text(None)
        if clockless and (found.bot or await self.tables.bots.is_bot(player)):
            raise MeetError("bad_request", "a bot account plays clocked games only: that seek"
                            " has no clock", msg.id)
        if await self.blocks.either(player.id, found.player_id):
            raise MeetError("bad_request", "one of you has blocked the other: that seek is "
                            "not for you", msg.id)
        rating = await self._rating(found.game, player)
        if not found.admits(rating):
            raise MeetError("bad_request", f"your rating {rating:.0f} is outside that seek's"
                            f" range {found.lo:.0f}–{found.hi:.0f}", msg.id,
                            reason="rating_out_of_range",
                            params={"rating": round(rating), "lo": round(found.lo or 0),
                                    "hi": round(found.hi or 0)})
        self.tables.check_cap(conn.address)
        taken = await self.pool.take(msg.seek_id)
        if taken is None:
            raise MeetError("bad_request", f"seek {msg.seek_id!r} was just paired or "
                            "withdrawn", msg.id, reason="seek_gone")
        await self._sit(taken, Party(player, self.reach.node, id(conn), address=conn.address))

    async def cancel(self, conn: Conn, msg: CancelSeek) -> None:
        assert conn.player is not None
        if not await self.pool.cancel(msg.seek_id, conn.player.id):
            raise MeetError("bad_request", f"you have no open seek {msg.seek_id!r}", msg.id)
        conn.send(SeekCanceled(re=msg.id, seek_id=msg.seek_id))

    async def gone(self, conn: Conn) -> None:
        """``conn`` closed: its seeks are withdrawn."""
        await self.pool.drop_connection(self.reach.node, id(conn))

    async def http_body(self) -> bytes:
        """``GET /api/seeks``: the open seeks, oldest first."""
        return json.dumps({"seeks": [_shown(r) for r in await self.pool.open_seeks(SHOWN)]},
                          separators=(",", ":")).encode()

    async def _sit(self, waiting: SeekRow, newcomer: Party) -> None:
        other = Player(waiting.player_id, waiting.name, waiting.registered, waiting.bot)
        clock = json.loads(waiting.clock)
        await self.tables.sit(
            waiting.game, json.loads(waiting.options),
            RoomOptions(clock=None if clock is None else ClockSpec(**clock),
                        rated=waiting.rated),
            Party(other, waiting.node, waiting.cid, seek_id=waiting.seek_id,
                  address=waiting.address if waiting.node == self.reach.node else ""),
            newcomer)

    def _player(self, conn: Conn, rated: bool, re: str | int | None) -> Player:
        assert conn.player is not None
        if rated and not conn.player.registered:
            raise MeetError("not_authenticated", "only a registered player seeks a rated "
                            "game: register (or log in) first", re, reason="registered_only")
        return conn.player

    async def _rating(self, game: str, player: Player) -> float:
        """The player's rating for ``game`` (a new player's 1500)."""
        return (await self.store.ratings_of(game, [player.id]))[player.id].rating


def _clock_text(clock: ClockSpec | None) -> str:
    return canonical(None if clock is None else clock.model_dump())


def _shown(row: SeekRow) -> dict[str, Any]:
    return {"seek_id": row.seek_id, "game": row.game, "options": json.loads(row.options),
            "clock": json.loads(row.clock), "rated": row.rated,
            "rating_range": None if row.lo is None else [row.lo, row.hi],
            "player": {"player_id": row.player_id, "name": row.name,
                       "rating": round(row.rating), "bot": row.bot}}
