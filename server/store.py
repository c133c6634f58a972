"""Persistence: ALL the SQL of the server lives here (aiosqlite, parameterised queries only).

Durability: the database runs in WAL mode with ``synchronous=FULL``. Every move is committed
(and, with FULL, the WAL is fsynced) before anyone receives its ``update``, so a move anyone
has seen survives ``kill -9`` of the server and also a power cut. (WAL with ``NORMAL`` would
survive a process crash too, since a commit is in the OS's page cache once ``write`` returns,
but could lose the last commits on power loss; moves are rare enough that FULL costs nothing.)

Migrations are the numbered files of ``migrations/`` (``0001_initial.sql``, ...), applied in
order at start, each inside one transaction and recorded in ``schema_migrations``.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiosqlite

from engine.core import Outcome
from server.room import Action, Dice, RoomRecord, SeatState, Status

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def migration_files(folder: Path = MIGRATIONS_DIR) -> list[tuple[int, str, str]]:
    """``(version, name, sql)`` for every migration file, in version order."""
    out = []
    for path in sorted(folder.iterdir()):
        m = _MIGRATION_NAME.match(path.name)
        if m:
            out.append((int(m.group(1)), path.name, path.read_text(encoding="utf-8")))
    versions = [v for v, _, _ in out]
    if versions != list(range(1, len(out) + 1)):
        raise RuntimeError(f"migrations in {folder} must be numbered 1..n, found {versions}")
    return out


def _rolls(text: str | None) -> list[Dice]:
    return [(int(a), int(b)) for a, b in json.loads(text or "[]")]


class Store:
    """One SQLite database; open with :meth:`open` (which migrates), close with :meth:`close`."""

    def __init__(self, db: aiosqlite.Connection) -> None:
        self.db = db

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
        await self.db.execute(
            "INSERT INTO players (id, name, token_hash, created_at, last_seen)"
            " VALUES (?, ?, ?, ?, ?)",
            (player_id, name, token_hash(token), now, now),
        )
        await self.db.commit()

    async def player_by_token(self, token: str) -> tuple[str, str] | None:
        async with self.db.execute(
            "SELECT id, name FROM players WHERE token_hash = ?", (token_hash(token),)
        ) as cur:
            row = await cur.fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    async def touch_player(self, player_id: str, name: str) -> None:
        await self.db.execute(
            "UPDATE players SET name = ?, last_seen = ? WHERE id = ?",
            (name, time.time(), player_id),
        )
        await self.db.commit()

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
    ) -> None:
        """The room with its seats, in one transaction."""
        db = self.db
        await db.execute("BEGIN IMMEDIATE")
        try:
            await db.execute(
                "INSERT INTO rooms (id, game, options, status, dice_seed, opening_dice,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (room_id, game_id, json.dumps(options), status, seed,
                 json.dumps([list(r) for r in opening_rolls]), created_at),
            )
            await db.executemany(
                "INSERT INTO seats (room_id, seat, kind, level, player_id) VALUES (?, ?, ?, ?, ?)",
                [(room_id, i, s.kind, s.level, s.player_id) for i, s in enumerate(seats)],
            )
            await db.commit()
        except BaseException:
            await db.rollback()
            raise

    async def save_seats(
        self,
        room_id: str,
        seats: Sequence[SeatState],
        status: Status,
        opening_rolls: Sequence[Dice],
    ) -> None:
        """Seat holders, and the start of the game (status, opening roll), in one transaction."""
        db = self.db
        await db.execute("BEGIN IMMEDIATE")
        try:
            await db.executemany(
                "UPDATE seats SET player_id = ? WHERE room_id = ? AND seat = ?",
                [(s.player_id, room_id, i) for i, s in enumerate(seats)],
            )
            await db.execute(
                "UPDATE rooms SET status = ?, opening_dice = ? WHERE id = ?",
                (status, json.dumps([list(r) for r in opening_rolls]), room_id),
            )
            await db.commit()
        except BaseException:
            await db.rollback()
            raise

    async def record_move(
        self, room_id: str, action: Action, outcome: Outcome | None
    ) -> None:
        """One action (and the end of the game, if it ends it), committed durably."""
        db = self.db
        await db.execute("BEGIN IMMEDIATE")
        try:
            await db.execute(
                "INSERT INTO moves (room_id, ply, seat, move, dice, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (room_id, action.index, action.seat, json.dumps(action.move),
                 json.dumps([list(r) for r in action.rolls]), action.time),
            )
            if outcome is not None:
                await self._finish(room_id, outcome, action.time)
            await db.commit()
        except BaseException:
            await db.rollback()
            raise

    async def record_result(self, room_id: str, outcome: Outcome) -> None:
        """The end of a game that no move ended (a resignation)."""
        db = self.db
        await db.execute("BEGIN IMMEDIATE")
        try:
            await self._finish(room_id, outcome, time.time())
            await db.commit()
        except BaseException:
            await db.rollback()
            raise

    async def _finish(self, room_id: str, outcome: Outcome, when: float) -> None:
        await self.db.execute(
            "INSERT INTO results (room_id, winner, points, reason, finished_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (room_id, outcome.winner, outcome.points, outcome.reason, when),
        )
        await self.db.execute(
            "UPDATE rooms SET status = 'finished' WHERE id = ?", (room_id,)
        )

    async def record_chat(self, room_id: str, player_id: str, text: str, when: float) -> None:
        await self.db.execute(
            "INSERT INTO chat (room_id, player_id, text, created_at) VALUES (?, ?, ?, ?)",
            (room_id, player_id, text, when),
        )
        await self.db.commit()

    # --- loading -------------------------------------------------------------------------

    async def unfinished_room_ids(self) -> list[str]:
        async with self.db.execute(
            "SELECT id FROM rooms WHERE status != 'finished' ORDER BY created_at"
        ) as cur:
            return [str(r[0]) for r in await cur.fetchall()]

    async def load_room(self, room_id: str) -> RoomRecord | None:
        db = self.db
        async with db.execute(
            "SELECT game, options, status, dice_seed, opening_dice, created_at"
            " FROM rooms WHERE id = ?",
            (room_id,),
        ) as cur:
            row = await cur.fetchone()
        if row is None:
            return None
        game_id, options, status, seed, opening, created_at = row
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
            "SELECT ply, seat, move, dice, created_at FROM moves WHERE room_id = ? ORDER BY ply",
            (room_id,),
        ) as cur:
            actions = [
                Action(int(ply), int(seat), json.loads(move), tuple(_rolls(dice)), float(t))
                for ply, seat, move, dice, t in await cur.fetchall()
            ]
        if [a.index for a in actions] != list(range(len(actions))):
            raise RuntimeError(f"room {room_id}: the stored plies have a gap")
        async with db.execute(
            "SELECT winner, points, reason FROM results WHERE room_id = ?", (room_id,)
        ) as cur:
            res = await cur.fetchone()
        result = None if res is None else Outcome(res[0], int(res[1]), str(res[2]))
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
        )
