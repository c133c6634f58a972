"""The event loop: ``tablas serve`` runs on uvloop when it is installed (it is a dependency
off Windows), ``--loop`` chooses, and the server behaves the same on either loop: a game is
played and a reader that stops reading is dropped, on uvloop too (the rest of the suite runs
in-process servers on asyncio's loop)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
import test_server_security
from server_support import ROOT, Client, Subprocess, create

from server.loop import loop_in_use, run

uvloop = pytest.importorskip("uvloop")
HUMAN = {"kind": "human"}


def test_auto_prefers_uvloop_and_each_choice_runs_its_loop() -> None:
    assert loop_in_use("auto") == "uvloop"
    assert loop_in_use("asyncio") == "asyncio"
    assert loop_in_use("uvloop") == "uvloop"

    async def which() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert run(which(), "asyncio").startswith("asyncio")
    assert run(which(), "uvloop").startswith("uvloop")
    assert run(which()).startswith("uvloop")
    with pytest.raises(ValueError, match="unknown event loop 'trio'"):
        run(which(), "trio")


def test_serve_refuses_an_unknown_loop() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "server.cli", "serve", "--loop", "trio", "--port", "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 2
    assert "invalid choice: 'trio'" in out.stderr


def test_served_server_says_its_loop_and_plays_on_it(tmp_path: Path) -> None:
    server = Subprocess(tmp_path / "t.db", tmp_path / "serve.log")
    server.start()
    try:
        async def game() -> dict[str, object]:
            a, b = Client(server.url), Client(server.url)
            await a.connect("Ana")
            await b.connect("Bo")
            room, _ = await create(a, "tictactoe", [HUMAN, HUMAN])
            view = await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
            players = {0: a, 1: b}
            for cell in (0, 3, 1, 4, 2):  # seat 0 wins on the top row
                view = await players[view["to_move"]].request(
                    {"type": "move", "room_id": room, "ply": view["ply"],
                     "move": {"cell": cell}}, "update")
            return view

        view = asyncio.run(game())
    finally:
        assert server.terminate() == 0
    assert view["status"] == "finished" and view["result"]["winner"] == 0
    assert "event loop: uvloop" in (tmp_path / "serve.log").read_text()


def test_slow_reader_is_dropped_on_uvloop_too(tmp_path: Path) -> None:
    """uvloop writes what it can at once and buffers the rest, as asyncio does: the bound
    on what a connection holds unread works the same (the security test, on uvloop)."""
    run(test_server_security.test_slow_spectator_is_dropped_without_delaying_anyone(tmp_path),
        "uvloop")

