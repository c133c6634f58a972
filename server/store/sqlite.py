"""Persistence: ALL the SQL of the server lives here (aiosqlite, parameterised queries only).

Durability: the database runs in WAL mode with ``synchronous=FULL``. Every move is committed
(and, with FULL, the WAL is fsynced) before anyone receives its ``update``, so a move anyone
has seen survives ``kill -9`` of the server and also a power cut. (WAL with ``NORMAL`` would
survive a process crash too, since a commit is in the OS's page cache once ``write`` returns,
but could lose the last commits on power loss; moves are rare enough that FULL costs nothing.)

Concurrency: the server has one connection, shared by every room, used through aiosqlite's
public API. Every write (a move, a new room, a seat taken, a player, a chat line...) goes
through one group commit: the writes handed over while a transaction is being written wait
together and go into the next one. A write is a few rows for the view ``store_write``
(migration 0004), whose triggers put each row in its table; a whole batch is one
``INSERT … SELECT`` over a JSON array of those rows (one parameter), which SQLite runs as a
transaction of its own, committed with one fsync: one trip to aiosqlite's thread for the whole
batch, however many writes it holds. If it fails, nothing of it is written, and its writes are
retried one by one, each in its own statement, so one bad write fails only its own caller.
Reads hold the store's lock for their few trips, so they never see a transaction half done.
``Store.commit_stats`` keeps running totals of the transactions and their time.

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
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar

import aiosqlite
from pydantic_core import PydanticSerializationError, to_json

from engine.core import Outcome
from engine.search.decision import check_level
from server.dice import Seeds
from server.errors import MissingFiles
from server.protocol import RoomOptions, json_text
from server.ratings import NEW, Rating, RatingChange
from server.room import Action, Dice, RoomRecord, SeatState, Status

_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def migrations_folder() -> Traversable:
    """The migrations shipped with the package (``server/store/migrations/``), wherever it is
    installed; :class:`~server.errors.MissingFiles` if they are not there."""
    folder = resources.files("server.store") / "migrations"
    if not folder.is_dir():
        raise MissingFiles(f"the database migrations are missing: no folder {folder} "
                           "(reinstall tablas: pip install --force-reinstall tablas)")
    return folder


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


# A write: its rows for the view ``store_write`` (migration 0004), each ``[kind, a, b, …]``,
# already written as JSON text (the batch's one parameter is these joined in an array).
Write = str

# The one statement every group commit runs: each element of the JSON array is a row of the
# view, whose triggers put it in its table.
_WRITE_ROWS = (
    "INSERT INTO store_write (kind, a, b, c, d, e, f, g, h)"
    " SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5,"
    " value ->> 6, value ->> 7, value ->> 8 FROM json_each(?) ORDER BY key"
)


def _row(kind: str, *values: Any) -> list[Any]:
    """One row of a write: ``kind`` names the trigger of migration 0004 that writes it (a
    literal: a test checks every one), ``values`` its a, b, … in that trigger's order."""
    return [kind, *values]


def _encode(rows: Sequence[list[Any]]) -> Write:
    """A write's rows as JSON text, or :class:`ValueError` for a value SQLite cannot hold
    as text (a lone surrogate is not UTF-8): refused at once, before it joins a batch."""
    try:
        return to_json(rows).decode()[1:-1]
    except PydanticSerializationError as e:
        raise ValueError(f"a value the database cannot store: {e}") from None


@dataclass
class CommitStats:
    """The group commit's running totals since the store opened: transactions, the writes in
    them, and their time as the event loop sees it, from the batch handed to aiosqlite's
    thread until its callers can be answered (``time.perf_counter``). Take two and
    :meth:`minus` them for a window (the load generator's report does)."""

    transactions: int = 0
    writes: int = 0
    seconds: float = 0.0

    def add(self, writes: int, seconds: float) -> None:
        """One transaction of ``writes`` writes that took ``seconds``."""
        self.transactions += 1
        self.writes += writes
        self.seconds += seconds

    def minus(self, before: CommitStats) -> CommitStats:
        return CommitStats(self.transactions - before.transactions,
                           self.writes - before.writes, self.seconds - before.seconds)

    def summary(self) -> dict[str, float | int | None]:
        """Per transaction: writes and milliseconds (None before the first)."""
        n = self.transactions

        def per(total: float) -> float | None:
            return round(total / n, 3) if n else None

        return {"transactions": n, "writes_per_transaction": per(self.writes),
                "transaction_ms": per(self.seconds * 1000)}


def _finish(room_id: str, outcome: Outcome, when: float, clocks: Sequence[int] | None
            ) -> list[list[Any]]:
    c0, c1 = clocks if clocks is not None else (None, None)
    return [_row("result", room_id, outcome.winner, outcome.points, outcome.reason, when, c0, c1),
            _row("room_finished", room_id)]


def _rated(room_id: str, changes: Sequence[RatingChange]) -> list[list[Any]]:
    """A rated game's new ratings and what it did to them (migration 0008): written with
    the result, so a finished rated game is rated exactly once, crash or not."""
    rows: list[list[Any]] = []
    for c in changes:
        a = c.after
        rows.append(_row("rating", c.player_id, c.game, a.rating, a.rd, a.volatility, a.games))
        rows.append(_row("rating_change", room_id, c.seat, c.player_id, c.score,
                         c.before.rating, c.before.rd, a.rating, a.rd))
    return rows


@dataclass(frozen=True)
class Account:
    """A player as ``hello`` finds them: by token, or (registered) by name key."""

    player_id: str
    name: str
    registered: bool
    password_hash: str | None = None


def _rolls(text: str | None) -> list[Dice]:
    return [(int(a), int(b)) for a, b in json.loads(text or "[]")]


def _seeds(text: str) -> Seeds:
    a, b = json.loads(text)
    return str(a), str(b)


def _rolls_text(rolls: Sequence[Dice]) -> str:
    """The inverse of :func:`_rolls`."""
    return json_text([list(r) for r in rolls]) if rolls else "[]"


def _save_status(room_id: str, status: Status, opening_rolls: Sequence[Dice]) -> list[Any]:
    """The room's status and opening roll: what a filled or handed-over seat can change."""
    return _row("room_status", room_id, status, _rolls_text(opening_rolls))


def _save_seeds(room_id: str, seeds: Seeds | None) -> list[list[Any]]:
    """The seats' dice seeds (a JSON list); none written for a room without them, whose
    NULL column means the roll message without seeds (docs/dice.md)."""
    return [] if seeds is None else [_row("room_seeds", room_id, json_text(list(seeds)))]


class Store:
    """One SQLite database; open with :meth:`open` (which migrates), close with :meth:`close`."""

    def __init__(self, db: aiosqlite.Connection) -> None:
        self.db = db
        self._lock = asyncio.Lock()
        # Waiting for the next group commit: each write and its caller's future.
        self._pending: list[tuple[Write, asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self.commit_stats = CommitStats()

    @classmethod
    async def open(
        cls, path: str | Path, *, synchronous: str = "FULL", upto: int | None = None
    ) -> Store:
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError("synchronous must be FULL or NORMAL")
        # Autocommit: the store says where its transactions begin and end.
        db = await aiosqlite.connect(str(path), isolation_level=None)
        try:
            await db.execute("PRAGMA journal_mode=WAL")
            await db.execute(f"PRAGMA synchronous={synchronous}")
            await db.execute("PRAGMA foreign_keys=ON")
            await db.execute("PRAGMA busy_timeout=5000")
            store = cls(db)
            await store.migrate(upto)
        except BaseException:
            # aiosqlite's thread keeps the process alive until the connection is closed.
            await db.close()
            raise
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
            # The script runs inside our own transaction, recorded in the same commit. Foreign
            # keys are off meanwhile (they can only be switched outside a transaction), so a
            # migration may rebuild a table others refer to, as SQLite's documentation says
            # to; they are checked before the commit instead.
            await self.db.execute("PRAGMA foreign_keys=OFF")
            try:
                await self.db.executescript("BEGIN IMMEDIATE;\n" + sql)
                async with self.db.execute("PRAGMA foreign_key_check") as cur:
                    broken = list(await cur.fetchall())
                if broken:
                    raise RuntimeError(f"migration {name} breaks foreign keys: {broken[:5]}")
                await self.db.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (version, name, time.time()),
                )
                await self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:
                    await self.db.execute("ROLLBACK")
                raise
            finally:
                await self.db.execute("PRAGMA foreign_keys=ON")
            current = version
        return current

    # --- players -------------------------------------------------------------------------

    async def create_player(self, player_id: str, name: str, token: str) -> None:
        now = time.time()
        await self._write(_row("player", player_id, name, token_hash(token), now, now))

    @_serialised
    async def player_by_token(self, token: str) -> tuple[str, str] | None:
        async with self.db.execute(
            "SELECT id, name FROM players WHERE token_hash = ?", (token_hash(token),)
        ) as cur:
            row = await cur.fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    async def touch_player(self, player_id: str, name: str) -> None:
        await self._write(_row("player_seen", player_id, name, time.time()))

    @_serialised
    async def account_by_token(self, token: str) -> Account | None:
        """The player a token is of: the token of their first ``welcome`` or of a login."""
        h = token_hash(token)
        async with self.db.execute(
            "SELECT id, name, password_hash IS NOT NULL FROM players WHERE token_hash = ?"
            " UNION ALL SELECT p.id, p.name, p.password_hash IS NOT NULL FROM player_tokens t"
            " JOIN players p ON p.id = t.player_id WHERE t.token_hash = ? LIMIT 1",
            (h, h),
        ) as cur:
            row = await cur.fetchone()
        return None if row is None else Account(str(row[0]), str(row[1]), bool(row[2]))

    @_serialised
    async def account_by_key(self, name_key: str) -> Account | None:
        """The registered player whose name has this key (casefold of NFKC), with the hash
        of their password."""
        async with self.db.execute(
            "SELECT id, name, password_hash FROM players WHERE name_key = ?", (name_key,)
        ) as cur:
            row = await cur.fetchone()
        return None if row is None else Account(str(row[0]), str(row[1]), True, str(row[2]))

    async def register_player(self, player_id: str, name: str, name_key: str,
                              password_hash: str, when: float
                              ) -> Literal["registered", "name_taken", "already_registered"]:
        """The player's name becomes theirs, with their password's hash: ``registered``;
        or nothing is written, because the key is a registered player's (the unique index
        decides between two registrations at once), or the player registered already."""
        try:
            await self._write(_row("player_seen", player_id, name, when),
                              _row("register", player_id, name_key, password_hash, when))
        except sqlite3.IntegrityError as e:
            return "already_registered" if "already registered" in str(e) else "name_taken"
        return "registered"

    async def add_token(self, player_id: str, token: str, when: float) -> None:
        """A new device's token for a registered player (stored as its hash only)."""
        await self._write(_row("player_token", token_hash(token), player_id, when))

    # --- ratings -------------------------------------------------------------------------

    @_serialised
    async def ratings_of(self, game: str, player_ids: Sequence[str]) -> dict[str, Rating]:
        """Each of ``player_ids``' rating in ``game`` (a new rating for one never rated)."""
        found: dict[str, Rating] = {}
        for pid in dict.fromkeys(player_ids):
            async with self.db.execute(
                "SELECT rating, rd, volatility, games FROM ratings"
                " WHERE player_id = ? AND game = ?", (pid, game),
            ) as cur:
                row = await cur.fetchone()
            found[pid] = NEW if row is None else Rating(float(row[0]), float(row[1]),
                                                        float(row[2]), int(row[3]))
        return found

    @_serialised
    async def leaderboard(self, game: str, limit: int) -> list[tuple[str, str | None, Rating]]:
        """The ``limit`` best rated in ``game``: (player id, name (None for a bot), rating),
        by rating, then the smaller RD, the more games, the player id."""
        async with self.db.execute(
            "SELECT r.player_id, p.name, r.rating, r.rd, r.volatility, r.games FROM ratings r"
            " LEFT JOIN players p ON p.id = r.player_id WHERE r.game = ?"
            " ORDER BY r.rating DESC, r.rd, r.games DESC, r.player_id LIMIT ?",
            (game, limit),
        ) as cur:
            return [(str(pid), None if name is None else str(name),
                     Rating(float(r), float(rd), float(vol), int(n)))
                    for pid, name, r, rd, vol, n in await cur.fetchall()]

    @_serialised
    async def player_info(self, player_id: str) -> tuple[str, bool] | None:
        """A player's name and whether they are registered; None for no such player."""
        async with self.db.execute(
            "SELECT name, password_hash IS NOT NULL FROM players WHERE id = ?", (player_id,)
        ) as cur:
            row = await cur.fetchone()
        return None if row is None else (str(row[0]), bool(row[1]))

    @_serialised
    async def ratings_by_game(self, player_id: str) -> dict[str, Rating]:
        """Every game ``player_id`` is rated in, and the rating."""
        async with self.db.execute(
            "SELECT game, rating, rd, volatility, games FROM ratings WHERE player_id = ?"
            " ORDER BY game", (player_id,),
        ) as cur:
            return {str(g): Rating(float(r), float(rd), float(v), int(n))
                    for g, r, rd, v, n in await cur.fetchall()}

    @_serialised
    async def games_of(self, player_id: str, limit: int) -> list[dict[str, Any]]:
        """The player's ``limit`` latest rooms (seated in them), newest first: each
        ``{room_id, game, status, created_at, room_options, result, seats}`` with the seats'
        kind, level, player id and name."""
        async with self.db.execute(
            "SELECT r.id, r.game, r.status, r.created_at, r.room_options, res.winner,"
            " res.points, res.reason FROM rooms r LEFT JOIN results res ON res.room_id = r.id"
            " WHERE r.id IN (SELECT room_id FROM seats WHERE player_id = ?)"
            " ORDER BY r.created_at DESC, r.rowid DESC LIMIT ?",
            (player_id, limit),
        ) as cur:
            rooms = [
                {"room_id": str(rid), "game": str(game), "status": status,
                 "created_at": float(created), "room_options": json.loads(ropts or "{}"),
                 "result": None if reason is None else
                 {"winner": winner, "points": int(points), "reason": str(reason)},
                 "seats": []}
                for rid, game, status, created, ropts, winner, points, reason
                in await cur.fetchall()
            ]
        for room in rooms:
            async with self.db.execute(
                "SELECT s.seat, s.kind, s.level, s.player_id, p.name FROM seats s"
                " LEFT JOIN players p ON p.id = s.player_id WHERE s.room_id = ?"
                " ORDER BY s.seat", (room["room_id"],),
            ) as cur:
                room["seats"] = [
                    {"seat": int(seat), "kind": kind, "level": level, "player_id": pid,
                     "name": name}
                    for seat, kind, level, pid, name in await cur.fetchall()]
        return rooms

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
        created_by: str | None = None,
        seeds: Seeds | None = None,
    ) -> None:
        """The room with its seats, its creator and its seats' dice seeds, in one
        transaction."""
        ropts = (room_options or RoomOptions()).model_dump(mode="json")
        await self._write(
            _row("room", room_id, game_id, json_text(options), status,
                 None if seed is None else seed.hex(), _rolls_text(opening_rolls), created_at,
                 json_text(ropts)),
            *(_row("seat", room_id, i, s.kind, s.level, s.player_id)
              for i, s in enumerate(seats)),
            *([] if created_by is None else [_row("room_creator", room_id, created_by)]),
            *_save_seeds(room_id, seeds),
        )

    async def set_status(self, room_id: str, status: Status, at: float) -> None:
        """A change of status without a move (adjourned, closed, playing again)."""
        await self._write(_row("room_lapse", room_id, status, at))

    async def set_statuses(self, changes: Sequence[tuple[str, Status]], at: float) -> None:
        """:meth:`set_status` for many rooms in one transaction (rooms not in memory)."""
        if changes:
            await self._write(*(_row("room_lapse", r, status, at) for r, status in changes))

    async def expire(self, room_ids: Sequence[str], at: float) -> None:
        """Adjourned games nobody resumed end in one transaction, without a winner."""
        outcome = Outcome(winner=None, points=0, reason="expired")
        if room_ids:
            await self._write(*(row for r in room_ids for row in _finish(r, outcome, at, None)))

    async def save_seats(
        self,
        room_id: str,
        seats: Sequence[SeatState],
        status: Status,
        opening_rolls: Sequence[Dice],
        seeds: Seeds | None = None,
    ) -> None:
        """Seat holders, their dice seeds, and the start of the game (status, opening roll),
        in one transaction."""
        await self._write(
            *(_row("seat_holder", room_id, i, s.player_id) for i, s in enumerate(seats)),
            *_save_seeds(room_id, seeds),
            _save_status(room_id, status, opening_rolls),
        )

    async def record_move(
        self, room_id: str, action: Action, outcome: Outcome | None,
        ratings: Sequence[RatingChange] = (),
    ) -> None:
        """One action (and the end of the game, if it ends it, with the ``ratings`` it
        changes), committed durably before this returns. The caller holds its room's lock,
        so a batch never holds two moves of one room."""
        move = _row("move", room_id, action.index, action.seat, json_text(action.move),
                    _rolls_text(action.rolls), action.time, *(action.clocks or (None, None)))
        if outcome is None:
            await self._write(move)
        else:
            await self._write(move, *_finish(room_id, outcome, action.time, action.clocks),
                              *_rated(room_id, ratings))

    async def _write(self, *rows: list[Any]) -> None:
        """Group commit: the write (``rows``) goes into the next transaction, with whatever
        else was handed over meanwhile (one statement, one trip to the thread and one fsync
        for all: those, not the SQL, are what a write costs); returns once that transaction
        is committed. A value the database cannot hold is refused here (``ValueError``)."""
        write = _encode(rows)
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((write, fut))
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
                    started = time.perf_counter()
                    try:
                        errors = await self._commit([write for write, _ in batch])
                    except BaseException:
                        for _, fut in batch:
                            fut.cancel()
                        raise
                    self.commit_stats.add(len(batch), time.perf_counter() - started)
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

    async def _commit(self, writes: list[Write]) -> list[Exception | None]:
        """``writes`` in one transaction; if it fails, each in its own, so one bad write fails
        only its own caller. Each write's error (None: committed)."""
        try:
            await self._transaction(writes)
            return [None] * len(writes)
        except Exception as e:
            if len(writes) == 1:
                return [e]
        errors: list[Exception | None] = []
        for write in writes:
            try:
                await self._transaction([write])
                errors.append(None)
            except Exception as e:
                errors.append(e)
        return errors

    async def _transaction(self, writes: Sequence[Write]) -> None:
        """Every row of ``writes`` in one statement, which SQLite runs as a transaction of
        its own (committed and fsynced before it returns, or not written at all)."""
        await self.db.execute(_WRITE_ROWS, ("[" + ",".join(writes) + "]",))

    async def record_result(
        self, room_id: str, outcome: Outcome, clocks: Sequence[int] | None = None,
        when: float | None = None, ratings: Sequence[RatingChange] = (),
    ) -> None:
        """The end of a game that no move ended (a resignation, a timeout), with the
        ``ratings`` it changes, in one transaction."""
        at = time.time() if when is None else when
        await self._write(*_finish(room_id, outcome, at, clocks), *_rated(room_id, ratings))

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
        seeds: Seeds | None = None,
    ) -> None:
        """A seat becomes a bot's (logged in ``seat_changes``), and the room's status (a
        handover can start a waiting game), in one transaction."""
        await self._write(
            _row("seat_to_bot", room_id, seat, level),
            _row("seat_change", room_id, seat, ply, from_player, level, reason, when),
            *_save_seeds(room_id, seeds),
            _save_status(room_id, status, opening_rolls),
        )

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
        await self._write(_row("chat", room_id, player_id, text, when))

    @_serialised
    async def chat_lines(self, room_id: str, limit: int) -> list[dict[str, Any]]:
        """The room's last ``limit`` chat lines, oldest first, as the ``chat`` message carries
        them (``name`` is the name its player goes by now). Read through the index on
        (room_id, id), newest first: as long as ``limit``, however much was said."""
        async with self.db.execute(
            "SELECT c.player_id, p.name, c.text, c.created_at FROM chat c"
            " JOIN players p ON p.id = c.player_id WHERE c.room_id = ?"
            " ORDER BY c.id DESC LIMIT ?",
            (room_id, limit),
        ) as cur:
            rows = await cur.fetchall()
        return [{"player_id": str(pid), "name": str(name), "text": str(text), "time": float(t)}
                for pid, name, text, t in reversed(list(rows))]

    async def save_review(self, room_id: str, text: str, when: float) -> None:
        """A finished game's review, as the JSON text it is served as (the first one stays)."""
        await self._write(_row("review", room_id, text, when))

    @_serialised
    async def review(self, room_id: str) -> str | None:
        """The room's stored review (JSON text), None if it has none yet."""
        async with self.db.execute(
            "SELECT json FROM reviews WHERE room_id = ?", (room_id,)
        ) as cur:
            row = await cur.fetchone()
        return None if row is None else str(row[0])

    # --- loading -------------------------------------------------------------------------

    @_serialised
    async def live_rooms(self) -> list[tuple[str, Status, bool]]:
        """Every room waiting or being played: (id, status, whether it plays on by itself:
        no person sits in it, or absent people's seats go to bots), oldest first. Read
        through the index on status: as long as the live rooms, whatever the history."""
        async with self.db.execute(
            "SELECT r.id, r.status, NOT EXISTS (SELECT 1 FROM seats s WHERE s.room_id = r.id"
            " AND s.kind = 'human') OR (room_options ->> 'abandon_to_bot_after_ms') IS NOT NULL"
            " FROM rooms r WHERE r.status IN ('waiting', 'playing') ORDER BY r.created_at"
        ) as cur:
            return [(str(r), status, bool(alone)) for r, status, alone in await cur.fetchall()]

    @_serialised
    async def adjourned_before(self, before: float, limit: int) -> list[str]:
        """Up to ``limit`` rooms adjourned before ``before``, oldest first."""
        async with self.db.execute(
            "SELECT id FROM rooms WHERE status = 'adjourned' AND status_at < ?"
            " ORDER BY status_at LIMIT ?",
            (before, limit),
        ) as cur:
            return [str(r[0]) for r in await cur.fetchall()]

    @_serialised
    async def seats_held(self, player_id: str) -> list[tuple[str, int, Status]]:
        """Every seat ``player_id`` holds in a room that may still be played (waiting,
        playing or adjourned): (room id, seat, the room's status), oldest room first. Rooms
        left idle are on disk only, so this, not memory, is the list of a returning player's
        seats."""
        async with self.db.execute(
            "SELECT s.room_id, s.seat, r.status FROM seats s JOIN rooms r ON r.id = s.room_id"
            " WHERE s.player_id = ? AND r.status IN ('waiting', 'playing', 'adjourned')"
            " ORDER BY r.created_at, r.rowid, s.seat",
            (player_id,),
        ) as cur:
            return [(str(r), int(seat), status) for r, seat, status in await cur.fetchall()]

    @_serialised
    async def waiting_rooms_opened_by(self, player_id: str) -> list[str]:
        """The waiting rooms ``player_id`` opened (seated in them or not)."""
        async with self.db.execute(
            "SELECT id FROM rooms WHERE created_by = ? AND status = 'waiting'"
            " ORDER BY created_at",
            (player_id,),
        ) as cur:
            return [str(r[0]) for r in await cur.fetchall()]

    @_serialised
    async def load_room(self, room_id: str) -> RoomRecord | None:
        db = self.db
        async with db.execute(
            "SELECT game, options, status, dice_seed, opening_dice, created_at, room_options,"
            " created_by, status_at, dice_seeds FROM rooms WHERE id = ?",
            (room_id,),
        ) as cur:
            row = await cur.fetchone()
        if row is None:
            return None
        (game_id, options, status, seed, opening, created_at, ropts, created_by, status_at,
         seeds) = row
        async with db.execute(
            "SELECT s.seat, s.kind, s.level, s.player_id, p.name FROM seats s"
            " LEFT JOIN players p ON p.id = s.player_id WHERE s.room_id = ? ORDER BY s.seat",
            (room_id,),
        ) as cur:
            seats = [
                SeatState(kind, None if level is None else check_level(level), player_id, name)
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
            # Written as hexadecimal text (a batch travels as JSON); an older room's is a BLOB.
            seed=None if seed is None else bytes.fromhex(seed) if isinstance(seed, str)
            else bytes(seed),
            created_at=float(created_at),
            seats=seats,
            seeds=None if seeds is None else _seeds(seeds),
            opening_rolls=_rolls(opening),
            actions=actions,
            result=result,
            room_options=RoomOptions.model_validate(json.loads(ropts or "{}")),
            final_clocks=final_clocks,
            created_by=created_by,
            status_at=status_at,
        )
