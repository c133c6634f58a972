"""``python -m tools.load load --baseline DIR``: this checkout's server and another's, side
by side in one run, human pace and saturation, the two servers alternating."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from tools.load.child import fresh_server, in_turn, sides
from tools.load.machine import machine
from tools.load.measure import measure
from tools.load.process import raise_nofile


def _brief(r: dict[str, Any]) -> dict[str, Any]:
    """A run's figures as the comparison shows them."""
    return {"moves_per_s": r["moves_per_s"], "errors": r["errors"],
            "own_update": r["own_update"], "opponent_update": r["opponent_update"],
            "spectator_update": r["spectator_update"],
            "lag_p99_ms": r["server"].get("lag_p99_ms"),
            "lag_max_ms": r["server"].get("lag_max_ms"),
            "cpu_us_per_move": r["cpu_us_per_move"],
            "commits": r["server"].get("commits"), "VmHWM_MiB": r["server"].get("VmHWM"),
            "machine_cpu_s": r["machine_cpu_s"]} | (
                {"scrapes": r["scrapes"]} if "scrapes" in r else {})


def run_compare(
    baseline: Path,
    rounds: int = 2,
    games: int = 500,
    spectators: int = 1000,
    seconds: float = 20.0,
    think: tuple[float, float] = (1.0, 3.0),
    sat_games: int = 64,
    sat_seconds: float = 10.0,
    workers: int = 2,
    seed: int = 1,
    loop: str = "auto",
    progress: Any = None,
    scrape: float = 0.0,
) -> dict[str, Any]:
    """This checkout's server and ``baseline``'s, side by side in one run: ``rounds`` times,
    a human-pace run and a saturation run of each, the two servers alternating (which goes
    first alternates too), so a machine that slows down or speeds up during the run touches
    both alike. Per server and run: moves/s, the opponent's and the mover's update (p50/p99:
    the mover's own update is the acknowledged move, its commit included), the server's lag,
    and its group commits. ``scrape``: ``GET /metrics`` that many times a second during every
    run, on both sides (the baseline may answer 404)."""
    raise_nofile()
    checkouts = sides(baseline)
    report: dict[str, Any] = {"baseline": str(baseline), "rounds": [],
                              "think_s": list(think), "scrapes_per_s": scrape}
    with tempfile.TemporaryDirectory(prefix="tablas-compare-") as tmp:
        n = 0
        for i in range(rounds):
            row: dict[str, Any] = {}
            for name in in_turn(checkouts, i):
                for kind, g, specs, th, secs in (
                        ("human", games, spectators, think, seconds),
                        ("saturation", sat_games, 0, (0.0, 0.0), sat_seconds)):
                    n += 1
                    child = fresh_server(tmp, 1, n, loop, checkouts[name])
                    try:
                        r = measure(child, f"ws://127.0.0.1:{child.port}/ws", g, specs, th,
                                    secs, workers, seed + i, loop, scrape=scrape)
                    finally:
                        child.stop()
                    row[f"{name} {kind}"] = _brief(r)
                    if progress is not None:
                        print(f"round {i + 1}, {name}, {kind}: {r['moves_per_s']} moves/s, own"
                              f" p50/p99 {r['own_update']['p50_ms']}/{r['own_update']['p99_ms']}"
                              f" ms, opponent p99 {r['opponent_update']['p99_ms']} ms, errors"
                              f" {r['errors']}, scrapes {r.get('scrapes', {}).get('statuses')}",
                              file=progress, flush=True)
            report["rounds"].append(row)
    report["machine"] = machine(loop)
    return report
