"""The human-pace load: games whose players think between moves, and their spectators,
against a fresh server; and the search for the largest such load that still holds its p99."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tools.load.child import fresh_server
from tools.load.measure import measure
from tools.load.stats import p99

Say = Callable[[str], None]


def human_pace(tmp: str, trial: int, games: int, spectators: int, think: tuple[float, float],
               seconds: float, workers: int, seed: int, loop: str, target_ms: float,
               say: Say) -> dict[str, Any]:
    """One human-pace run against a fresh server (trial number ``trial``, its database in
    ``tmp``); the measurement, with ``holds``: its p99 within ``target_ms`` and no error."""
    child = fresh_server(tmp, 1, trial, loop)
    try:
        say(f"human pace: {games} games + {spectators} spectators, {seconds:g} s ...")
        r = measure(child, f"ws://127.0.0.1:{child.port}/ws", games, spectators, think,
                    seconds, workers, seed, loop)
    finally:
        child.stop()
    r["holds"] = p99(r) <= target_ms and r["errors"] == 0
    say(f"  -> {r['moves_per_s']} moves/s, opponent p50/p99 "
        f"{r['opponent_update']['p50_ms']}/{r['opponent_update']['p99_ms']} ms, "
        f"spectators p99 {r['spectator_update']['p99_ms']} ms, server lag p99/max "
        f"{r['server'].get('lag_p99_ms')}/{r['server'].get('lag_max_ms')} ms, client lag"
        f" p99/max {r['client_lag'].get('lag_p99_ms')}/{r['client_lag'].get('lag_max_ms')}"
        f" ms, a full collection {r['server'].get('full_collection_ms')} ms, "
        f"RSS {r['server'].get('VmHWM')} MiB, "
        f"errors {r['errors']}: {'holds' if r['holds'] else 'FAILS'}")
    return r


def search(first: dict[str, Any], run: Callable[[int], dict[str, Any]], ratio: float,
           max_games: int, search_s: float) -> dict[str, Any]:
    """The largest human-pace load that holds, from ``first`` (a run at its ``games``):
    doubling, then bisecting, within ``search_s`` seconds, each trial ``run(games)`` with
    ``ratio`` spectators a game."""
    games = first["games"]
    deadline = time.perf_counter() + search_s
    trials = [first]
    good = games if first["holds"] else 0
    bad = games if not first["holds"] else 0
    n = games

    def holds(n: int) -> bool:
        r = run(n)
        trials.append(r)
        return bool(r["holds"])

    while not bad and n * 2 <= max_games and time.perf_counter() < deadline:
        n *= 2
        if holds(n):
            good = n
        else:
            bad = n
    if not bad and not good:
        bad = games
    lo, hi = good, bad or max_games
    while hi - lo > max(8, lo // 10) and time.perf_counter() < deadline and bad:
        mid = (lo + hi) // 2
        if holds(mid):
            lo = mid
        else:
            hi = mid
    return {
        "largest_holding_games": lo,
        "largest_holding_spectators": round(lo * ratio),
        "smallest_failing_games": hi if bad else None,
        "trials": [{k: t[k] for k in ("games", "spectators", "moves_per_s", "holds", "errors")}
                   | {"p99_ms": p99(t), "lag_p99_ms": t["server"].get("lag_p99_ms"),
                      "lag_max_ms": t["server"].get("lag_max_ms"),
                      "full_collection_ms": t["server"].get("full_collection_ms"),
                      "VmHWM_MiB": t["server"].get("VmHWM")} for t in trials],
    }
