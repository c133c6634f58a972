"""What the machine says of the run (``/proc``): a process's memory, the CPU time spent, the
connections the kernel dropped, and the report's ``machine`` line."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tablas.server.loop import loop_in_use


def proc_memory(pid: int) -> dict[str, float]:
    """``VmRSS`` and ``VmHWM`` (peak) of a process, in MiB (empty when it is gone)."""
    out: dict[str, float] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = round(int(rest.split()[0]) / 1024, 1)
    return out


def busy_s(pids: Sequence[int] | None = None) -> float:
    """CPU seconds spent so far by the whole machine's processes (``/proc/stat``: user, nice
    and system; not interrupts, where the kernel carries loopback packets), or by ``pids``
    (``/proc/PID/stat``: user and system; 0 for one gone)."""
    tick = os.sysconf("SC_CLK_TCK")
    if pids is None:
        with contextlib.suppress(OSError):
            fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
            return sum(int(v) for v in fields[:3]) / tick
        return 0.0
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            stat = Path(f"/proc/{pid}/stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


def listen_overflows() -> int:
    """How many times the kernel has dropped a connection for a full accept queue (a
    server's ``listen`` backlog), machine-wide: the client's SYN goes unanswered and is sent
    again a second later (``/proc/net/netstat``, ``TcpExt: ListenOverflows``)."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        lines = Path("/proc/net/netstat").read_text().splitlines()
        names, values = (line.split() for line in lines if line.startswith("TcpExt:"))
        return int(dict(zip(names, values, strict=True))["ListenOverflows"])
    return 0


def machine(loop: str, loadavg: bool = True) -> dict[str, Any]:
    """The report's ``machine``: its CPUs, its load average (``loadavg``), the event loop."""
    out: dict[str, Any] = {"cpus": os.cpu_count()}
    if loadavg:
        out["loadavg"] = os.getloadavg()
    return out | {"event_loop": loop_in_use(loop)}
