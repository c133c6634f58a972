"""Whose turn it is at the bot workers (contract section 15): the house bots' time is shared
by client address, not by who asks most.

Every job for the workers (a bot's decision, a review) waits for a worker slot in the line of
its *share*: the address of the player who made its room (a tournament's rooms: its
creator's). :class:`FairTurns` hands free slots to the lines in turn, one slot per line per
turn, first come first served within a line, so one address's jobs wait behind its own,
never behind another's. With two slots or more, no line holds all of them: a ``max``
decision runs for seconds, and turn-taking alone would let an address that came first fill
every worker with such decisions while the next address waited behind all of them.

:class:`RoomShares` remembers which share each room's jobs are in. It is told when a room is
opened from an address (the room caps tell it, :mod:`tablas.server.caps`); a room it never
heard of (one loaded back from the database after a restart) is in the share ``""``.

Each node schedules its own workers: in a cluster, an address's rooms on two nodes wait in
two lines, one at each node's workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import OrderedDict, deque
from collections.abc import AsyncIterator

# Rooms whose share is remembered: a room that leaves this many newer ones behind has long
# finished (a live room's jobs are asked for as it plays); one forgotten counts as share "".
KEEP_ROOMS = 100_000


class FairTurns:
    """``slots`` workers, handed to the lines of the shares in turn (see the module)."""

    def __init__(self, slots: int) -> None:
        self.slots = max(1, slots)
        # The most slots one share holds at once: all but one, so another share's job
        # always finds a worker that no long decision of the first share can hold up.
        self.per_share = self.slots - 1 if self.slots >= 2 else 1
        self.busy = 0
        self.held: dict[str, int] = {}
        # The shares with jobs waiting, each its line, in the order the lines formed.
        self._lines: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()
        # When each share running or waiting last got a slot (a count): the line served
        # least lately goes first, so a share that just got one waits for the others' turn.
        self._served: dict[str, int] = {}
        self._ticks = itertools.count()

    def waiting(self) -> int:
        """Jobs waiting for a slot, over every share."""
        return sum(len(line) for line in self._lines.values())

    @contextlib.asynccontextmanager
    async def turn(self, share: str) -> AsyncIterator[None]:
        """Holds one slot for ``share`` while the body runs: at once if one is free to it,
        else when its line's turn comes."""
        if share not in self._lines and self._free_to(share):
            self._take(share)
        else:
            granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._lines.setdefault(share, deque()).append(granted)
            try:
                await granted
            except asyncio.CancelledError:
                if granted.done() and not granted.cancelled():
                    self._give_back(share)  # granted just as it was cancelled
                else:
                    self._leave_line(share, granted)
                raise
        try:
            yield
        finally:
            self._give_back(share)

    def _free_to(self, share: str) -> bool:
        return self.busy < self.slots and self.held.get(share, 0) < self.per_share

    def _take(self, share: str) -> None:
        self.busy += 1
        self.held[share] = self.held.get(share, 0) + 1
        self._served[share] = next(self._ticks)

    def _give_back(self, share: str) -> None:
        self.busy -= 1
        left = self.held[share] - 1
        if left:
            self.held[share] = left
        else:
            del self.held[share]
            if share not in self._lines:
                del self._served[share]  # idle: it comes back as a newcomer
        self._hand_out()

    def _leave_line(self, share: str, granted: asyncio.Future[None]) -> None:
        line = self._lines.get(share)
        if line is None:
            return
        with contextlib.suppress(ValueError):
            line.remove(granted)
        if not line:
            del self._lines[share]
            if share not in self.held:
                self._served.pop(share, None)

    def _hand_out(self) -> None:
        """Free slots to the lines in turn: of the lines that may take one, the one whose
        share got a slot least lately (a share never served, or back from idle, first; ties
        in the order the lines formed); until no slot is free or no line may take one."""
        while self.busy < self.slots:
            share = min((s for s in self._lines if self.held.get(s, 0) < self.per_share),
                        key=lambda s: self._served.get(s, -1), default=None)
            if share is None:
                return
            line = self._lines[share]
            granted = line.popleft()
            if not line:
                del self._lines[share]
            self._take(share)
            granted.set_result(None)


class RoomShares:
    """Which share each room's jobs wait in: the address it was first opened from."""

    def __init__(self, keep: int = KEEP_ROOMS) -> None:
        self.keep = keep
        self._share: dict[str, str] = {}

    def opened_from(self, room_id: str, address: str) -> None:
        """``room_id`` was opened from ``address``; the first address told stays."""
        if address and room_id not in self._share:
            self._share[room_id] = address
            if len(self._share) > self.keep:
                del self._share[next(iter(self._share))]

    def of(self, room_id: str) -> str:
        """The share of ``room_id``'s jobs (``""``: not known here)."""
        return self._share.get(room_id, "")
