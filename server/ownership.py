"""The port for ownership: who may change a live thing (a room today; a seek pool, a
challenge, a tournament next), and what its writes carry to prove it.

Everything live has one owner. On a single server that is the server itself
(:class:`Solo`); on a node of a cluster it is the node holding the thing's lease in the
database (:class:`tablas.server.cluster.leases.Leases`). The composition root
(``tablas.server.app``) chooses one, once, and hands it through constructors to whatever owns live
things (the hub, through :class:`~tablas.server.live_room.RoomServices`); nothing else asks whether
it runs in a cluster.

A thing's owner, through the port:

- **claims** it before it loads it (:meth:`Ownership.claim`): ``None`` means it is
  this process's now, else the name of the node that owns it (the thing is not loaded here;
  a command for it goes there), ``""`` when there is no such thing; a thing it makes, whose
  key nobody can hold yet (a new room), it **opens** instead (:meth:`Ownership.opening`):
  its first write makes its lease, in the same transaction, and once that is committed
  (:meth:`Ownership.opened`) it is held as a claimed thing is;
- **fences** every write of a change to it (:meth:`Ownership.fence`): the :class:`Fence`
  goes into the store's write and is checked in the same transaction, so a write of a
  former owner fails (:class:`~tablas.server.errors.LeaseLost`) with nothing written;
- **hears** when it has lost a thing (:meth:`Ownership.lost`): it lets go of it at once;
- settles what it finds on disk unclaimed only when :attr:`Ownership.settles_backlog` says
  so (a single server owns everything on disk; a cluster's node only what it claimed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

# Told the key of a thing this process no longer owns.
Lost = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Fence:
    """What a write of the thing ``key`` carries: the owner's name and the number its claim
    got (one more at every change of owner). The store writes a 'fence' row first, in the
    same transaction, which fails unless the lease still carries (``node``, ``number``); it
    then calls :attr:`refused` with this fence, and raises
    :class:`~tablas.server.errors.LeaseLost`."""

    key: str
    node: str
    number: int
    refused: Callable[[Fence], None] = field(compare=False, repr=False)
    # A new thing's (:meth:`Ownership.opening`): the write makes the lease, lasting this
    # many seconds, instead of checking it ('lease' row, not 'fence'); it fails if the key
    # has a lease already.
    opens: float | None = None


class Ownership(Protocol):
    """Who owns each live thing; see the module's text."""

    @property
    def settles_backlog(self) -> bool:
        """Whether things found on disk that nobody loaded are this process's to settle
        there (adjourn, close, expire) without claiming them one by one."""
        ...

    async def claim(self, key: str, new: bool) -> str | None:
        """Takes ``key`` (``new``: about to be written for the first time): None when it
        is this process's now, else the node that owns it, ``""`` for no such thing."""
        ...

    def fence(self, key: str) -> Fence | None:
        """What a write of ``key``'s change carries now (None: nothing to check);
        :class:`~tablas.server.errors.LeaseLost` when ``key`` is no longer this process's."""
        ...

    def opening(self, key: str) -> Fence | None:
        """What the first write of a new thing carries (None: nothing to check): the write
        makes ``key``'s lease, one trip to the database where a claim and a write would be
        two, and fails if ``key`` is anyone's already. Call :meth:`opened` once it is
        committed; until then ``key`` is not held."""
        ...

    def opened(self, key: str) -> None:
        """The write carrying :meth:`opening`'s fence is committed: ``key`` is held (its
        later writes carry :meth:`fence`; it is renewed as everything held)."""
        ...

    def lost(self, callback: Lost) -> None:
        """``callback(key)`` is called whenever a thing held here is lost (another node
        owns it now): whoever holds it in memory lets go of it."""
        ...


class Solo:
    """A single server: it owns every thing, its writes carry no fence, it settles the
    backlog it finds on disk, and it never loses anything."""

    settles_backlog = True

    async def claim(self, key: str, new: bool) -> str | None:
        return None

    def fence(self, key: str) -> Fence | None:
        return None

    def opening(self, key: str) -> Fence | None:
        return None

    def opened(self, key: str) -> None:
        return None

    def lost(self, callback: Lost) -> None:
        return None
