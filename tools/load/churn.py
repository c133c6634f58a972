"""``python -m tools.load churn``: connections opened and ended as fast as a few threads
can (refused handshakes, resets, clean closes), and what the server's memory keeps."""

from __future__ import annotations

import tempfile
import time
from typing import Any

from tools.load.child import fresh_server
from tools.load.machine import machine
from tools.load.process import raise_nofile
from tools.load.wire import CLOSE_FRAME, REFUSED_REQUEST, UPGRADE_REQUEST

CHURN_MODES = ("refused", "reset", "clean")


def _one_connection(port: int, mode: str) -> None:
    """One short connection of ``mode``: ``refused`` asks for /ws without ``Upgrade`` (the
    server answers 426), ``reset`` completes the handshake then resets the TCP connection,
    ``clean`` completes it and closes with a close frame."""
    import socket
    import struct

    with socket.create_connection(("127.0.0.1", port)) as s:
        if mode == "refused":
            s.sendall(REFUSED_REQUEST)
            s.recv(4096)
            return
        s.sendall(UPGRADE_REQUEST)
        s.recv(4096)
        if mode == "reset":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        else:
            s.sendall(CLOSE_FRAME)
            s.recv(4096)


def _churn(port: int, mode: str, seconds: float, threads: int) -> int:
    import threading

    done = [0] * threads
    end = time.perf_counter() + seconds

    def work(i: int) -> None:
        while time.perf_counter() < end:
            try:
                _one_connection(port, mode)
                done[i] += 1
            except OSError:  # out of ephemeral ports, say: a short breath
                time.sleep(0.01)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return sum(done)


def run_churn(seconds: float = 20.0, modes: tuple[str, ...] = CHURN_MODES, threads: int = 4,
              loop: str = "auto") -> dict[str, Any]:
    """Connections opened and ended as fast as ``threads`` clients can, for ``seconds`` per
    mode (:func:`_one_connection`), each mode against a fresh server child served as
    ``tablas serve`` is (its collector included): the server's memory before and after, the
    objects the collector tracks, and the full collection the schedule would run then. A
    connection's objects must go when it ends: anything left in a reference cycle would
    wait for the hourly full collection."""
    raise_nofile()
    report: dict[str, Any] = {"seconds": seconds, "threads": threads}
    with tempfile.TemporaryDirectory(prefix="tablas-churn-") as tmp:
        for i, mode in enumerate(modes):
            child = fresh_server(tmp, 1, i, loop)
            try:
                time.sleep(0.5)
                before = child.memory()
                child.ask("reset")
                n = _churn(child.port, mode, seconds, threads)
                time.sleep(1.0)  # the last connections end
                after = child.memory()
                state = child.ask("report")
            finally:
                child.stop()
            report[mode] = {
                "connections": n, "per_s": round(n / seconds, 1),
                "rss_before_MiB": before.get("VmRSS"), "rss_after_MiB": after.get("VmRSS"),
                "rss_growth_MiB": round(after.get("VmRSS", 0.0) - before.get("VmRSS", 0.0), 1),
                "gc_objects": state["gc_objects"],
                "full_collection_ms": state["full_collection_ms"],
            }
    report["machine"] = machine(loop, loadavg=False)
    return report
