"""The SQLite backend of the store (:class:`~tablas.server.store.base.Storage`), the embedded
default: all of its SQL lives here and in its migrations (aiosqlite, parameterised queries
only).

Durability: the database runs in WAL mode with ``synchronous=FULL``. Every move is committed
(and, with FULL, the WAL is fsynced) before anyone receives its ``update``, so a move anyone
has seen survives ``kill -9`` of the server and also a power cut. (WAL with ``NORMAL`` would
survive a process crash too, since a commit is in the OS's page cache once ``write`` returns,
but could lose the last commits on power loss; moves are rare enough that FULL costs nothing.)

Concurrency: the server has one connection, shared by every room, used through aiosqlite's
public API. Every write goes through the group commit of :mod:`tablas.server.store.base`. A write
is a few rows for the view ``store_write`` (migration 0004), whose triggers put each row in
its table; a whole batch is one ``INSERT … SELECT`` over a JSON array of those rows (one
parameter), which SQLite runs as a transaction of its own, committed with one fsync: one trip
to aiosqlite's thread for the whole batch, however many writes it holds. Reads hold the
store's lock for their few trips, so they never see a transaction half done.

Migrations are the numbered files of ``migrations/sqlite/`` (``0001_initial.sql``, ...),
shipped with the package and applied in order at start, each inside one transaction and
recorded in ``schema_migrations``.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import aiosqlite
from tablas.server.ratings import NEW, Rating
from tablas.server.room import RoomRecord, Status
from tablas.server.store.base import (
    Account,
    Storage,
    holders,
    migration_files,
    pair_match,
    room_record,
    token_hash,
)
from tablas.server.store.commit import Write
from tablas.server.store.sqlite_addresses import SqliteAddresses
from tablas.server.store.sqlite_blocks import SqliteBlocks
from tablas.server.store.sqlite_invites import SqliteInvites
from tablas.server.store.sqlite_players import SqlitePlayers
from tablas.server.store.sqlite_seeks import SqliteSeeks
from tablas.server.store.sqlite_tournaments import SqliteTournaments

P = ParamSpec("P")
R = TypeVar("R")


def _serialised(
    fn: Callable[Concatenate[SqliteStore, P], Awaitable[R]],
) -> Callable[Concatenate[SqliteStore, P], Coroutine[Any, Any, R]]:
    """Runs the method under the store's lock: one transaction at a time on the connection."""

    async def locked(self: SqliteStore, /, *args: P.args, **kwargs: P.kwargs) -> R:
        async with self._lock:
            return await fn(self, *args, **kwargs)

    functools.update_wrapper(locked, fn)
    return locked


# The one statement every group commit runs: each element of the JSON array is a row of the
# view, whose triggers put it in its table.
_WRITE_ROWS = (
    "INSERT INTO store_write (kind, a, b, c, d, e, f, g, h)"
    " SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5,"
    " value ->> 6, value ->> 7, value ->> 8 FROM json_each(?) ORDER BY key"
)


async def _schema_version(db: aiosqlite.Connection) -> int:
    async with db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ) as cur:
        if await cur.fetchone() is None:
            return 0
    async with db.execute("SELECT MAX(version) FROM schema_migrations") as cur:
        row = await cur.fetchone()
    return int(row[0]) if row and row[0] is not None else 0


async def _migrate(db: aiosqlite.Connection, upto: int | None) -> int:
    """Applies every migration newer than the database (up to ``upto``); the new version."""
    await db.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
    )
    current = await _schema_version(db)
    for version, name, sql in migration_files():
        if version <= current or (upto is not None and version > upto):
            continue
        # The script runs inside our own transaction, recorded in the same commit. Foreign
        # keys are off meanwhile (they can only be switched outside a transaction), so a
        # migration may rebuild a table others refer to, as SQLite's documentation says
        # to; they are checked before the commit instead.
        await db.execute("PRAGMA foreign_keys=OFF")
        try:
            await db.executescript("BEGIN IMMEDIATE;\n" + sql)
            async with db.execute("PRAGMA foreign_key_check") as cur:
                broken = list(await cur.fetchall())
            if broken:
                raise RuntimeError(f"migration {name} breaks foreign keys: {broken[:5]}")
            await db.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (version, name, time.time()),
            )
            await db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                await db.execute("ROLLBACK")
            raise
        finally:
            await db.execute("PRAGMA foreign_keys=ON")
        current = version
    return current


class SqliteStore(SqlitePlayers, Storage):
    """One SQLite database; open with :meth:`open` (which migrates), close with :meth:`close`."""

    def __init__(self, db: aiosqlite.Connection) -> None:
        super().__init__()
        self.db = db
        self.seeks = SqliteSeeks(db, self._lock)
        self.tournaments = SqliteTournaments(db, self._lock)
        self.blocks = SqliteBlocks(db, self._lock)
        self.addresses = SqliteAddresses(db, self._lock)
        self.invites = SqliteInvites(db, self._lock)

    @classmethod
    async def open(
        cls, path: str | Path, *, synchronous: str = "FULL", upto: int | None = None
    ) -> SqliteStore:
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

    async def _close_database(self) -> None:
        await self.db.close()

    # --- migrations ----------------------------------------------------------------------

    async def schema_version(self) -> int:
        return await _schema_version(self.db)

    async def migrate(self, upto: int | None = None) -> int:
        """Applies every migration newer than the database (up to ``upto``); the new version."""
        return await _migrate(self.db, upto)

    # --- players -------------------------------------------------------------------------

    async def account_by_token(self, token: str) -> Account | None:
        h = token_hash(token)
        rows = await self.fetch_at_once(
            "SELECT id, name, password_hash IS NOT NULL, bot FROM players WHERE token_hash = ?"
            " UNION ALL SELECT p.id, p.name, p.password_hash IS NOT NULL, p.bot"
            " FROM player_tokens t JOIN players p ON p.id = t.player_id"
            " WHERE t.token_hash = ? LIMIT 1",
            (h, h),
        )
        row = rows[0] if rows else None
        return None if row is None else Account(str(row[0]), str(row[1]), bool(row[2]),
                                                bot=bool(row[3]))

    async def account_by_key(self, name_key: str) -> Account | None:
        rows = await self.fetch_at_once(
            "SELECT id, name, password_hash, bot FROM players WHERE name_key = ?", (name_key,))
        row = rows[0] if rows else None
        return None if row is None else Account(str(row[0]), str(row[1]), True, str(row[2]),
                                                bool(row[3]))

    async def name_holders(self, name_key: str, name_skeleton: str
                           ) -> tuple[Account | None, Account | None]:
        return holders(await self.fetch_at_once(
            "SELECT id, name, password_hash, name_key = ?,"
            " name_skeleton = ? AND name_skeleton_shared = 0 FROM players"
            " WHERE name_key = ? OR (name_skeleton = ? AND name_skeleton_shared = 0)",
            (name_key, name_skeleton, name_key, name_skeleton),
        ))

    @_serialised
    async def names_without_skeleton(self, limit: int) -> list[tuple[str, str]]:
        async with self.db.execute(
            "SELECT id, name FROM players WHERE name_key IS NOT NULL AND name_skeleton IS NULL"
            " ORDER BY registered_at, id LIMIT ?", (limit,)
        ) as cur:
            return [(str(r[0]), str(r[1])) for r in await cur.fetchall()]

    def _refused(self, error: Exception) -> str | None:
        # A unique index, or a RAISE(ABORT) of a write's trigger (migration 0008 and after).
        return str(error) if isinstance(error, sqlite3.IntegrityError) else None

    @_serialised
    async def player_info(self, player_id: str) -> tuple[str, bool] | None:
        async with self.db.execute(
            "SELECT name, password_hash IS NOT NULL FROM players WHERE id = ?", (player_id,)
        ) as cur:
            row = await cur.fetchone()
        return None if row is None else (str(row[0]), bool(row[1]))

    @_serialised
    async def bot_accounts(self, player_ids: Sequence[str]) -> set[str]:
        # One read for any number of ids: the list travels as one JSON parameter.
        async with self.db.execute(
            "SELECT id FROM players WHERE bot = 1 AND id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(dict.fromkeys(player_ids))),),
        ) as cur:
            return {str(r[0]) for r in await cur.fetchall()}

    # --- ratings -------------------------------------------------------------------------

    @_serialised
    async def ratings_of(self, game: str, player_ids: Sequence[str]) -> dict[str, Rating]:
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
    async def rated_games_between(self, game: str, players: tuple[str, str], since: float,
                                  *, playing: bool) -> int:
        # The person first: their seats are found through seats_by_player.
        person, (kind, who) = pair_match(players)
        async with self.db.execute(
            "SELECT COUNT(*) FROM seats s0"
            " JOIN seats s1 ON s1.room_id = s0.room_id AND s1.seat <> s0.seat"
            " JOIN rooms r ON r.id = s0.room_id"
            " LEFT JOIN results res ON res.room_id = r.id"
            " WHERE s0.player_id = ? AND s0.kind = 'human' AND s1.kind = ?"
            " AND (CASE WHEN s1.kind = 'bot' THEN s1.level ELSE s1.player_id END) = ?"
            " AND r.game = ? AND ((r.status = 'finished' AND res.finished_at > ?"
            " AND EXISTS (SELECT 1 FROM rating_changes rc WHERE rc.room_id = r.id))"
            " OR (? AND r.status = 'playing' AND (r.room_options ->> 'rated') = 1))",
            (person, kind, who, game, since, int(playing)),
        ) as cur:
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    @_serialised
    async def leaderboard(self, game: str, limit: int) -> list[tuple[str, str | None, Rating]]:
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
    async def ratings_by_game(self, player_id: str) -> dict[str, Rating]:
        async with self.db.execute(
            "SELECT game, rating, rd, volatility, games FROM ratings WHERE player_id = ?"
            " ORDER BY game", (player_id,),
        ) as cur:
            return {str(g): Rating(float(r), float(rd), float(v), int(n))
                    for g, r, rd, v, n in await cur.fetchall()}

    @_serialised
    async def games_of(self, player_id: str, limit: int) -> list[dict[str, Any]]:
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

    async def fetch_at_once(self, sql: str, params: Sequence[Any]) -> list[Any]:
        """The rows of one read, run and fetched in one step of aiosqlite's thread, under the
        store's lock (the seeks' and tournaments' transactions span several steps: a read
        must not land inside one). A read through a cursor holds the lock for two steps (run,
        then fetch), each a turn of the event loop; the reads of every ``hello`` are done so,
        so a rush of visitors holds the moves' commits back half as long
        (docs/notes/benchmarks-method.md, "Bursts")."""
        async with self._lock:
            return list(await self.db.execute_fetchall(sql, params))

    async def _transaction(self, writes: Sequence[Write]) -> None:
        """Every row of ``writes`` in one statement, which SQLite runs as a transaction of
        its own (committed and fsynced before it returns, or not written at all)."""
        await self.db.execute(_WRITE_ROWS, ("[" + ",".join(writes) + "]",))

    @_serialised
    async def count_playing(self) -> int:
        async with self.db.execute("SELECT COUNT(*) FROM rooms WHERE status = 'playing'") as cur:
            row = await cur.fetchone()
        return 0 if row is None else int(row[0])

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

    @_serialised
    async def chat_lines(self, room_id: str, limit: int) -> list[dict[str, Any]]:
        """The room's last ``limit`` chat lines, oldest first, as the ``chat`` message carries
        them (``name`` is the name its player goes by now). Read through the index on
        (room_id, id), newest first: as long as ``limit``, however much was said."""
        async with self.db.execute(
            "SELECT c.player_id, p.name, c.text, c.created_at, c.audience FROM chat c"
            " JOIN players p ON p.id = c.player_id WHERE c.room_id = ?"
            " ORDER BY c.id DESC LIMIT ?",
            (room_id, limit),
        ) as cur:
            rows = await cur.fetchall()
        return [{"player_id": str(pid), "name": str(name), "text": str(text), "time": float(t),
                 "audience": str(audience)}
                for pid, name, text, t, audience in reversed(list(rows))]

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
        no person sits in it, absent people's seats go to bots, or it is rated with a clock,
        which runs whoever is away), oldest first. Read
        through the index on status: as long as the live rooms, whatever the history."""
        async with self.db.execute(
            "SELECT r.id, r.status, NOT EXISTS (SELECT 1 FROM seats s WHERE s.room_id = r.id"
            " AND s.kind = 'human') OR (room_options ->> 'abandon_to_bot_after_ms') IS NOT NULL"
            " OR ((room_options ->> 'rated') = 1 AND (room_options ->> 'clock') IS NOT NULL)"
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

    async def seats_held(self, player_id: str) -> list[tuple[str, int, Status]]:
        """Every seat ``player_id`` holds in a room that may still be played (waiting,
        playing or adjourned): (room id, seat, the room's status), oldest room first. Rooms
        left idle are on disk only, so this, not memory, is the list of a returning player's
        seats."""
        rows = await self.fetch_at_once(
            "SELECT s.room_id, s.seat, r.status FROM seats s JOIN rooms r ON r.id = s.room_id"
            " WHERE s.player_id = ? AND r.status IN ('waiting', 'playing', 'adjourned')"
            " ORDER BY r.created_at, r.rowid, s.seat",
            (player_id,),
        )
        return [(str(r), int(seat), status) for r, seat, status in rows]

    async def waiting_rooms_opened_by(self, player_id: str) -> list[str]:
        """The waiting rooms ``player_id`` opened (seated in them or not)."""
        rows = await self.fetch_at_once(
            "SELECT id FROM rooms WHERE created_by = ? AND status = 'waiting'"
            " ORDER BY created_at",
            (player_id,),
        )
        return [str(r[0]) for r in rows]

    @_serialised
    async def load_room(self, room_id: str) -> RoomRecord | None:
        db = self.db
        async with db.execute(
            "SELECT game, options, status, dice_seed, opening_dice, created_at, room_options,"
            " created_by, status_at, dice_seeds FROM rooms WHERE id = ?",
            (room_id,),
        ) as cur:
            room = await cur.fetchone()
        if room is None:
            return None
        async with db.execute(
            "SELECT s.seat, s.kind, s.level, s.player_id, p.name, COALESCE(p.bot, 0)"
            " FROM seats s LEFT JOIN players p ON p.id = s.player_id WHERE s.room_id = ?"
            " ORDER BY s.seat",
            (room_id,),
        ) as cur:
            seats = list(await cur.fetchall())
        async with db.execute(
            "SELECT ply, seat, move, dice, created_at, clock0_ms, clock1_ms FROM moves"
            " WHERE room_id = ? ORDER BY ply",
            (room_id,),
        ) as cur:
            moves = list(await cur.fetchall())
        async with db.execute(
            "SELECT winner, points, reason, clock0_ms, clock1_ms FROM results WHERE room_id = ?",
            (room_id,),
        ) as cur:
            result = await cur.fetchone()
        async with db.execute(
            "SELECT seat, rating_before, rating_after FROM rating_changes WHERE room_id = ?"
            " ORDER BY seat", (room_id,),
        ) as cur:
            changes = list(await cur.fetchall())
        async with db.execute(
            "SELECT berserk0, berserk1 FROM tournament_games WHERE room_id = ?", (room_id,),
        ) as cur:
            berserk = await cur.fetchone()
        return room_record(room_id, room, seats, moves, result, changes, berserk)


# The name the server's tests and tools open a SQLite file by (``Store.open(path)``).
Store = SqliteStore
