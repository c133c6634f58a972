"""The store's group commit: moves of many rooms share transactions, and stay each their
caller's own (durable before the call returns; a bad one fails alone). Every test that takes
``backend`` runs on SQLite and on PostgreSQL (tests/pg_support.py)."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from pathlib import Path
from typing import Any

from pg_support import Backend
from tablas.server.room import Action, SeatState
from tablas.server.store import CommitStats, SqliteStore, Storage, Store

HUMANS = [SeatState("human"), SeatState("human")]


async def _store_with_rooms(backend: Backend, n: int) -> Storage:
    store = await backend.open()
    for i in range(n):
        await store.create_room(f"r{i}", "tictactoe", {}, HUMANS, "playing", None, [], 0.0)
    return store


async def test_concurrent_moves_of_many_rooms_share_commits(backend: Backend) -> None:
    store = await _store_with_rooms(backend, 30)
    before = await backend.commits()
    for ply in range(3):
        await asyncio.gather(*(
            store.record_move(f"r{i}", Action(ply, ply % 2, {"cell": ply}), None)
            for i in range(30)))
    commits = await backend.commits() - before
    rows = await backend.rows("SELECT room_id, ply FROM moves ORDER BY room_id, ply")
    await store.close()
    assert sorted(rows) == sorted((f"r{i}", p) for i in range(30) for p in range(3))
    # 90 moves: the first of each wave commits alone, the 29 that queued behind it together.
    assert 3 <= commits <= 6, commits


async def test_commit_stats_count_the_transactions_the_database_ran(backend: Backend) -> None:
    """The group commit's running totals (what the load report shows per transaction): as
    many transactions as the database committed, every write counted once, their time
    counted."""
    store = await _store_with_rooms(backend, 20)
    before = dataclasses.replace(store.commit_stats)
    assert before.transactions == before.writes == 20  # one room at a time
    on_disk = await backend.commits()
    for ply in range(4):
        await asyncio.gather(*(
            store.record_move(f"r{i}", Action(ply, ply % 2, {"cell": ply}), None)
            for i in range(20)))
    window = store.commit_stats.minus(before)
    commits = await backend.commits() - on_disk
    await store.close()
    assert window.transactions == commits and 4 <= commits < 80
    assert window.writes == 80
    assert window.seconds > 0
    summary = window.summary()
    assert summary["transactions"] == commits
    assert summary["writes_per_transaction"] == round(80 / commits, 3)
    assert summary["transaction_ms"] == round(window.seconds * 1000 / commits, 3)
    assert CommitStats().summary()["transaction_ms"] is None


async def test_a_bad_move_in_a_batch_fails_only_its_caller(backend: Backend) -> None:
    store = await _store_with_rooms(backend, 4)
    await store.record_move("r0", Action(0, 0, {"cell": 4}), None)

    async def move(room: str) -> Any:
        return await store.record_move(room, Action(0, 0, {"cell": 0}), None)

    # r0's ply 0 exists already: its insert breaks the batch, the others must still land.
    results = await asyncio.gather(*(move(f"r{i}") for i in range(4)), return_exceptions=True)
    assert isinstance(results[0], backend.integrity_error), results
    assert results[1:] == [None, None, None]
    for i in range(1, 4):
        record = await store.load_room(f"r{i}")
        assert record is not None and [a.move for a in record.actions] == [{"cell": 0}]
    record = await store.load_room("r0")
    assert record is not None and [a.move for a in record.actions] == [{"cell": 4}]
    await store.close()


async def test_a_bad_write_alone_changes_nothing_and_the_next_one_lands(
        backend: Backend) -> None:
    """A lone write goes to the database as one statement, its own transaction: when it
    fails, its caller gets the error, nothing of it is written, and the store goes on."""
    store = await _store_with_rooms(backend, 1)
    await store.record_move("r0", Action(0, 0, {"cell": 4}), None)
    try:
        await store.record_move("r0", Action(0, 1, {"cell": 5}), None)  # ply 0 again
        raise AssertionError("a second ply 0 was accepted")
    except backend.integrity_error:
        pass
    if isinstance(store, SqliteStore):
        assert not store.db.in_transaction
    await store.record_move("r0", Action(1, 1, {"cell": 0}), None)
    record = await store.load_room("r0")
    await store.close()
    assert record is not None and [a.move for a in record.actions] == [{"cell": 4}, {"cell": 0}]
    assert await backend.rows("SELECT ply, move FROM moves ORDER BY ply") == [
        (0, '{"cell":4}'), (1, '{"cell":0}')]


async def test_close_writes_what_was_handed_over(backend: Backend) -> None:
    store = await _store_with_rooms(backend, 3)
    tasks = [asyncio.create_task(store.record_move(f"r{i}", Action(0, 0, {"cell": 1}), None))
             for i in range(3)]
    await asyncio.sleep(0)  # handed over, not yet written
    await store.close()
    assert [t.result() for t in tasks] == [None, None, None]
    assert await backend.rows("SELECT COUNT(*) FROM moves") == [(3,)]


async def test_one_move_alone_is_one_commit(backend: Backend) -> None:
    """A move alone is one commit, for any other connection to read once the call
    returns."""
    store = await _store_with_rooms(backend, 1)
    before = await backend.commits()
    await store.record_move("r0", Action(0, 0, {"cell": 4}), None)
    assert await backend.commits() == before + 1
    assert await backend.rows("SELECT COUNT(*) FROM moves") == [(1,)]
    await store.close()


async def test_rooms_seats_and_moves_share_commits(backend: Backend) -> None:
    """Every kind of write joins the group commit, not only moves."""
    store = await _store_with_rooms(backend, 2)
    before = await backend.commits()
    await asyncio.gather(
        store.record_move("r0", Action(0, 0, {"cell": 4}), None),
        store.create_room("r9", "tictactoe", {}, HUMANS, "waiting", None, [], 0.0),
        store.create_player("p", "Ana", "secret"),
        store.record_chat("r1", "p", "hi", 0.0),
        store.record_move("r1", Action(0, 0, {"cell": 2}), None),
    )
    assert await backend.commits() - before <= 2
    await store.close()
    assert await backend.rows("SELECT COUNT(*) FROM moves") == [(2,)]
    assert await backend.rows("SELECT COUNT(*) FROM seats WHERE room_id = 'r9'") == [(2,)]
    assert await backend.rows("SELECT COUNT(*) FROM chat") == [(1,)]


async def test_json_columns_round_trip_whatever_text_they_hold(backend: Backend) -> None:
    """Options, moves and dice are written compactly by pydantic-core, which refuses a lone
    surrogate (not UTF-8; JSON from the wire may escape one): such text is still stored,
    escaped, and every value reads back as it was written."""
    store = await backend.open()
    options = {"note": "\ud800 é \u0000", "n": [1, 2.5, None, True]}
    await store.create_room("r", "backgammon", options, HUMANS, "playing", None, [(3, 1)], 0.0)
    move = {"play": "24/21 \udfff"}
    await store.record_move("r", Action(0, 0, move, rolls=((6, 6),)), None)
    record = await store.load_room("r")
    await store.close()
    assert record is not None
    assert record.options == options
    assert record.opening_rolls == [(3, 1)]
    assert [(a.move, a.rolls) for a in record.actions] == [(move, ((6, 6),))]


async def test_dice_seeds_read_back_as_written(backend: Backend) -> None:
    """A room's dice seed goes into a batch as hexadecimal text and comes back as its
    bytes."""
    store = await backend.open()
    seed = bytes(range(32))
    await store.create_room("new", "backgammon", {}, HUMANS, "waiting", seed, [], 0.0)
    new = await store.load_room("new")
    await store.close()
    assert new is not None and new.seed == seed


async def test_an_older_sqlite_rooms_seed_still_reads_back(tmp_path: Path) -> None:
    """A room an older version stored in SQLite (the seed as a BLOB) still reads back the
    same."""
    db = tmp_path / "t.db"
    store = await Store.open(db)
    seed = bytes(range(32))
    con = sqlite3.connect(db)
    con.execute("INSERT INTO rooms (id, game, options, status, dice_seed, opening_dice,"
                " created_at) VALUES ('old', 'backgammon', '{}', 'waiting', ?, '[]', 0)",
                (seed[::-1],))
    con.executemany("INSERT INTO seats (room_id, seat, kind) VALUES ('old', ?, 'human')",
                    [(0,), (1,)])
    con.commit()
    con.close()
    old = await store.load_room("old")
    await store.close()
    assert old is not None and old.seed == seed[::-1]


async def test_a_value_the_database_cannot_hold_fails_its_write_alone(
        backend: Backend) -> None:
    """A lone surrogate (not UTF-8; JSON from the wire may escape one) or a U+0000
    (PostgreSQL's text cannot hold it) in a chat line is refused before it joins a batch, on
    every backend: the writes beside it land."""
    store = await _store_with_rooms(backend, 1)
    await store.create_player("p", "Ana", "secret")
    surrogate, nul, good = await asyncio.gather(
        store.record_chat("r0", "p", "\ud800", 0.0), store.record_chat("r0", "p", "a\x00", 0.0),
        store.record_chat("r0", "p", "hi", 0.0), return_exceptions=True)
    assert isinstance(surrogate, ValueError) and isinstance(nul, ValueError) and good is None
    assert await backend.rows("SELECT text FROM chat") == [("hi",)]
    await store.close()
