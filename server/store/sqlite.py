"""Persistence: ALL the SQL of the server lives here (aiosqlite, parameterised queries only).

Durability: the database runs in WAL mode with ``synchronous=FULL``. Every move is committed
(and, with FULL, the WAL is fsynced) before anyone receives its ``update``, so a move anyone
has seen survives ``kill -9`` of the server and also a power cut. (WAL with ``NORMAL`` would
survive a process crash too, since a commit is in the OS's page cache once ``write`` returns,
but could lose the last commits on power loss; moves are rare enough that FULL costs nothing.)

Concurrency: the server has one connection, shared by every room. Every write (a move, a new
room, a seat taken, a player, a chat line...) goes through one group commit: the writes handed
over while a transaction is being written wait together and go into the next one, which runs
whole (``BEGIN`` to ``COMMIT``, one fsync) in a single trip to aiosqlite's thread. Reads hold
the store's lock for their few trips, so they never see a transaction half done.
``Store.commit_stats`` keeps running totals of those transactions and of where their time
goes (the load generator reports them per transaction).

Migrations are the numbered files of ``server/store/migrations/`` (``0001_initial.sql``, ...),
shipped with the package and applied in order at start, each inside one transaction and
recorded in ``schema_migrations``.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import aiosqlite

from engine.core import Outcome
from server.protocol import RoomOptions, json_text
from server.room import Action, Dice, RoomRecord, SeatState, Status

_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def migrations_folder() -> Traversable:
    """The migrations shipped with the package (``server/store/migrations/``), wherever it is
    installed."""
    return resources.files("server.store") / "migrations"


def migration_files(folder: Traversable | None = None) -> list[tuple[int, str, str]]:
    """``(version, name, sql)`` for every migration file, in version order."""
    folder = migrations_folder() if folder is None else folder
    out = []
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        m = _MIGRATION_NAME.match(path.name)
        if m:
            out.append((int(m.group(1)), path.name, path.read_text(encoding="utf-8")))
    versions = [v for v, _, _ in out]
    if versions != list(range(1, len(out) + 1)):
        raise RuntimeError(f"migrations in {folder} must be numbered 1..n, found {versions}")
    return out


P = ParamSpec("P")
R = TypeVar("R")


def _serialised(
    fn: Callable[Concatenate[Store, P], Awaitable[R]],
) -> Callable[Concatenate[Store, P], Coroutine[Any, Any, R]]:
    """Runs the method under the store's lock: one transaction at a time on the connection."""

    async def locked(self: Store, /, *args: P.args, **kwargs: P.kwargs) -> R:
        async with self._lock:
            return await fn(self, *args, **kwargs)

    functools.update_wrapper(locked, fn)
    return locked


# A write: runs on aiosqlite's thread, inside a transaction the group commit opens.
_Job = Callable[[sqlite3.Connection], None]
_Pending = tuple[_Job, "asyncio.Future[None]"]


def _transaction(db: sqlite3.Connection, jobs: Sequence[_Job]) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        for job in jobs:
            job(db)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.rollback()
        raise


def _commit_jobs(db: sqlite3.Connection, jobs: Sequence[_Job]) -> list[Exception | None]:
    """On aiosqlite's thread: ``jobs`` in one transaction; if it fails, each in its own, so
    one bad write fails only its own caller. Each job's error (None: committed)."""
    try:
        _transaction(db, jobs)
        return [None] * len(jobs)
    except Exception as e:
        if len(jobs) == 1:
            return [e]
    errors: list[Exception | None] = []
    for job in jobs:
        try:
            _transaction(db, [job])
            errors.append(None)
        except Exception as e:
            errors.append(e)
    return errors


def _timed_commit(
    db: sqlite3.Connection, jobs: Sequence[_Job]
) -> tuple[list[Exception | None], float, float]:
    """:func:`_commit_jobs`, and when (``time.perf_counter``) it started and ended."""
    started = time.perf_counter()
    errors = _commit_jobs(db, jobs)
    return errors, started, time.perf_counter()


@dataclass
class CommitStats:
    """The group commit's running totals since the store opened: transactions, the writes in
    them, and where their time went, from the batch handed to aiosqlite's thread until its
    callers can be answered. ``time.perf_counter`` on both threads (one clock per process).
    Take two and :meth:`minus` them for a window (the load generator's report does)."""

    transactions: int = 0
    writes: int = 0
    handover_s: float = 0.0  # handed over → the thread starts on it (the GIL, a free core)
    transaction_s: float = 0.0  # BEGIN to COMMIT, its fsync included
    return_s: float = 0.0  # committed → the event loop holds the outcome

    def add(self, writes: int, handover: float, transaction: float, back: float) -> None:
        """One transaction of ``writes`` writes, and its three legs in seconds."""
        self.transactions += 1
        self.writes += writes
        self.handover_s += handover
        self.transaction_s += transaction
        self.return_s += back

    def minus(self, before: CommitStats) -> CommitStats:
        return CommitStats(
            self.transactions - before.transactions, self.writes - before.writes,
            self.handover_s - before.handover_s, self.transaction_s - before.transaction_s,
            self.return_s - before.return_s,
        )

    def summary(self) -> dict[str, float | int | None]:
        """Per transaction: writes and milliseconds in each leg (None before the first)."""
        n = self.transactions

        def per(total: float) -> float | None:
            return round(total / n, 3) if n else None

        return {"transactions": n, "writes_per_transaction": per(self.writes),
                "handover_ms": per(self.handover_s * 1000),
                "transaction_ms": per(self.transaction_s * 1000),
                "return_ms": per(self.return_s * 1000)}


def _finish(
    db: sqlite3.Connection, room_id: str, outcome: Outcome, when: float,
    clocks: Sequence[int] | None,
) -> None:
    c0, c1 = clocks if clocks is not None else (None, None)
    db.execute(
        "INSERT INTO results (room_id, winner, points, reason, finished_at,"
        " clock0_ms, clock1_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (room_id, outcome.winner, outcome.points, outcome.reason, when, c0, c1),
    )
    db.execute("UPDATE rooms SET status = 'finished' WHERE id = ?", (room_id,))


def _rolls(text: str | None) -> list[Dice]:
    return [(int(a), int(b)) for a, b in json.loads(text or "[]")]


def _rolls_text(rolls: Sequence[Dice]) -> str:
    """The inverse of :func:`_rolls`."""
    return json_text([list(r) for r in rolls]) if rolls else "[]"


def _save_status(db: sqlite3.Connection, room_id: str, status: Status, opening: str) -> None:
    """The room's status and opening roll (``_rolls_text``, made before the job is handed
    over): what a filled or handed-over seat can change."""
    db.execute(
        "UPDATE rooms SET status = ?, opening_dice = ? WHERE id = ?", (status, opening, room_id)
    )


class Store:
    """One SQLite database; open with :meth:`open` (which migrates), close with :meth:`close`."""

    def __init__(self, db: aiosqlite.Connection) -> None:
        self.db = db
        self._lock = asyncio.Lock()
        self._pending: list[_Pending] = []  # waiting for the next group commit
        self._flusher: asyncio.Task[None] | None = None
        # aiosqlite's own queue to its thread: a whole transaction in one trip. Its public
        # methods are one trip per statement, and under load each trip waits for the busy
        # event loop (and for the GIL) on its way back. Private names, hence the upper
        # bound on aiosqlite in pyproject.toml.
        self._in_thread: Callable[..., Awaitable[Any]] = db._execute
        self.commit_stats = CommitStats()

    @classmethod
    async def open(
        cls, path: str | Path, *, synchronous: str = "FULL", upto: int | None = None
    ) -> Store:
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError("synchronous must be FULL or NORMAL")
        db = await aiosqlite.connect(str(path), isolation_level=None)
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute(f"PRAGMA synchronous={synchronous}")
        await db.execute("PRAGMA foreign_keys=ON")
        await db.execute("PRAGMA busy_timeout=5000")
        store = cls(db)
        await store.migrate(upto)
        return store

    async def close(self) -> None:
        if self._flusher is not None:
            await self._flusher  # moves already handed to the store are written first
        await self.db.close()

    # --- migrations ----------------------------------------------------------------------

    async def schema_version(self) -> int:
        async with self.db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        ) as cur:
            if await cur.fetchone() is None:
                return 0
        async with self.db.execute("SELECT MAX(version) FROM schema_migrations") as cur:
            row = await cur.fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    async def migrate(self, upto: int | None = None) -> int:
        """Applies every migration newer than the database (up to ``upto``); the new version."""
        await self.db.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
        )
        current = await self.schema_version()
        for version, name, sql in migration_files():
            if version <= current or (upto is not None and version > upto):
                continue
            # The script runs inside our own transaction, recorded in the same commit.
            try:
                await self.db.executescript("BEGIN IMMEDIATE;\n" + sql)
                await self.db.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (version, name, time.time()),
                )
                await self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:
                    await self.db.execute("ROLLBACK")
                raise
            current = version
        return current

    # --- players -------------------------------------------------------------------------

    async def create_player(self, player_id: str, name: str, token: str) -> None:
        now = time.time()
        row = (player_id, name, token_hash(token), now, now)

        def job(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO players (id, name, token_hash, created_at, last_seen)"
                " VALUES (?, ?, ?, ?, ?)",
                row,
            )

        await self._write(job)

    @_serialised
    async def player_by_token(self, token: str) -> tuple[str, str] | None:
        async with self.db.execute(
            "SELECT id, name FROM players WHERE token_hash = ?", (token_hash(token),)
        ) as cur:
            row = await cur.fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    async def touch_player(self, player_id: str, name: str) -> None:
        row = (name, time.time(), player_id)

        def job(db: sqlite3.Connection) -> None:
            db.execute("UPDATE players SET name = ?, last_seen = ? WHERE id = ?", row)

        await self._write(job)

    # --- rooms ---------------------------------------------------------------------------

    async def create_room(
        self,
        room_id: str,
        game_id: str,
        options: dict[str, Any],
        seats: Sequence[SeatState],
        status: Status,
        seed: bytes | None,
        opening_rolls: Sequence[Dice],
        created_at: float,
        room_options: RoomOptions | None = None,
    ) -> None:
        """The room with its seats, in one transaction."""
        ropts = (room_options or RoomOptions()).model_dump(mode="json")
        row = (room_id, game_id, json_text(options), status, seed,
               _rolls_text(opening_rolls), created_at, json_text(ropts))
        seat_rows = [(room_id, i, s.kind, s.level, s.player_id) for i, s in enumerate(seats)]

        def job(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO rooms (id, game, options, status, dice_seed, opening_dice,"
                " created_at, room_options) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            db.executemany(
                "INSERT INTO seats (room_id, seat, kind, level, player_id) VALUES (?, ?, ?, ?, ?)",
                seat_rows,
            )

        await self._write(job)

    async def save_seats(
        self,
        room_id: str,
        seats: Sequence[SeatState],
        status: Status,
        opening_rolls: Sequence[Dice],
    ) -> None:
        """Seat holders, and the start of the game (status, opening roll), in one transaction."""
        seat_rows = [(s.player_id, room_id, i) for i, s in enumerate(seats)]
        opening = _rolls_text(opening_rolls)

        def job(db: sqlite3.Connection) -> None:
            db.executemany(
                "UPDATE seats SET player_id = ? WHERE room_id = ? AND seat = ?", seat_rows
            )
            _save_status(db, room_id, status, opening)

        await self._write(job)

    async def record_move(
        self, room_id: str, action: Action, outcome: Outcome | None
    ) -> None:
        """One action (and the end of the game, if it ends it), committed durably before this
        returns. The caller holds its room's lock, so a batch never holds two moves of one
        room."""
        row = (room_id, action.index, action.seat, json_text(action.move),
               _rolls_text(action.rolls), action.time,
               *(action.clocks or (None, None)))

        def job(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO moves (room_id, ply, seat, move, dice, created_at,"
                " clock0_ms, clock1_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            if outcome is not None:
                _finish(db, room_id, outcome, action.time, action.clocks)

        await self._write(job)

    async def _write(self, job: _Job) -> None:
        """Group commit: ``job`` goes into the next transaction, with whatever else was handed
        over meanwhile (one fsync for all: the fsync and the trips to the thread, not the SQL,
        are what a write costs); returns once that transaction is committed."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((job, fut))
        if self._flusher is None:
            # A task of its own, not the first caller: a caller may be cancelled, the batch
            # it would have carried must still be written.
            self._flusher = asyncio.create_task(self._flush())
        await fut

    async def _flush(self) -> None:
        try:
            while self._pending:
                async with self._lock:
                    batch, self._pending = self._pending, []
                    handed = time.perf_counter()
                    try:
                        errors, started, ended = await self._in_thread(
                            _timed_commit, self.db._conn, [job for job, _ in batch])
                    except Exception as e:  # the connection is gone
                        errors = [e] * len(batch)
                    except BaseException:
                        for _, fut in batch:
                            fut.cancel()
                        raise
                    else:
                        self.commit_stats.add(len(batch), started - handed, ended - started,
                                              time.perf_counter() - ended)
                for (_, fut), error in zip(batch, errors, strict=True):
                    if fut.done():
                        continue
                    if error is None:
                        fut.set_result(None)
                    else:
                        fut.set_exception(error)
        finally:
            self._flusher = None
            for _, fut in self._pending:  # only when cancelled: nobody will write these
                fut.cancel()
            self._pending = []

    async def record_result(
        self, room_id: str, outcome: Outcome, clocks: Sequence[int] | None = None,
        when: float | None = None,
    ) -> None:
        """The end of a game that no move ended (a resignation, a timeout)."""
        at = time.time() if when is None else when

        def job(db: sqlite3.Connection) -> None:
            _finish(db, room_id, outcome, at, clocks)

        await self._write(job)

    async def hand_seat_to_bot(
        self,
        room_id: str,
        seat: int,
        level: str,
        ply: int,
        from_player: str | None,
        reason: str,
        when: float,
        status: Status,
        opening_rolls: Sequence[Dice],
    ) -> None:
        """A seat becomes a bot's (logged in ``seat_changes``), and the room's status (a
        handover can start a waiting game), in one transaction."""
        opening = _rolls_text(opening_rolls)

        def job(db: sqlite3.Connection) -> None:
            db.execute(
                "UPDATE seats SET kind = 'bot', level = ?, player_id = NULL"
                " WHERE room_id = ? AND seat = ?",
                (level, room_id, seat),
            )
            db.execute(
                "INSERT INTO seat_changes (room_id, seat, ply, from_player, kind, level, reason,"
                " created_at) VALUES (?, ?, ?, ?, 'bot', ?, ?, ?)",
                (room_id, seat, ply, from_player, level, reason, when),
            )
            _save_status(db, room_id, status, opening)

        await self._write(job)

    @_serialised
    async def seat_changes(self, room_id: str) -> list[dict[str, Any]]:
        """The room's seat handovers, oldest first."""
        async with self.db.execute(
            "SELECT seat, ply, from_player, kind, level, reason, created_at FROM seat_changes"
            " WHERE room_id = ? ORDER BY id",
            (room_id,),
        ) as cur:
            cols = ("seat", "ply", "from_player", "kind", "level", "reason", "created_at")
            return [dict(zip(cols, row)) for row in await cur.fetchall()]

    async def record_chat(self, room_id: str, player_id: str, text: str, when: float) -> None:
        def job(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO chat (room_id, player_id, text, created_at) VALUES (?, ?, ?, ?)",
                (room_id, player_id, text, when),
            )

        await self._write(job)

    # --- loading -------------------------------------------------------------------------

    @_serialised
    async def rooms_to_resume(self) -> list[str]:
        """The rooms a starting server loads: every game being played, and every waiting
        room a person holds a seat in (the vacant ones wait on disk until named)."""
        async with self.db.execute(
            "SELECT id FROM rooms r WHERE status = 'playing' OR (status = 'waiting' AND EXISTS"
            " (SELECT 1 FROM seats s WHERE s.room_id = r.id AND s.player_id IS NOT NULL))"
            " ORDER BY created_at"
        ) as cur:
            return [str(r[0]) for r in await cur.fetchall()]

    @_serialised
    async def seats_held(self, player_id: str) -> list[tuple[str, int, Status]]:
        """Every seat ``player_id`` holds in a room not finished: (room id, seat, the room's
        status), oldest room first. Rooms left idle are on disk only, so this, not memory,
        is the list of a returning player's seats."""
        async with self.db.execute(
            "SELECT s.room_id, s.seat, r.status FROM seats s JOIN rooms r ON r.id = s.room_id"
            " WHERE s.player_id = ? AND r.status != 'finished'"
            " ORDER BY r.created_at, r.rowid, s.seat",
            (player_id,),
        ) as cur:
            return [(str(r), int(seat), status) for r, seat, status in await cur.fetchall()]

    @_serialised
    async def load_room(self, room_id: str) -> RoomRecord | None:
        db = self.db
        async with db.execute(
            "SELECT game, options, status, dice_seed, opening_dice, created_at, room_options"
            " FROM rooms WHERE id = ?",
            (room_id,),
        ) as cur:
            row = await cur.fetchone()
        if row is None:
            return None
        game_id, options, status, seed, opening, created_at, ropts = row
        async with db.execute(
            "SELECT s.seat, s.kind, s.level, s.player_id, p.name FROM seats s"
            " LEFT JOIN players p ON p.id = s.player_id WHERE s.room_id = ? ORDER BY s.seat",
            (room_id,),
        ) as cur:
            seats = [
                SeatState(kind, level, player_id, name)
                for _seat, kind, level, player_id, name in await cur.fetchall()
            ]
        async with db.execute(
            "SELECT ply, seat, move, dice, created_at, clock0_ms, clock1_ms FROM moves"
            " WHERE room_id = ? ORDER BY ply",
            (room_id,),
        ) as cur:
            actions = [
                Action(int(ply), int(seat), json.loads(move), tuple(_rolls(dice)), float(t),
                       None if c0 is None or c1 is None else (int(c0), int(c1)))
                for ply, seat, move, dice, t, c0, c1 in await cur.fetchall()
            ]
        if [a.index for a in actions] != list(range(len(actions))):
            raise RuntimeError(f"room {room_id}: the stored plies have a gap")
        async with db.execute(
            "SELECT winner, points, reason, clock0_ms, clock1_ms FROM results WHERE room_id = ?",
            (room_id,),
        ) as cur:
            res = await cur.fetchone()
        result = None if res is None else Outcome(res[0], int(res[1]), str(res[2]))
        final_clocks = (
            None if res is None or res[3] is None or res[4] is None else [int(res[3]), int(res[4])]
        )
        return RoomRecord(
            room_id=room_id,
            game_id=str(game_id),
            options=json.loads(options),
            status=status,
            seed=bytes(seed) if seed is not None else None,
            created_at=float(created_at),
            seats=seats,
            opening_rolls=_rolls(opening),
            actions=actions,
            result=result,
            room_options=RoomOptions.model_validate(json.loads(ropts or "{}")),
            final_clocks=final_clocks,
        )
