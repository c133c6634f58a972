"""A cluster's relay: commands for rooms another node owns, and their answers, over the
:class:`~tablas.server.cluster.bus.Bus`; the presence of connections across nodes; followers of a
room that moved.

- **Forwarding**: a command for a room another node owns goes to that node's channel with
  the asker's identity (:meth:`Relay.command`); the owner runs it through the same
  ``Hub.command`` with a :class:`RemoteConn` (``Conn.send``'s interface) standing for the
  asker's connection, and everything that connection is sent (the answer, errors, every
  later ``update`` of the rooms it follows) goes back to the asker's node, in order; the
  asker then hears where the room lives (:mod:`tablas.server.cluster.redirect`).
- **Presence**: the owner counts a remote connection as its player's (``Presence``), from
  its first command or from the ``hello`` of a player seated there; when it closes, its node
  says so and the owner sees the player go (abandonment, ``connected``).
- **Failover**: every node looks for live rooms whose lease has expired and claims and loads
  them (:mod:`tablas.server.cluster.takeover`; their bots and timers resume). A node that
  takes a room says so on the shared channel, and every node re-subscribes its connections
  that followed the room through the old owner: each gets a fresh ``room`` snapshot from
  the new one. A Redis that went away
  and came back is treated the same way (messages may have been lost meanwhile).
- **Lost**: a room whose lease this node lost (:meth:`Leases.lost`) leaves memory, and this
  node's connections that followed it follow it through its owner from now on.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from dataclasses import dataclass
from typing import Any, cast

from tablas.server.cluster.bus import Bus, ItemKind
from tablas.server.cluster.jobs import Jobs, OwnerHints
from tablas.server.cluster.leases import Leases
from tablas.server.cluster.redirect import Redirects
from tablas.server.connections import Conn, Player, Presence
from tablas.server.errors import LeaseLost, NotOwner, Refused, RoomError
from tablas.server.hub import Hub
from tablas.server.metrics import Metrics
from tablas.server.players import Players
from tablas.server.protocol import (
    AnyClientMessage,
    Error,
    Hello,
    Join,
    Leave,
    Rematch,
    ServerMessage,
    Spectate,
    parse_client,
)
from tablas.server.store.postgres import PostgresStore

log = logging.getLogger("tablas.server")

FORWARD_WAIT = 1.0  # seconds between looks at the lease while the owner has not answered
FORWARD_GIVE_UP = 5.0  # seconds a living owner has to answer before the command is resent
ROUTE_TRIES = 3  # owners asked in turn (the room may move meanwhile) before giving up


@dataclass(eq=False)
class RemoteConn(Conn):
    """A connection of another node, as the owner of a room sees it: what it is sent goes
    to that node (``cid`` there), in the order it is sent."""

    node: str = ""
    cid: int = 0
    leases: Leases | None = None
    bus: Bus | None = None

    def send(self, msg: ServerMessage | str) -> None:
        # Nothing from a room whose lease may be another node's by now (this node was
        # paused or cut off past it): what it would say may be stale.
        if self.closing or self.bus is None or self.leases is None or not self.leases.fresh():
            return
        self.bus.post(self.node, [ItemKind.TEXT, self.cid, msg if isinstance(msg, str)
                                  else msg.to_json()])


class Relay:
    """This node's part in serving every room from every node (a bus
    :class:`~tablas.server.cluster.bus.Listener`)."""

    def __init__(self, bus: Bus, leases: Leases, store: PostgresStore, hub: Hub,
                 presence: Presence, players: Players, metrics: Metrics) -> None:
        """``metrics``: where the errors it sends for forwarded commands are counted (the
        node that ran a command counts its error; the asker's node only passes it on)."""
        self.node = bus.node
        self.bus = bus
        self.leases = leases
        self.store = store
        self.hub = hub
        self.presence = presence
        self.players = players
        self.metrics = metrics
        leases.lost(self._drop)
        leases.taken(self._taken)
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        # This node's connections that other nodes know of (by id), the rooms each follows
        # through another node (room -> owner), and the nodes that hold a proxy of it.
        self._conns: dict[int, Conn] = {}
        self._follows: dict[Conn, dict[str, str]] = {}
        self._nodes_of: dict[Conn, set[str]] = {}
        # Other nodes' connections, as the rooms owned here see them.
        self._proxies: dict[tuple[str, int], RemoteConn] = {}
        self.owners = OwnerHints(self.node)  # where rooms of other nodes were last found
        self.redirects = Redirects(bus)  # and where their clients are told to find them
        self.jobs = Jobs()
        self.closing = False

    def stop(self) -> None:
        """The node is closing: a room lost from now on is not followed again."""
        self.closing = True

    # --- rooms that move -------------------------------------------------------------------

    def _taken(self, room_id: str) -> None:
        """This node took ``room_id``, perhaps from another: every node hears it."""
        self.owners.forget(room_id)
        self.bus.publish({"op": "moved", "room": room_id, "node": self.node})

    def _drop(self, room_id: str) -> None:
        """This node no longer owns ``room_id``: it leaves memory, and this node's
        connections that followed it follow it through its owner from now on."""
        live = self.hub.drop(room_id)
        if live is None:
            return
        log.warning("room %s: lease lost, let go of (another node owns it now)", room_id,
                    extra={"room_id": room_id, "event": "lease_lost"})
        local = [c for c in live.conns if not isinstance(c, RemoteConn)]
        for c in local:
            c.rooms.pop(room_id, None)
            self._follows.setdefault(c, {})[room_id] = ""
        if local and not self.closing:
            self.jobs.spawn(self._refollow(room_id, local))

    async def _refollow(self, room_id: str, conns: list[Conn]) -> None:
        """``conns`` follow ``room_id`` again, wherever it lives now (a fresh snapshot)."""
        for c in conns:
            if c.closing:
                continue
            try:
                await self._route(c, Spectate(type="spectate", room_id=room_id))
            except Exception as e:
                log.warning("room %s: could not follow it again: %s", room_id, e)

    # --- commands --------------------------------------------------------------------------

    async def command(self, conn: Conn, msg: AnyClientMessage) -> None:
        """A client's command for a room (``join``, ``move``, ``rematch``…): run here if
        this node owns the room (or can claim it), else by its owner."""
        await self._route(conn, msg)

    async def _route(self, conn: Conn, msg: AnyClientMessage) -> None:
        log.debug("route %s %s follows %s", msg.type, id(conn), self._follows.get(conn))
        room_id = getattr(msg, "room_id", "")
        for _ in range(ROUTE_TRIES):
            owner = self.owners.get(room_id)
            if owner is not None:
                self.leases.check()  # as _local does first
            else:
                try:
                    await self._local(conn, msg)
                    return
                except NotOwner as e:
                    owner = e.node
                    self.owners.remember(room_id, owner)
                except LeaseLost as e:
                    self.leases.let_go(e.room_id)
                    continue
            if await self._send_to_owner(conn, msg, room_id, owner):
                await self.redirects.tell(conn, msg, owner)
                return
            self.owners.forget(room_id)  # it moved: found afresh on the next try
        raise RoomError("internal", "the room's node did not answer: try again")

    async def _send_to_owner(self, conn: Conn, msg: AnyClientMessage, room_id: str,
                             owner: str) -> bool:
        """``msg`` forwarded to ``owner``; False if it was not run there (the room moved)."""
        followed = self._follows.get(conn, {}).get(room_id)
        if followed is not None and followed != owner and not isinstance(
                msg, Join | Spectate):
            # It followed the room through a node that lost it: it follows it on the
            # owner first, so that it gets its command's answer and what comes after.
            if not await self._forward(conn, Spectate(type="spectate", room_id=room_id),
                                       owner):
                return False
        log.debug("forward %s %s to %s", msg.type, id(conn), owner)
        return await self._forward(conn, msg, owner)

    async def _local(self, conn: Conn, msg: AnyClientMessage) -> None:
        self.leases.check()
        room_id = getattr(msg, "room_id", "")
        follows = self._follows.get(conn)
        # ``conn`` followed the room through another node, which no longer has it: if it
        # lives here now, it follows it here (a fresh snapshot) before the command runs, so
        # that it gets its answer and what comes after. Its record goes once it follows
        # the room here: a command of its that runs meanwhile subscribes it first too.
        moved = follows is not None and room_id in follows
        subscribes = isinstance(msg, Join | Spectate)
        if moved and not subscribes:
            await self.hub.command(conn, Spectate(type="spectate", room_id=room_id))
            cast(dict[str, str], follows).pop(room_id, None)
        if isinstance(msg, Rematch):
            await self.hub.rematch(conn, msg)
        else:
            await self.hub.command(conn, cast(Any, msg))
        if moved and subscribes:
            cast(dict[str, str], follows).pop(room_id, None)

    async def _forward(self, conn: Conn, msg: AnyClientMessage, owner: str) -> bool:
        """``msg`` run by ``owner`` for ``conn``; False if the room moved before it answered
        (its lease expired or was taken: ``owner`` died or was cut off), or if it no longer
        owned the room."""
        assert conn.player is not None
        cid = id(conn)
        self._conns[cid] = conn
        self._nodes_of.setdefault(conn, set()).add(owner)
        req = next(self._ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[req] = fut
        self.bus.post(owner, [ItemKind.COMMAND, req, cid, conn.player.id, conn.player.name,
                              conn.player.registered, msg.model_dump(mode="json")])
        room_id = getattr(msg, "room_id", "")
        try:
            # A slow owner is waited for as long as it holds the lease (sending the command
            # again could run it twice: a chat line); a dead one, until its lease expires.
            give_up = time.monotonic() + FORWARD_GIVE_UP
            while not fut.done():
                await asyncio.wait({fut}, timeout=FORWARD_WAIT)
                if fut.done():
                    break
                if await self.store.lease_holder(room_id) != owner:
                    log.warning("node %s did not answer %s: the room moved", owner, msg.type)
                    return False
                if time.monotonic() > give_up:  # lost on the way (Redis restarted)
                    log.warning("node %s did not answer %s in time", owner, msg.type)
                    return False
            done = fut.result()
        finally:
            self._waiting.pop(req, None)
        if done.get("retry"):
            return False
        if isinstance(msg, Join | Spectate) and done.get("ok") and room_id:
            self._follows.setdefault(conn, {})[room_id] = owner
        elif isinstance(msg, Leave):
            self._follows.get(conn, {}).pop(msg.room_id, None)
        return True

    async def _run_remote(self, sender: str, item: list[Any]) -> None:
        """A command another node forwarded: run here for its connection's proxy."""
        _, req, cid, player_id, name, registered, body = item
        proxy = self._proxy(sender, cid)
        proxy.received = time.perf_counter()  # a move is timed from here (on its owner)
        ok, retry = True, False
        msg: AnyClientMessage | None = None
        try:
            msg = parse_client(json.dumps(body))
            await self._arrive(proxy, player_id, name, registered,
                               [getattr(msg, "room_id", "")])
            await self._local(proxy, msg)
        except NotOwner:
            retry = True
        except LeaseLost as e:
            self.leases.let_go(e.room_id)
            retry = True
        except Refused as e:
            ok = False
            proxy.send(Error.of(e, e.re if e.re is not None else msg.id if msg else None))
            self.metrics.error(e.code)
        except Exception:
            ok = False
            log.exception("forwarded command failed: node %s, %r", sender, body)
            proxy.send(Error(re=msg.id if msg else None, code="internal",
                             message="internal server error"))
            self.metrics.error("internal")
        self.bus.post(sender, [ItemKind.DONE, req, {"ok": ok, "retry": retry}])

    def _proxy(self, node: str, cid: int) -> RemoteConn:
        proxy = self._proxies.get((node, cid))
        if proxy is None:
            proxy = self._proxies[(node, cid)] = RemoteConn(
                ws=cast(Any, None), node=node, cid=cid, leases=self.leases,
                bus=self.bus)
        return proxy

    async def _arrive(self, proxy: RemoteConn, player_id: str, name: str, registered: bool,
                      room_ids: list[str]) -> None:
        """``proxy`` is its player's connection here too: the rooms they sit in see them.
        ``registered`` is sent with every command: a guest may register meanwhile (never
        the other way), and a rated room asks."""
        if proxy.player is None:
            player = Player(player_id, name, registered=registered)
            first = self.presence.arrive(proxy, player, room_ids)
            if registered:  # a bot account's seat says so: the items predate the flag
                player.bot = bool(await self.store.bot_accounts([player_id]))
            if first:
                await self.hub.presence_changed(player_id, self.hub.in_memory(room_ids))
        else:
            proxy.player.registered = proxy.player.registered or registered
            self.presence.may_sit_in(player_id, room_ids)

    async def _remote_gone(self, sender: str, cid: int) -> None:
        proxy = self._proxies.pop((sender, cid), None)
        if proxy is not None:
            proxy.closing = True
            await self.players.goodbye(proxy)

    # --- presence of this node's connections -----------------------------------------------

    async def hello(self, conn: Conn, msg: Hello) -> None:
        """``hello`` as on a single server; then the owners of the player's rooms that live
        on other nodes see the player arrive."""
        await self.players.hello(conn, msg)
        player = conn.player
        if player is None:
            return
        elsewhere: dict[str, list[str]] = {}
        for room_id in self.presence.rooms_of_player(player.id):
            if room_id in self.hub.rooms:
                continue
            holder = await self.store.lease_holder(room_id)
            if holder is not None and holder != self.node:
                elsewhere.setdefault(holder, []).append(room_id)
        for node, rooms in elsewhere.items():
            self._conns[id(conn)] = conn
            self._nodes_of.setdefault(conn, set()).add(node)
            self.bus.post(node, [ItemKind.PRESENCE, id(conn), player.id, player.name,
                                 player.registered, rooms])

    async def goodbye(self, conn: Conn) -> None:
        """``conn`` closed: here as on a single server, and on the nodes that knew it."""
        await self.players.goodbye(conn)
        for node in self._nodes_of.pop(conn, set()):
            self.bus.post(node, [ItemKind.GONE, id(conn)])
        self._conns.pop(id(conn), None)
        self._follows.pop(conn, None)
        self.redirects.forget(conn)

    # --- what the bus hears -----------------------------------------------------------------

    def on_message(self, msg: dict[str, Any]) -> None:
        if msg.get("op") == "moved":
            self._moved(msg["room"], msg["node"])
            return
        if msg.get("op") == "resync":
            if msg["node"] != self.node:
                self._resync(msg["node"])
            return
        if "items" not in msg:  # another listener's (meeting an opponent: cluster/reach.py)
            return
        sender = msg["from"]
        for item in msg["items"]:
            kind = item[0]
            if kind == ItemKind.TEXT:
                for cid in item[1]:
                    conn = self._conns.get(cid)
                    if conn is not None:
                        conn.send(item[2])
            elif kind == ItemKind.DONE:
                fut = self._waiting.get(item[1])
                if fut is not None and not fut.done():
                    fut.set_result(item[2])
            elif kind == ItemKind.COMMAND:
                self.jobs.spawn(self._run_remote(sender, item))
            elif kind == ItemKind.PRESENCE:
                _, cid, player_id, name, registered, rooms = item
                self.jobs.spawn(self._arrive(self._proxy(sender, cid), player_id, name,
                                         registered, rooms))
            elif kind == ItemKind.GONE:
                self.jobs.spawn(self._remote_gone(sender, item[1]))

    def resubscribed(self) -> None:
        """Every room followed through another node is followed again (fresh snapshots),
        and the other nodes are asked to do the same for this node's rooms."""
        log.info("subscribed to Redis again: following remote rooms again")
        self._resync(None)
        self.bus.publish({"op": "resync", "node": self.node})

    def remote_nodes(self) -> set[str]:
        """The nodes of the proxies here."""
        return {node for node, _ in self._proxies}

    def node_died(self, node: str) -> None:
        log.warning("node %s is gone: its connections leave", node,
                    extra={"event": "node_gone", "node": node})
        for n, cid in [key for key in self._proxies if key[0] == node]:
            self.jobs.spawn(self._remote_gone(n, cid))
        self.owners.forget_node(node)

    def _moved(self, room_id: str, node: str) -> None:
        """``node`` took ``room_id`` over: connections that followed it through another
        node follow it there (or here, when ``node`` is this one)."""
        self.owners.forget(room_id)
        # Their record says the old node until they follow it on the new one: a command of
        # theirs meanwhile subscribes them there first (``_route``).
        movers = [c for c, rooms in self._follows.items()
                  if rooms.get(room_id) not in (None, node)]
        if movers:
            self.jobs.spawn(self._refollow(room_id, movers))

    def _resync(self, node: str | None) -> None:
        """Every connection of this node that follows a room through ``node`` (None: any
        other node) follows it again: a fresh snapshot, whatever was lost."""
        self.owners.clear()  # what was said meanwhile may have been lost
        rooms: dict[str, list[Conn]] = {}
        for c, followed in self._follows.items():
            for room_id, owner in followed.items():
                if node is None or owner == node:
                    rooms.setdefault(room_id, []).append(c)
        for room_id, conns in rooms.items():
            self.jobs.spawn(self._refollow(room_id, conns))
