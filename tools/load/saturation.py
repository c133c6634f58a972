"""The saturation run: games with no think time against the server, then socket pairs driven
the same way against a bare ``websockets`` echo server and against a frames-only server (the
ceiling any server could reach with these clients), and the ratios between them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tools.load.child import Child, fresh_server
from tools.load.measure import measure

_KEEP = ("games", "sockets", "seconds", "moves", "moves_per_s", "own_update", "errors",
         "cpu_us_per_move")


def _bare(kind: str, mode: str, games: int, seconds: float, workers: int, seed: int,
          loop: str) -> dict[str, Any]:
    """``games`` socket pairs driving a bare server child (``echo-child`` or
    ``frames-child``) with no think time; the figures kept of it."""
    child = Child(kind, "--loop", loop)
    try:
        r = measure(child, f"ws://127.0.0.1:{child.port}/", games, 0, (0.0, 0.0), seconds,
                    workers, seed, loop, mode=mode)
    finally:
        child.stop()
    return {k: r[k] for k in _KEEP}


def saturation(tmp: str, trial: int, games: int, spectators: int, seconds: float,
               workers: int, seed: int, loop: str, say: Callable[[str], None]
               ) -> dict[str, Any]:
    """The report's ``saturation``, ``echo``, ``frames_only``, ``saturation_vs_echo`` and
    ``frames_only_vs_echo`` (a fresh server: trial number ``trial``, its database in
    ``tmp``)."""
    child = fresh_server(tmp, 1, trial, loop)
    try:
        say(f"saturation: {games} games + {spectators} spectators, no think time,"
            f" {seconds:g} s ...")
        sat = measure(child, f"ws://127.0.0.1:{child.port}/ws", games, spectators, (0.0, 0.0),
                      seconds, workers, seed, loop)
    finally:
        child.stop()
    say(f"  -> {sat['moves_per_s']} moves/s, own p50/p99 {sat['own_update']['p50_ms']}/"
        f"{sat['own_update']['p99_ms']} ms, lag p99 {sat['server'].get('lag_p99_ms')} ms")
    say(f"echo server: {games} socket pairs, no think time, {seconds:g} s ...")
    echo = _bare("echo-child", "echo", games, seconds, workers, seed, loop)
    say(f"  -> {echo['moves_per_s']} round trips/s")
    say(f"frames-only server: {games} socket pairs, no think time, {seconds:g} s ...")
    frames = _bare("frames-child", "frames", games, seconds, workers, seed, loop)
    say(f"  -> {frames['moves_per_s']} moves/s")
    echo["round_trips_per_s"] = echo.pop("moves_per_s")
    echo_rate = max(1e-9, echo["round_trips_per_s"])
    return {
        "saturation": sat, "echo": echo, "frames_only": frames,
        "saturation_vs_echo": round(sat["moves_per_s"] / echo_rate, 3),
        # the ratio a server doing nothing but a move's frames reaches: the ceiling
        "frames_only_vs_echo": round(frames["moves_per_s"] / echo_rate, 3),
    }
