"""A node of a cluster (contract section 9): several ``tablas serve`` share one PostgreSQL
database and one Redis; every node serves every room, each room is owned by one node.

- **Ownership**: a lease per room in PostgreSQL (``room_leases``: node, fence, expiry by the
  database's clock). A node claims a room before it loads or opens it (:meth:`Cluster.claim`,
  the hub's ``claim``) and renews all of its leases in one statement every ``lease_s / 3``.
  Every write of a room's change carries the node's fence and fails in the database once
  another node has claimed the room (:meth:`~server.store.base.Storage._room_write`): the
  stale owner's ``LiveRoom`` answers an error with memory unchanged, and the node lets go of
  the room (:meth:`Cluster._drop`). A node that cannot renew lets go of its rooms once its
  leases would have expired.
- **Forwarding**: a command for a room another node owns goes to that node's Redis channel
  with the asker's identity (:meth:`Cluster.command`); the owner runs it through the same
  ``Hub.command`` with a :class:`RemoteConn` (``Conn.send``'s interface) standing for the
  asker's connection, and everything that connection is sent (the answer, errors, every
  later ``update`` of the rooms it follows) goes back to the asker's node, in order: each
  node publishes from one task, in the order its rooms made the messages, and Redis keeps a
  publisher's order. Batches per destination node and per turn of the event loop.
- **Presence**: the owner counts a remote connection as its player's (``Presence``), from
  its first command or from the ``hello`` of a player seated there; when it closes, its node
  says so and the owner sees the player go (abandonment, ``connected``).
- **Failover**: every node looks for live rooms whose lease has expired and claims and loads
  them (their bots and timers resume; the running clock restarts from the load, so the time
  the failover took is given back, ``Room.restore``). A node that takes a room says so on
  the shared channel, and every node re-subscribes its connections that followed the room
  through the old owner: each gets a fresh ``room`` snapshot from the new one. A Redis that
  went away and came back is treated the same way (messages may have been lost meanwhile).
- **Lobby**: read from the database every second (every node's rooms), with the spectator
  counts their owners keep in a Redis hash.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import random
import time
from dataclasses import dataclass
from typing import Any, cast

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from server import views
from server.connections import Conn, Player, Presence
from server.errors import LeaseLost, NotOwner, Refused, RoomError, StartupError
from server.hub import Hub
from server.lobby import LOBBY_SIZE, MAX_AGE, Lobby
from server.players import Players
from server.protocol import (
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
from server.room import LIVE
from server.store.postgres import PostgresStore

log = logging.getLogger("tablas.server")

LEASE_S = 10.0  # --lease-s: seconds a room's lease lasts unless renewed
FORWARD_WAIT = 1.0  # seconds between looks at the lease while the owner has not answered
FORWARD_GIVE_UP = 5.0  # seconds a living owner has to answer before the command is resent
ROUTE_TRIES = 3  # owners asked in turn (the room may move meanwhile) before giving up
ORPHAN_BATCH = 500  # rooms taken over per look
ALL = "tablas:all"  # the channel every node listens to: rooms that moved
SPECTATORS = "tablas:spectators"  # room id -> spectators, kept by the room's owner


def _redis_failed(what: str, e: Exception) -> None:
    """Logs a failed Redis call of a loop that must outlive it (the loop then tries again).

    Such a loop catches every ``Exception``, not only redis-py's ``RedisError`` and
    ``OSError``: when Redis goes away, a write on the socket the server closed can leak the
    event loop's own error through redis-py's reconnection (uvloop: ``RuntimeError`` "the
    handler is closed"; CPython 3.12+: ``TypeError`` or ``AttributeError``, redis-py issue
    4287), and a reader that died of it left its node deaf to every other node for good.
    Those kinds are logged with their traceback, since a bug of ours would look the same."""
    log.warning("%s: %s", what, e, exc_info=not isinstance(e, RedisError | OSError))


def _alive(node: str) -> str:
    """The key a living node keeps in Redis (it expires ``lease_s`` after the last renewal)."""
    return f"tablas:alive:{node}"


def _channel(node: str) -> str:
    return f"tablas:node:{node}"


def _pack(items: list[list[Any]]) -> list[list[Any]]:
    """A node's items with each run of one text to several connections written once:
    ``["t", cid, text]`` … become ``["t", [cid, …], text]`` (a room's update to all of its
    spectators on that node is one text; the order of the items is kept)."""
    out: list[list[Any]] = []
    for item in items:
        if item[0] != "t":
            out.append(item)
        elif out and out[-1][0] == "t" and out[-1][2] == item[2]:
            out[-1][1].append(item[1])
        else:
            out.append(["t", [item[1]], item[2]])
    return out


@dataclass(eq=False)
class RemoteConn(Conn):
    """A connection of another node, as the owner of a room sees it: what it is sent goes
    to that node (``cid`` there), in the order it is sent."""

    node: str = ""
    cid: int = 0
    cluster: Cluster | None = None

    def send(self, msg: ServerMessage | str) -> None:
        # Nothing from a room whose lease may be another node's by now (this node was
        # paused or cut off past it): what it would say may be stale.
        if self.closing or self.cluster is None or not self.cluster.leases_fresh():
            return
        self.cluster.post(self.node, ["t", self.cid, msg if isinstance(msg, str)
                                      else msg.to_json()])


class Cluster:
    """This node's part in the cluster; wired by ``server.app`` when ``--redis`` is given."""

    def __init__(self, node: str, redis_url: str, store: PostgresStore, hub: Hub,
                 presence: Presence, players: Players, lobby: Lobby,
                 lease_s: float = LEASE_S) -> None:
        self.node = node
        self.redis_url = redis_url
        self.store = store
        self.hub = hub
        self.presence = presence
        self.players = players
        self.lobby = lobby
        self.lease_s = lease_s
        store.node = node
        store.fences = {}
        store.on_lease_lost = self._drop
        hub.claim = self.claim
        hub.settles_backlog = False
        self.redis: aioredis.Redis = aioredis.from_url(redis_url)
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        # This node's connections that other nodes know of (by id), the rooms each follows
        # through another node (room -> owner), and the nodes that hold a proxy of it.
        self._conns: dict[int, Conn] = {}
        self._follows: dict[Conn, dict[str, str]] = {}
        self._nodes_of: dict[Conn, set[str]] = {}
        # Other nodes' connections, as the rooms owned here see them.
        self._proxies: dict[tuple[str, int], RemoteConn] = {}
        self._outbox: dict[str, list[Any]] = {}
        self._flushing = False
        self._queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._jobs: set[asyncio.Task[Any]] = set()
        self._renewed_at = time.monotonic()
        self._missing: dict[str, float] = {}  # nodes of proxies not seen alive: since when
        self._subscribed = asyncio.Event()
        self._rebuild = asyncio.Event()  # the reader must subscribe again
        self._run_id: str | None = None  # the Redis server's, to see it restart
        self.closing = False

    # --- life ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Connects to Redis (a :class:`StartupError` if it cannot) and starts the node's
        work: the channel's reader, the publisher, renewals, takeovers, the lobby."""
        try:
            await self.redis.ping()
        except Exception as e:  # whatever kind: see _redis_failed
            raise StartupError(f"cannot use Redis at {self.redis_url}: {e}") from None
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(job()) for job in (
            self._reader, self._writer, self._renew_loop, self._takeover_loop,
            self._lobby_loop, self._alive_loop)]
        await asyncio.wait_for(self._subscribed.wait(), 10)

    async def close(self) -> None:
        """Lets go of this node's rooms (any node may take them at once) and of Redis; the
        rooms' writes are done by then (the server settles them first)."""
        self.closing = True
        # What the rooms said last still reaches the other nodes (a second at most).
        self._flush()
        for _ in range(20):
            if self._queue.empty():
                break
            await asyncio.sleep(0.05)
        for task in self._tasks:
            task.cancel()
        for task in list(self._jobs):
            task.cancel()
        fences = self.store.fences or {}
        with contextlib.suppress(Exception):
            await self.store.release_leases(self.node, list(fences))
        with contextlib.suppress(Exception):
            await self.redis.aclose()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._jobs.add(task)
        task.add_done_callback(self._jobs.discard)

    # --- ownership -------------------------------------------------------------------------

    async def claim(self, room_id: str, new: bool) -> str | None:
        """The hub's ``claim``: takes ``room_id``'s lease (None: this node's now; else the
        node that holds it, "" for no such room)."""
        holder, fence = await self.store.claim_room(room_id, self.node, self.lease_s, new)
        if fence is None:
            return holder
        fences = cast(dict[str, int], self.store.fences)
        fences[room_id] = max(fence, fences.get(room_id, 0))
        if not new:
            self._publish(ALL, {"op": "moved", "room": room_id, "node": self.node})
        return None

    def leases_fresh(self) -> bool:
        """Whether this node's leases are surely still its own: renewed less than
        ``lease_s`` ago (by this node's monotonic clock, which a pause does not stop)."""
        return time.monotonic() - self._renewed_at <= self.lease_s

    def _check_leases(self) -> None:
        """Past ``lease_s`` since the last renewal (a pause, the database out of reach),
        every room held may be another node's: all are let go of before anything else."""
        if self.leases_fresh():
            return
        if self.store.fences:
            log.warning("leases not renewed for %.1f s: letting go of %d rooms",
                        time.monotonic() - self._renewed_at, len(self.store.fences))
            for room_id in list(self.store.fences):
                self._drop(room_id)
        # None is held now: every lease from here on is claimed afresh.
        self._renewed_at = time.monotonic()

    def _drop(self, room_id: str) -> None:
        """This node no longer owns ``room_id``: it leaves memory, and this node's
        connections that followed it follow it through its owner from now on."""
        if self.store.fences is not None:
            self.store.fences.pop(room_id, None)
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
            self._spawn(self._refollow(room_id, local))

    async def _refollow(self, room_id: str, conns: list[Conn]) -> None:
        """``conns`` follow ``room_id`` again, wherever it lives now (a fresh snapshot)."""
        for c in conns:
            if c.closing:
                continue
            try:
                await self._route(c, Spectate(type="spectate", room_id=room_id))
            except Exception as e:
                log.warning("room %s: could not follow it again: %s", room_id, e)

    async def _renew_loop(self) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            fences = cast(dict[str, int], self.store.fences)
            # Rooms that left memory (idle) let their lease run out.
            for room_id in [r for r in fences if r not in self.hub.rooms
                            and r not in self.hub._loading]:
                del fences[room_id]
            ids = list(fences)
            started = time.monotonic()
            try:
                held = await asyncio.wait_for(
                    self.store.renew_leases(self.node, ids, self.lease_s), self.lease_s / 3)
            except Exception as e:
                log.warning("cannot renew the room leases: %s", e)
                self._check_leases()  # they may be another node's by now
                continue
            self._renewed_at = started
            for room_id in ids:
                if room_id not in held and room_id in fences:
                    self._drop(room_id)

    async def _takeover_loop(self) -> None:
        """Claims and loads the live rooms no node holds a live lease on (a node died)."""
        while True:
            # Nodes look at different moments; a claim is atomic, so one node wins a room.
            await asyncio.sleep(self.lease_s / 3 * random.uniform(0.5, 1.0))
            if self.hub.services.closing:
                return
            try:
                for room_id in await self.store.orphaned_rooms(ORPHAN_BATCH):
                    if await self.hub.reload(room_id):
                        log.info("room %s taken over", room_id,
                                 extra={"room_id": room_id, "event": "taken_over"})
            except Exception as e:
                log.warning("looking for rooms to take over failed: %s", e)

    async def _alive_loop(self) -> None:
        """Says this node is alive (a key in Redis that expires after ``lease_s``), and
        ends the proxies of nodes that have not said so for ``lease_s`` (a node that died
        never says goodbye for its connections): their players go offline here."""
        while True:
            try:
                await self.redis.set(_alive(self.node), 1, px=int(self.lease_s * 1000))
                run_id = str((await self.redis.info("server"))["run_id"])
                if self._run_id is not None and run_id != self._run_id:
                    self._rebuild.set()  # Redis restarted: messages may have been lost
                self._run_id = run_id
                subscribers = dict(await self.redis.pubsub_numsub(_channel(self.node)))
                if self._subscribed.is_set() and not subscribers.get(
                        _channel(self.node).encode()):
                    self._rebuild.set()
                nodes = sorted({node for node, _ in self._proxies})
                alive = await self.redis.exists(*map(_alive, nodes)) if nodes else 0
                if nodes and alive < len(nodes):
                    now = time.monotonic()
                    for node in nodes:
                        if await self.redis.exists(_alive(node)):
                            self._missing.pop(node, None)
                        elif now - self._missing.setdefault(node, now) > self.lease_s:
                            self._node_died(node)
                else:
                    self._missing.clear()
            except Exception as e:
                _redis_failed("cannot tell Redis this node is alive", e)
            await asyncio.sleep(self.lease_s / 3)

    def _node_died(self, node: str) -> None:
        log.warning("node %s is gone: its connections leave", node,
                    extra={"event": "node_gone", "node": node})
        self._missing.pop(node, None)
        for n, cid in [key for key in self._proxies if key[0] == node]:
            self._spawn(self._remote_gone(n, cid))

    # --- commands --------------------------------------------------------------------------

    async def command(self, conn: Conn, msg: AnyClientMessage) -> None:
        """A client's command for a room (``join``, ``move``, ``rematch``…): run here if
        this node owns the room (or can claim it), else by its owner."""
        await self._route(conn, msg)

    async def _route(self, conn: Conn, msg: AnyClientMessage) -> None:
        log.debug("route %s %s follows %s", msg.type, id(conn), self._follows.get(conn))
        for _ in range(ROUTE_TRIES):
            try:
                await self._local(conn, msg)
                return
            except NotOwner as e:
                owner = e.node
            except LeaseLost as e:
                self._drop(e.room_id)
                continue
            room_id = getattr(msg, "room_id", "")
            followed = self._follows.get(conn, {}).get(room_id)
            if followed is not None and followed != owner and not isinstance(
                    msg, Join | Spectate):
                # It followed the room through a node that lost it: it follows it on the
                # owner first, so that it gets its command's answer and what comes after.
                if not await self._forward(conn, Spectate(type="spectate", room_id=room_id),
                                           owner):
                    continue
            log.debug("forward %s %s to %s", msg.type, id(conn), owner)
            if await self._forward(conn, msg, owner):
                return
        raise RoomError("internal", "the room's node did not answer: try again")

    async def _local(self, conn: Conn, msg: AnyClientMessage) -> None:
        self._check_leases()
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
        self.post(owner, ["c", req, cid, conn.player.id, conn.player.name,
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
            self._drop(e.room_id)
            retry = True
        except Refused as e:
            ok = False
            proxy.send(Error(re=e.re if e.re is not None else msg.id if msg else None,
                             code=e.code, message=e.message))
        except Exception:
            ok = False
            log.exception("forwarded command failed: node %s, %r", sender, body)
            proxy.send(Error(re=msg.id if msg else None, code="internal",
                             message="internal server error"))
        self.post(sender, ["d", req, {"ok": ok, "retry": retry}])

    def _proxy(self, node: str, cid: int) -> RemoteConn:
        proxy = self._proxies.get((node, cid))
        if proxy is None:
            proxy = self._proxies[(node, cid)] = RemoteConn(
                ws=cast(Any, None), node=node, cid=cid, cluster=self)
        return proxy

    async def _arrive(self, proxy: RemoteConn, player_id: str, name: str, registered: bool,
                      room_ids: list[str]) -> None:
        """``proxy`` is its player's connection here too: the rooms they sit in see them.
        ``registered`` is sent with every command: a guest may register meanwhile (never
        the other way), and a rated room asks."""
        if proxy.player is None:
            player = Player(player_id, name, registered=registered)
            if self.presence.arrive(proxy, player, room_ids):
                await self.hub.presence_changed(player_id, self.hub.in_memory(room_ids))
        else:
            proxy.player.registered = proxy.player.registered or registered
            self.presence.rooms_of.setdefault(player_id, set()).update(room_ids)

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
        for room_id in self.presence.rooms_of.get(player.id, set()):
            if room_id in self.hub.rooms:
                continue
            holder = await self.store.lease_holder(room_id)
            if holder is not None and holder != self.node:
                elsewhere.setdefault(holder, []).append(room_id)
        for node, rooms in elsewhere.items():
            self._conns[id(conn)] = conn
            self._nodes_of.setdefault(conn, set()).add(node)
            self.post(node, ["p", id(conn), player.id, player.name, player.registered, rooms])

    async def goodbye(self, conn: Conn) -> None:
        """``conn`` closed: here as on a single server, and on the nodes that knew it."""
        await self.players.goodbye(conn)
        for node in self._nodes_of.pop(conn, set()):
            self.post(node, ["g", id(conn)])
        self._conns.pop(id(conn), None)
        self._follows.pop(conn, None)

    # --- Redis -----------------------------------------------------------------------------

    def post(self, node: str, item: list[Any]) -> None:
        """``item`` for ``node``, after everything posted before it (one message per node
        per turn of the event loop)."""
        self._outbox.setdefault(node, []).append(item)
        if not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flushing = False
        outbox, self._outbox = self._outbox, {}
        for node, items in outbox.items():
            self._queue.put_nowait((_channel(node), json.dumps(
                {"from": self.node, "items": _pack(items)})))

    def _publish(self, channel: str, obj: dict[str, Any]) -> None:
        self._flush()  # after what was posted before it
        self._queue.put_nowait((channel, json.dumps(obj)))

    async def _writer(self) -> None:
        """Publishes in order, from one task: what is queued meanwhile goes in one round
        trip (a pipeline). While Redis is away it tries again every half second."""
        while True:
            batch = [await self._queue.get()]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            while True:
                try:
                    async with self.redis.pipeline(transaction=False) as pipe:
                        for channel, data in batch:
                            pipe.publish(channel, data)
                        await pipe.execute()
                    break
                except Exception as e:
                    _redis_failed("cannot publish to Redis", e)
                    await asyncio.sleep(0.5)

    async def _reader(self) -> None:
        """Listens to this node's channel and the shared one. Subscribed again (a new
        connection) when the connection breaks, or when :meth:`_alive_loop` finds this node
        no longer subscribed or Redis restarted (redis-py may reconnect by itself after the
        messages of the gap are gone): then every room followed through another node is
        followed again (fresh snapshots), and the other nodes are asked to do the same for
        this node's rooms."""
        again = False
        while True:
            pubsub = self.redis.pubsub()
            try:
                await pubsub.subscribe(_channel(self.node), ALL)
                self._rebuild.clear()
                self._subscribed.set()
                if again:
                    log.info("subscribed to Redis again: following remote rooms again")
                    self._resync(None)
                    self._publish(ALL, {"op": "resync", "node": self.node})
                again = True
                while not self._rebuild.is_set():
                    m = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.5)
                    if m is not None and m.get("type") == "message":
                        self._on_message(m["data"])
            except Exception as e:
                _redis_failed("Redis connection lost, subscribing again", e)
                await asyncio.sleep(0.5)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]

    def _on_message(self, data: bytes) -> None:
        msg = json.loads(data)
        if msg.get("op") == "moved":
            self._moved(msg["room"], msg["node"])
            return
        if msg.get("op") == "resync":
            if msg["node"] != self.node:
                self._resync(msg["node"])
            return
        sender = msg["from"]
        for item in msg["items"]:
            kind = item[0]
            if kind == "t":
                for cid in item[1]:
                    conn = self._conns.get(cid)
                    if conn is not None:
                        conn.send(item[2])
            elif kind == "d":
                fut = self._waiting.get(item[1])
                if fut is not None and not fut.done():
                    fut.set_result(item[2])
            elif kind == "c":
                self._spawn(self._run_remote(sender, item))
            elif kind == "p":
                _, cid, player_id, name, registered, rooms = item
                self._spawn(self._arrive(self._proxy(sender, cid), player_id, name,
                                         registered, rooms))
            elif kind == "g":
                self._spawn(self._remote_gone(sender, item[1]))

    def _moved(self, room_id: str, node: str) -> None:
        """``node`` took ``room_id`` over: connections that followed it through another
        node follow it there (or here, when ``node`` is this one)."""
        # Their record says the old node until they follow it on the new one: a command of
        # theirs meanwhile subscribes them there first (``_route``).
        movers = [c for c, rooms in self._follows.items()
                  if rooms.get(room_id) not in (None, node)]
        if movers:
            self._spawn(self._refollow(room_id, movers))

    def _resync(self, node: str | None) -> None:
        """Every connection of this node that follows a room through ``node`` (None: any
        other node) follows it again: a fresh snapshot, whatever was lost."""
        rooms: dict[str, list[Conn]] = {}
        for c, followed in self._follows.items():
            for room_id, owner in followed.items():
                if node is None or owner == node:
                    rooms.setdefault(room_id, []).append(c)
        for room_id, conns in rooms.items():
            self._spawn(self._refollow(room_id, conns))

    # --- the lobby -------------------------------------------------------------------------

    async def _lobby_loop(self) -> None:
        """Every node's lobby: the live rooms read from the database, every ``MAX_AGE``."""
        while True:
            try:
                await self._read_lobby()
            except Exception as e:
                log.warning("reading the lobby failed: %s", e)
            await asyncio.sleep(MAX_AGE)

    async def _read_lobby(self) -> None:
        counts = {r: len(live.spectators) for r, live in self.hub.rooms.items()
                  if live.room.status in LIVE}
        async with self.redis.pipeline(transaction=False) as pipe:
            if counts:
                pipe.hset(SPECTATORS, mapping=counts)  # type: ignore[arg-type]
            pipe.hgetall(SPECTATORS)
            seen: dict[bytes, bytes] = (await pipe.execute())[-1]
        records = await self.store.lobby_rooms(LOBBY_SIZE)
        ids = {r.room_id for r in records}
        gone = [k for k in seen if k.decode() not in ids]
        if gone:
            await self.redis.hdel(SPECTATORS, *gone)
        self.lobby.shared = [views.summary(r, int(seen.get(r.room_id.encode(), 0)))
                             for r in records]
