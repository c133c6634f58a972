"""A bare pipe round trip between two processes: the floor under any line protocol
(docs/benchmarks.md, "tablas match"). This process writes a short line into a child's stdin
and reads the child's answer from its stdout, N times, with plain blocking reads and writes,
no event loop; the child (Python, or any program given) answers each line with one line.

    python -m tools.pipe_roundtrip [--n 20000] [--child COMMAND]

Prints, as JSON, the wall time of one round trip and this process's CPU time per round trip
(both in microseconds). ``tools/match_bench.py`` runs it in the same run as the match it
compares with it.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from typing import Any

ECHO = ("import sys\n"
        "r, w = sys.stdin.buffer, sys.stdout.buffer\n"
        "for line in iter(r.readline, b''):\n"
        "    w.write(b'move ' + line)\n"
        "    w.flush()\n")


def measure(n: int, child: list[str] | None = None) -> dict[str, Any]:
    argv = child or [sys.executable, "-c", ECHO]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None
    fd_in, out = proc.stdin.fileno(), proc.stdout
    line = b"go 1000\n"
    try:
        for _ in range(200):  # warm up
            os.write(fd_in, line)
            out.readline()
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(n):
            os.write(fd_in, line)
            out.readline()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        proc.stdin.close()
        proc.wait()
    return {"round_trips": n, "wall_us": round(wall / n * 1e6, 2),
            "cpu_us": round(cpu / n * 1e6, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--child", default=None, help="an echoing program (default: Python)")
    args = ap.parse_args()
    child = shlex.split(args.child) if args.child else None
    print(json.dumps(measure(args.n, child)))


if __name__ == "__main__":
    main()
