"""A room's chess clocks (a room option, contract section 9): each action costs its seat the
time since the previous action, then earns the increment; the seat whose time runs out loses
on ``timeout``. No I/O: every time is read from the room's injected clock.

:class:`Clocks` keeps each seat's time left when its clock last stopped and when the running
one started. It reads its room through :class:`Timed` (whose turn it is, the time, how a game
ends), so it needs nothing of :mod:`tablas.server.room`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from tablas.engine.core import Outcome
from tablas.server.errors import RoomError
from tablas.server.protocol import ClockSpec


class Timed(Protocol):
    """What the clocks read of their room."""

    @property
    def to_move(self) -> int | None: ...
    @property
    def clock(self) -> Callable[[], float]: ...
    def stake(self) -> int: ...
    def conclude(self, outcome: Outcome) -> Outcome: ...


class Flagged(RoomError):
    """A move came after its seat's time ran out: the caller ends the game with ``outcome``
    (and ``clocks``), then refuses the move (``game_over``)."""

    def __init__(self, outcome: Outcome, clocks: list[int]) -> None:
        super().__init__("game_over", f"seat {1 - (outcome.winner or 0)}'s time ran out")
        self.outcome = outcome
        self.clocks = clocks


class Clocks:
    """The room's two clocks of ``spec`` (None: the room has no clock, and nothing here
    does anything)."""

    def __init__(self, spec: ClockSpec | None, room: Timed) -> None:
        self.spec = spec
        self.room = room
        # Each seat's time left (ms) when its clock last stopped; the running one started at
        # ``turn_started`` (the room's clock's time; None: no turn has started yet).
        self.remaining: list[int] | None = None if spec is None else [spec.base_ms] * 2
        self.turn_started: float | None = None
        # A seat that went berserk (an arena game, contract section 19) earns no increment.
        self.bare = [False, False]

    @property
    def running(self) -> int | None:
        """The seat whose clock runs: the seat to move, in a room with a clock."""
        return None if self.remaining is None else self.room.to_move

    def live(self, now: float | None = None) -> list[int] | None:
        """Each seat's time left now (ms, never below 0); None without a clock."""
        if self.remaining is None:
            return None
        out = list(self.remaining)
        seat = self.running
        if seat is not None and self.turn_started is not None:
            now = self.room.clock() if now is None else now
            out[seat] -= round((now - self.turn_started) * 1000)
        return [max(0, ms) for ms in out]

    def flag_fall(self, now: float | None = None) -> tuple[Outcome, list[int]] | None:
        """The end of the game if the running clock's time is up (nothing changes): persist
        it with these clocks, then :meth:`~tablas.server.room.Room.finish` the game."""
        seat = self.running
        clocks = self.live(now)
        if seat is None or clocks is None or clocks[seat] > 0:
            return None
        return self.room.conclude(Outcome(winner=1 - seat, points=self.room.stake(),
                                          reason="timeout")), clocks

    def seconds_to_flag(self, now: float | None = None) -> float | None:
        """How long until the running clock's time is up (None: no clock is running): when
        the room's timer must look at :meth:`flag_fall` again."""
        seat = self.running
        clocks = self.live(now)
        return None if seat is None or clocks is None else clocks[seat] / 1000

    def after(self, seat: int, now: float) -> tuple[int, int] | None:
        """The clocks once ``seat`` acts at ``now``, its increment earned: what the action
        records (None: no clock). :class:`Flagged` if its time is up: end the game."""
        if self.remaining is None or self.spec is None:
            return None
        flagged = self.flag_fall(now)
        if flagged is not None:
            raise Flagged(*flagged)
        left = list(self.remaining)
        started = self.turn_started if self.turn_started is not None else now
        left[seat] += -round((now - started) * 1000) + (
            0 if self.bare[seat] else self.spec.increment_ms)
        return left[0], left[1]

    def charged(self, now: float) -> tuple[int, int] | None:
        """The clocks once the running one is charged up to ``now``, no increment earned (an
        action no seat's turn made: an accepted resignation). :class:`Flagged` if its time
        is up."""
        if self.remaining is None:
            return None
        flagged = self.flag_fall(now)
        if flagged is not None:
            raise Flagged(*flagged)
        live = self.live(now)
        assert live is not None
        return live[0], live[1]

    def start(self, at: float) -> None:
        """The turn to move starts at ``at``: the game starts, or is played again."""
        self.turn_started = at

    def stop(self, clocks: Sequence[int] | None = None, at: float | None = None) -> None:
        """The clocks stop at ``clocks`` (default: their time left at ``at``, or now): the
        game is over or adjourned. A resumption restarts them (:meth:`start`)."""
        if self.remaining is not None:
            live = self.live(at) if clocks is None else list(clocks)
            assert live is not None
            self.remaining = live

    def berserk(self, seat: int, left_ms: int, at: float) -> None:
        """``seat`` went berserk at ``at``: its time left is ``left_ms`` from then (half what
        it had), and it earns no increment any more."""
        if self.remaining is None:
            return
        if self.running == seat:
            self.turn_started = at
        self.remaining[seat] = left_ms
        self.bare[seat] = True

    def commit(self, clocks: tuple[int, int] | None, at: float) -> None:
        """An action at ``at`` left ``clocks`` (from :meth:`after`): the next turn starts."""
        if clocks is not None:
            self.remaining = list(clocks)
            self.turn_started = at

    def restore(self, recorded: Sequence[tuple[int, int] | None],
                final: Sequence[int] | None, berserk: Sequence[int] = (0, 0)) -> None:
        """Each seat's time left as stored: ``final`` (a finished game's), else the clocks
        after the last action that recorded them (``recorded``, in order), no more than a
        berserk seat's time left when it went berserk (``berserk``, ms; 0: it did not; its
        own actions since only took time away). The running clock restarts now, so time the
        server was down is not charged to anyone."""
        if self.remaining is None:
            return
        self.bare = [bool(ms) for ms in berserk]
        if final is not None:
            self.remaining = list(final)
        else:
            for clocks in reversed(recorded):
                if clocks is not None:
                    self.remaining = list(clocks)
                    break
            self.remaining = [min(ms, b) if b else ms for ms, b in zip(self.remaining, berserk,
                                                                         strict=True)]
        self.turn_started = self.room.clock()
