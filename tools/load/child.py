"""A child server process as the parent steers it (:mod:`tools.load.servers` is the other
end), from this checkout or another one."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from tools.checkout import python_path
from tools.load.machine import proc_memory

ROOT = Path(__file__).resolve().parents[2]


def _module(root: Path) -> str:
    """The module that serves the children in the checkout at ``root``: ``tools.load`` (a
    package, or the single file it was before), or ``server.bench``, which held the load
    generator before it moved to ``tools/``."""
    tools = root / "tools"
    has_load = (tools / "load" / "__main__.py").is_file() or (tools / "load.py").is_file()
    return "tools.load" if has_load else "server.bench"


class Child:
    """A child server process (``serve-child``, ``echo-child`` or ``frames-child``) and its
    control pipe."""

    def __init__(self, kind: str, *args: str, src: Path | None = None) -> None:
        """``src``: another checkout to run the child from (its own ``tools.load``, or the
        ``server.bench`` that held the load generator before it moved to ``tools/``)."""
        import subprocess
        import sys

        root = ROOT if src is None else src.resolve()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", _module(root), kind, *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=root,
            env={**os.environ, "PYTHONPATH": python_path(root)},
        )
        first = self._read()
        self.port = int(first["port"])

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"bench child exited with {self.proc.wait()}")
        out: dict[str, Any] = json.loads(line)
        return out

    def ask(self, command: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._read()

    def memory(self) -> dict[str, float]:
        return proc_memory(self.proc.pid)

    def stop(self) -> None:
        import subprocess

        if self.proc.poll() is None:
            with contextlib.suppress(BrokenPipeError, OSError):
                assert self.proc.stdin is not None
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def fresh_server(tmp: str, bot_workers: int, n: int, loop: str, src: Path | None = None
                 ) -> Child:
    """A ``serve-child`` on a database of its own (``load-N.db`` in ``tmp``)."""
    return Child("serve-child", "--db", str(Path(tmp) / f"load-{n}.db"),
                 "--bot-workers", str(bot_workers), "--loop", loop, src=src)


def sides(baseline: Path | None) -> dict[str, Path | None]:
    """The checkouts a run measures, by name: ``this`` one and, given, the ``baseline``."""
    return {"this": None} if baseline is None else {"this": None, "baseline": baseline}


def in_turn(checkouts: dict[str, Path | None], round_no: int) -> list[str]:
    """The order of round ``round_no`` (from 0): which goes first alternates, so that a
    machine that slows down or speeds up during the run touches both alike."""
    return list(checkouts) if round_no % 2 == 0 else list(reversed(checkouts))
