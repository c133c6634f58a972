"""Meeting an opponent across nodes: :class:`SharedReach` (the
:class:`~tablas.server.meet.reach.Reach` port over the bus and Redis) and :class:`MeetListener`
(what this node hears of it).

- **Players online**: each node keeps the players with a connection open on it in a Redis
  set of its own (``tablas:online:NODE``); the players online are the union over the living
  nodes. A node that died is swept: its set and its seeks go (:meth:`MeetListener.watch`).
- **A player's every connection**: a text for a player is published to every node, which
  sends it to its own connections of that player (and notes, for a challenge, which node
  owns it, so that an answer from here goes there).
- **A seat on another node**: the pairing node owns the new room; the seated player's node
  sends its connection ``paired`` and has it follow the room through the relay (a ``join``
  of a seat it holds), so that the owner sends the snapshot.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from tablas.server.cluster.bus import Bus, ItemKind, alive_key
from tablas.server.cluster.jobs import Jobs
from tablas.server.cluster.relay import Relay
from tablas.server.connections import Conn, Player, Presence
from tablas.server.meet.challenges import Challenges
from tablas.server.protocol import Join
from tablas.server.store.seeks import SeekStore

log = logging.getLogger("tablas.server")

_ONLINE = "tablas:online:"


def _online_key(node: str) -> str:
    return _ONLINE + node


class SharedReach:
    """The :class:`~tablas.server.meet.reach.Reach` of a cluster's node."""

    def __init__(self, bus: Bus, presence: Presence) -> None:
        self.bus = bus
        self.presence = presence
        self._owners: dict[str, tuple[str, float]] = {}  # challenge id -> (owner, when)

    @property
    def node(self) -> str:
        return self.bus.node

    def local(self, player_id: str) -> list[Conn]:
        """This node's own connections of ``player_id`` (not other nodes' proxies)."""
        return [c for c in self.presence.online.get(player_id, ())
                if self.presence.local_conn(id(c)) is c]

    def to_player(self, player_id: str, text: str, challenge: tuple[str, str] | None = None
                  ) -> None:
        for conn in self.local(player_id):
            conn.send(text)
        self.bus.publish({"op": "to_player", "node": self.node, "player": player_id,
                          "text": text, "challenge": challenge})

    def delivered(self, player_id: str, text: str, challenge: list[str] | None) -> None:
        """Another node's text for ``player_id``: to this node's connections of theirs."""
        conns = self.local(player_id)
        for conn in conns:
            conn.send(text)
        if challenge is not None and conns:
            now = time.monotonic()
            self._owners[challenge[0]] = (challenge[1], now)
            # Answers come within the challenge's minute; older notes are of no use.
            for cid, (_, when) in list(self._owners.items()):
                if now - when > 120:
                    del self._owners[cid]

    def seat_remote(self, node: str, cid: int, text: str, room_id: str) -> None:
        self.bus.post(node, [ItemKind.SEAT, cid, text, room_id])

    def to_conn(self, node: str, cid: int, text: str) -> None:
        self.bus.post(node, [ItemKind.NOTE, cid, text])

    def answer_to(self, challenge_id: str) -> str | None:
        found = self._owners.get(challenge_id)
        return None if found is None else found[0]

    def send_answer(self, owner: str, challenge_id: str, player: Player, cid: int,
                    accept: bool, re: str | int | None) -> None:
        self.bus.post(owner, [ItemKind.ANSWER, challenge_id, player.id, player.name,
                              player.registered, cid, accept, re])

    async def arrived(self, conn: Conn, *_: object) -> None:
        # Added at every hello (a set: once is enough, and two hellos of one player at once
        # could each see the other's connection and skip it otherwise).
        if conn.player is not None:
            await self._online_set("sadd", conn.player.id)

    async def left(self, conn: Conn) -> None:
        if conn.player is not None and not self.local(conn.player.id):
            await self._online_set("srem", conn.player.id)

    async def _online_set(self, op: str, player_id: str) -> None:
        """This node's set of players online, changed; Redis away is logged, not raised (a
        hello or goodbye does not fail for it; the next one of the player mends the set)."""
        try:
            if op == "sadd":
                await self.bus.redis.sadd(_online_key(self.node), player_id)
            else:
                await self.bus.redis.srem(_online_key(self.node), player_id)
        except Exception as e:  # whatever Redis' client raises (bus._redis_failed says why)
            log.warning("cannot update the players online in Redis: %s", e)

    async def online(self, player_id: str) -> bool:
        if self.local(player_id):
            return True
        return player_id in await self._online()

    async def online_count(self) -> int:
        return len(await self._online())

    async def online_ids(self) -> set[str]:
        return await self._online()

    async def _online(self) -> set[str]:
        """The players online on every living node."""
        nodes = await self.online_nodes()
        if not nodes:
            return set()
        alive = await self.alive(nodes)
        keys = [_online_key(n) for n in nodes if n in alive]
        members = await self.bus.redis.sunion(keys) if keys else set()
        return {m.decode() if isinstance(m, bytes) else str(m) for m in members}

    async def online_nodes(self) -> list[str]:
        """The nodes with a set of players online in Redis (living or not)."""
        found = [k.decode() if isinstance(k, bytes) else str(k)
                 async for k in self.bus.redis.scan_iter(match=_ONLINE + "*")]
        return [k[len(_ONLINE):] for k in found]

    async def alive(self, nodes: list[str]) -> set[str]:
        """Those of ``nodes`` that said they are alive within a lease (and this one)."""
        async with self.bus.redis.pipeline(transaction=False) as pipe:
            for n in nodes:
                pipe.exists(alive_key(n))
            found = await pipe.execute()
        return {n for n, yes in zip(nodes, found) if yes or n == self.node}

    async def forget(self, node: str) -> None:
        """``node`` is gone (or starting afresh): nobody is online there."""
        await self.bus.redis.delete(_online_key(node))


class MeetListener:
    """What this node hears for meeting an opponent (a bus listener beside the relay)."""

    def __init__(self, bus: Bus, reach: SharedReach, relay: Relay, challenges: Challenges,
                 seeks: SeekStore) -> None:
        self.bus = bus
        self.reach = reach
        self.relay = relay
        self.challenges = challenges
        self.seeks = seeks
        self.jobs = Jobs()

    def on_message(self, msg: dict[str, Any]) -> None:
        if msg.get("op") == "to_player":
            if msg["node"] != self.reach.node:
                self.reach.delivered(msg["player"], msg["text"], msg.get("challenge"))
            return
        if "items" not in msg:
            return
        sender = msg["from"]
        for item in msg["items"]:
            kind = item[0]
            if kind == ItemKind.SEAT:
                _, cid, text, room_id = item
                conn = self.reach.presence.local_conn(cid)
                if conn is not None:
                    conn.send(text)
                    self.jobs.spawn(self.relay.command(conn, Join(type="join", room_id=room_id)))
            elif kind == ItemKind.NOTE:
                conn = self.reach.presence.local_conn(item[1])
                if conn is not None:
                    conn.send(item[2])
            elif kind == ItemKind.ANSWER:
                _, challenge_id, player_id, name, registered, cid, accept, re = item
                self.jobs.spawn(self.challenges.answered(
                    challenge_id, Player(player_id, name, registered), sender, cid, accept,
                    re))

    def resubscribed(self) -> None:
        return None

    def remote_nodes(self) -> set[str]:
        return set()  # the nodes it cares for are swept by watch()

    def node_died(self, node: str) -> None:
        return None

    async def start(self) -> None:
        """This node starts afresh: nobody is online here yet."""
        await self.reach.forget(self.reach.node)

    async def watch(self, every: float) -> None:
        """Every ``every`` seconds, the nodes with players online or seeks open that have
        not said they are alive for two looks in a row lose both."""
        missing: set[str] = set()
        while True:
            await asyncio.sleep(every)
            try:
                nodes = set(await self.reach.online_nodes()) | set(await self.seeks.nodes())
                nodes.discard(self.reach.node)
                alive = await self.reach.alive(sorted(nodes)) if nodes else set()
                dead = nodes - alive
                for node in dead & missing:
                    log.warning("node %s is gone: its seeks are withdrawn", node,
                                extra={"event": "node_gone", "node": node})
                    await self.reach.forget(node)
                    await self.seeks.drop_node(node)
                missing = dead - missing
            except Exception:
                log.exception("sweeping the seeks of gone nodes failed; trying again")

    def stop(self) -> None:
        self.jobs.cancel()
