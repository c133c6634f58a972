"""What ``tablas serve`` logs: quiet by default (games and errors, not every connection and
HTTP answer), ``--log-level``, and ``--log-json`` lines an operator's pipeline can read."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from contextlib import suppress
from pathlib import Path

from server_support import ROOT, free_port
from tablas.server.client import ProtocolClient

HUMAN = {"kind": "human"}
BOT = {"kind": "bot", "level": "random"}


def _serve(tmp: Path, *args: str) -> tuple[subprocess.Popen[bytes], int, Path]:
    port, log = free_port(), tmp / "serve.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tablas.server.cli", "serve", "--port", str(port), "--db",
         str(tmp / "t.db"), "--bot-workers", "1", *args],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=open(log, "wb"))
    deadline = time.time() + 30
    while time.time() < deadline:
        with suppress(OSError), urllib.request.urlopen(
                f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
            if r.status == 200:
                return proc, port, log
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(log.read_text())


async def _a_game(port: int) -> str:
    """A room opened, two page loads, a game resigned: the room's id."""
    for path in ("/", "/api/rooms"):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            r.read()
    c = await ProtocolClient.open(f"ws://127.0.0.1:{port}/ws", "Ana")
    try:
        created = await c.request({"type": "create_room", "game": "tictactoe", "options": {},
                                   "seats": [HUMAN, BOT], "join_seat": 0})
        room = str(created["room_id"])
        await c.request({"type": "resign", "room_id": room})
    finally:
        await c.close()
    return room


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(timeout=30)


async def test_the_default_log_tells_games_not_connections(tmp_path: Path) -> None:
    proc, port, log = _serve(tmp_path)
    try:
        room = await _a_game(port)
    finally:
        _stop(proc)
    text = log.read_text()
    assert f"room {room} (tictactoe) opened, playing" in text
    assert f"room {room} (tictactoe) finished: seat 1 won (resign, 1 point(s))" in text
    assert f"serving http://127.0.0.1:{port}/" in text
    for noise in ("HTTP response sent", "connection open", "connection closed"):
        assert noise not in text


async def test_json_lines_and_debug_level(tmp_path: Path) -> None:
    proc, port, log = _serve(tmp_path, "--log-json", "--log-level", "debug")
    try:
        room = await _a_game(port)
    finally:
        _stop(proc)
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert lines and all({"time", "level", "logger", "message"} <= set(x) for x in lines)
    events = [(x["event"], x.get("status")) for x in lines if x.get("room_id") == room]
    assert events == [("opened", "playing"), ("finished", "finished")]
    end = next(x for x in lines if x.get("event") == "finished")
    assert end["result"] == {"winner": 1, "points": 1, "reason": "resign"}
    assert any(x["logger"].startswith("websockets") for x in lines)  # debug shows them


def test_bad_log_level_is_refused(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "tablas.server.cli", "serve", "--log-level", "loud",
                          "--db", str(tmp_path / "t.db")], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 2 and "--log-level" in out.stderr and "Traceback" not in out.stderr
