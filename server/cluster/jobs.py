"""Small parts the cluster's listeners share: :class:`Jobs` (the tasks a message starts),
:class:`OwnerHints` (which node last owned a room of another node) and
:func:`remember_recent` (a bounded map, oldest out first)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

OWNERS_KEPT = 10_000  # other nodes' rooms whose owner is remembered (the oldest forgotten)


class Jobs:
    """Tasks started for messages heard (a listener's callbacks are not coroutines), kept
    so that they are not collected half-way and can be cancelled at shutdown."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def cancel(self) -> None:
        for task in list(self._tasks):
            task.cancel()


def remember_recent(mapping: dict[str, str], key: str, value: str, keep: int) -> None:
    """``mapping[key] = value`` as its newest entry; past ``keep`` entries, the oldest goes
    (a dict keeps its insertion order)."""
    mapping.pop(key, None)
    mapping[key] = value
    if len(mapping) > keep:
        del mapping[next(iter(mapping))]


class OwnerHints:
    """The owner last found for rooms of other nodes, so that their commands go there
    straight rather than through a claim of the lease first (a trip to PostgreSQL for every
    forwarded move). Only a hint: the owner checks its lease and answers ``retry`` if the
    room is not its own. Forgotten then, when a node says it took the room, when Redis comes
    back (messages may have been lost) and when its node dies."""

    def __init__(self, node: str) -> None:
        self.node = node
        self._owners: dict[str, str] = {}

    def get(self, room_id: str) -> str | None:
        return self._owners.get(room_id) if room_id else None

    def remember(self, room_id: str, owner: str) -> None:
        if not room_id or owner in ("", self.node):
            return
        remember_recent(self._owners, room_id, owner, OWNERS_KEPT)

    def forget(self, room_id: str) -> None:
        self._owners.pop(room_id, None)

    def forget_node(self, node: str) -> None:
        for room_id in [r for r, owner in self._owners.items() if owner == node]:
            del self._owners[room_id]

    def clear(self) -> None:
        self._owners.clear()
