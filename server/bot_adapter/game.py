"""One room's game, played by one engine process (contract section 12).

The session hands the loop every ``room`` snapshot and ``update`` of its room
(:meth:`GameLoop.feed`, at once, as they arrive); the loop's task starts the engine, and on
each of its turns gives it the position, the room's state, the legal moves as text and the
time left, then sends the move it answers. When the game ends it tells the engine the result
and lets it go. One line is printed when the game starts and one when it finishes.

An engine that answers a move not in the list, says nothing before its clock runs out (less
a margin for the trip to the server), or dies loses the game: the loop resigns it, and the
adapter plays on. A move sent while the server was away is sent again after the next snapshot
(the server applies a move at most once: its ``ply`` says which).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TextIO, TypeVar

from tablas.server.bot_adapter.engine import Engine, EngineFailed
from tablas.server.bot_adapter.notation import Follow

log = logging.getLogger("tablas.bot")

MARGIN_MS = 300  # of the clock kept for the move's trip to the server
MOVE_TRIES = 3  # times a move refused by the server is sent again (after a fresh snapshot)
NO_CLOCK_S = 60.0  # seconds an engine has for a move in a game without a clock
T = TypeVar("T")

Message = dict[str, Any]


class Link(Protocol):
    """What a game loop needs of its session."""

    def send(self, msg: Message, on_error: Callable[[Message], None] | None = None) -> bool:
        """Sends ``msg`` if connected (``on_error`` gets the error answering it); False if
        the server is away."""
        ...

    def ended(self, loop: GameLoop) -> None:
        """The loop is done: its place is free."""
        ...


class GameLoop:
    def __init__(self, room_id: str, seat: int, engine: Sequence[str], link: Link,
                 out: TextIO) -> None:
        self.room_id = room_id
        self.seat = seat
        self.engine = Engine(engine)
        self.link = link
        self.out = out
        self.follow: Follow | None = None
        self.view: Message | None = None  # the room as last seen
        self.received = 0.0  # when the view arrived (monotonic): the clock ran since
        self.synced = False  # the followed state is the view's
        self.wake = asyncio.Event()
        self.lost: str | None = None  # why the engine lost the game (resigned for it)
        self.answered: tuple[int, Message] | None = None  # (ply, move) sent
        self.resend = False  # a fresh snapshot came: a move sent for its ply goes again
        self.refused = 0  # times the server refused the move answered for this ply
        self.gave_up = False  # the room could not be followed
        self.opponent = "?"
        self.game = "?"
        self.task: asyncio.Task[None] | None = None

    # --- what the session hands in --------------------------------------------------------

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run())

    def feed(self, m: Message) -> None:
        """A ``room`` snapshot or an ``update`` of the loop's room."""
        if m.get("type") == "room":
            self._snapshot(m)
        elif m.get("type") == "update" and self.view is not None:
            self._update(m)
        self.wake.set()

    def give_up(self, why: str) -> None:
        """The room cannot be followed (it is gone): the loop ends."""
        log.warning("room %s: %s", self.room_id, why)
        self.gave_up = True
        self.wake.set()

    def _snapshot(self, m: Message) -> None:
        if self.follow is None:
            self.follow = Follow(m["game"], m["options"])
            self.game = m["game"]
        self.view = {k: m.get(k) for k in ("status", "ply", "to_move", "legal_moves", "state",
                                           "result", "clocks", "clock_running", "options")}
        self.received = time.monotonic()
        seats = m.get("seats") or []
        if len(seats) == 2:
            self.opponent = seats[1 - self.seat].get("name") or "?"
        self.synced = self.follow.reset(m)
        if not self.synced:
            self._fail(f"cannot follow the room's game (at ply {m['ply']}) with this "
                       "version's engine package")
        self.resend = True
        if self.lost is not None and m["status"] == "playing":
            self._resign()  # sent before the server went away, perhaps never arrived

    def _update(self, m: Message) -> None:
        view = self.view
        assert view is not None and self.follow is not None
        if m.get("takeback"):  # the room went back (a takeback): follow its snapshot again
            self._resync()
            return
        if m["ply"] <= view["ply"]:
            return  # seen already (a snapshot came first)
        for k in ("status", "ply", "to_move", "legal_moves", "state", "result", "clocks",
                  "clock_running"):
            view[k] = m.get(k)
        self.received = time.monotonic()
        self.synced = self.follow.advance(m)
        if not self.synced:
            self._resync()

    def _resync(self) -> None:
        """An update was missed: the room's snapshot (``join``: we hold a seat) sets it
        right."""
        self.link.send({"type": "join", "room_id": self.room_id},
                       lambda e: self.give_up(f"cannot follow it: {e.get('message')}"))

    # --- the loop -------------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            await self._play()
        except Exception:
            log.exception("room %s: the game loop failed", self.room_id)
        finally:
            with contextlib.suppress(Exception):
                await self.engine.stop()
            self.link.ended(self)

    async def _play(self) -> None:
        while self.view is None:
            if self.gave_up:
                return
            await self._wait()
        assert self.follow is not None
        self._print(f"started {self.game} {self.room_id} seat {self.seat} "
                    f"against {self.opponent}")
        if self.view["status"] != "finished" and self.lost is None:
            try:
                await self._race(self.engine.start(self.game, self.seat,
                                                   self.view["options"] or {}))
            except EngineFailed as e:
                self._fail(f"the engine {e}")
        while not self.gave_up:
            view = self.view
            if view["status"] == "finished":
                await self._finish()
                return
            if self.lost is None and self._my_turn():
                await self._turn()
            else:
                await self._wait()

    def _my_turn(self) -> bool:
        v = self.view
        return (v is not None and self.synced and v["status"] == "playing"
                and v["to_move"] == self.seat and bool(v["legal_moves"]))

    async def _turn(self) -> None:
        view, follow = self.view, self.follow
        assert view is not None and follow is not None
        ply, legal = view["ply"], list(view["legal_moves"])
        if self.answered is not None and self.answered[0] == ply:
            if self.resend:  # the server came back at this ply: our move may be lost
                self.resend = False
                self._send_move(ply, self.answered[1])
            await self._wait()
            return
        texts = follow.texts(legal)
        left = self._time_left_ms()
        within = NO_CLOCK_S if left is None else max(0.05, (left - MARGIN_MS) / 1000)
        try:
            answer = await self._race(self.engine.ask(
                view["state"]["notation"], view["state"], texts,
                0 if left is None else max(0, int(left)), within))
        except EngineFailed as e:
            self._fail(f"the engine {e}")
            return
        if answer is None:  # the game ended while it thought
            return
        if answer not in texts:
            self._fail(f"the engine answered {answer!r}, not one of the {len(texts)} legal "
                       "moves")
            return
        move = legal[texts.index(answer)]
        self.answered = (ply, move)
        self.resend, self.refused = False, 0
        self._send_move(ply, move)

    def _send_move(self, ply: int, move: Message) -> None:
        self.link.send({"type": "move", "room_id": self.room_id, "ply": ply, "move": move},
                       self._move_refused)

    def _move_refused(self, e: Message) -> None:
        """The server refused the move (busy, or the room moved on): a fresh snapshot says
        what now, and the move goes again if it is still this ply's; not for ever."""
        self.refused += 1
        if self.refused >= MOVE_TRIES:
            self._fail(f"the server refused its move {self.refused} times: {e.get('message')}")
        else:
            self._resync()

    def _time_left_ms(self) -> float | None:
        v = self.view
        if v is None or v["clocks"] is None:
            return None
        left = float(v["clocks"][self.seat])
        if v["clock_running"] == self.seat:
            left -= (time.monotonic() - self.received) * 1000
        return left

    def _fail(self, why: str) -> None:
        """The engine lost the game: it is resigned, and the engine let go."""
        if self.lost is not None:
            return
        self.lost = why
        log.warning("room %s (%s): %s: resigning the game", self.room_id, self.game, why)
        self.engine.kill_now()
        self._resign()

    def _resign(self) -> None:
        self.link.send({"type": "resign", "room_id": self.room_id},
                       lambda e: log.warning("room %s: resign refused: %s", self.room_id,
                                             e.get("message")))

    async def _finish(self) -> None:
        view = self.view
        assert view is not None
        result = view["result"] or {"winner": None, "reason": "unknown"}
        winner = result.get("winner")
        word = "DRAW" if winner is None else "WIN" if winner == self.seat else "LOSS"
        reason = str(result.get("reason") or "unknown").replace(" ", "_")
        if self.lost is None:
            await self.engine.tell_result(word, reason)
        self._print(f"finished {self.game} {self.room_id} {word} {reason} "
                    f"against {self.opponent}")

    async def _wait(self) -> None:
        await self.wake.wait()
        self.wake.clear()

    async def _race(self, work: Awaitable[T]) -> T | None:
        """``work``'s result, or None if the game ends first (or the room is given up)."""
        task = asyncio.ensure_future(work)
        try:
            while not task.done():
                waiter = asyncio.ensure_future(self.wake.wait())
                await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if self.wake.is_set() and not task.done():
                    self.wake.clear()
                    if self.gave_up or (self.view is not None
                                        and self.view["status"] == "finished"):
                        return None
            return task.result()
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, EngineFailed):
                    await task

    def _print(self, line: str) -> None:
        print(line, file=self.out, flush=True)
