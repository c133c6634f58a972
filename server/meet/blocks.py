"""Blocking (contract section 15): a registered player ``block``s another by name, kept with
the account (:class:`~tablas.server.store.blocks.BlockStore`). A blocked player's challenges
to the blocker are refused as if the blocker were not there (``unknown_player``), the two
are never paired by seeks, and the blocked player's chat lines are not delivered to the
blocker (:class:`~tablas.server.blocklist.BlockList`, filled here).

The chat's list is refreshed on this node at each ``hello`` and after each change; another
node of a cluster learns a change at the player's next ``hello`` there. Challenges and
pairing read the database, so they hold on every node at once."""

from __future__ import annotations

from collections.abc import Callable

from tablas.server.accounts import name_key
from tablas.server.blocklist import BlockList
from tablas.server.connections import Conn, Player
from tablas.server.errors import MeetError
from tablas.server.protocol import Block, BlockChanged, BlocksList, BlocksRequest, Unblock
from tablas.server.store import Storage
from tablas.server.store.base import Account


class Blocks:
    def __init__(self, store: Storage, blocklist: BlockList, clock: Callable[[], float]) -> None:
        self.store = store
        self.blocks = store.blocks
        self.blocklist = blocklist
        self.clock = clock

    async def block(self, conn: Conn, msg: Block) -> None:
        me = self._registered(conn, msg.id)
        target = await self._named(msg.name, me, msg.id)
        await self.blocks.block(me.id, target.player_id, self.clock())
        await self._refresh(me.id)
        conn.send(BlockChanged(type="blocked", re=msg.id, name=target.name))

    async def unblock(self, conn: Conn, msg: Unblock) -> None:
        me = self._registered(conn, msg.id)
        target = await self._named(msg.name, me, msg.id)
        if not await self.blocks.unblock(me.id, target.player_id):
            raise MeetError("bad_request", f"you have not blocked {target.name!r}", msg.id)
        await self._refresh(me.id)
        conn.send(BlockChanged(type="unblocked", re=msg.id, name=target.name))

    async def listing(self, conn: Conn, msg: BlocksRequest) -> None:
        me = self._registered(conn, msg.id)
        conn.send(BlocksList(re=msg.id, names=await self.blocks.names(me.id)))

    async def arrived(self, conn: Conn, *_: object) -> None:
        """A player said hello: the chat of rooms here follows their blocks."""
        if conn.player is not None and conn.player.registered:
            await self._refresh(conn.player.id)

    async def either(self, a: str, b: str) -> bool:
        """Whether one of ``a`` and ``b`` blocked the other."""
        return await self.blocks.either(a, b)

    async def _refresh(self, player_id: str) -> None:
        self.blocklist.set(player_id, await self.blocks.blocked_by(player_id))

    @staticmethod
    def _registered(conn: Conn, re: str | int | None) -> Player:
        player = conn.player
        assert player is not None
        if not player.registered:
            raise MeetError("not_authenticated", "only a registered player keeps a list of "
                            "blocked players: register (or log in) first", re)
        return player

    async def _named(self, name: str, me: Player, re: str | int | None) -> Account:
        target = await self.store.account_by_key(name_key(name))
        if target is None:
            raise MeetError("unknown_player", f"no registered player is named {name!r}", re)
        if target.player_id == me.id:
            raise MeetError("bad_request", "you cannot block yourself", re)
        return target
