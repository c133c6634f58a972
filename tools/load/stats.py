"""The figures made of a run's timings: spreads, the lag's summary, CPU per move, each
one-second window, and the verdict on a human-pace load."""

from __future__ import annotations

from typing import Any

from tablas.server.server_bench import percentile


def spread(values: list[float]) -> dict[str, float | int | None]:
    """p50/p99/max (ms) of ``values``, and how many; ``{"n": 0}`` for none."""
    if not values:
        return {"n": 0}
    return {"n": len(values), "p50_ms": round(percentile(values, 50), 2),
            "p99_ms": round(percentile(values, 99), 2), "max_ms": round(max(values), 2)}


def latency(values: list[float]) -> dict[str, float | int | None]:
    """:func:`spread`, which for none still names p50 and p99 (None)."""
    return spread(values) if values else {"n": 0, "p50_ms": None, "p99_ms": None}


def lag_summary(lags: list[float]) -> dict[str, float]:
    """An event loop's lag (ms, from :func:`tablas.server.server_bench.lag_probe`): p50/p99/max."""
    if not lags:
        return {"lag_samples": 0}
    return {"lag_p50_ms": round(percentile(lags, 50), 2),
            "lag_p99_ms": round(percentile(lags, 99), 2), "lag_max_ms": round(max(lags), 2),
            "lag_samples": len(lags)}


def per_move(cpu_s: float | None, moves: int) -> float | None:
    """CPU microseconds per move (None without a figure or a move)."""
    return None if cpu_s is None or not moves else round(cpu_s / moves * 1e6, 1)


def p99(result: dict[str, Any]) -> float:
    """The load's verdict: the worse p99 of the opponent's and the spectators' update."""
    values = [result[k]["p99_ms"] for k in ("opponent_update", "spectator_update")
              if result[k]["n"]]
    # No update at all (a run too short for its think time) proves nothing: not holding.
    return float(max(values)) if values else float("inf")


def windows(own_at: list[float], own: list[float], opp_at: list[float], opp: list[float],
            lag_at: list[list[float]] | None, start: float, seconds: float
            ) -> list[dict[str, Any]]:
    """Each one-second window of the run (moves by the second they were sent in): the
    acknowledged move (the mover's own update) and the opponent's update, p50/p99/max, and
    the server's largest lag and its event loop's CPU in the window (None from a server
    child that does not say when its lags were)."""
    n = max(1, int(seconds + 0.999))

    def bins(at: list[float], ms: list[float]) -> list[list[float]]:
        out: list[list[float]] = [[] for _ in range(n)]
        for t, v in zip(at, ms, strict=True):
            if 0 <= t < n:
                out[int(t)].append(v)
        return out

    lags: list[float | None] = [None] * n
    cpu: list[float | None] = [None] * n  # the loop's CPU time at the window's last probe
    before: float | None = None  # … and at the last probe before the window
    for t, ms, *used in lag_at or []:
        s = t - start
        if s < 0 and used:
            before = used[0]
        if 0 <= s < n:
            lags[int(s)] = max(lags[int(s)] or 0.0, ms)
            if used:
                cpu[int(s)] = used[0]
    busy: list[float | None] = []
    for now in cpu:
        busy.append(None if now is None or before is None else round((now - before) * 1000))
        before = now if now is not None else before
    rows = []
    for s, (mine, theirs) in enumerate(zip(bins(own_at, own), bins(opp_at, opp), strict=True)):
        a, b = spread(mine), spread(theirs)
        rows.append({"second": s, "moves": a["n"], "own_p50_ms": a.get("p50_ms"),
                     "own_p99_ms": a.get("p99_ms"), "own_max_ms": a.get("max_ms"),
                     "opp_p99_ms": b.get("p99_ms"), "opp_max_ms": b.get("max_ms"),
                     "lag_max_ms": lags[s], "loop_cpu_ms": busy[s]})
    return rows


def worst_window(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The window whose acknowledged moves' p99 is the highest."""
    timed = [w for w in rows if w["moves"]]
    return max(timed, key=lambda w: (w["own_p99_ms"], w["own_max_ms"])) if timed else None
