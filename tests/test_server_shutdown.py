"""Graceful shutdown: ``tablas serve`` gets SIGTERM in the middle of games."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from server_support import Client, Subprocess, create
from websockets.exceptions import ConnectionClosed

HUMAN = {"kind": "human"}


async def _closed(c: Client) -> tuple[int, str]:
    """Reads until the server closes ``c``; the close code and reason it sent."""
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            await c.recv(10)
    rcvd = closed.value.rcvd
    assert rcvd is not None, "no close frame: the connection was dropped"
    return rcvd.code, rcvd.reason


def _moves(db: Path, room: str) -> list[Any]:
    con = sqlite3.connect(db)
    try:
        return [json.loads(m) for (m,) in con.execute(
            "SELECT move FROM moves WHERE room_id = ? ORDER BY ply", (room,))]
    finally:
        con.close()


async def _finish(players: dict[int, Client], room: str, view: dict[str, Any]) -> dict[str, Any]:
    """Plays the first legal move for whichever seat is to move until the game ends."""
    for _ in range(100):
        if view["status"] == "finished":
            return view
        seat = view["to_move"]
        legal = view["legal_moves"] or (await players[seat].request(
            {"type": "spectate", "room_id": room}, "room"))["legal_moves"]
        view = await players[seat].request(
            {"type": "move", "room_id": room, "ply": view["ply"], "move": legal[0]}, "update")
    raise AssertionError("the game did not finish")


async def _stuck_client(port: int) -> asyncio.StreamWriter:
    """A WebSocket client that completes the handshake and then never reads again, so it
    never answers the server's close frame."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                 b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                 b"Sec-WebSocket-Version: 13\r\n\r\n")
    assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 101")
    return writer


async def test_sigterm_mid_game_then_restart(tmp_path: Path) -> None:
    db, log = tmp_path / "t.db", tmp_path / "server.log"
    srv = Subprocess(db, log)
    srv.start()
    try:
        a, b, s = Client(srv.url), Client(srv.url), Client(srv.url)
        wa = await a.connect("Ana")
        wb = await b.connect("Bo")
        await s.connect("Spec")
        room, _ = await create(a, "connect4", [HUMAN, HUMAN])
        view = await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
        await s.request({"type": "spectate", "room_id": room}, "room")
        # a second room where a bot is thinking when the signal comes
        bot_room, bot_view = await create(a, "connect4",
                                          [HUMAN, {"kind": "bot", "level": "max"}])
        players = {0: a, 1: b}
        acked: list[dict[str, Any]] = []
        for i in range(5):
            seat = view["to_move"]
            legal = [{"column": c} for c in range(7)]
            move = legal[(i * 3) % 7]
            view = await players[seat].request(
                {"type": "move", "room_id": room, "ply": view["ply"], "move": move}, "update")
            acked.append(view["move"])
        await a.send({"type": "move", "room_id": bot_room, "ply": bot_view["ply"],
                      "move": {"column": 3}})
        # one move in flight as the signal arrives: it may or may not be applied, but if the
        # client saw it acknowledged it must be on disk
        mover = players[view["to_move"]]
        in_flight = await mover.send(
            {"type": "move", "room_id": room, "ply": view["ply"], "move": {"column": 6}})
        # Clients that will never answer the close frame must not hold the shutdown up: each
        # is given 2 s, all at once; one after the other, these 8 would take 16 s, past the
        # 12 s wait below (how long a shutdown takes is no figure for a unit test).
        stuck = [await _stuck_client(srv.port) for _ in range(8)]
        assert srv.proc is not None
        # To the server process only, as `kill PID` or an orchestrator stopping the main
        # process does (Ctrl-C to the whole group: the next test).
        os.kill(srv.proc.pid, signal.SIGTERM)
        exited = asyncio.ensure_future(asyncio.to_thread(srv.proc.wait, 12))
        closes = await asyncio.gather(*(_closed(c) for c in (a, b, s)))
        code = await exited
        assert code == 0, log.read_text()[-3000:]
        for w in stuck:
            w.close()
        for close_code, reason in closes:
            assert close_code == 1001 and reason, (close_code, reason)
        text = log.read_text()
        assert "shutting down" in text and "Traceback" not in text, text[-3000:]
        for m in mover.inbox:
            if m.get("re") == in_flight and m["type"] == "update":
                acked.append(m["move"])
        on_disk = _moves(db, room)
        assert on_disk[:len(acked)] == acked
        assert len(on_disk) in (len(acked), len(acked) + 1)

        # the same database and port: everyone comes back with their token
        srv.start()
        a2, b2, s2 = Client(srv.url), Client(srv.url), Client(srv.url)
        w2 = await a2.connect("Ana", token=wa["token"])
        assert w2["player_id"] == wa["player_id"]
        assert {x["room_id"] for x in w2["seats"]} == {room, bot_room}
        await b2.connect("Bo", token=wb["token"])
        await s2.connect("Spec")
        snap = await a2.request({"type": "join", "room_id": room, "seat": 0}, "room")
        assert len(snap["history"]) == len(on_disk)
        view = await b2.request({"type": "join", "room_id": room, "seat": 1}, "room")
        await s2.request({"type": "spectate", "room_id": room}, "room")
        end = await _finish({0: a2, 1: b2}, room, view)
        assert end["status"] == "finished"
        assert (await s2.expect("room", timeout=20))["status"] == "finished"
        # the bot's room goes on too: resign it to end quickly
        await a2.request({"type": "resign", "room_id": bot_room}, "room")
        for c in (a2, b2, s2):
            await c.close()
        assert srv.terminate() == 0
    finally:
        srv.kill9()


async def test_ctrl_c_to_the_process_group_while_a_bot_thinks(tmp_path: Path) -> None:
    """Ctrl-C in a terminal signals the whole process group, bot workers and their progress
    manager included. The workers ignore SIGINT and leave the stopping to the server, which
    closes its clients with 1001 and exits 0 without a traceback."""
    db, log = tmp_path / "t.db", tmp_path / "server.log"
    srv = Subprocess(db, log)
    srv.start()
    try:
        a, s = Client(srv.url), Client(srv.url)
        await a.connect("Ana")
        await s.connect("Spec")
        room, view = await create(a, "connect4", [HUMAN, {"kind": "bot", "level": "max"}])
        await s.request({"type": "spectate", "room_id": room}, "room")
        await a.request({"type": "move", "room_id": room, "ply": view["ply"],
                         "move": {"column": 3}}, "update")
        # The bot is thinking in a worker: its live analysis is reaching the spectator.
        await s.expect("analysis", timeout=30)
        assert srv.proc is not None
        os.killpg(srv.proc.pid, signal.SIGINT)
        code, _ = await _closed(a)
        assert code == 1001
        assert await asyncio.to_thread(srv.proc.wait, 15) == 0
        text = log.read_text()
        assert "shutting down" in text and "Traceback" not in text, text[-3000:]
    finally:
        srv.kill9()
