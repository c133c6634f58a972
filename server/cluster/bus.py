"""The nodes' messages over Redis: a channel per node and one every node hears.

What a node posts another goes in order: each node publishes from one task, in the order it
posted, and Redis keeps a publisher's order; what is posted in one turn of the event loop
goes as one message per destination. Every node keeps a key alive in Redis (holding its
``--public-url``, if it has one); a node whose key expired is dead to the others
(:meth:`Listener.node_died`). A Redis that went away and came back (messages may have been
lost meanwhile) is subscribed to again, and the listener told
(:meth:`Listener.resubscribed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import logging
import time
import urllib.parse
from typing import Any, Protocol

import redis.asyncio as aioredis
from redis.exceptions import RedisError

log = logging.getLogger("tablas.server")

ALL = "tablas:all"  # the channel every node listens to: rooms that moved
CONNECT_RETRY_S = 0.5  # how often a starting node asks for Redis until it answers
CONNECT_WARN_S = 10.0  # how often it says so in its log meanwhile


class ItemKind(enum.StrEnum):
    """What an item one node posts another is: its first element, one letter on the wire.
    The letters are the nodes' protocol: nodes of two versions meet during a rolling
    restart, so a letter keeps its meaning (and its items their shape) for good; a new kind
    is a new letter. ``cid`` is a connection of the node the item speaks of (``id(conn)``
    there), ``req`` a number the asker gives a forwarded command."""

    # ["t", [cid, …], text]: a message from a room's owner for the receiver's connections
    # (one text for several: :func:`_pack`; posted as ["t", cid, text]).
    TEXT = "t"
    # ["c", req, cid, player_id, name, registered, command]: run ``command`` (a client
    # message as JSON) for the sender's connection ``cid``, whose player this is.
    COMMAND = "c"
    # ["d", req, {"ok": bool, "retry": bool}]: forwarded command ``req`` is done (retry:
    # the receiver no longer owned its room, ask the owner again).
    DONE = "d"
    # ["p", cid, player_id, name, registered, rooms]: the sender's connection ``cid`` is this
    # player's, who sits in ``rooms`` the receiver owns (their presence counts there).
    PRESENCE = "p"
    # ["g", cid]: the sender's connection ``cid`` closed (its player is gone from it).
    GONE = "g"
    # ["s", cid, text, room_id]: the receiver's connection ``cid`` is seated in ``room_id``
    # (the sender owns it): send it ``text`` (``paired``), then have it follow the room.
    SEAT = "s"
    # ["n", cid, text]: a message for the receiver's connection ``cid``, if still open.
    NOTE = "n"
    # ["a", challenge_id, player_id, name, registered, cid, accept, re]: the sender's
    # connection ``cid`` answered the receiver's challenge (accept: true or false) in its
    # message ``re`` (which a refusal answers).
    ANSWER = "a"


def _redis_failed(what: str, e: Exception) -> None:
    """Logs a failed Redis call of a loop that must outlive it (the loop then tries again).

    Such a loop catches every ``Exception``, not only redis-py's ``RedisError`` and
    ``OSError``: when Redis goes away, a write on the socket the server closed can leak the
    event loop's own error through redis-py's reconnection (uvloop: ``RuntimeError`` "the
    handler is closed"; CPython 3.12+: ``TypeError`` or ``AttributeError``, redis-py issue
    4287), and a reader that died of it left its node deaf to every other node for good.
    Those kinds are logged with their traceback, since a bug of ours would look the same."""
    log.warning("%s: %s", what, e, exc_info=not isinstance(e, RedisError | OSError))


def _without_password(url: str) -> str:
    """``url`` as the log may show it: a password in it is replaced by ``***``."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=f"{parts.username or ''}:***@{host}").geturl()


def alive_key(node: str) -> str:
    """The key a living node keeps in Redis (it expires ``lease_s`` after the last renewal)."""
    return f"tablas:alive:{node}"


def _channel(node: str) -> str:
    return f"tablas:node:{node}"


def _pack(items: list[list[Any]]) -> list[list[Any]]:
    """A node's items with each run of one text to several connections written once:
    ``["t", cid, text]`` … (:attr:`ItemKind.TEXT`) become ``["t", [cid, …], text]`` (a
    room's update to all of its spectators on that node is one text; the order of the items
    is kept)."""
    out: list[list[Any]] = []
    for item in items:
        if item[0] != ItemKind.TEXT:
            out.append(item)
        elif out and out[-1][0] == ItemKind.TEXT and out[-1][2] == item[2]:
            out[-1][1].append(item[1])
        else:
            out.append([ItemKind.TEXT, [item[1]], item[2]])
    return out


class Listener(Protocol):
    """Who hears what the bus hears (the relay)."""

    def on_message(self, msg: dict[str, Any]) -> None:
        """A message on this node's channel or the shared one."""

    def resubscribed(self) -> None:
        """Subscribed again: messages may have been lost meanwhile."""

    def remote_nodes(self) -> set[str]:
        """The nodes whose life matters here."""

    def node_died(self, node: str) -> None:
        """``node`` has not said it is alive for ``lease_s``."""


class Listeners:
    """Several listeners heard as one: each hears every message and every event."""

    def __init__(self, *listeners: Listener) -> None:
        self.listeners = listeners

    def on_message(self, msg: dict[str, Any]) -> None:
        for listener in self.listeners:
            listener.on_message(msg)

    def resubscribed(self) -> None:
        for listener in self.listeners:
            listener.resubscribed()

    def remote_nodes(self) -> set[str]:
        return set().union(*(listener.remote_nodes() for listener in self.listeners))

    def node_died(self, node: str) -> None:
        for listener in self.listeners:
            listener.node_died(node)


class Bus:
    """This node's end of Redis."""

    def __init__(self, node: str, redis_url: str, lease_s: float,
                 public_url: str | None = None) -> None:
        """``public_url``: where clients reach this node (``--public-url``), which the other
        nodes read from its alive key (:meth:`node_url`)."""
        self.node = node
        self.public_url = public_url
        self._urls: dict[str, tuple[str | None, float]] = {}  # node -> (URL, read at)
        self.redis_url = redis_url
        self.lease_s = lease_s
        self.redis: aioredis.Redis = aioredis.from_url(redis_url)
        self._outbox: dict[str, list[Any]] = {}
        self._flushing = False
        self._queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self._missing: dict[str, float] = {}  # nodes not seen alive: since when
        self.subscribed = asyncio.Event()
        self._rebuild = asyncio.Event()  # the reader must subscribe again
        self._run_id: str | None = None  # the Redis server's, to see it restart
        # Whether Redis answered this node's last look (connect, then alive() every
        # lease_s / 3): what /readyz says of Redis.
        self.reached = False

    async def connect(self) -> None:
        """Returns once Redis answers: a node may start before its Redis (a compose file's
        services start together), and waits, not ready (``/readyz``), saying so in its log
        every :data:`CONNECT_WARN_S`."""
        warned = -CONNECT_WARN_S
        while True:
            try:
                await self.redis.ping()
                self.reached = True
                return
            except Exception as e:  # whatever kind: see _redis_failed
                now = time.monotonic()
                if now - warned >= CONNECT_WARN_S:
                    warned = now
                    log.warning("cannot reach Redis at %s (%s): waiting for it",
                                _without_password(self.redis_url), e)
            await asyncio.sleep(CONNECT_RETRY_S)

    async def drain(self) -> None:
        """What was posted last reaches the other nodes (a second at most)."""
        self._flush()
        for _ in range(20):
            if self._queue.empty():
                break
            await asyncio.sleep(0.05)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.redis.aclose()

    # --- sending ---------------------------------------------------------------------------

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

    def publish(self, obj: dict[str, Any]) -> None:
        """``obj`` for every node, after what was posted before it."""
        self._flush()
        self._queue.put_nowait((ALL, json.dumps(obj)))

    async def writer(self) -> None:
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

    async def node_url(self, node: str) -> str | None:
        """Where clients reach ``node`` (its ``--public-url``), None if it has none or is
        not alive; read from Redis at most once per ``lease_s``. None too when Redis does not
        answer (asked again ``lease_s`` later): a hint is worth no wait."""
        now = time.monotonic()
        known = self._urls.get(node)
        if known is not None and now - known[1] < self.lease_s:
            return known[0]
        self._urls[node] = (None, now)
        try:
            raw = await self.redis.get(alive_key(node))
        except Exception as e:
            _redis_failed("cannot read a node's URL from Redis", e)
            return None
        text = raw.decode() if isinstance(raw, bytes) else raw
        # Nodes before --public-url kept "1" there.
        url = text if text and text.startswith(("ws://", "wss://")) else None
        self._urls[node] = (url, now)
        return url

    # --- hearing ---------------------------------------------------------------------------

    async def reader(self, listener: Listener) -> None:
        """Listens to this node's channel and the shared one. Subscribed again (a new
        connection) when the connection breaks, or when :meth:`alive` finds this node
        no longer subscribed or Redis restarted (redis-py may reconnect by itself after the
        messages of the gap are gone): then the listener is told."""
        again = False
        while True:
            pubsub = self.redis.pubsub()
            try:
                await pubsub.subscribe(_channel(self.node), ALL)
                self._rebuild.clear()
                self.subscribed.set()
                if again:
                    listener.resubscribed()
                again = True
                while not self._rebuild.is_set():
                    m = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.5)
                    if m is not None and m.get("type") == "message":
                        listener.on_message(json.loads(m["data"]))
            except Exception as e:
                _redis_failed("Redis connection lost, subscribing again", e)
                await asyncio.sleep(0.5)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]

    async def alive(self, listener: Listener) -> None:
        """Says this node is alive (a key in Redis that expires after ``lease_s``), and
        tells the listener of the nodes it cares for that have not said so for
        ``lease_s`` (a node that died never says goodbye for its connections)."""
        while True:
            try:
                await self.redis.set(alive_key(self.node), self.public_url or "",
                                     px=int(self.lease_s * 1000))
                run_id = str((await self.redis.info("server"))["run_id"])
                if self._run_id is not None and run_id != self._run_id:
                    self._rebuild.set()  # Redis restarted: messages may have been lost
                self._run_id = run_id
                subscribers = dict(await self.redis.pubsub_numsub(_channel(self.node)))
                if self.subscribed.is_set() and not subscribers.get(
                        _channel(self.node).encode()):
                    self._rebuild.set()
                nodes = sorted(listener.remote_nodes())
                alive = await self.redis.exists(*map(alive_key, nodes)) if nodes else 0
                if nodes and alive < len(nodes):
                    now = time.monotonic()
                    for node in nodes:
                        if await self.redis.exists(alive_key(node)):
                            self._missing.pop(node, None)
                        elif now - self._missing.setdefault(node, now) > self.lease_s:
                            self._missing.pop(node, None)
                            listener.node_died(node)
                else:
                    self._missing.clear()
                self.reached = True
            except Exception as e:
                self.reached = False
                _redis_failed("cannot tell Redis this node is alive", e)
            await asyncio.sleep(self.lease_s / 3)
