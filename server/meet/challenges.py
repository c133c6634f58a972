"""Challenges (contract section 11): one player asks a named registered player (or a house
bot, by its shown name ``bot (LEVEL)``) for a game; every connection of the challenged player,
on any node, is offered it; an accept seats both (:class:`~.tables.Tables`).

A challenge is owned, in memory, by the node its challenger sent it from: it lives there
until answered, canceled, unanswered for :data:`EXPIRE_AFTER` seconds, or until the
challenger has no connection left on that node. An answer given on another node is handed
to the owner (:meth:`~.reach.Reach.send_answer`), which decides it once.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from dataclasses import dataclass, field

from tablas.engine.search.decision import LEVELS, Level
from tablas.server.accounts import name_key
from tablas.server.connections import Conn, Player, Presence
from tablas.server.errors import MeetError
from tablas.server.meet.blocks import Blocks
from tablas.server.meet.reach import Reach
from tablas.server.meet.tables import Party, Tables
from tablas.server.metrics import Metrics
from tablas.server.protocol import (
    AcceptChallenge,
    CancelChallenge,
    ChallengeCanceled,
    ChallengeDeclined,
    ChallengeOffer,
    ChallengeRequest,
    ChallengeSent,
    DeclineChallenge,
    Error,
    MeetPlayer,
)
from tablas.server.room import game_for, initial_state
from tablas.server.store import Storage
from tablas.server.store.base import Account

EXPIRE_AFTER = 60.0  # seconds a challenge waits for its answer
MAX_OUT = 3  # challenges a player has out at once
MAX_WAITING = 5  # challenges waiting for one player's answer at once (contract section 15)
AFTER_DECLINE = 60.0  # seconds before a declined challenger may ask the same player again
# Games a bot account plays at once against players of one address (contract section 15).
MAX_BOT_GAMES_PER_ADDRESS = 2
_HOUSE_BOT = re.compile(r"bot \((\w+)\)")


def house_bot(name: str) -> Level | None:
    """The level of the house bot whose shown name is ``name`` (``bot (hard)``), if any."""
    m = _HOUSE_BOT.fullmatch(" ".join(name.split()).casefold())
    level = m.group(1) if m else None
    return next((lv for lv in LEVELS if lv == level), None)


@dataclass(eq=False)
class Challenge:
    challenge_id: str
    challenger: Player
    cid: int  # the challenger's connection here that gets ``paired``
    address: str
    target_id: str
    request: ChallengeRequest
    timer: asyncio.TimerHandle | None = field(default=None, repr=False)


class Challenges:
    def __init__(self, store: Storage, tables: Tables, reach: Reach, presence: Presence,
                 blocks: Blocks, *, max_per_address: int | None,
                 expire_after: float = EXPIRE_AFTER, metrics: Metrics | None = None) -> None:
        """``metrics``: where an error told to an answer from another node is counted (the
        errors of this node's own connections are counted by the edge)."""
        self.store = store
        self.metrics = metrics
        self.tables = tables
        self.reach = reach
        self.presence = presence
        self.max_per_address = max_per_address
        self.expire_after = expire_after
        self.blocks = blocks
        self.open: dict[str, Challenge] = {}
        # When each (challenger, challenged) pair's last challenge was declined (loop time).
        self.declined: dict[tuple[str, str], float] = {}

    # --- the challenger's side -------------------------------------------------------------

    async def challenge(self, conn: Conn, msg: ChallengeRequest) -> None:
        me = conn.player
        assert me is not None
        if msg.rated and not me.registered:
            raise MeetError("not_authenticated", "only a registered player challenges to a "
                            "rated game: register (or log in) first", msg.id,
                            reason="registered_only")
        initial_state(game_for(msg.game), dict(msg.options))  # unknown_game, bad options
        self._check_caps(me.id, conn.address, msg.id)
        await self.tables.bots.check_room(me, msg.id)
        if msg.clock is None and await self.tables.bots.is_bot(me):
            raise MeetError("bad_request", "a bot account plays clocked games only: give a "
                            "clock", msg.id)
        level = house_bot(msg.to)
        challenge_id = secrets.token_hex(8)
        if level is not None:  # the house accepts at once
            self.tables.check_cap(conn.address)
            conn.send(ChallengeSent(re=msg.id, challenge_id=challenge_id))
            await self.tables.sit(msg.game, dict(msg.options), msg.room_options(),
                                  Party(me, self.reach.node, id(conn), address=conn.address,
                                        challenge_id=challenge_id), level)
            return
        target = await self.store.account_by_key(name_key(msg.to))
        if target is None or not await self.reach.online(target.player_id):
            raise MeetError("unknown_player", f"no registered player named {msg.to!r} is "
                            "online", msg.id, params={"name": msg.to})
        if target.player_id == me.id:
            raise MeetError("bad_request", "you cannot challenge yourself", msg.id,
                            reason="challenge_self")
        await self._check_target(me, conn.address, target, msg)
        ch = Challenge(challenge_id, me, id(conn), conn.address, target.player_id, msg)
        self.open[challenge_id] = ch
        ch.timer = asyncio.get_running_loop().call_later(
            self.expire_after, lambda: self._end(ch, None))
        conn.send(ChallengeSent(re=msg.id, challenge_id=challenge_id))
        rating = (await self.store.ratings_of(msg.game, [me.id]))[me.id].rating
        offer = ChallengeOffer.model_validate({
            "challenge_id": challenge_id, "game": msg.game, "options": dict(msg.options),
            "clock": msg.clock, "rated": msg.rated,
            "from": MeetPlayer(player_id=me.id, name=me.name, rating=round(rating),
                               bot=me.bot, registered=me.registered)})
        self.reach.to_player(target.player_id, offer.to_json(),
                             (challenge_id, self.reach.node))

    def _check_caps(self, player_id: str, address: str, re: str | int | None) -> None:
        mine = sum(1 for c in self.open.values() if c.challenger.id == player_id)
        if mine >= MAX_OUT:
            raise MeetError("rate_limited", f"you have {mine} challenges out: at most "
                            f"{MAX_OUT}; cancel one or wait for an answer", re,
                            reason="too_many_challenges", params={"limit": MAX_OUT})
        here = sum(1 for c in self.open.values() if c.address == address)
        if self.max_per_address is not None and here >= self.max_per_address:
            raise MeetError("rate_limited", f"{here} challenges are out from your address:"
                            " wait for their answers", re)

    async def _check_target(self, me: Player, address: str, target: Account,
                            msg: ChallengeRequest) -> None:
        """The rules of contract section 15 on whom a challenge may reach: not one who
        blocked its sender (told as if they were not there), not one with
        :data:`MAX_WAITING` challenges waiting, not one who declined this sender within
        :data:`AFTER_DECLINE` seconds; a bot account only with a clock, and at most
        :data:`MAX_BOT_GAMES_PER_ADDRESS` of its games against this address at once."""
        if await self.blocks.either(me.id, target.player_id):
            raise MeetError("unknown_player", f"no registered player named {msg.to!r} is "
                            "online", msg.id)
        waiting = sum(1 for c in self.open.values() if c.target_id == target.player_id)
        if waiting >= MAX_WAITING:
            raise MeetError("rate_limited", f"{target.name} has {waiting} challenges waiting "
                            "for an answer: try again later", msg.id)
        since = self.declined.get((me.id, target.player_id))
        now = asyncio.get_running_loop().time()
        if since is not None and now - since < AFTER_DECLINE:
            raise MeetError("rate_limited", f"{target.name} declined your last challenge: "
                            f"ask again in {AFTER_DECLINE - (now - since):.0f} s", msg.id)
        if target.bot:
            if msg.clock is None:
                raise MeetError("bad_request", f"{target.name} is a bot account, which plays "
                                "clocked games only: give a clock", msg.id)
            self._check_bot_games(target.player_id, target.name, address, msg.id)

    def _check_bot_games(self, bot_id: str, name: str, address: str,
                         re: str | int | None) -> None:
        held = self.tables.hub.caps.live_with(address, bot_id)
        if held >= MAX_BOT_GAMES_PER_ADDRESS:
            raise MeetError("rate_limited", f"{name} is a bot account already playing {held} "
                            f"games against your address (at most "
                            f"{MAX_BOT_GAMES_PER_ADDRESS}): finish one first", re)

    async def cancel(self, conn: Conn, msg: CancelChallenge) -> None:
        ch = self.open.get(msg.challenge_id)
        if ch is None or ch.challenger.id != conn.player_id:
            raise MeetError("bad_request", f"you have no challenge {msg.challenge_id!r} out",
                            msg.id)
        self._end(ch, conn, msg.id)

    async def gone(self, conn: Conn) -> None:
        """``conn`` closed: its challenges go to another connection of their challenger
        here, or end (``challenge_canceled`` to the challenged player) if none is left."""
        for ch in [c for c in self.open.values() if c.cid == id(conn)]:
            others = [c for c in self.presence.online.get(ch.challenger.id, ())
                      if c is not conn and self.presence.local_conn(id(c)) is c]
            if others:
                ch.cid = id(others[0])
            else:
                self._end(ch, None)

    def _end(self, ch: Challenge, by: Conn | None, re: str | int | None = None) -> None:
        """Ends ``ch`` unanswered: ``challenge_canceled`` to both (``by``: the challenger's
        connection that canceled it, answered)."""
        if self.open.pop(ch.challenge_id, None) is None:
            return
        if ch.timer is not None:
            ch.timer.cancel()
        text = ChallengeCanceled(challenge_id=ch.challenge_id)
        if by is not None:
            by.send(ChallengeCanceled(re=re, challenge_id=ch.challenge_id))
        elif (conn := self.presence.local_conn(ch.cid)) is not None:
            conn.send(text)
        self.reach.to_player(ch.target_id, text.to_json())

    # --- the challenged player's side --------------------------------------------------------

    async def accept(self, conn: Conn, msg: AcceptChallenge) -> None:
        await self._answer(conn, msg.challenge_id, msg.id, True)

    async def decline(self, conn: Conn, msg: DeclineChallenge) -> None:
        await self._answer(conn, msg.challenge_id, msg.id, False)

    async def _answer(self, conn: Conn, challenge_id: str, re: str | int | None,
                      accept: bool) -> None:
        assert conn.player is not None
        if accept:
            self.tables.check_cap(conn.address)  # an accepted challenge opens a room
        if challenge_id in self.open:
            await self.answered(challenge_id, conn.player, self.reach.node, id(conn),
                                accept, re)
            return
        owner = self.reach.answer_to(challenge_id)
        if owner is None:
            raise MeetError("bad_request", f"no open challenge {challenge_id!r}: it was "
                            "answered, canceled or expired", re, reason="challenge_gone")
        self.reach.send_answer(owner, challenge_id, conn.player, id(conn), accept, re)

    async def answered(self, challenge_id: str, player: Player, node: str, cid: int,
                       accept: bool, re: str | int | None = None) -> None:
        """The answer of ``player`` (from connection ``cid`` of ``node``) to a challenge
        this node owns: decided here, once."""
        ch = self.open.get(challenge_id)
        if ch is not None and ch.target_id == player.id and accept:
            # A bot account with every place taken: refused, the challenge stays open.
            try:
                for side in (player, ch.challenger):
                    await self.tables.bots.check_room(side, re)
                if player.bot:  # the games it holds may have changed while it waited
                    self._check_bot_games(player.id, player.name, ch.address, re)
            except MeetError as e:
                self._tell(node, cid, Error.of(e, re).to_json())
                return
            ch = self.open.get(challenge_id)  # the reads above let others answer meanwhile
        if ch is None or ch.target_id != player.id:
            why = f"no open challenge {challenge_id!r} for you: it was answered, canceled " \
                  "or expired"
            self._tell(node, cid, Error(re=re, code="bad_request", message=why,
                                        reason="challenge_gone").to_json())
            if self.metrics is not None:
                self.metrics.error("bad_request")
            return
        del self.open[challenge_id]
        if ch.timer is not None:
            ch.timer.cancel()
        if not accept:
            self._forget_old_declines()
            self.declined[(ch.challenger.id, ch.target_id)] = \
                asyncio.get_running_loop().time()
            if (conn := self.presence.local_conn(ch.cid)) is not None:
                conn.send(ChallengeDeclined(challenge_id=challenge_id))
            return
        req = ch.request
        here = self.presence.local_conn(cid) if node == self.reach.node else None
        await self.tables.sit(req.game, dict(req.options), req.room_options(),
                              Party(ch.challenger, self.reach.node, ch.cid,
                                    challenge_id=challenge_id, address=ch.address),
                              Party(player, node, cid, challenge_id=challenge_id,
                                    address="" if here is None else here.address))

    def _forget_old_declines(self) -> None:
        now = asyncio.get_running_loop().time()
        for pair, at in list(self.declined.items()):
            if now - at >= AFTER_DECLINE:
                del self.declined[pair]

    def _tell(self, node: str, cid: int, text: str) -> None:
        if node == self.reach.node:
            if (conn := self.presence.local_conn(cid)) is not None:
                conn.send(text)
        else:
            self.reach.to_conn(node, cid, text)

    def stop(self) -> None:
        for ch in self.open.values():
            if ch.timer is not None:
                ch.timer.cancel()
        self.open.clear()
