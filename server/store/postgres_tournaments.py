"""Tournaments on PostgreSQL (:class:`~tablas.server.store.tournaments.TournamentStore`),
shared by every node. A conditional change (join, leave, start) locks the tournament's row
first, so two nodes' changes take turns; the owner's writes check its fence (the lease on
``tour:ID``) in the same transaction, as the group commit's 'fence' row does for rooms."""

from __future__ import annotations

import asyncpg
from tablas.server.errors import LeaseLost
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

_LOCKED = ("SELECT status, max_players, created_by, format FROM tournaments WHERE id = $1"
           " FOR UPDATE")
_ENTRANTS = ("SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM tournament_players"
             " WHERE tournament_id = $1")
_HOUSE_BOTS = ("SELECT COUNT(*) FROM tournament_players WHERE tournament_id = $1"
               " AND level IS NOT NULL")


async def _fenced(con: asyncpg.Connection, fence: Fence | None) -> None:
    """Raises LeaseLost (after telling the fence) unless the lease still carries it."""
    if fence is None:
        return
    held = await con.fetchval(
        "SELECT 1 FROM room_leases WHERE room_id = $1 AND node = $2 AND fence = $3 FOR SHARE",
        fence.key, fence.node, fence.number)
    if held is None:
        fence.refused(fence)
        raise LeaseLost(fence.key)


# TournamentRow.of's columns, in its order (``t``: the tournaments table), in each statement.
_LOAD = ("SELECT t.id, t.game, t.options, t.clock, t.format, t.rounds, t.games_per_pairing,"
         " t.rated, t.max_players, t.created_by, t.status, t.round, t.created_at, t.minutes,"
         " t.ends_at_ms FROM tournaments t WHERE t.id = $1")
_LISTING = ("SELECT t.id, t.game, t.options, t.clock, t.format, t.rounds, t.games_per_pairing,"
            " t.rated, t.max_players, t.created_by, t.status, t.round, t.created_at,"
            " t.minutes, t.ends_at_ms, (SELECT COUNT(*) FROM tournament_players p"
            " WHERE p.tournament_id = t.id AND p.active = 1) FROM tournaments t"
            " ORDER BY CASE t.status WHEN 'playing' THEN 0 WHEN 'waiting' THEN 1 ELSE 2 END,"
            " t.created_at DESC LIMIT $1")
_BERSERK0 = "UPDATE tournament_games SET berserk0 = $1 WHERE room_id = $2"
_BERSERK1 = "UPDATE tournament_games SET berserk1 = $1 WHERE room_id = $2"


class PostgresTournaments(TournamentStore):
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def create(self, t: TournamentRow, entrants: list[EntrantRow],
                     created_from: str = "") -> None:
        async with self.pool.acquire() as con, con.transaction():
            await con.execute(
                "INSERT INTO tournaments (id, game, options, clock, format, rounds,"
                " games_per_pairing, rated, max_players, created_by, status, round, created_at)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)", *t.values())
            await con.execute("UPDATE tournaments SET created_from = $1, minutes = $2"
                              " WHERE id = $3", created_from, t.minutes, t.tournament_id)
            for i, e in enumerate(entrants, 1):
                await con.execute(
                    "INSERT INTO tournament_players (tournament_id, player_id, name, registered,"
                    " bot, level, seq) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    t.tournament_id, e.player_id, e.name, int(e.registered), int(e.bot),
                    e.level, i)

    async def join(self, tournament_id: str, e: EntrantRow) -> Joined:
        async with self.pool.acquire() as con, con.transaction():
            found = await con.fetchrow(_LOCKED, tournament_id)
            if found is None:
                return "unknown"
            if found[0] != "waiting" and (found[0], found[3]) != ("playing", "arena"):
                return "not_waiting"
            entered = await con.fetchval("SELECT active FROM tournament_players"
                                         " WHERE tournament_id = $1 AND player_id = $2",
                                         tournament_id, e.player_id)
            if entered:
                return "already"
            if entered is not None:  # back in an arena they left
                await con.execute("UPDATE tournament_players SET active = 1"
                                  " WHERE tournament_id = $1 AND player_id = $2",
                                  tournament_id, e.player_id)
                return "joined"
            count, last = await con.fetchrow(_ENTRANTS, tournament_id)
            if int(count) >= int(found[1]):
                return "full"
            await con.execute(
                "INSERT INTO tournament_players (tournament_id, player_id, name, registered,"
                " bot, level, seq) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                tournament_id, e.player_id, e.name, int(e.registered), int(e.bot), e.level,
                int(last) + 1)
            return "joined"

    async def leave(self, tournament_id: str, player_id: str) -> Left:
        async with self.pool.acquire() as con, con.transaction():
            found = await con.fetchrow(_LOCKED, tournament_id)
            if found is None:
                return "unknown"
            if (found[0], found[3]) == ("playing", "arena"):
                gone = await con.fetchval(
                    "UPDATE tournament_players SET active = 0 WHERE tournament_id = $1"
                    " AND player_id = $2 AND active = 1 RETURNING player_id",
                    tournament_id, player_id)
                return "left" if gone is not None else "not_entered"
            if found[0] != "waiting":
                return "not_waiting"
            gone = await con.fetchval(
                "DELETE FROM tournament_players WHERE tournament_id = $1 AND player_id = $2"
                " RETURNING player_id", tournament_id, player_id)
            return "left" if gone is not None else "not_entered"

    async def start(self, tournament_id: str, by: str, *, now_ms: int = 0,
                    minute_ms: int = 60_000) -> Started:
        async with self.pool.acquire() as con, con.transaction():
            found = await con.fetchrow(_LOCKED, tournament_id)
            if found is None:
                return "unknown"
            if found[2] != by:
                return "not_creator"
            if found[0] != "waiting":
                return "not_waiting"
            count, _ = await con.fetchrow(_ENTRANTS, tournament_id)
            if int(count) < 2:
                return "too_few"
            if 2 * int(await con.fetchval(_HOUSE_BOTS, tournament_id)) > int(count):
                return "too_many_bots"
            await con.execute(
                "UPDATE tournaments SET status = 'playing', ends_at_ms = CASE format"
                " WHEN 'arena' THEN $2::bigint + minutes * $3::bigint END WHERE id = $1",
                tournament_id, now_ms, minute_ms)
            return "started"

    async def load(self, tournament_id: str
                   ) -> tuple[TournamentRow, list[EntrantRow], list[PairingRow]] | None:
        async with self.pool.acquire() as con, con.transaction(
                isolation="repeatable_read", readonly=True):
            row = await con.fetchrow(
                _LOAD, tournament_id)
            if row is None:
                return None
            entrants = [EntrantRow.of(r) for r in await con.fetch(
                "SELECT player_id, name, registered, bot, level, seq, active"
                " FROM tournament_players WHERE tournament_id = $1 ORDER BY seq", tournament_id)]
            pairings = [PairingRow.of(r) for r in await con.fetch(
                "SELECT g.round, g.idx, g.room_id, g.p0, g.p1, r.status, x.winner, x.reason,"
                " x.points, g.berserk0, g.berserk1"
                " FROM tournament_games g LEFT JOIN rooms r ON r.id = g.room_id"
                " LEFT JOIN results x ON x.room_id = g.room_id WHERE g.tournament_id = $1"
                " ORDER BY g.round, g.idx", tournament_id)]
        return TournamentRow.of(row), entrants, pairings

    async def adoptable(self, limit: int) -> list[str]:
        rows = await self.pool.fetch(
            "SELECT t.id FROM tournaments t LEFT JOIN room_leases l ON l.room_id = 'tour:' || t.id"
            " WHERE t.status IN ('waiting', 'playing') AND (l.room_id IS NULL"
            " OR l.expires_at < extract(epoch FROM clock_timestamp()))"
            " ORDER BY t.created_at LIMIT $1", limit)
        return [str(r[0]) for r in rows]

    async def write_round(self, tournament_id: str, round_: int, rounds: int,
                          pairings: list[PairingRow], fence: Fence | None) -> None:
        async with self.pool.acquire() as con, con.transaction():
            await _fenced(con, fence)
            moved = await con.fetchval(
                "UPDATE tournaments SET round = $1, rounds = $2 WHERE id = $3 AND round = $4"
                " RETURNING id", round_, rounds, tournament_id, round_ - 1)
            if moved is not None:
                for p in pairings:
                    await con.execute(
                        "INSERT INTO tournament_games (tournament_id, round, idx, room_id, p0,"
                        " p1) VALUES ($1, $2, $3, $4, $5, $6)",
                        tournament_id, round_, p.idx, p.room_id, p.p0, p.p1)

    async def write_games(self, tournament_id: str, seen: int, pairings: list[PairingRow],
                          fence: Fence | None) -> bool:
        async with self.pool.acquire() as con, con.transaction():
            await _fenced(con, fence)
            moved = await con.fetchval(
                "UPDATE tournaments SET round = $1 WHERE id = $2 AND round = $3"
                " AND status = 'playing' RETURNING id",
                seen + len(pairings), tournament_id, seen)
            if moved is not None:
                for p in pairings:
                    await con.execute(
                        "INSERT INTO tournament_games (tournament_id, round, idx, room_id, p0,"
                        " p1) VALUES ($1, $2, $3, $4, $5, $6)",
                        tournament_id, p.round, p.idx, p.room_id, p.p0, p.p1)
        return moved is not None

    async def berserk(self, room_id: str, player_id: str, left_ms: int,
                      fence: Fence | None = None) -> tuple[Berserked, int]:
        async with self.pool.acquire() as con, con.transaction():
            await _fenced(con, fence)
            found = await con.fetchrow(
                "SELECT g.p0, g.p1, g.berserk0, g.berserk1 FROM tournament_games g"
                " JOIN tournaments t ON t.id = g.tournament_id"
                " WHERE g.room_id = $1 AND t.format = 'arena' FOR UPDATE OF g", room_id)
            if found is None:
                return "unknown", 0
            seats = [i for i in (0, 1) if found[i] == player_id]
            if not seats:
                return "not_seated", 0
            seat = seats[0]
            if found[2 + seat]:
                return "already", seat
            if seat == 0:
                await con.execute(_BERSERK0, max(1, left_ms), room_id)
            else:
                await con.execute(_BERSERK1, max(1, left_ms), room_id)
            return "berserk", seat

    async def finish(self, tournament_id: str, fence: Fence | None) -> None:
        async with self.pool.acquire() as con, con.transaction():
            await _fenced(con, fence)
            await con.execute("UPDATE tournaments SET status = 'finished', created_from = ''"
                              " WHERE id = $1", tournament_id)

    async def listing(self, limit: int) -> list[tuple[TournamentRow, int]]:
        rows = await self.pool.fetch(
            _LISTING, limit)
        return [(TournamentRow.of(r), int(r[15])) for r in rows]

    async def live_created(self, player_id: str, address: str) -> tuple[int, int]:
        row = await self.pool.fetchrow(
            "SELECT (SELECT COUNT(*) FROM tournaments WHERE created_by = $1"
            " AND status IN ('waiting', 'playing')), (SELECT COUNT(*) FROM tournaments"
            " WHERE created_from = $2 AND $2 <> '' AND status IN ('waiting', 'playing'))",
            player_id, address)
        assert row is not None
        return int(row[0]), int(row[1])

    async def created_from(self, tournament_id: str) -> str:
        value = await self.pool.fetchval(
            "SELECT created_from FROM tournaments WHERE id = $1", tournament_id)
        return "" if value is None else str(value)

    async def current_games(self, player_id: str) -> list[tuple[str, int, str, int]]:
        rows = await self.pool.fetch(
            "SELECT g.tournament_id, g.round, g.room_id, CASE WHEN g.p0 = $1 THEN 0 ELSE 1 END"
            " FROM tournament_games g JOIN rooms r ON r.id = g.room_id"
            " WHERE (g.p0 = $1 OR g.p1 = $1) AND r.status IN ('waiting', 'playing', 'adjourned')",
            player_id)
        return [(str(r[0]), int(r[1]), str(r[2]), int(r[3])) for r in rows]
