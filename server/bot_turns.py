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

Background work (``turn(share, background=True)``: the analysis of a game's moves while it is
played, :mod:`tablas.server.review_ahead`) is a lower class: it gets a slot only when no
decision of any share waits and two slots or more are free, so it never takes the last free
one (none with one slot; with two, only while no other job runs): a decision that comes finds
a worker free unless other decisions hold the rest, and on a machine of two cores a bot never
shares the CPU with background work that started after it. Its lines are served in turn by
share like the decisions'.

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


class _Lines:
    """The shares' lines of one class of jobs, each first come first served; the line
    whose share got a slot least lately goes first."""

    def __init__(self) -> None:
        # The shares with jobs waiting, each its line, in the order the lines formed.
        self.lines: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()
        # When each share running or waiting last got a slot (a count): the line served
        # least lately goes first, so a share that just got one waits for the others' turn.
        self.served: dict[str, int] = {}
        self.held: dict[str, int] = {}

    def waiting(self) -> int:
        return sum(len(line) for line in self.lines.values())

    def join(self, share: str) -> asyncio.Future[None]:
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.lines.setdefault(share, deque()).append(granted)
        return granted

    def take(self, share: str, tick: int) -> None:
        self.held[share] = self.held.get(share, 0) + 1
        self.served[share] = tick

    def give_back(self, share: str) -> None:
        left = self.held[share] - 1
        if left:
            self.held[share] = left
        else:
            del self.held[share]
            if share not in self.lines:
                del self.served[share]  # idle: it comes back as a newcomer

    def leave(self, share: str, granted: asyncio.Future[None]) -> None:
        line = self.lines.get(share)
        if line is None:
            return
        with contextlib.suppress(ValueError):
            line.remove(granted)
        if not line:
            del self.lines[share]
            if share not in self.held:
                self.served.pop(share, None)

    def next_share(self, cap: int) -> str | None:
        """Of the lines whose share holds fewer than ``cap`` slots, the one served least
        lately (a share never served, or back from idle, first; ties in the order the lines
        formed)."""
        return min((s for s in self.lines if self.held.get(s, 0) < cap),
                   key=lambda s: self.served.get(s, -1), default=None)

    def pop(self, share: str) -> asyncio.Future[None] | None:
        """The first in ``share``'s line, or None if it was cancelled meanwhile (its task has
        not yet run to leave the line)."""
        line = self.lines[share]
        granted = line.popleft()
        if not line:
            del self.lines[share]
        if granted.done():
            if share not in self.lines and share not in self.held:
                self.served.pop(share, None)
            return None
        return granted


class FairTurns:
    """``slots`` workers, handed to the lines of the shares in turn (see the module)."""

    def __init__(self, slots: int) -> None:
        self.slots = max(1, slots)
        # The most slots one share holds at once: all but one, so another share's job
        # always finds a worker that no long decision of the first share can hold up.
        self.per_share = self.slots - 1 if self.slots >= 2 else 1
        # A background job takes a slot only when this many are free: never the last one.
        self.background_needs = 2
        self.busy = 0
        self.background = 0  # of ``busy``, the background jobs
        self._decisions = _Lines()
        self._low = _Lines()
        self.held = self._decisions.held  # each share's slots held by decisions
        self._ticks = itertools.count()

    def waiting(self) -> int:
        """Jobs of the decisions' class waiting for a slot, over every share."""
        return self._decisions.waiting()

    def waiting_background(self) -> int:
        """Background jobs waiting for a slot, over every share."""
        return self._low.waiting()

    @contextlib.asynccontextmanager
    async def turn(self, share: str, *, background: bool = False) -> AsyncIterator[None]:
        """Holds one slot for ``share`` while the body runs: at once if one is free to it,
        else when its line's turn comes. ``background``: of the lower class (the module)."""
        lines = self._low if background else self._decisions
        if share not in lines.lines and self._free_to(share, background):
            self._take(share, background)
        else:
            granted = lines.join(share)
            try:
                await granted
            except asyncio.CancelledError:
                if granted.done() and not granted.cancelled():
                    self._give_back(share, background)  # granted just as it was cancelled
                else:
                    lines.leave(share, granted)
                    self._hand_out()  # a decision that stops waiting may let background in
                raise
        try:
            yield
        finally:
            self._give_back(share, background)

    def _free_to(self, share: str, background: bool) -> bool:
        if self.busy >= self.slots:
            return False
        if background:
            return not self._decisions.lines and self.slots - self.busy >= self.background_needs
        return self.held.get(share, 0) < self.per_share

    def _take(self, share: str, background: bool) -> None:
        self.busy += 1
        if background:
            self.background += 1
        (self._low if background else self._decisions).take(share, next(self._ticks))

    def _give_back(self, share: str, background: bool) -> None:
        self.busy -= 1
        if background:
            self.background -= 1
        (self._low if background else self._decisions).give_back(share)
        self._hand_out()

    def _hand_out(self) -> None:
        """Free slots to the decisions' lines in turn, until no slot is free or no line may
        take one; then, if no decision waits, to the background lines in turn while two slots
        or more are free."""
        while self.busy < self.slots:
            share = self._decisions.next_share(self.per_share)
            if share is None:
                break
            granted = self._decisions.pop(share)
            if granted is not None:
                self._take(share, False)
                granted.set_result(None)
        while self.slots - self.busy >= self.background_needs and not self._decisions.lines:
            share = self._low.next_share(self.slots)
            if share is None:
                return
            granted = self._low.pop(share)
            if granted is not None:
                self._take(share, True)
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
