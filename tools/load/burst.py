"""``python -m tools.load burst``: the human-pace load and, meanwhile, rushes of new
connections and of spectators (:mod:`tools.load.rush`); per run, the acknowledged move over
the run and in its worst second, the server's lag, and how long each rush took to serve."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tools.load.child import fresh_server, in_turn, sides
from tools.load.machine import machine
from tools.load.measure import measure
from tools.load.process import raise_nofile
from tools.load.rush import Burst
from tools.load.stats import worst_window


def _burst_brief(r: dict[str, Any]) -> dict[str, Any]:
    """A burst run's figures: the whole run, the worst window, the server's lag, each rush."""
    return {
        "moves_per_s": r["moves_per_s"], "errors": r["errors"],
        "own_update": r["own_update"], "opponent_update": r["opponent_update"],
        "spectator_update": r["spectator_update"],
        "worst_window": worst_window(r["windows"]),
        "lag_p99_ms": r["server"].get("lag_p99_ms"), "lag_max_ms": r["server"].get("lag_max_ms"),
        "client_lag_max_ms": r["client_lag"].get("lag_max_ms"),
        "cpu_us_per_move": r["cpu_us_per_move"], "VmHWM_MiB": r["server"].get("VmHWM"),
        "commits": r["server"].get("commits"), "gc_pauses": r["server"].get("gc_pauses"),
        # at the end: the objects the collector tracks, and what a full collection then takes
        "gc_objects": r["server"].get("gc_objects"),
        "full_collection_ms": r["server"].get("full_collection_ms"),
        "machine_cpu_s": r["machine_cpu_s"], "listen_overflows": r["listen_overflows"],
        "bursts": r.get("bursts", []), "windows": r["windows"],
    }


def _burst_line(label: str, b: dict[str, Any]) -> str:
    own, w = b["own_update"], b["worst_window"] or {}
    rushes = "; ".join(
        f"{x['kind']} {x['served']}/{x['n']} in {x.get('span_s')} s (p99 "
        f"{x.get('latency', {}).get('p99_ms')} ms, errors {x['errors']})" for x in b["bursts"])
    return (f"{label}: own p50/p99/max {own['p50_ms']}/{own['p99_ms']}/{own.get('max_ms')} ms;"
            f" worst second {w.get('second')}: p99/max {w.get('own_p99_ms')}/"
            f"{w.get('own_max_ms')} ms; server lag max {b['lag_max_ms']} ms; {rushes};"
            f" errors {b['errors']}")


def run_burst(
    games: int = 500,
    spectators: int = 1000,
    seconds: float = 30.0,
    think: tuple[float, float] = (1.0, 3.0),
    bursts: Sequence[Burst] = (Burst("connect", 1000, 8.0), Burst("spectate", 1000, 18.0)),
    rounds: int = 1,
    baseline: Path | None = None,
    warmup: float = 0.0,
    workers: int = 2,
    seed: int = 1,
    loop: str = "auto",
    progress: Any = None,
) -> dict[str, Any]:
    """``rounds`` runs of the human-pace load (``games`` and ``spectators`` for ``seconds``)
    with ``bursts`` during it, each against a fresh server; with ``baseline`` (another
    checkout), each round runs its server too, which goes first alternating. ``warmup``:
    the games play that long before the run's window opens (0: it opens as they start).
    Per run: the acknowledged move's p50/p99/max over the run and in its worst one-second
    window, the server's lag, each rush's service time."""
    raise_nofile()
    checkouts = sides(baseline)
    report: dict[str, Any] = {
        "games": games, "spectators": spectators, "seconds": seconds, "warmup_s": warmup,
        "think_s": list(think),
        "bursts": [dataclasses.asdict(b) for b in bursts], "rounds": []}
    if baseline is not None:
        report["baseline"] = str(baseline)
    with tempfile.TemporaryDirectory(prefix="tablas-burst-") as tmp:
        n = 0
        for i in range(rounds):
            row: dict[str, Any] = {}
            for name in in_turn(checkouts, i):
                n += 1
                child = fresh_server(tmp, 1, n, loop, checkouts[name])
                try:
                    r = measure(child, f"ws://127.0.0.1:{child.port}/ws", games, spectators,
                                think, seconds, workers, seed + i, loop, bursts=bursts,
                                by_second=True, warmup=warmup)
                finally:
                    child.stop()
                row[name] = _burst_brief(r)
                if progress is not None:
                    print(_burst_line(f"round {i + 1}, {name}", row[name]), file=progress,
                          flush=True)
            report["rounds"].append(row)
    report["machine"] = machine(loop)
    return report
