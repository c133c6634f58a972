"""Tournaments on SQLite (:class:`~tablas.server.store.tournaments.TournamentStore`): one
server, so no fence; every method holds the store's lock, and a conditional change is one
transaction under it."""

from __future__ import annotations

import asyncio

import aiosqlite
from tablas.server.ownership import Fence
from tablas.server.store.tournaments import (
    Berserked,
    EntrantRow,
    Joined,
    Left,
    PairingRow,
    Started,
    TournamentRow,
    TournamentStore,
)

_STATUS = "SELECT status, max_players, created_by, format FROM tournaments WHERE id = ?"
_ENTRANTS = "SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM tournament_players WHERE tournament_id = ?"
_HOUSE_BOTS = ("SELECT COUNT(*) FROM tournament_players WHERE tournament_id = ?"
               " AND level IS NOT NULL")


# TournamentRow.of's columns, in its order (``t``: the tournaments table), in each statement.
_LOAD = ("SELECT t.id, t.game, t.options, t.clock, t.format, t.rounds, t.games_per_pairing,"
         " t.rated, t.max_players, t.created_by, t.status, t.round, t.created_at, t.minutes,"
         " t.ends_at_ms FROM tournaments t WHERE t.id = ?")
_LISTING = ("SELECT t.id, t.game, t.options, t.clock, t.format, t.rounds, t.games_per_pairing,"
            " t.rated, t.max_players, t.created_by, t.status, t.round, t.created_at,"
            " t.minutes, t.ends_at_ms, (SELECT COUNT(*) FROM tournament_players p"
            " WHERE p.tournament_id = t.id AND p.active = 1) FROM tournaments t"
            " ORDER BY CASE t.status WHEN 'playing' THEN 0 WHEN 'waiting' THEN 1 ELSE 2 END,"
            " t.created_at DESC LIMIT ?")
_BERSERK0 = "UPDATE tournament_games SET berserk0 = ? WHERE room_id = ?"
_BERSERK1 = "UPDATE tournament_games SET berserk1 = ? WHERE room_id = ?"


class SqliteTournaments(TournamentStore):
    def __init__(self, db: aiosqlite.Connection, lock: asyncio.Lock) -> None:
        self.db = db
        self.lock = lock

    async def _one(self, sql: str, *args: object) -> tuple[object, ...] | None:
        async with self.db.execute(sql, args) as cur:
            row = await cur.fetchone()
        return None if row is None else tuple(row)

    async def create(self, t: TournamentRow, entrants: list[EntrantRow],
                     created_from: str = "") -> None:
        async with self.lock:
            await self.db.execute("BEGIN IMMEDIATE")
            try:
                await self.db.execute(
                    "INSERT INTO tournaments (id, game, options, clock, format, rounds,"
                    " games_per_pairing, rated, max_players, created_by, status, round,"
                    " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", t.values())
                await self.db.execute(
                    "UPDATE tournaments SET created_from = ?, minutes = ? WHERE id = ?",
                    (created_from, t.minutes, t.tournament_id))
                for i, e in enumerate(entrants, 1):
                    await self.db.execute(
                        "INSERT INTO tournament_players (tournament_id, player_id, name,"
                        " registered, bot, level, seq) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (t.tournament_id, e.player_id, e.name, int(e.registered), int(e.bot),
                         e.level, i))
                await self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:
                    await self.db.execute("ROLLBACK")
                raise

    async def join(self, tournament_id: str, e: EntrantRow) -> Joined:
        async with self.lock:
            found = await self._one(_STATUS, tournament_id)
            if found is None:
                return "unknown"
            if found[0] != "waiting" and (found[0], found[3]) != ("playing", "arena"):
                return "not_waiting"
            count, last = await self._one(_ENTRANTS, tournament_id) or (0, 0)
            entered = await self._one("SELECT active FROM tournament_players"
                                      " WHERE tournament_id = ? AND player_id = ?",
                                      tournament_id, e.player_id)
            if entered is not None and entered[0]:
                return "already"
            if entered is not None:  # back in an arena they left
                await self.db.execute("UPDATE tournament_players SET active = 1"
                                      " WHERE tournament_id = ? AND player_id = ?",
                                      (tournament_id, e.player_id))
                return "joined"
            if int(str(count)) >= int(str(found[1])):
                return "full"
            await self.db.execute(
                "INSERT INTO tournament_players (tournament_id, player_id, name, registered,"
                " bot, level, seq) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (tournament_id, e.player_id, e.name, int(e.registered), int(e.bot), e.level,
                 int(str(last)) + 1))
            return "joined"

    async def leave(self, tournament_id: str, player_id: str) -> Left:
        async with self.lock:
            found = await self._one(_STATUS, tournament_id)
            if found is None:
                return "unknown"
            if (found[0], found[3]) == ("playing", "arena"):
                async with self.db.execute(
                        "UPDATE tournament_players SET active = 0 WHERE tournament_id = ?"
                        " AND player_id = ? AND active = 1 RETURNING player_id",
                        (tournament_id, player_id)) as cur:
                    gone = await cur.fetchone()
                return "left" if gone is not None else "not_entered"
            if found[0] != "waiting":
                return "not_waiting"
            async with self.db.execute(
                    "DELETE FROM tournament_players WHERE tournament_id = ? AND player_id = ?"
                    " RETURNING player_id", (tournament_id, player_id)) as cur:
                gone = await cur.fetchone()
            return "left" if gone is not None else "not_entered"

    async def start(self, tournament_id: str, by: str, *, now_ms: int = 0,
                    minute_ms: int = 60_000) -> Started:
        async with self.lock:
            found = await self._one(_STATUS, tournament_id)
            if found is None:
                return "unknown"
            if found[2] != by:
                return "not_creator"
            if found[0] != "waiting":
                return "not_waiting"
            count, _ = await self._one(_ENTRANTS, tournament_id) or (0, 0)
            if int(str(count)) < 2:
                return "too_few"
            bots = await self._one(_HOUSE_BOTS, tournament_id) or (0,)
            if 2 * int(str(bots[0])) > int(str(count)):
                return "too_many_bots"
            await self.db.execute(
                "UPDATE tournaments SET status = 'playing', ends_at_ms = CASE format"
                " WHEN 'arena' THEN ? + minutes * ? END WHERE id = ?",
                (now_ms, minute_ms, tournament_id))
            return "started"

    async def load(self, tournament_id: str
                   ) -> tuple[TournamentRow, list[EntrantRow], list[PairingRow]] | None:
        async with self.lock:
            async with self.db.execute(
                    _LOAD,
                    (tournament_id,)) as cur:
                row = await cur.fetchone()
            if row is None:
                return None
            async with self.db.execute(
                    "SELECT player_id, name, registered, bot, level, seq, active"
                    " FROM tournament_players"
                    " WHERE tournament_id = ? ORDER BY seq", (tournament_id,)) as cur:
                entrants = [EntrantRow.of(r) for r in await cur.fetchall()]
            async with self.db.execute(
                    "SELECT g.round, g.idx, g.room_id, g.p0, g.p1, r.status, x.winner, x.reason,"
                    " x.points, g.berserk0, g.berserk1"
                    " FROM tournament_games g LEFT JOIN rooms r ON r.id = g.room_id"
                    " LEFT JOIN results x ON x.room_id = g.room_id WHERE g.tournament_id = ?"
                    " ORDER BY g.round, g.idx", (tournament_id,)) as cur:
                pairings = [PairingRow.of(r) for r in await cur.fetchall()]
        return TournamentRow.of(row), entrants, pairings

    async def adoptable(self, limit: int) -> list[str]:
        async with self.lock, self.db.execute(
                "SELECT id FROM tournaments WHERE status IN ('waiting', 'playing')"
                " ORDER BY created_at LIMIT ?", (limit,)) as cur:
            return [str(r[0]) for r in await cur.fetchall()]

    async def write_round(self, tournament_id: str, round_: int, rounds: int,
                          pairings: list[PairingRow], fence: Fence | None) -> None:
        async with self.lock:
            await self.db.execute("BEGIN IMMEDIATE")
            try:
                async with self.db.execute(
                        "UPDATE tournaments SET round = ?, rounds = ? WHERE id = ? AND round = ?"
                        " RETURNING id", (round_, rounds, tournament_id, round_ - 1)) as cur:
                    moved = await cur.fetchone()
                if moved is not None:
                    for p in pairings:
                        await self.db.execute(
                            "INSERT INTO tournament_games (tournament_id, round, idx, room_id,"
                            " p0, p1) VALUES (?, ?, ?, ?, ?, ?)",
                            (tournament_id, round_, p.idx, p.room_id, p.p0, p.p1))
                await self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:
                    await self.db.execute("ROLLBACK")
                raise

    async def write_games(self, tournament_id: str, seen: int, pairings: list[PairingRow],
                          fence: Fence | None) -> bool:
        async with self.lock:
            await self.db.execute("BEGIN IMMEDIATE")
            try:
                async with self.db.execute(
                        "UPDATE tournaments SET round = ? WHERE id = ? AND round = ?"
                        " AND status = 'playing' RETURNING id",
                        (seen + len(pairings), tournament_id, seen)) as cur:
                    moved = await cur.fetchone()
                if moved is not None:
                    for p in pairings:
                        await self.db.execute(
                            "INSERT INTO tournament_games (tournament_id, round, idx, room_id,"
                            " p0, p1) VALUES (?, ?, ?, ?, ?, ?)",
                            (tournament_id, p.round, p.idx, p.room_id, p.p0, p.p1))
                await self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:
                    await self.db.execute("ROLLBACK")
                raise
        return moved is not None

    async def berserk(self, room_id: str, player_id: str, left_ms: int,
                      fence: Fence | None = None) -> tuple[Berserked, int]:
        async with self.lock:
            found = await self._one(
                "SELECT g.p0, g.p1, g.berserk0, g.berserk1 FROM tournament_games g"
                " JOIN tournaments t ON t.id = g.tournament_id"
                " WHERE g.room_id = ? AND t.format = 'arena'", room_id)
            if found is None:
                return "unknown", 0
            seats = [i for i in (0, 1) if found[i] == player_id]
            if not seats:
                return "not_seated", 0
            seat = seats[0]
            if found[2 + seat]:
                return "already", seat
            if seat == 0:
                await self.db.execute(_BERSERK0, (max(1, left_ms), room_id))
            else:
                await self.db.execute(_BERSERK1, (max(1, left_ms), room_id))
            return "berserk", seat

    async def finish(self, tournament_id: str, fence: Fence | None) -> None:
        async with self.lock:
            await self.db.execute("UPDATE tournaments SET status = 'finished', created_from = ''"
                                  " WHERE id = ?", (tournament_id,))

    async def listing(self, limit: int) -> list[tuple[TournamentRow, int]]:
        async with self.lock, self.db.execute(
                _LISTING, (limit,)) as cur:
            return [(TournamentRow.of(r), int(r[15])) for r in await cur.fetchall()]

    async def live_created(self, player_id: str, address: str) -> tuple[int, int]:
        async with self.lock, self.db.execute(
                "SELECT (SELECT COUNT(*) FROM tournaments WHERE created_by = ?"
                " AND status IN ('waiting', 'playing')), (SELECT COUNT(*) FROM tournaments"
                " WHERE created_from = ? AND ? <> '' AND status IN ('waiting', 'playing'))",
                (player_id, address, address)) as cur:
            row = await cur.fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    async def created_from(self, tournament_id: str) -> str:
        async with self.lock:
            row = await self._one("SELECT created_from FROM tournaments WHERE id = ?",
                                  tournament_id)
        return "" if row is None else str(row[0])

    async def current_games(self, player_id: str) -> list[tuple[str, int, str, int]]:
        async with self.lock, self.db.execute(
                "SELECT g.tournament_id, g.round, g.room_id, CASE WHEN g.p0 = ? THEN 0 ELSE 1"
                " END FROM tournament_games g JOIN rooms r ON r.id = g.room_id"
                " WHERE (g.p0 = ? OR g.p1 = ?) AND r.status IN ('waiting', 'playing', 'adjourned')",
                (player_id, player_id, player_id)) as cur:
            return [(str(r[0]), int(r[1]), str(r[2]), int(r[3]))
                    for r in await cur.fetchall()]
