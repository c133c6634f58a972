"""The PostgreSQL backend of the store (:class:`~tablas.server.store.base.Storage`), for a node of a
cluster (contract section 9): all of its SQL lives here and in ``migrations/postgresql/``.

Durability: every session runs with ``synchronous_commit = on`` (PostgreSQL's default, set
here whatever the server's configuration says): a commit returns once its WAL record is
flushed to disk, and a write is acknowledged only after its COMMIT has returned, so a move
anyone has seen survives ``kill -9`` of the node and of the database server.

Concurrency: a pool of connections (asyncpg). Writes go through the group commit of
:mod:`tablas.server.store.base`, one batch at a time: a batch is one statement, ``SELECT
store_write($1)`` over a JSON array of its rows (migration 0004), which PostgreSQL runs as a
transaction of its own: one round trip and one WAL flush for the whole batch. Reads take a
connection of their own and never wait for the writer; a read of several statements (a
room) runs in one read-only REPEATABLE READ transaction, so it sees one committed state.

Migrations: the numbered files of ``migrations/postgresql/``, in step with
SQLite's (``README.md`` there), applied in order at start, each in one transaction recorded
in ``schema_migrations``, under an advisory lock, so nodes starting together migrate once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
from tablas.server.errors import StartupError
from tablas.server.ratings import NEW, Rating
from tablas.server.room import RoomRecord, Status
from tablas.server.store.base import (
    Account,
    Storage,
    holders,
    migration_files,
    migrations_folder,
    pair_match,
    room_record,
    token_hash,
)
from tablas.server.store.commit import Write
from tablas.server.store.postgres_addresses import PostgresAddresses
from tablas.server.store.postgres_blocks import PostgresBlocks
from tablas.server.store.postgres_invites import PostgresInvites
from tablas.server.store.postgres_players import PostgresPlayers
from tablas.server.store.postgres_seeks import PostgresSeeks
from tablas.server.store.postgres_tournaments import PostgresTournaments

FOLDER = "postgresql"
# pg_advisory_lock's key for migrations: any constant the application uses for nothing else.
_MIGRATION_LOCK = 0x7461626C6173  # "tablas"
CONNECT_TIMEOUT = 10.0


def safe_url(url: str) -> str:
    """``url`` without its password, fit for a message or a log."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "the database URL"
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def postgres_migrations() -> list[tuple[int, str, str]]:
    return migration_files(migrations_folder(FOLDER))


async def _keep_session(con: asyncpg.Connection) -> None:
    """What the pool does to a connection given back, past what asyncpg always does (roll
    back a transaction left open): nothing. asyncpg's default sends a query for every
    connection given back (advisory locks released, cursors closed, ``LISTEN`` ended,
    settings reset), a round trip and PostgreSQL's work for every read and every commit;
    the store takes none of these, but for the migrations' advisory lock, which
    :func:`_migrate` releases itself (or ends the connection)."""


async def _version(con: asyncpg.Connection) -> int:
    if await con.fetchval("SELECT to_regclass('schema_migrations')") is None:
        return 0
    version = await con.fetchval("SELECT MAX(version) FROM schema_migrations")
    return 0 if version is None else int(version)


async def _migrate(pool: asyncpg.Pool, upto: int | None) -> int:
    """Applies every migration newer than the database (up to ``upto``), each in one
    transaction with its row of ``schema_migrations``; the new version. Nodes that start
    together take turns (an advisory lock): the first migrates, the others find it done."""
    async with pool.acquire() as con:
        await con.execute("SELECT pg_advisory_lock($1)", _MIGRATION_LOCK)
        try:
            await con.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                " applied_at DOUBLE PRECISION NOT NULL)")
            current = await _version(con)
            for version, name, sql in postgres_migrations():
                if version <= current or (upto is not None and version > upto):
                    continue
                async with con.transaction():
                    await con.execute(sql)  # no arguments: the simple protocol, a script
                    await con.execute(
                        "INSERT INTO schema_migrations (version, name, applied_at)"
                        " VALUES ($1, $2, $3)", version, name, time.time())
                current = version
        finally:
            try:
                await con.execute("SELECT pg_advisory_unlock($1)", _MIGRATION_LOCK)
            except BaseException:
                # The pool does not reset its connections' sessions (_keep_session): one
                # that may still hold the lock is not handed out again.
                con.terminate()
                raise
    return current


class PostgresStore(PostgresPlayers, Storage):
    """One PostgreSQL database through a pool; open with :meth:`open` (which migrates)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        super().__init__()
        self.pool = pool
        self.seeks = PostgresSeeks(pool)
        self.tournaments = PostgresTournaments(pool)
        self.blocks = PostgresBlocks(pool)
        self.addresses = PostgresAddresses(pool)
        self.invites = PostgresInvites(pool)

    @classmethod
    async def open(cls, url: str, *, upto: int | None = None, max_size: int = 10
                   ) -> PostgresStore:
        """The store of the database at ``url`` (``postgresql://…``), migrated; a
        :class:`~tablas.server.errors.StartupError` naming it (without its password) when it
        cannot be reached or used."""
        try:
            pool = await asyncpg.create_pool(
                url, min_size=1, max_size=max_size, timeout=CONNECT_TIMEOUT,
                server_settings={"synchronous_commit": "on", "application_name": "tablas"},
                reset=_keep_session)
        except (OSError, TimeoutError, ValueError, asyncpg.PostgresError,
                asyncpg.InterfaceError) as e:
            raise StartupError(f"cannot use the database {safe_url(url)}: "
                               f"{str(e) or type(e).__name__}") from None
        store = cls(pool)
        try:
            await store.migrate(upto)
        except asyncpg.PostgresError as e:
            await pool.close()
            raise StartupError(f"cannot migrate the database {safe_url(url)}: {e}") from None
        except BaseException:
            await pool.close()
            raise
        return store

    async def _close_database(self) -> None:
        await self.pool.close()

    # --- migrations ------------------------------------------------------------------------

    async def schema_version(self) -> int:
        async with self.pool.acquire() as con:
            return await _version(con)

    async def migrate(self, upto: int | None = None) -> int:
        """Applies every migration newer than the database (up to ``upto``), each in one
        transaction with its row of ``schema_migrations``; the new version. Nodes that start
        together take turns (an advisory lock): the first migrates, the others find it done."""
        return await _migrate(self.pool, upto)

    # --- the group commit's one statement --------------------------------------------------

    async def _transaction(self, writes: Sequence[Write]) -> None:
        """Every row of ``writes`` in one statement, which PostgreSQL runs as a transaction
        of its own: committed (its WAL flushed) before it returns, or not written at all."""
        async with self.pool.acquire() as con:
            await con.execute("SELECT store_write($1::jsonb)", "[" + ",".join(writes) + "]")

    # --- reads -----------------------------------------------------------------------------

    async def account_by_token(self, token: str) -> Account | None:
        h = token_hash(token)
        row = await self.pool.fetchrow(
            "SELECT id, name, password_hash IS NOT NULL, bot FROM players WHERE token_hash = $1"
            " UNION ALL SELECT p.id, p.name, p.password_hash IS NOT NULL, p.bot"
            " FROM player_tokens t JOIN players p ON p.id = t.player_id"
            " WHERE t.token_hash = $1 LIMIT 1", h)
        return None if row is None else Account(str(row[0]), str(row[1]), bool(row[2]),
                                                bot=bool(row[3]))

    async def count_playing(self) -> int:
        return int(await self.pool.fetchval("SELECT COUNT(*) FROM rooms WHERE status = 'playing'"))

    async def account_by_key(self, name_key: str) -> Account | None:
        row = await self.pool.fetchrow(
            "SELECT id, name, password_hash, bot FROM players WHERE name_key = $1", name_key)
        return None if row is None else Account(str(row[0]), str(row[1]), True, str(row[2]),
                                                bool(row[3]))

    async def name_holders(self, name_key: str, name_skeleton: str
                           ) -> tuple[Account | None, Account | None]:
        rows = await self.pool.fetch(
            "SELECT id, name, password_hash, name_key = $1,"
            " name_skeleton = $2 AND name_skeleton_shared = 0 FROM players"
            " WHERE name_key = $1 OR (name_skeleton = $2 AND name_skeleton_shared = 0)",
            name_key, name_skeleton)
        return holders([tuple(r) for r in rows])

    async def names_without_skeleton(self, limit: int) -> list[tuple[str, str]]:
        rows = await self.pool.fetch(
            "SELECT id, name FROM players WHERE name_key IS NOT NULL AND name_skeleton IS NULL"
            " ORDER BY registered_at, id LIMIT $1", limit)
        return [(str(r[0]), str(r[1])) for r in rows]

    def _refused(self, error: Exception) -> str | None:
        # A unique index, or a RAISE EXCEPTION of a write's function (migration 0008 on).
        if isinstance(error, asyncpg.IntegrityConstraintViolationError | asyncpg.RaiseError):
            return str(error)
        return None

    async def player_info(self, player_id: str) -> tuple[str, bool] | None:
        row = await self.pool.fetchrow(
            "SELECT name, password_hash IS NOT NULL FROM players WHERE id = $1", player_id)
        return None if row is None else (str(row[0]), bool(row[1]))

    async def bot_accounts(self, player_ids: Sequence[str]) -> set[str]:
        rows = await self.pool.fetch(
            "SELECT id FROM players WHERE id = ANY($1::text[]) AND bot = 1",
            list(dict.fromkeys(player_ids)))
        return {str(r[0]) for r in rows}

    async def ratings_of(self, game: str, player_ids: Sequence[str]) -> dict[str, Rating]:
        ids = list(dict.fromkeys(player_ids))
        rows = await self.pool.fetch(
            "SELECT player_id, rating, rd, volatility, games FROM ratings"
            " WHERE game = $1 AND player_id = ANY($2::text[])", game, ids)
        stored = {str(pid): Rating(float(r), float(rd), float(v), int(n))
                  for pid, r, rd, v, n in rows}
        return {pid: stored.get(pid, NEW) for pid in ids}

    async def rated_games_between(self, game: str, players: tuple[str, str], since: float,
                                  *, playing: bool) -> int:
        # The person first: their seats are found through seats_by_player.
        person, (kind, who) = pair_match(players)
        n = await self.pool.fetchval(
            "SELECT COUNT(*) FROM seats s0"
            " JOIN seats s1 ON s1.room_id = s0.room_id AND s1.seat <> s0.seat"
            " JOIN rooms r ON r.id = s0.room_id"
            " LEFT JOIN results res ON res.room_id = r.id"
            " WHERE s0.player_id = $1 AND s0.kind = 'human' AND s1.kind = $2"
            " AND (CASE WHEN s1.kind = 'bot' THEN s1.level ELSE s1.player_id END) = $3"
            " AND r.game = $4 AND ((r.status = 'finished' AND res.finished_at > $5"
            " AND EXISTS (SELECT 1 FROM rating_changes rc WHERE rc.room_id = r.id))"
            " OR ($6 AND r.status = 'playing'"
            " AND (r.room_options::jsonb ->> 'rated') = 'true'))",
            person, kind, who, game, float(since), playing)
        return int(n or 0)

    async def leaderboard(self, game: str, limit: int) -> list[tuple[str, str | None, Rating]]:
        rows = await self.pool.fetch(
            "SELECT r.player_id, p.name, r.rating, r.rd, r.volatility, r.games FROM ratings r"
            " LEFT JOIN players p ON p.id = r.player_id WHERE r.game = $1"
            " ORDER BY r.rating DESC, r.rd, r.games DESC, r.player_id LIMIT $2", game, limit)
        return [(str(pid), None if name is None else str(name),
                 Rating(float(r), float(rd), float(vol), int(n)))
                for pid, name, r, rd, vol, n in rows]

    async def ratings_by_game(self, player_id: str) -> dict[str, Rating]:
        rows = await self.pool.fetch(
            "SELECT game, rating, rd, volatility, games FROM ratings WHERE player_id = $1"
            " ORDER BY game", player_id)
        return {str(g): Rating(float(r), float(rd), float(v), int(n))
                for g, r, rd, v, n in rows}

    async def games_of(self, player_id: str, limit: int) -> list[dict[str, Any]]:
        async with self.pool.acquire() as con, con.transaction(
                isolation="repeatable_read", readonly=True):
            rows = await con.fetch(
                "SELECT r.id, r.game, r.status, r.created_at, r.room_options, res.winner,"
                " res.points, res.reason FROM rooms r"
                " LEFT JOIN results res ON res.room_id = r.id"
                " WHERE r.id IN (SELECT room_id FROM seats WHERE player_id = $1)"
                " ORDER BY r.created_at DESC, r.seq DESC LIMIT $2", player_id, limit)
            rooms = [
                {"room_id": str(rid), "game": str(game), "status": status,
                 "created_at": float(created), "room_options": json.loads(ropts or "{}"),
                 "result": None if reason is None else
                 {"winner": winner, "points": int(points), "reason": str(reason)},
                 "seats": []}
                for rid, game, status, created, ropts, winner, points, reason in rows
            ]
            seats = await con.fetch(
                "SELECT s.room_id, s.seat, s.kind, s.level, s.player_id, p.name FROM seats s"
                " LEFT JOIN players p ON p.id = s.player_id"
                " WHERE s.room_id = ANY($1::text[]) ORDER BY s.room_id, s.seat",
                [room["room_id"] for room in rooms])
        by_id = {room["room_id"]: room for room in rooms}
        for rid, seat, kind, level, pid, name in seats:
            by_id[str(rid)]["seats"].append(
                {"seat": int(seat), "kind": kind, "level": level, "player_id": pid,
                 "name": name})
        return rooms

    async def seat_changes(self, room_id: str) -> list[dict[str, Any]]:
        rows = await self.pool.fetch(
            "SELECT seat, ply, from_player, kind, level, reason, created_at FROM seat_changes"
            " WHERE room_id = $1 ORDER BY id", room_id)
        cols = ("seat", "ply", "from_player", "kind", "level", "reason", "created_at")
        return [dict(zip(cols, tuple(row))) for row in rows]

    async def chat_lines(self, room_id: str, limit: int) -> list[dict[str, Any]]:
        rows = await self.pool.fetch(
            "SELECT c.player_id, p.name, c.text, c.created_at, c.audience FROM chat c"
            " JOIN players p ON p.id = c.player_id WHERE c.room_id = $1"
            " ORDER BY c.id DESC LIMIT $2", room_id, limit)
        return [{"player_id": str(pid), "name": str(name), "text": str(text), "time": float(t),
                 "audience": str(audience)}
                for pid, name, text, t, audience in reversed(rows)]

    async def review(self, room_id: str) -> str | None:
        text = await self.pool.fetchval("SELECT json FROM reviews WHERE room_id = $1", room_id)
        return None if text is None else str(text)

    async def live_rooms(self) -> list[tuple[str, Status, bool]]:
        rows = await self.pool.fetch(
            "SELECT r.id, r.status, NOT EXISTS (SELECT 1 FROM seats s WHERE s.room_id = r.id"
            " AND s.kind = 'human')"
            " OR (r.room_options::jsonb ->> 'abandon_to_bot_after_ms') IS NOT NULL"
            " OR ((r.room_options::jsonb ->> 'rated') = 'true'"
            " AND (r.room_options::jsonb ->> 'clock') IS NOT NULL)"
            " FROM rooms r WHERE r.status IN ('waiting', 'playing') ORDER BY r.created_at, r.seq")
        return [(str(r), status, bool(alone)) for r, status, alone in rows]

    async def adjourned_before(self, before: float, limit: int) -> list[str]:
        rows = await self.pool.fetch(
            "SELECT id FROM rooms WHERE status = 'adjourned' AND status_at < $1"
            " ORDER BY status_at LIMIT $2", float(before), limit)
        return [str(r[0]) for r in rows]

    async def seats_held(self, player_id: str) -> list[tuple[str, int, Status]]:
        rows = await self.pool.fetch(
            "SELECT s.room_id, s.seat, r.status FROM seats s JOIN rooms r ON r.id = s.room_id"
            " WHERE s.player_id = $1 AND r.status IN ('waiting', 'playing', 'adjourned')"
            " ORDER BY r.created_at, r.seq, s.seat", player_id)
        return [(str(r), int(seat), status) for r, seat, status in rows]

    async def waiting_rooms_opened_by(self, player_id: str) -> list[str]:
        rows = await self.pool.fetch(
            "SELECT id FROM rooms WHERE created_by = $1 AND status = 'waiting'"
            " ORDER BY created_at, seq", player_id)
        return [str(r[0]) for r in rows]

    # --- the cluster's room leases (server.cluster) ---------------------------------------
    # Times are PostgreSQL's (clock_timestamp(), seconds since the epoch), never a node's.

    async def claim_room(self, room_id: str, node: str, lease_s: float, new: bool = False
                         ) -> tuple[str, int | None]:
        """Takes the lease on ``room_id`` for ``node`` if nobody holds it, it has expired or
        ``node`` holds it already: ``node`` and its fence (one more than the last holder's;
        the same, renewed, if ``node`` held it last: its writes in flight stay good). Else
        the node holding it and None; ("", None) if there is no such room (unless ``new``: a
        room about to be written)."""
        async with self.pool.acquire() as con:
            fence = await con.fetchval(
                "INSERT INTO room_leases AS l (room_id, node, fence, expires_at)"
                " SELECT $1, $2, 1, extract(epoch FROM clock_timestamp()) + $3"
                " WHERE $4 OR EXISTS (SELECT 1 FROM rooms WHERE id = $1)"
                " ON CONFLICT (room_id) DO UPDATE SET node = EXCLUDED.node,"
                " fence = CASE WHEN l.node = EXCLUDED.node THEN l.fence ELSE l.fence + 1 END,"
                " expires_at = EXCLUDED.expires_at"
                " WHERE l.node = EXCLUDED.node"
                " OR l.expires_at < extract(epoch FROM clock_timestamp())"
                " RETURNING fence", room_id, node, float(lease_s), new)
            if fence is not None:
                return node, int(fence)
            holder = await con.fetchval(
                "SELECT node FROM room_leases WHERE room_id = $1", room_id)
        return ("" if holder is None else str(holder)), None

    async def renew_leases(self, node: str, room_ids: Sequence[str], lease_s: float
                           ) -> set[str]:
        """Renews ``node``'s leases on ``room_ids`` (one statement); those it still holds."""
        # Joined with the ids, each row found by its key: ``room_id = ANY(array)`` scans the
        # node's rows and, for each, the array (a node with 4,000 rooms spent a third of a
        # second of the database's CPU on every renewal).
        rows = await self.pool.fetch(
            "UPDATE room_leases AS l SET expires_at = extract(epoch FROM clock_timestamp()) + $3"
            " FROM unnest($2::text[]) AS u(id) WHERE l.room_id = u.id AND l.node = $1"
            " RETURNING l.room_id",
            node, list(room_ids), float(lease_s))
        return {str(r[0]) for r in rows}

    async def release_leases(self, node: str, room_ids: Sequence[str]) -> None:
        """``node`` lets go of ``room_ids`` (shutting down): any node may claim them now."""
        await self.pool.execute(
            "UPDATE room_leases AS l SET expires_at = 0 FROM unnest($2::text[]) AS u(id)"
            " WHERE l.room_id = u.id AND l.node = $1", node, list(room_ids))

    async def lease_holder(self, room_id: str) -> str | None:
        """The node whose lease on ``room_id`` has not expired, or None."""
        holder = await self.pool.fetchval(
            "SELECT node FROM room_leases WHERE room_id = $1"
            " AND expires_at >= extract(epoch FROM clock_timestamp())", room_id)
        return None if holder is None else str(holder)

    async def orphaned_rooms(self, limit: int) -> list[str]:
        """Up to ``limit`` rooms waiting or being played that no node holds a live lease on
        (their node died, or never was), oldest first."""
        rows = await self.pool.fetch(
            "SELECT r.id FROM rooms r LEFT JOIN room_leases l ON l.room_id = r.id"
            " WHERE r.status IN ('waiting', 'playing') AND (l.room_id IS NULL"
            " OR l.expires_at < extract(epoch FROM clock_timestamp()))"
            " ORDER BY r.created_at, r.seq LIMIT $1", limit)
        return [str(r[0]) for r in rows]

    async def lobby_rooms(self, limit: int) -> list[RoomRecord]:
        """The rooms waiting or being played (waiting first, newest first within each, up to
        ``limit``), without their moves: what a lobby summary shows."""
        async with self.pool.acquire() as con, con.transaction(
                isolation="repeatable_read", readonly=True):
            rooms = await con.fetch(
                "SELECT id, game, options, status, NULL, '[]', created_at, room_options,"
                " created_by, status_at, NULL FROM rooms WHERE status IN ('waiting', 'playing')"
                " ORDER BY status = 'playing', created_at DESC, seq DESC LIMIT $1", limit)
            ids = [str(r[0]) for r in rooms]
            seats = await con.fetch(
                "SELECT s.room_id, s.seat, s.kind, s.level, s.player_id, p.name,"
                " COALESCE(p.bot, 0) FROM seats s LEFT JOIN players p ON p.id = s.player_id"
                " WHERE s.room_id = ANY($1::text[]) ORDER BY s.room_id, s.seat", ids)
        by_room: dict[str, list[tuple[Any, ...]]] = {}
        for s in seats:
            by_room.setdefault(str(s[0]), []).append(tuple(s)[1:])
        return [room_record(str(r[0]), tuple(r)[1:], by_room.get(str(r[0]), []), [], None)
                for r in rooms]

    async def load_room(self, room_id: str) -> RoomRecord | None:
        async with self.pool.acquire() as con, con.transaction(
                isolation="repeatable_read", readonly=True):
            room = await con.fetchrow(
                "SELECT game, options, status, dice_seed, opening_dice, created_at,"
                " room_options, created_by, status_at, dice_seeds FROM rooms WHERE id = $1",
                room_id)
            if room is None:
                return None
            seats = await con.fetch(
                "SELECT s.seat, s.kind, s.level, s.player_id, p.name, COALESCE(p.bot, 0)"
                " FROM seats s LEFT JOIN players p ON p.id = s.player_id WHERE s.room_id = $1"
                " ORDER BY s.seat", room_id)
            moves = await con.fetch(
                "SELECT ply, seat, move, dice, created_at, clock0_ms, clock1_ms FROM moves"
                " WHERE room_id = $1 ORDER BY ply", room_id)
            result = await con.fetchrow(
                "SELECT winner, points, reason, clock0_ms, clock1_ms FROM results"
                " WHERE room_id = $1", room_id)
            changes = await con.fetch(
                "SELECT seat, rating_before, rating_after FROM rating_changes"
                " WHERE room_id = $1 ORDER BY seat", room_id)
            berserk = await con.fetchrow(
                "SELECT berserk0, berserk1 FROM tournament_games WHERE room_id = $1", room_id)
        return room_record(room_id, tuple(room), [tuple(s) for s in seats],
                           [tuple(m) for m in moves],
                           None if result is None else tuple(result),
                           [tuple(c) for c in changes],
                           None if berserk is None else tuple(berserk))
