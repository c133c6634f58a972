"""``python -m tools.load load``: the human-pace load, the search for the largest one that
holds (``--search``), then the saturation run; each against a fresh server."""

from __future__ import annotations

import tempfile
from typing import Any

from tools.load.human import human_pace, search
from tools.load.machine import machine
from tools.load.process import raise_nofile
from tools.load.saturation import saturation


def run_load(
    games: int = 500,
    spectators: int = 1000,
    seconds: float = 20.0,
    think: tuple[float, float] = (1.0, 3.0),
    sat_games: int = 64,
    sat_spectators: int = 0,
    sat_seconds: float = 10.0,
    workers: int = 2,
    search_s: float = 0.0,
    target_ms: float = 100.0,
    max_games: int = 4000,
    seed: int = 1,
    loop: str = "auto",
    progress: Any = None,
) -> dict[str, Any]:
    """The load report: human pace at ``games``/``spectators``, then (``search_s`` > 0) the
    largest human-pace load whose p99 stays within ``target_ms`` (doubling, then bisecting,
    within ``search_s`` seconds), then saturation against the server, the echo server and
    the frames-only server."""
    raise_nofile()

    def say(msg: str) -> None:
        if progress is not None:
            print(msg, file=progress, flush=True)

    ratio = spectators / games if games else 0.0
    report: dict[str, Any] = {"target_p99_ms": target_ms}
    with tempfile.TemporaryDirectory(prefix="tablas-load-") as tmp:
        trial = 0

        def human(n: int) -> dict[str, Any]:
            nonlocal trial
            trial += 1
            return human_pace(tmp, trial, n, round(n * ratio), think, seconds, workers,
                              seed + trial, loop, target_ms, say)

        report["human"] = first = human(games)
        if search_s > 0:
            report["search"] = search(first, human, ratio, max_games, search_s)
        report |= saturation(tmp, trial + 1, sat_games, sat_spectators, sat_seconds, workers,
                             seed, loop, say)
    report["machine"] = machine(loop)
    return report
