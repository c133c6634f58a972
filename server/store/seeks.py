"""The open seeks of every node, in the database (contract section 11): the one place two
seeks are paired, so that none is paired twice, whichever node pairs it.

A backend gives :class:`SeekStore` (``store.seeks``). Pairing is one step in the database:
:meth:`SeekStore.pair_or_add` takes (deletes) the oldest open seek compatible with a new one,
or adds the new one when there is none; two of these never run at once (SQLite's store lock;
PostgreSQL's advisory lock for the length of the transaction, across nodes). A node that
dies in the middle leaves either both seeks or the taken one gone, never one taken twice.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

# A range bound that admits every rating (the column holds NULL for "any").
ANY_LOW, ANY_HIGH = -1e9, 1e9


def canonical(value: Any) -> str:
    """JSON text in one spelling (sorted keys, no spaces), so equal options are equal texts."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class SeekRow:
    """One open seek, as stored: who made it, on which connection, and what it asks for."""

    seek_id: str
    node: str
    cid: int
    player_id: str
    name: str
    registered: bool
    bot: bool
    address: str
    rating: float
    game: str
    options: str  # canonical JSON
    clock: str  # canonical JSON, "null" for none
    rated: bool
    lo: float | None
    hi: float | None
    created_at: float

    def admits(self, rating: float) -> bool:
        """Whether a player of ``rating`` lies in this seek's range."""
        return (self.lo is None or self.lo <= rating) and (self.hi is None or rating <= self.hi)

    def values(self) -> tuple[Any, ...]:
        """The row's columns, in the table's order (the backends' statements name them)."""
        return (self.seek_id, self.node, self.cid, self.player_id, self.name,
                int(self.registered), int(self.bot), self.address, self.rating, self.game,
                self.options, self.clock, int(self.rated), self.lo, self.hi, self.created_at)

    @classmethod
    def of(cls, row: Any) -> SeekRow:
        """A row read back in the table's order."""
        return cls(str(row[0]), str(row[1]), int(row[2]), str(row[3]), str(row[4]),
                   bool(row[5]), bool(row[6]), str(row[7]), float(row[8]), str(row[9]),
                   str(row[10]), str(row[11]), bool(row[12]),
                   None if row[13] is None else float(row[13]),
                   None if row[14] is None else float(row[14]), float(row[15]))


class SeekStore(ABC):
    """The seeks' table, as every node shares it."""

    @abstractmethod
    async def pair_or_add(self, seek: SeekRow) -> SeekRow | None:
        """The oldest open seek compatible with ``seek`` (contract section 11: the same game,
        options, clock and ``rated``, each player's rating in the other's range, another
        player), taken off the table, which now belongs to ``seek``'s player: pair them.
        None when there is none: ``seek`` is open from now on."""

    @abstractmethod
    async def take(self, seek_id: str) -> SeekRow | None:
        """The seek ``seek_id``, taken off the table (``accept_seek``); None if it is gone."""

    @abstractmethod
    async def find(self, seek_id: str) -> SeekRow | None:
        """The open seek ``seek_id``, left where it is."""

    @abstractmethod
    async def cancel(self, seek_id: str, player_id: str) -> bool:
        """Withdraws ``player_id``'s seek ``seek_id``; False if they have no such seek."""

    @abstractmethod
    async def drop_connection(self, node: str, cid: int) -> list[str]:
        """Withdraws the seeks of the connection ``cid`` of ``node`` (it closed); their ids."""

    @abstractmethod
    async def drop_node(self, node: str | None) -> int:
        """Withdraws every seek of ``node`` (it started, or died; None: every node's, as a
        single server does at its start); how many."""

    @abstractmethod
    async def nodes(self) -> list[str]:
        """The nodes that have seeks open."""

    @abstractmethod
    async def open_seeks(self, limit: int) -> list[SeekRow]:
        """The open seeks, oldest first, at most ``limit``."""

    @abstractmethod
    async def counts(self, player_id: str, address: str) -> tuple[int, int]:
        """How many seeks are open: ``player_id``'s, and from ``address``."""

    @abstractmethod
    async def total(self) -> int:
        """How many seeks are open, on every node."""
