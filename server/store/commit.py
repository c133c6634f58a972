"""The group commit, :class:`GroupCommit`: writes from many rooms joined into one transaction.

The store (:class:`~tablas.server.store.base.Storage`) builds each write, a few rows
``[kind, a, b, …]``, and hands it here. The writes handed over while a transaction is in
flight wait and go together into the next one, all or nothing (one statement, one trip to the
database and one durable commit for all: those, not the SQL, are what a write costs); if it
fails, its writes are retried one by one, so one bad write fails only its own caller. Each
caller returns once the transaction holding its write is committed. A write carrying a
:class:`~tablas.server.ownership.Fence` is written only while its owner's lease still carries it
(:mod:`tablas.server.ownership`).

This knows nothing of what the rows mean, nor of the database: the store gives it the one way
to run a batch as a transaction (a backend's ``_transaction``) and the lock that transaction
runs under.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_core import PydanticSerializationError, to_json
from tablas.server.errors import LeaseLost
from tablas.server.ownership import Fence

# A write: its rows, each ``[kind, a, b, …]``, already written as JSON text (a batch is
# these joined in a JSON array: the one parameter of the one statement a backend runs).
Write = str
# Told of each transaction: its writes and its time (``perf_counter`` seconds).
CommitObserver = Callable[[int, float], None]


def _row(kind: str, *values: Any) -> list[Any]:
    """One row of a write: ``kind`` names what writes it (a trigger of SQLite's migration
    0004 and after, a PostgreSQL function ``store_write_KIND``; a literal: a test checks
    every one, here and in :mod:`tablas.server.store.base`), ``values`` its a, b, … in that
    order."""
    return [kind, *values]


def _encode(rows: Sequence[list[Any]]) -> Write:
    """A write's rows as JSON text, or :class:`ValueError` for a value some backend cannot
    hold as text (a lone surrogate is not UTF-8; PostgreSQL's text holds no U+0000): refused
    at once, on every backend alike, before it joins a batch."""
    try:
        text = to_json(rows).decode()[1:-1]
    except PydanticSerializationError as e:
        if _nul(rows):
            raise ValueError(_NUL) from None
        raise ValueError(f"a value the database cannot store: {e}") from None
    # JSON writes U+0000 as the escape \u0000: only a text holding that sequence is looked
    # at value by value (a text may hold a backslash and 'u0000' too), not every write.
    if "\\u0000" in text and _nul(rows):
        raise ValueError(_NUL)
    return text


_NUL = "a value the database cannot store: U+0000 in a text"


def _nul(rows: Sequence[list[Any]]) -> bool:
    return any(type(v) is str and "\x00" in v for row in rows for v in row)


@dataclass
class CommitStats:
    """The group commit's running totals since the store opened: transactions, the writes in
    them, and their time as the event loop sees it, from the batch handed to the database
    until its callers can be answered (``time.perf_counter``). Take two and :meth:`minus`
    them for a window (the load generator's report does)."""

    transactions: int = 0
    writes: int = 0
    seconds: float = 0.0

    def add(self, writes: int, seconds: float) -> None:
        """One transaction of ``writes`` writes that took ``seconds``."""
        self.transactions += 1
        self.writes += writes
        self.seconds += seconds

    def minus(self, before: CommitStats) -> CommitStats:
        return CommitStats(self.transactions - before.transactions,
                           self.writes - before.writes, self.seconds - before.seconds)

    def summary(self) -> dict[str, float | int | None]:
        """Per transaction: writes and milliseconds (None before the first)."""
        n = self.transactions

        def per(total: float) -> float | None:
            return round(total / n, 3) if n else None

        return {"transactions": n, "writes_per_transaction": per(self.writes),
                "transaction_ms": per(self.seconds * 1000)}


class GroupCommit:
    """Joins the writes handed over meanwhile into one transaction at a time: ``transaction``
    runs a batch (every row, in order, committed durably, or nothing and an exception), under
    ``lock`` (a backend's reads may take it too); ``is_lease_lost`` tells the database's
    refusal of a 'fence' row from any other failure."""

    def __init__(self, transaction: Callable[[Sequence[Write]], Awaitable[None]],
                 lock: asyncio.Lock, is_lease_lost: Callable[[Exception], bool]) -> None:
        self._transaction = transaction
        self._lock = lock
        self._is_lease_lost = is_lease_lost
        # Waiting for the next transaction: each write and its caller's future.
        self._pending: list[tuple[Write, asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self.stats = CommitStats()
        self.observers: list[CommitObserver] = []

    async def write(self, *rows: list[Any], fence: Fence | None = None) -> None:
        """The write (``rows``) goes into the next transaction, with whatever else was handed
        over meanwhile; returns once that transaction is committed. A value the database
        cannot hold is refused here (``ValueError``).

        With a ``fence`` (a live thing's change, carrying its owner's fence; None: no
        fencing, a single server owns everything), a 'fence' row goes first, checked in the
        same transaction, so that the write fails unless the owner's lease still carries it
        (a new thing's fence, :attr:`Fence.opens`: a 'lease' row, which makes the lease);
        then the fence is told (:attr:`Fence.refused`) and :class:`~tablas.server.errors.LeaseLost`
        raised, with nothing written."""
        if fence is None:
            await self._join(_encode(rows))
            return
        first = (_row("fence", fence.key, fence.node, fence.number) if fence.opens is None
                 else _row("lease", fence.key, fence.node, fence.number, fence.opens))
        try:
            await self._join(_encode([first, *rows]))
        except Exception as e:
            if not self._is_lease_lost(e):
                raise
            fence.refused(fence)
            raise LeaseLost(fence.key) from None

    async def drain(self) -> None:
        """Returns once every write handed over so far is written (or failed)."""
        if self._flusher is not None:
            await self._flusher

    async def _join(self, write: Write) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((write, fut))
        if self._flusher is None:
            # A task of its own, not the first caller: a caller may be cancelled, the batch
            # it would have carried must still be written.
            self._flusher = asyncio.create_task(self._flush())
        await fut

    async def _flush(self) -> None:
        try:
            while self._pending:
                async with self._lock:
                    batch, self._pending = self._pending, []
                    started = time.perf_counter()
                    try:
                        errors = await self._commit([write for write, _ in batch])
                    except BaseException:
                        for _, fut in batch:
                            fut.cancel()
                        raise
                    took = time.perf_counter() - started
                    self.stats.add(len(batch), took)
                    for observe in self.observers:
                        observe(len(batch), took)
                for (_, fut), error in zip(batch, errors, strict=True):
                    if fut.done():
                        continue
                    if error is None:
                        fut.set_result(None)
                    else:
                        fut.set_exception(error)
        finally:
            self._flusher = None
            for _, fut in self._pending:  # only when cancelled: nobody will write these
                fut.cancel()
            self._pending = []

    async def _commit(self, writes: list[Write]) -> list[Exception | None]:
        """``writes`` in one transaction; if it fails, each in its own, so one bad write fails
        only its own caller. Each write's error (None: committed)."""
        try:
            await self._transaction(writes)
            return [None] * len(writes)
        except Exception as e:
            if len(writes) == 1:
                return [e]
        errors: list[Exception | None] = []
        for write in writes:
            try:
                await self._transaction([write])
                errors.append(None)
            except Exception as e:
                errors.append(e)
        return errors
