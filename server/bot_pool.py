"""Bot decisions in a process pool: never on the event loop.

:func:`decide` is the pure, picklable function a worker runs: it rebuilds the position by
replaying the room's history (with its dice) and asks :func:`tablas.engine.search.bots.decide`, the
same pure function the CLI and the ladder use; the :class:`~tablas.engine.search.decision.Decision`
it returns comes back to the event loop as it is (a picklable dataclass). :class:`BotPool`
owns the ``ProcessPoolExecutor``: a decision has a deadline, and a dead worker
(``BrokenProcessPool``) gets the pool rebuilt and the decision retried. Other work that must
not run on the event loop goes through :meth:`BotPool.compute`; background work (the moves
judged ahead of a game's review, :mod:`tablas.server.review_ahead`) through
:meth:`BotPool.compute_for` with ``background=True``, in processes of its own at
``BACKGROUND_NICE``, when :class:`~tablas.server.bot_turns.FairTurns` gives it a turn.

Live analysis: a worker cannot call back into the event loop, so it puts what the search
found after each iteration on a queue served by a ``multiprocessing`` manager (its proxy is
handed to each worker once, by the pool's initializer; a plain ``multiprocessing.Queue``
could not be), each a :class:`~tablas.engine.search.decision.SearchInfo` tagged with the decision's
token, and a ``None`` when it is done. One thread
of the server blocks on that queue and hands each item to the event loop
(``call_soon_threadsafe``); :meth:`BotPool.decide` waits for the ``None`` before it returns,
so every progress report comes before the decision.

The server's death ends every process it started, whatever killed it (kill -9 included):
the workers and the manager each watch the server's pid from a daemon thread
(:func:`_watch_owner`, started by their initializers) and exit when it ends. They are
children of the forkserver, not of the server, so no parent-death signal reaches them, and
each holds the write ends of the pipes (the forkserver's "alive" pipe, the resource
tracker's) whose end-of-file tells the forkserver and the resource tracker to stop: those
two end by themselves once the workers and the manager have gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import multiprocessing
import os
import queue as queue_mod
import random
import select
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.managers import SyncManager
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from tablas.engine.core import JSON, Game
from tablas.engine.games import get_game
from tablas.engine.records import replay
from tablas.engine.search import bots as search_bots
from tablas.engine.search.decision import Decision, Level, SearchInfo
from tablas.server.bot_turns import FairTurns
from tablas.server.room import BotJob

if TYPE_CHECKING:
    from tablas.server.metrics import Metrics

log = logging.getLogger("tablas.bots")

# The thinking time a level may use (the engine's own level caps it further).
BUDGET_MS: dict[Level, float] = {
    "random": 100.0,
    "easy": 500.0,
    "medium": 1500.0,
    "hard": 2000.0,
    "max": 5000.0,
}
RETRIES = 3
# Workers run below the event loop's priority: on a busy machine people's moves come first.
WORKER_NICE = 5
# Background jobs (FairTurns' lower class) run in processes of their own, further below: on a
# busy machine a bot's search takes the CPU from them, not the other way round.
BACKGROUND_NICE = 19
MIN_BUDGET_MS = 10.0
Progress = Callable[[SearchInfo], None]
P = ParamSpec("P")
T = TypeVar("T")


def budget_ms(job: BotJob) -> float:
    """The level's thinking time, capped by a tenth of the time left on the bot's clock."""
    budget = BUDGET_MS[job.level]
    if job.time_left_ms is not None:
        budget = max(MIN_BUDGET_MS, min(budget, job.time_left_ms / 10))
    return budget


def deadline_s(level: Level) -> float:
    """How long the server waits for a decision before playing a random move instead."""
    return BUDGET_MS[level] / 1000.0 * 3 + 10.0


def random_move(game: Game[Any, Any], state: Any, seed: int) -> JSON:
    """The fallback when no decision came in time: a seeded uniformly random legal move."""
    return game.move_to_json(random.Random(seed).choice(game.legal_moves(state)))


_PROGRESS: Any = None  # in a worker: the manager's queue, set by the pool's initializer


def decide(job: BotJob, budget_ms: float, token: int = 0, progress: Any = None) -> Decision:
    """The bot's decision for ``job``; runs in a worker process. Engine states are rebuilt
    from the room's history rather than pickled, so only plain data crosses the process
    boundary. With a ``token``, each search iteration is put on the ``progress`` queue
    (default: the worker's) as ``(token, info)``, then ``(token, None)``."""
    if progress is None and token:
        progress = _PROGRESS

    def report(info: SearchInfo) -> None:
        with contextlib.suppress(Exception):
            progress.put((token, info))

    try:
        game = get_game(job.game_id)
        state = replay(game, job.options, job.opening_rolls, job.actions)
        return search_bots.decide(
            job.game_id, state, job.level, budget_ms, job.seed,
            on_progress=None if progress is None else report,
        )
    finally:
        if progress is not None:
            with contextlib.suppress(Exception):
                progress.put((token, None))


def _ignore_interrupt() -> None:
    # Ctrl-C reaches the whole process group; the server alone decides when its workers stop
    # (after its graceful shutdown), so a worker must not die first under a thinking bot.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# How often a process without pidfds (not Linux ≥ 5.3) looks whether the server still runs.
OWNER_POLL_S = 0.5


def _gone(pid: int) -> bool:
    """Whether ``pid`` has ended: reaped, or a zombie its parent has not reaped yet."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's process has the pid now: ours has ended
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            # the state follows the command's name, which may hold spaces and parentheses
            return f.read().rpartition(b")")[2].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        # no /proc (not Linux): a zombie passes for alive until it is reaped; or the process
        # went between the two looks, which the next look tells
        return False


def _wait_gone(pid: int, poll_s: float = OWNER_POLL_S) -> None:
    """Returns once process ``pid`` has ended."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):  # no pidfd here (platform, kernel or seccomp)
        while not _gone(pid):
            time.sleep(poll_s)
        return
    try:
        # a pidfd is readable once its process has ended, reaped or still a zombie
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.poll()
    finally:
        os.close(fd)


def _exit_after(owner: int) -> None:
    _wait_gone(owner)
    # No clean-up worth waiting for: nobody is left to hear from this process, and the
    # resource tracker unlinks what the dead server leaked once every holder has gone.
    os._exit(0)


def _watch_owner(owner: int) -> None:
    """Ends this process, from a daemon thread, as soon as process ``owner`` ends."""
    threading.Thread(target=_exit_after, args=(owner,), name="watch-owner", daemon=True).start()


def _manager_init(owner: int) -> None:
    _ignore_interrupt()
    _watch_owner(owner)


def _worker_init(progress: Any, owner: int, nice: int = WORKER_NICE) -> None:
    global _PROGRESS
    _PROGRESS = progress
    _ignore_interrupt()
    _watch_owner(owner)
    with contextlib.suppress(OSError, AttributeError):
        os.nice(nice)


class _Listener:
    def __init__(self, on_progress: Progress) -> None:
        self.on_progress = on_progress
        self.done = asyncio.Event()


class BotPool:
    """A ``ProcessPoolExecutor`` that rebuilds itself when a worker dies."""

    def __init__(self, workers: int | None = None, *, nice: int = WORKER_NICE,
                 live: bool = True, metrics: Metrics | None = None) -> None:
        """``workers``: processes (default: the CPUs); ``nice``: how far below the event
        loop's priority they run; ``live``: whether decisions may report their progress (a
        pool that only computes needs no manager process for it); ``metrics``: where each
        decision's time is told (``tablas_bot_decision_seconds``)."""
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.metrics = metrics
        # Every job waits for its turn at a worker in its share's line (contract section 15,
        # tablas.server.bot_turns), so the executor never holds more jobs than workers.
        self.turns = FairTurns(self.workers)
        self._deciding_waiting = 0  # decisions in those lines (:meth:`queued`)
        self.nice = nice
        self.live = live
        self._pool: ProcessPoolExecutor | None = None
        # Background jobs' processes (at most workers - 1 such jobs run: no job waits for one).
        self._background: ProcessPoolExecutor | None = None
        self._manager: SyncManager | None = None
        self._queue: Any = None
        self._pump: threading.Thread | None = None
        self._stop = threading.Event()
        self._tokens = itertools.count(1)
        self._listeners: dict[int, _Listener] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    async def _ensure(self) -> ProcessPoolExecutor:
        if self._queue is None and self.live:
            try:
                await self._progress_queue()
            except Exception:
                log.exception("no progress queue: bots think without live analysis")
        if self._pool is None:
            ctx = multiprocessing.get_context("forkserver")
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers, mp_context=ctx, initializer=_worker_init,
                initargs=(self._queue, os.getpid(), self.nice),
            )
        return self._pool

    def _background_pool(self) -> ProcessPoolExecutor:
        if self._background is None:
            self._background = ProcessPoolExecutor(
                max_workers=max(1, self.workers - 1),
                mp_context=multiprocessing.get_context("forkserver"), initializer=_worker_init,
                initargs=(None, os.getpid(), max(self.nice, BACKGROUND_NICE)))
        return self._background

    def _rebuild(self, broken: ProcessPoolExecutor) -> None:
        if self._pool is broken:
            log.warning("bot pool broken (a worker died): rebuilding it")
            broken.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        if self._background is broken:
            log.warning("background processes broken (one died): rebuilding them")
            broken.shutdown(wait=False, cancel_futures=True)
            self._background = None

    def worker_pids(self) -> list[int]:
        """The live worker processes (tests kill one to check the pool recovers)."""
        procs: dict[int, Any] = getattr(self._pool, "_processes", None) or {}
        return [p.pid for p in procs.values() if p.is_alive()]

    async def warm_up(self) -> None:
        """Starts the workers now rather than at the first decision."""
        pool = await self._ensure()
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(pool, os.getpid) for _ in range(self.workers)))

    # --- progress reports ----------------------------------------------------------------

    async def _progress_queue(self) -> Any:
        """The manager's queue and the thread that empties it (started on first use)."""
        if self._queue is None:
            self._loop = asyncio.get_running_loop()
            ctx = multiprocessing.get_context("forkserver")
            manager = SyncManager(ctx=ctx)
            await asyncio.to_thread(manager.start, _manager_init, (os.getpid(),))
            if self._queue is None:
                self._manager = manager
                self._queue = manager.Queue()
                self._stop.clear()
                self._pump = threading.Thread(
                    target=self._pump_loop, args=(self._queue,), name="bot-progress",
                    daemon=True,
                )
                self._pump.start()
            else:
                manager.shutdown()
        return self._queue

    def _pump_loop(self, q: Any) -> None:
        loop = self._loop
        assert loop is not None
        while not self._stop.is_set():
            try:
                item = q.get(timeout=0.2)
            except queue_mod.Empty:
                continue
            except Exception:  # the manager went away (shutdown)
                return
            with contextlib.suppress(RuntimeError):  # the loop is closed
                loop.call_soon_threadsafe(self._deliver, item)

    def _deliver(self, item: tuple[int, SearchInfo | None]) -> None:
        token, info = item
        listener = self._listeners.get(token)
        if listener is None:
            return
        if info is None:
            listener.done.set()
            return
        try:
            listener.on_progress(info)
        except Exception:
            log.exception("bot progress callback failed")

    # --- decisions -----------------------------------------------------------------------

    async def decide(self, job: BotJob, on_progress: Progress | None = None,
                     share: str = "") -> Decision | None:
        """The bot's decision, or None when no worker answered in time (the caller falls
        back). It waits for a worker in ``share``'s line (the address the room was made
        from: :class:`~tablas.server.bot_turns.FairTurns`). ``on_progress`` is called on the
        event loop with each search iteration's :class:`SearchInfo`, all of them before this
        returns."""
        started = time.perf_counter()
        await self._ensure()
        token = next(self._tokens) if on_progress is not None and self._queue is not None else 0
        listener = _Listener(on_progress) if token and on_progress is not None else None
        if listener is not None:
            self._listeners[token] = listener
        try:
            self._deciding_waiting += 1
            waiting = True
            try:
                async with self.turns.turn(share):
                    self._deciding_waiting -= 1
                    waiting = False
                    decision = await self._decide(job, token, listener)
            finally:
                if waiting:
                    self._deciding_waiting -= 1
        finally:
            self._listeners.pop(token, None)
        if self.metrics is not None:  # an answer, or none in time: the room waited so long
            self.metrics.bot_decision(job.game_id, job.level, time.perf_counter() - started)
        return decision

    def queued(self) -> int:
        """Bot decisions waiting for a worker, in every share's line."""
        return self._deciding_waiting

    async def _decide(self, job: BotJob, token: int, listener: _Listener | None
                      ) -> Decision | None:
        loop = asyncio.get_running_loop()
        budget = budget_ms(job)
        for attempt in range(RETRIES):
            pool = await self._ensure()
            try:
                fut = loop.run_in_executor(pool, decide, job, budget, token)
                decision: Decision = await asyncio.wait_for(fut, deadline_s(job.level))
                if listener is not None:  # the reports still on their way come first
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(listener.done.wait(), 1.0)
                return decision
            except BrokenProcessPool:
                self._rebuild(pool)
                log.warning(
                    "bot decision retry %d for %s ply %d", attempt + 1, job.game_id, job.ply
                )
            except TimeoutError:
                log.warning("bot decision for %s ply %d missed its deadline", job.game_id, job.ply)
                return None
            except Exception:
                log.exception("bot decision for %s ply %d failed", job.game_id, job.ply)
                return None
        return None

    async def compute(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn(*args, **kwargs)`` in a worker process (a picklable module-level function):
        CPU work that must not hold the event loop, in the share ``""``. A worker that dies
        gets the pool rebuilt and the exception (``BrokenProcessPool``) raised to the
        caller, who may try again."""
        return await self.compute_for("", functools.partial(fn, *args, **kwargs))

    async def compute_for(self, share: str, fn: Callable[[], T], *, background: bool = False,
                          on_start: Callable[[], None] | None = None) -> T:
        """``fn()`` (picklable: a module-level function or a partial of one) in a worker,
        when ``share``'s line has its turn (as :meth:`compute`). ``background``: in the
        lower class, after every waiting decision (:class:`FairTurns`), run in processes of
        its own at ``BACKGROUND_NICE``; ``on_start`` is called once it holds a worker."""
        async with self.turns.turn(share, background=background):
            if on_start is not None:
                on_start()
            pool = self._background_pool() if background else await self._ensure()
            loop = asyncio.get_running_loop()
            try:
                return await loop.run_in_executor(pool, fn)
            except BrokenProcessPool:
                self._rebuild(pool)
                raise

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        if self._background is not None:
            self._background.shutdown(wait=False, cancel_futures=True)
            self._background = None
        self._stop.set()
        if self._pump is not None:
            self._pump.join(1.0)
            self._pump = None
        if self._manager is not None:
            with contextlib.suppress(Exception):
                self._manager.shutdown()
            self._manager = None
            self._queue = None
