"""The store's group commit: moves of many rooms share transactions, and stay each their
caller's own (durable before the call returns; a bad one fails alone)."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from pathlib import Path
from typing import Any

from server.room import Action, SeatState
from server.store import CommitStats, Store

HUMANS = [SeatState("human"), SeatState("human")]


async def _store_with_rooms(db: Path, n: int) -> Store:
    store = await Store.open(db)
    for i in range(n):
        await store.create_room(f"r{i}", "tictactoe", {}, HUMANS, "playing", None, [], 0.0)
    return store


async def _count_commits(store: Store) -> list[int]:
    """The transactions SQLite commits from now on, as its trace shows the statements the
    store runs on its thread: each ``COMMIT`` (or ``RELEASE`` of the savepoint that opened
    the transaction), and each write outside one (a lone statement, which SQLite commits by
    itself)."""
    commits = [0]
    in_transaction = [False]

    def trace(sql: str) -> None:
        word = sql.strip().split(None, 1)[0].upper()
        if word in ("BEGIN", "SAVEPOINT"):
            in_transaction[0] = True
        elif word in ("COMMIT", "RELEASE", "ROLLBACK"):
            in_transaction[0] = False
            commits[0] += word != "ROLLBACK"
        elif word in ("INSERT", "UPDATE", "DELETE") and not in_transaction[0]:
            commits[0] += 1

    await store.db.set_trace_callback(trace)
    return commits


async def test_concurrent_moves_of_many_rooms_share_commits(tmp_path: Path) -> None:
    store = await _store_with_rooms(tmp_path / "t.db", 30)
    commits = await _count_commits(store)
    for ply in range(3):
        await asyncio.gather(*(
            store.record_move(f"r{i}", Action(ply, ply % 2, {"cell": ply}), None)
            for i in range(30)))
    await store.close()
    con = sqlite3.connect(tmp_path / "t.db")
    rows = con.execute("SELECT room_id, ply FROM moves ORDER BY room_id, ply").fetchall()
    con.close()
    assert sorted(rows) == sorted((f"r{i}", p) for i in range(30) for p in range(3))
    # 90 moves: the first of each wave commits alone, the 29 that queued behind it together.
    assert commits[0] <= 6, commits


async def test_commit_stats_count_the_transactions_sqlite_ran(tmp_path: Path) -> None:
    """The group commit's running totals (what the load report shows per transaction): as
    many transactions as SQLite saw COMMITs, every write counted once, their time counted."""
    store = await _store_with_rooms(tmp_path / "t.db", 20)
    before = dataclasses.replace(store.commit_stats)
    assert before.transactions == before.writes == 20  # one room at a time
    commits = await _count_commits(store)
    for ply in range(4):
        await asyncio.gather(*(
            store.record_move(f"r{i}", Action(ply, ply % 2, {"cell": ply}), None)
            for i in range(20)))
    window = store.commit_stats.minus(before)
    await store.close()
    assert window.transactions == commits[0] and 4 <= commits[0] < 80
    assert window.writes == 80
    assert window.seconds > 0
    summary = window.summary()
    assert summary["transactions"] == commits[0]
    assert summary["writes_per_transaction"] == round(80 / commits[0], 3)
    assert summary["transaction_ms"] == round(window.seconds * 1000 / commits[0], 3)
    assert CommitStats().summary()["transaction_ms"] is None


async def test_a_bad_move_in_a_batch_fails_only_its_caller(tmp_path: Path) -> None:
    store = await _store_with_rooms(tmp_path / "t.db", 4)
    await store.record_move("r0", Action(0, 0, {"cell": 4}), None)

    async def move(room: str) -> Any:
        return await store.record_move(room, Action(0, 0, {"cell": 0}), None)

    # r0's ply 0 exists already: its insert breaks the batch, the others must still land.
    results = await asyncio.gather(*(move(f"r{i}") for i in range(4)), return_exceptions=True)
    assert isinstance(results[0], sqlite3.IntegrityError), results
    assert results[1:] == [None, None, None]
    for i in range(1, 4):
        record = await store.load_room(f"r{i}")
        assert record is not None and [a.move for a in record.actions] == [{"cell": 0}]
    record = await store.load_room("r0")
    assert record is not None and [a.move for a in record.actions] == [{"cell": 4}]
    await store.close()


async def test_a_bad_write_alone_changes_nothing_and_the_next_one_lands(tmp_path: Path) -> None:
    """A lone single-row statement goes to SQLite with its COMMIT at once: when it fails,
    its caller gets the error, nothing of it is written, and the store goes on."""
    store = await _store_with_rooms(tmp_path / "t.db", 1)
    await store.record_move("r0", Action(0, 0, {"cell": 4}), None)
    try:
        await store.record_move("r0", Action(0, 1, {"cell": 5}), None)  # ply 0 again
        raise AssertionError("a second ply 0 was accepted")
    except sqlite3.IntegrityError:
        pass
    assert not store.db.in_transaction
    await store.record_move("r0", Action(1, 1, {"cell": 0}), None)
    record = await store.load_room("r0")
    await store.close()
    assert record is not None and [a.move for a in record.actions] == [{"cell": 4}, {"cell": 0}]


async def test_close_writes_what_was_handed_over(tmp_path: Path) -> None:
    store = await _store_with_rooms(tmp_path / "t.db", 3)
    tasks = [asyncio.create_task(store.record_move(f"r{i}", Action(0, 0, {"cell": 1}), None))
             for i in range(3)]
    await asyncio.sleep(0)  # handed over, not yet written
    await store.close()
    assert [t.result() for t in tasks] == [None, None, None]
    con = sqlite3.connect(tmp_path / "t.db")
    assert con.execute("SELECT COUNT(*) FROM moves").fetchone() == (3,)
    con.close()


async def test_one_move_alone_is_one_commit(tmp_path: Path) -> None:
    """A move alone is one statement that SQLite commits by itself (one trip to the store's
    thread, no transaction of the store's): committed, for any other connection to read,
    once the call returns."""
    store = await _store_with_rooms(tmp_path / "t.db", 1)
    commits = await _count_commits(store)
    before = store.commit_stats.transactions
    await store.record_move("r0", Action(0, 0, {"cell": 4}), None)
    assert commits[0] == 1 and store.commit_stats.transactions == before + 1
    con = sqlite3.connect(tmp_path / "t.db")
    assert con.execute("SELECT COUNT(*) FROM moves").fetchone() == (1,)
    con.close()
    await store.close()


async def test_rooms_seats_and_moves_share_commits(tmp_path: Path) -> None:
    """Every kind of write joins the group commit, not only moves."""
    store = await _store_with_rooms(tmp_path / "t.db", 2)
    commits = await _count_commits(store)
    await asyncio.gather(
        store.record_move("r0", Action(0, 0, {"cell": 4}), None),
        store.create_room("r9", "tictactoe", {}, HUMANS, "waiting", None, [], 0.0),
        store.create_player("p", "Ana", "secret"),
        store.record_chat("r1", "p", "hi", 0.0),
        store.record_move("r1", Action(0, 0, {"cell": 2}), None),
    )
    assert commits[0] <= 2, commits
    await store.close()
    con = sqlite3.connect(tmp_path / "t.db")
    assert con.execute("SELECT COUNT(*) FROM moves").fetchone() == (2,)
    assert con.execute("SELECT COUNT(*) FROM seats WHERE room_id = 'r9'").fetchone() == (2,)
    assert con.execute("SELECT COUNT(*) FROM chat").fetchone() == (1,)
    con.close()


async def test_json_columns_round_trip_whatever_text_they_hold(tmp_path: Path) -> None:
    """Options, moves and dice are written compactly by pydantic-core, which refuses a lone
    surrogate (not UTF-8; JSON from the wire may escape one): such text is still stored,
    escaped, and every value reads back as it was written."""
    store = await Store.open(tmp_path / "t.db")
    options = {"note": "\ud800 é", "n": [1, 2.5, None, True]}
    await store.create_room("r", "backgammon", options, HUMANS, "playing", None, [(3, 1)], 0.0)
    move = {"play": "24/21 \udfff"}
    await store.record_move("r", Action(0, 0, move, rolls=((6, 6),)), None)
    record = await store.load_room("r")
    await store.close()
    assert record is not None
    assert record.options == options
    assert record.opening_rolls == [(3, 1)]
    assert [(a.move, a.rolls) for a in record.actions] == [(move, ((6, 6),))]
