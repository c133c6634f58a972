"""One measurement: a server child under ``games`` games and their spectators from client
processes (and rushes, for ``burst``), every process's window opened at one instant of the
one clock, and the report of what each side saw and spent."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from tools.load.child import Child
from tools.load.clients import client_worker
from tools.load.machine import busy_s, listen_overflows
from tools.load.rush import Burst, burst_worker
from tools.load.scrape import Scraper
from tools.load.stats import lag_summary, latency, per_move, windows
from tools.load.sync import STUCK_S, Sync


def measure(child: Child, url: str, games: int, spectators: int, think: tuple[float, float],
            seconds: float, workers: int, seed: int, loop: str,
            mode: str = "game", bursts: Sequence[Burst] = (), by_second: bool = False,
            warmup: float = 0.0, scrape: float = 0.0) -> dict[str, Any]:
    """One measurement: ``games`` slots and ``spectators`` spread over them, for ``seconds``;
    ``mode`` says what the clients drive: ``game`` the server, ``echo`` the echo server,
    ``frames`` the frames-only server. ``bursts``: rushes of other clients during the window,
    each from a process of its own (:func:`~tools.load.rush.burst_worker`), each reported;
    ``by_second``: the report also has the figures of each one-second window; ``warmup``:
    the clients start that many seconds before the window opens (a server in its stride,
    not starting); ``scrape``: ``GET /metrics`` that many times a second through the window
    (:class:`~tools.load.scrape.Scraper`), reported as ``scrapes``."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    sync = Sync(ctx.Queue(), ctx.Event(), ctx.Value("d", 0.0), ctx.Queue(), ctx.Event(),
                ctx.Queue() if any(b.kind == "spectate" for b in bursts) else None, warmup)
    per_slot = [spectators // games + (1 if i < spectators % games else 0) for i in range(games)]
    workers = max(1, min(workers, games))
    procs = []
    for w in range(workers):
        slots = list(range(w, games, workers))
        procs.append(ctx.Process(
            target=client_worker,
            args=(url, slots, [per_slot[s] for s in slots], think, seconds, seed * 1000 + w,
                  mode, sync, out, loop),
            daemon=True,
        ))
    burst_out = ctx.Queue()
    burst_procs = [ctx.Process(target=burst_worker,
                               args=(child.port, b, seconds, seed * 1000 + 100 + i, sync,
                                     burst_out, loop), daemon=True)
                   for i, b in enumerate(bursts)]
    t_setup = time.perf_counter()
    for p in procs + burst_procs:
        p.start()
    sockets = 0
    for _ in procs + burst_procs:
        n = sync.ready.get(timeout=600)
        if n < 0:
            break
        sockets += n
    setup_s = time.perf_counter() - t_setup
    if not warmup:
        child.ask("reset")
    # Every process starts its window at this instant of the one clock (perf_counter is the
    # system's monotonic clock): their figures line up, second by second.
    play = sync.start_at.value = time.perf_counter() + 0.2
    start = play + warmup
    sync.go.set()
    if warmup:
        time.sleep(max(0.0, start - time.perf_counter()))
        child.ask("reset")
    ours = [child.proc.pid, os.getpid()] + [p.pid for p in procs + burst_procs if p.pid]
    cpu0 = (busy_s(), busy_s(ours))
    overflows = listen_overflows()
    scraper = Scraper(child.port, scrape) if scrape > 0 else None
    if scraper is not None:
        time.sleep(max(0.0, start - time.perf_counter()))
        scraper.start()
    time.sleep(max(0.0, start + seconds - time.perf_counter()))
    if scraper is not None:
        scraper.stop()
        extra_scrapes = {"scrapes": scraper.report()}
    else:
        extra_scrapes = {}
    for _ in procs + burst_procs:  # the moves sent before the end answered
        sync.done.get(timeout=STUCK_S + 30)
    cpu1 = (busy_s(), busy_s(ours))
    overflows = listen_overflows() - overflows
    lag = child.ask("report")
    sync.reported.set()
    memory = child.memory()
    results = [out.get(timeout=300) for _ in procs]
    burst_results = [burst_out.get(timeout=300) for _ in burst_procs]
    for p in procs + burst_procs:
        p.join(30)
    failed = [r["failed"] for r in results + burst_results if "failed" in r]
    if failed:
        raise RuntimeError(f"client worker failed: {failed[0]}")
    lag_at = lag.pop("lag_at", None)  # (when, ms) of each probe: binned below

    def cat(key: str) -> list[float]:
        return [v for r in results for v in r[key]]

    moves = sum(int(r["moves"]) for r in results)
    client_cpu = sum(float(r["cpu_s"]) for r in results)
    slow: dict[int, int] = {}
    for r in results:
        for second, n in r["slow"].items():
            slow[int(second)] = slow.get(int(second), 0) + int(n)
    client_lags = cat("lags")
    extra: dict[str, Any] = dict(extra_scrapes)
    if bursts:
        extra["bursts"] = sorted(burst_results, key=lambda r: r["at_s"])
    if by_second:
        extra["windows"] = windows(cat("own_at"), cat("own"), cat("opp_at"), cat("opp"),
                                   lag_at, start, seconds)
    return {
        "games": games, "spectators": spectators, "sockets": sockets, "seconds": seconds,
        "think_s": list(think), "client_workers": workers, "setup_s": round(setup_s, 1),
        "moves": moves, "moves_per_s": round(moves / seconds, 1),
        "games_finished": sum(int(r["games"]) for r in results),
        "errors": sum(int(r["errors"]) for r in results),
        "own_update": latency(cat("own")), "opponent_update": latency(cat("opp")),
        "spectator_update": latency(cat("spec")),
        "server": {**lag, **memory},
        "client_lag": lag_summary(client_lags),
        # what the machine's CPUs did meanwhile, ours (server, clients) and everyone else's
        "machine_cpu_s": {"all": round(cpu1[0] - cpu0[0], 1), "ours": round(cpu1[1] - cpu0[1], 1),
                          "others": round(cpu1[0] - cpu0[0] - (cpu1[1] - cpu0[1]), 1)},
        "listen_overflows": overflows,  # machine-wide, in the window
        # CPU per move: what a move costs each side, whatever the machine's contention
        "cpu_us_per_move": {
            "server": per_move(lag.get("cpu_s"), moves),
            "server_loop": per_move(lag.get("loop_cpu_s"), moves),
            "clients": per_move(client_cpu, moves),
        },
        "updates_over_100ms_by_second": dict(sorted(slow.items())),
    } | extra
