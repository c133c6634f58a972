"""Bot decisions in a process pool: never on the event loop.

:func:`decide` is the pure, picklable function a worker runs: it rebuilds the position by
replaying the room's history (with its dice) and asks :func:`engine.search.bots.decide`, the
same pure function the CLI and the ladder use. :class:`BotPool` owns the
``ProcessPoolExecutor``: a decision has a deadline, and a dead worker (``BrokenProcessPool``)
gets the pool rebuilt and the decision retried.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import random
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from engine.core import JSON, Game
from engine.games import get_game
from engine.search import bots as search_bots
from server.room import BotJob, replay

log = logging.getLogger("tablas.bots")

# The thinking time a level may use (the engine's own level caps it further).
BUDGET_MS: dict[str, float] = {
    "random": 100.0,
    "easy": 500.0,
    "medium": 1500.0,
    "hard": 2000.0,
    "max": 5000.0,
}
RETRIES = 3


def deadline_s(level: str) -> float:
    """How long the server waits for a decision before playing a random move instead."""
    return BUDGET_MS.get(level, 1000.0) / 1000.0 * 3 + 10.0


def random_move(game: Game[Any, Any], state: Any, seed: int) -> JSON:
    """The fallback when no decision came in time: a seeded uniformly random legal move."""
    return game.move_to_json(random.Random(seed).choice(game.legal_moves(state)))


def decide(job: BotJob, budget_ms: float) -> JSON:
    """The bot's MOVE for ``job`` (runs in a worker process). Engine states are rebuilt from
    the room's history rather than pickled, so only plain data crosses the process boundary."""
    game = get_game(job.game_id)
    state = replay(game, job.options, job.opening_rolls, job.actions)
    return search_bots.decide(job.game_id, state, job.level, budget_ms, job.seed).move


class BotPool:
    """A ``ProcessPoolExecutor`` that rebuilds itself when a worker dies."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)
        self._pool: ProcessPoolExecutor | None = None
        self.rebuilds = 0

    def _ensure(self) -> ProcessPoolExecutor:
        if self._pool is None:
            ctx = multiprocessing.get_context("forkserver")
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx)
        return self._pool

    def _rebuild(self, broken: ProcessPoolExecutor) -> None:
        if self._pool is broken:
            log.warning("bot pool broken (a worker died): rebuilding it")
            broken.shutdown(wait=False, cancel_futures=True)
            self._pool = None
            self.rebuilds += 1

    def worker_pids(self) -> list[int]:
        """The live worker processes (tests kill one to check the pool recovers)."""
        procs: dict[int, Any] = getattr(self._pool, "_processes", None) or {}
        return [p.pid for p in procs.values() if p.is_alive()]

    async def warm_up(self) -> None:
        """Starts the workers now rather than at the first decision."""
        pool = self._ensure()
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(pool, os.getpid) for _ in range(self.workers)))

    async def decide(self, job: BotJob) -> JSON | None:
        """The bot's move, or None when no worker answered in time (the caller falls back)."""
        loop = asyncio.get_running_loop()
        budget = BUDGET_MS.get(job.level, 1000.0)
        for attempt in range(RETRIES):
            pool = self._ensure()
            try:
                fut = loop.run_in_executor(pool, decide, job, budget)
                return await asyncio.wait_for(fut, deadline_s(job.level))
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

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
