"""Restart, kill -9, migrations, a killed bot worker."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
from pathlib import Path

import pytest
from pg_support import Backend
from server_support import Client, Subprocess, create, play_vs_bot, running
from tablas.server.store import Store, migration_files, token_hash

HUMAN = {"kind": "human"}


async def test_restart_resumes_the_same_game(backend: Backend) -> None:
    db = backend.where
    async with running(db) as (_srv, url):
        a, b = Client(url), Client(url)
        wa = await a.connect("Ana")
        wb = await b.connect("Bo")
        room, _ = await create(a, "connect4", [HUMAN, HUMAN])
        await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
        for ply, (c, col) in enumerate([(a, 3), (b, 3), (a, 4)]):
            await c.request({"type": "move", "room_id": room, "ply": ply,
                             "move": {"column": col}}, "update")
        before = await a.request({"type": "join", "room_id": room}, "room")
    async with running(db) as (_srv, url):
        a2, b2 = Client(url), Client(url)
        w2 = await a2.connect("Ana", token=wa["token"])
        assert w2["player_id"] == wa["player_id"]
        assert w2["seats"] == [{"room_id": room, "seat": 0, "status": "playing"}]
        await b2.connect("Bo", token=wb["token"])
        await b2.request({"type": "join", "room_id": room}, "room")
        after = await a2.request({"type": "join", "room_id": room, "seat": 0}, "room")
        before.pop("re")
        after.pop("re")
        assert after == before  # the identical snapshot
        cols = {0: [0, 1, 2, 0, 1, 2, 0, 1, 2, 5, 5, 5, 6, 6, 6], 1: [6, 5, 6, 5, 6, 5] * 4}
        players = {0: a2, 1: b2}
        cur = after
        while cur["status"] != "finished":
            seat = cur["to_move"]
            legal = [m["column"] for m in (await players[seat].request(
                {"type": "spectate", "room_id": room}, "room"))["legal_moves"]]
            col = next(c for c in cols[seat] + list(range(7)) if c in legal)
            cur = await players[seat].request(
                {"type": "move", "room_id": room, "ply": cur["ply"], "move": {"column": col}},
                "update")
        assert cur["result"] is not None


async def test_restart_bot_thinks_again(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    async with running(db) as (srv, url):
        a = Client(url)
        w = await a.connect("Ana")
        room, snap = await create(a, "tictactoe", [HUMAN, {"kind": "bot", "level": "random"}])
        # stop the bot from answering: close the server right after our move is stored
        srv.services.closing = True
        await a.request({"type": "move", "room_id": room, "ply": 0, "move": {"cell": 0}},
                        "update")
    async with running(db) as (_srv, url):
        a2 = Client(url)
        await a2.connect("Ana", token=w["token"])
        snap = await a2.request({"type": "join", "room_id": room}, "room")
        if snap["ply"] == 1:  # the bot had not moved yet: it thinks again after the restart
            u = await a2.expect("update")
            assert u["ply"] == 2 and u["seat"] == 1
        end = await play_vs_bot(a2, room, snap if snap["ply"] > 1 else u)
        assert end["status"] == "finished"


async def test_kill9_keeps_every_acknowledged_move(tmp_path: Path, backend: Backend) -> None:
    """``tablas serve`` on each backend (``--db`` a file, or a ``postgresql://`` URL) killed
    with SIGKILL mid-game: every move its client saw is in the database, and the game plays
    on after the restart."""
    srv = Subprocess(backend.where, tmp_path / "server.log")
    srv.start()
    try:
        a = Client(srv.url)
        w = await a.connect("Kim")
        room, view = await create(a, "connect4", [HUMAN, {"kind": "bot", "level": "easy"}])
        acked = []
        while view["status"] != "finished" and len(acked) < 8:
            if view["to_move"] == 0 and view["legal_moves"]:
                mv = view["legal_moves"][len(acked) % len(view["legal_moves"])]
                await a.send({"type": "move", "room_id": room, "ply": view["ply"], "move": mv})
            view = await a.expect("update", timeout=60)
            acked.append((view["ply"], view["move"]))
        srv.kill9()
        stored = await backend.rows(
            f"SELECT ply, move FROM moves WHERE room_id = '{room}' ORDER BY ply")
        assert [json.loads(m) for p, m in stored[:len(acked)]] == [mv for _, mv in acked]
        assert [p + 1 for p, _ in stored] == list(range(1, len(stored) + 1))
        srv.start()
        a2 = Client(srv.url)
        w2 = await a2.connect("Kim", token=w["token"])
        assert w2["player_id"] == w["player_id"]
        snap = await a2.request({"type": "join", "room_id": room, "seat": 0}, "room")
        for ply, mv in acked:
            assert snap["history"][ply - 1] == mv
        end = await play_vs_bot(a2, room, snap)
        assert end["status"] == "finished"
        await a2.close()
        assert srv.terminate() == 0  # SIGTERM: a clean, graceful exit
    finally:
        srv.kill9()


async def test_killed_bot_worker_is_replaced(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", workers=1) as (srv, url):
        a = Client(url)
        await a.connect("Ana")
        room, view = await create(a, "tictactoe", [HUMAN, {"kind": "bot", "level": "easy"}])
        await a.send({"type": "move", "room_id": room, "ply": 0, "move": {"cell": 4}})
        view = await a.expect("update")
        view = await a.expect("update")  # the bot answered: a worker exists now
        assert view["seat"] == 1
        pids = srv.bots.worker_pids()
        assert pids
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.2)
        mv = view["legal_moves"][0]
        await a.send({"type": "move", "room_id": room, "ply": view["ply"], "move": mv})
        await a.expect("update")
        bot = await a.expect("update", timeout=60)
        assert bot["seat"] == 1
        assert srv.bots.worker_pids() and set(srv.bots.worker_pids()).isdisjoint(pids)


def _schema(db: Path) -> set[tuple[str, str]]:
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").fetchall()
    cols = set()
    for _type, name in rows:
        if _type == "table":
            cols |= {(name, r[1]) for r in con.execute(f"PRAGMA table_info({name})")}
    con.close()
    return set(rows) | cols


@pytest.mark.parametrize("start", range(len(migration_files()) + 1))
async def test_migrations_from_every_version(tmp_path: Path, start: int) -> None:
    fresh = tmp_path / "fresh.db"
    s = await Store.open(fresh)
    await s.close()
    old = tmp_path / "old.db"
    s = await Store.open(old, upto=start)
    assert await s.schema_version() == start
    if start >= 1:  # data written at the old version survives the upgrade
        await s.db.execute(
            "INSERT INTO players (id, name, token_hash, created_at) VALUES (?, ?, ?, ?)",
            ("p1", "Old", token_hash("tok"), 1.0))
        await s.db.execute(
            "INSERT INTO rooms (id, game, options, status, created_at)"
            " VALUES ('r1', 'connect4', '{}', 'playing', 1.0)")
        await s.db.execute(
            "INSERT INTO seats (room_id, seat, kind, level, player_id)"
            " VALUES ('r1', 0, 'human', NULL, 'p1'), ('r1', 1, 'bot', 'easy', NULL)")
        await s.db.execute(
            "INSERT INTO moves (room_id, ply, seat, move, created_at)"
            " VALUES ('r1', 0, 0, '{\"column\": 3}', 2.0)")
        await s.db.commit()
    await s.close()
    s = await Store.open(old)
    assert await s.schema_version() == len(migration_files())
    if start >= 1:
        found = await s.account_by_token("tok")
        assert found is not None and (found.player_id, found.name) == ("p1", "Old")
        # 0003: a room from before clocks loads without one, its moves without clock times
        record = await s.load_room("r1")
        assert record is not None and record.room_options.clock is None
        assert [a.clocks for a in record.actions] == [None] and record.final_clocks is None
        room = record.to_room()
        assert room.ply == 1 and room.clocks.live() is None and room.bot_to_move() == 1
        assert await s.seat_changes("r1") == []
    await s.close()
    assert _schema(old) == _schema(fresh)
    con = sqlite3.connect(old)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    versions = [r[0] for r in con.execute("SELECT version FROM schema_migrations ORDER BY 1")]
    assert versions == list(range(1, len(migration_files()) + 1))
    con.close()


async def test_tokens_are_stored_hashed(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    async with running(db) as (_srv, url):
        a = Client(url)
        w = await a.connect("Ana")
    raw = db.read_bytes() + (tmp_path / "t.db-wal").read_bytes() if (
        tmp_path / "t.db-wal").exists() else db.read_bytes()
    assert w["token"].encode() not in raw
    con = sqlite3.connect(db)
    assert con.execute("SELECT token_hash FROM players").fetchone()[0] == token_hash(w["token"])
    con.close()


def test_serve_bad_arguments_exit_2(tmp_path: Path) -> None:
    import subprocess
    import sys

    def serve(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tablas.server.cli", "serve", *args],
                              capture_output=True, text=True, timeout=60)

    r = serve("--bot-workers", "0")
    assert r.returncode == 2 and "--bot-workers" in r.stderr
    r = serve("--port", "x")
    assert r.returncode == 2
    r = serve("--port", "0", "--db", str(tmp_path / "no" / "such" / "dir.db"))
    assert r.returncode == 2 and "database" in r.stderr and len(r.stderr.splitlines()) == 1
