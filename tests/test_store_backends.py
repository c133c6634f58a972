"""The store's two backends, SQLite and PostgreSQL: the same answers to every read after the
same writes, migrations kept in step (the same numbers, the same logical schema), and
migrations from every version on PostgreSQL. ``backend`` runs a test on each
(tests/pg_support.py); the tests of the group commit are tests/test_server_store.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import asyncpg
import pytest
from pg_support import Backend
from tablas.engine.core import Outcome
from tablas.server.protocol import RoomOptions
from tablas.server.ratings import NEW, Rating, RatingChange
from tablas.server.room import Action, SeatState
from tablas.server.store import (
    BadDatabase,
    Database,
    SqliteStore,
    migration_files,
    open_store,
    parse_database,
    token_hash,
)
from tablas.server.store.base import migrations_folder
from tablas.server.store.postgres import PostgresStore, postgres_migrations, safe_url

ROOT = Path(__file__).resolve().parent.parent


def _person(pid: str, name: str) -> SeatState:
    return SeatState("human", None, pid, name)


async def test_every_read_answers_the_same_after_the_same_writes(backend: Backend) -> None:
    """Every write the server makes, then every read, with the answers written out: the same
    on each backend."""
    store = await backend.open()
    await store.create_player("pa", "Ana", "tok-a")
    await store.create_player("pb", "Bo", "tok-b")
    await store.touch_player("pb", "Bob")
    bot = SeatState("bot", "easy")
    clock = RoomOptions.model_validate({"clock": {"base_ms": 60000, "increment_ms": 0}})
    # r1: a waiting room Ana opened; r2: Ana against Bob, played and finished; r3: Ana
    # against a bot, adjourned; r4: handed to a bot; r5 created at the same time as r1.
    await store.create_room("r1", "connect4", {}, [_person("pa", "Ana"), SeatState("human")],
                            "waiting", None, [], 10.0, created_by="pa", seeds=("s", ""))
    await store.create_room("r5", "tictactoe", {}, [SeatState("human"), _person("pa", "Ana")],
                            "waiting", None, [], 10.0, created_by="pb")
    await store.create_room("r2", "backgammon", {"x": [1]}, [_person("pa", "Ana"),
                            SeatState("human")], "waiting", b"\x00\xff", [], 11.0, clock,
                            created_by="pa")
    await store.save_seats("r2", [_person("pa", "Ana"), _person("pb", "Bob")], "playing",
                           [(3, 1)], ("a", "b"))
    await store.record_move("r2", Action(0, 0, {"play": [[8, 5], [6, 5]]}, ((6, 2),), 12.5,
                                         (59000, 60000)), None)
    await store.record_move("r2", Action(1, 1, {"action": "double"}, (), 13.0,
                                         (59000, 58000)), None)
    await store.record_chat("r2", "pb", "gl", 13.5, audience="spectators")
    await store.record_chat("r2", "pa", "thanks\nyou too", 14.0)
    await store.record_result("r2", Outcome(0, 1, "drop"), [59000, 57000], 15.0)
    await store.save_review("r2", '{"moves":[]}', 16.0)
    await store.save_review("r2", '{"moves":[1]}', 17.0)  # the first one stays
    await store.create_room("r3", "connect4", {}, [_person("pa", "Ana"), bot], "playing",
                            None, [], 12.0, created_by="pa")
    await store.set_status("r3", "adjourned", 20.0)
    await store.create_room("r4", "tictactoe", {}, [_person("pb", "Bob"), SeatState("human")],
                            "waiting", None, [], 13.0,
                            RoomOptions.model_validate({"abandon_to_bot_after_ms": 1000}),
                            created_by="pb")
    await store.hand_seat_to_bot("r4", 1, "hard", 0, None, "hand_to_bot", 21.0, "playing", [])
    await store.create_room("r6", "connect4", {}, [_person("pb", "Bob"), bot], "playing",
                            None, [], 14.0, created_by="pb")
    await store.set_statuses([("r6", "adjourned")], 5.0)
    await store.expire(["r6"], 30.0)

    found = await store.account_by_token("tok-b")
    assert found is not None and (found.player_id, found.name) == ("pb", "Bob")
    assert await store.account_by_token("nope") is None
    assert await store.live_rooms() == [("r1", "waiting", False), ("r5", "waiting", False),
                                        ("r4", "playing", True)]
    assert await store.adjourned_before(25.0, 10) == ["r3"]
    assert await store.adjourned_before(20.0, 10) == []
    assert await store.seats_held("pa") == [("r1", 0, "waiting"), ("r5", 1, "waiting"),
                                            ("r3", 0, "adjourned")]
    assert await store.waiting_rooms_opened_by("pa") == ["r1"]
    assert await store.seat_changes("r4") == [
        {"seat": 1, "ply": 0, "from_player": None, "kind": "bot", "level": "hard",
         "reason": "hand_to_bot", "created_at": 21.0}]
    assert await store.chat_lines("r2", 1) == [
        {"player_id": "pa", "name": "Ana", "text": "thanks\nyou too", "time": 14.0,
         "audience": "players"}]
    assert [(c["text"], c["audience"]) for c in await store.chat_lines("r2", 5)] == [
        ("gl", "spectators"), ("thanks\nyou too", "players")]
    # Blocks (contract section 15): kept, one way, read either way.
    await store.blocks.block("pa", "pb", 30.0)
    await store.blocks.block("pa", "pb", 31.0)  # again: nothing changes
    assert await store.blocks.names("pa") == ["Bob"] and await store.blocks.names("pb") == []
    assert await store.blocks.blocked_by("pa") == {"pb"}
    assert await store.blocks.either("pa", "pb") and await store.blocks.either("pb", "pa")
    assert await store.blocks.unblock("pa", "pb") and not await store.blocks.unblock("pa", "pb")
    assert not await store.blocks.either("pb", "pa")
    assert await store.review("r2") == '{"moves":[]}'
    assert await store.review("r1") is None
    assert await store.load_room("nope") is None

    r2 = await store.load_room("r2")
    assert r2 is not None
    assert (r2.game_id, r2.options, r2.status, r2.seed, r2.created_at, r2.seeds,
            r2.opening_rolls, r2.result, r2.final_clocks, r2.created_by, r2.status_at) == (
        "backgammon", {"x": [1]}, "finished", b"\x00\xff", 11.0, ("a", "b"), [(3, 1)],
        Outcome(0, 1, "drop"), [59000, 57000], "pa", None)
    assert r2.room_options == clock
    assert [(s.kind, s.player_id, s.name) for s in r2.seats] == [
        ("human", "pa", "Ana"), ("human", "pb", "Bob")]
    assert r2.actions == [
        Action(0, 0, {"play": [[8, 5], [6, 5]]}, ((6, 2),), 12.5, (59000, 60000)),
        Action(1, 1, {"action": "double"}, (), 13.0, (59000, 58000))]
    r4 = await store.load_room("r4")
    assert r4 is not None and r4.status == "playing"
    assert [(s.kind, s.level, s.player_id) for s in r4.seats] == [
        ("human", None, "pb"), ("bot", "hard", None)]
    r6 = await store.load_room("r6")
    assert r6 is not None and (r6.status, r6.status_at, r6.result) == (
        "finished", 5.0, Outcome(None, 0, "expired"))
    r1 = await store.load_room("r1")
    assert r1 is not None and (r1.seeds, r1.seed, r1.result) == (("s", ""), None, None)
    await store.close()


async def test_accounts_and_ratings_read_the_same_on_both(backend: Backend) -> None:
    """Registering, a second device's token, a rated game's result with its ratings, and
    every read of them (migration 0008); the store's refusals, which the server turns into
    ``name_taken`` and a refused stale rating, are the same on both backends."""
    store = await backend.open()
    await store.create_player("pa", "Ana", "tok-a")
    await store.create_player("pb", "Bo", "tok-b")
    await store.create_player("pc", "ana", "tok-c")
    assert await store.register_player("pa", "Ana", "ana", "scrypt$h", 5.0) == "registered"
    assert await store.register_player("pa", "Ana", "ana", "scrypt$h", 6.0) == (
        "already_registered")
    assert await store.register_player("pc", "ana", "ana", "scrypt$x", 6.0) == "name_taken"
    await store.add_token("pa", "tok-a2", 7.0)
    a = await store.account_by_token("tok-a2")
    assert a is not None and (a.player_id, a.name, a.registered) == ("pa", "Ana", True)
    b = await store.account_by_token("tok-b")
    assert b is not None and (b.player_id, b.registered) == ("pb", False)
    assert await store.account_by_token("nope") is None
    key = await store.account_by_key("ana")
    assert key is not None and (key.player_id, key.password_hash) == ("pa", "scrypt$h")
    assert await store.account_by_key("bo") is None
    assert await store.player_info("pa") == ("Ana", True)
    assert await store.player_info("pc") == ("ana", False)
    assert await store.player_info("nobody") is None

    rated = RoomOptions.model_validate({"rated": True})
    await store.create_room("g1", "connect4", {}, [_person("pa", "Ana"),
                            SeatState("bot", "easy")], "playing", None, [], 10.0, rated,
                            created_by="pa")
    await store.create_room("g2", "connect4", {}, [_person("pa", "Ana"),
                            SeatState("human")], "waiting", None, [], 11.0, created_by="pa")
    bot = "bot:connect4:easy"
    after_a, after_bot = Rating(1662.3, 290.3, 0.06, 1), Rating(1337.7, 290.3, 0.06, 1)
    changes = [RatingChange(0, "pa", "connect4", 1.0, NEW, after_a),
               RatingChange(1, bot, "connect4", 0.0, NEW, after_bot)]
    await store.record_move("g1", Action(0, 0, {"column": 3}, (), 12.0, None),
                            Outcome(0, 1, "four"), changes)
    # A rating computed from the one before this game's (games 0 again) is refused, and
    # the result written with it too.
    await store.create_room("g3", "connect4", {}, [_person("pa", "Ana"),
                            SeatState("bot", "easy")], "playing", None, [], 13.0, rated)
    with pytest.raises(Exception, match="stale"):
        await store.record_result("g3", Outcome(1, 1, "resign"), None, 14.0, changes)
    assert (await store.load_room("g3")).result is None  # type: ignore[union-attr]
    # Likewise a game ended by a move: the move, the result and the ratings are one write,
    # so a refused rating leaves the last move unwritten too.
    await store.create_room("g5", "connect4", {}, [_person("pa", "Ana"),
                            SeatState("bot", "easy")], "playing", None, [], 13.5, rated)
    with pytest.raises(Exception, match="stale"):
        await store.record_move("g5", Action(0, 0, {"column": 3}, (), 13.6, None),
                                Outcome(0, 1, "four"), changes)
    g5 = await store.load_room("g5")
    assert g5 is not None and g5.actions == [] and g5.result is None
    assert g5.status == "playing"

    assert await store.ratings_of("connect4", ["pa", bot, "pb"]) == {
        "pa": after_a, bot: after_bot, "pb": NEW}
    assert await store.ratings_by_game("pa") == {"connect4": after_a}
    assert await store.ratings_by_game("pb") == {}
    board = await store.leaderboard("connect4", 10)
    assert board[0] == ("pa", "Ana", after_a) and (bot, None, after_bot) in board
    assert [r.rating for _, _, r in board] == sorted((r.rating for _, _, r in board),
                                                     reverse=True)
    assert await store.leaderboard("connect4", 1) == [("pa", "Ana", after_a)]
    # Migration 0010: every house level is on the board at its anchor, before any game.
    assert sorted(pid for pid, _, _ in await store.leaderboard("grundy", 10)) == sorted(
        f"bot:grundy:{lv}" for lv in ("random", "easy", "medium", "hard", "max"))
    # The pair cap's count: g1 finished rated at 12.0; g3 and g5 are rated and being played.
    pair = ("pa", bot)
    assert await store.rated_games_between("connect4", pair, 11.0, playing=False) == 1
    assert await store.rated_games_between("connect4", pair[::-1], 11.0, playing=False) == 1
    assert await store.rated_games_between("connect4", pair, 12.0, playing=False) == 0
    assert await store.rated_games_between("connect4", pair, 11.0, playing=True) == 3
    assert await store.rated_games_between("connect4", ("pa", "bot:connect4:hard"), 0.0,
                                           playing=True) == 0
    assert await store.rated_games_between("grundy", pair, 0.0, playing=True) == 0
    # A rated room paired past the cap is made unrated with its seats, in one write.
    await store.create_room("g4", "connect4", {}, [_person("pa", "Ana"), SeatState("human")],
                            "waiting", None, [], 15.0, rated, created_by="pa")
    await store.save_seats("g4", [_person("pa", "Ana"), _person("pb", "Bob")], "playing", [],
                           unrated="pair_cap")
    g4 = await store.load_room("g4")
    assert g4 is not None and g4.room_options.rated is False and g4.status == "playing"
    assert g4.room_options.unrated_reason == "pair_cap"
    assert g4.room_options.clock is None and g4.seats[1].player_id == "pb"
    games = await store.games_of("pa", 10)
    assert [g["room_id"] for g in games] == ["g4", "g5", "g3", "g2", "g1"]
    assert games[4]["result"] == {"winner": 0, "points": 1, "reason": "four"}
    assert games[4]["room_options"]["rated"] is True
    assert games[4]["seats"] == [
        {"seat": 0, "kind": "human", "level": None, "player_id": "pa", "name": "Ana"},
        {"seat": 1, "kind": "bot", "level": "easy", "player_id": None, "name": None}]
    assert [g["room_id"] for g in await store.games_of("pa", 1)] == ["g4"]
    assert [g["room_id"] for g in await store.games_of("pb", 10)] == ["g4"]
    await store.close()


async def test_address_hashes_the_key_and_forgetting_on_both(backend: Backend) -> None:
    """Contract section 16's store: one key made once (a second opening reads the same), the
    hashes per player with their last sight, shared only when both sights are recent enough,
    the old ones forgotten; a game unrated at its end says why with its result."""
    store = await backend.open()
    key = await store.addresses.key()
    assert len(key) == 32 and await store.addresses.key() == key
    assert await backend.rows("SELECT COUNT(*) FROM server_secrets") == [(1,)]
    await store.address_seen("pa", "aa" * 32, 100.0)
    await store.address_seen("pb", "aa" * 32, 200.0)
    await store.address_seen("pb", "bb" * 32, 300.0)
    await store.address_seen("pc", "bb" * 32, 50.0)
    await store.address_seen("pa", "aa" * 32, 90.0)  # an older sight keeps the newer one
    assert await store.addresses.hashes_of("pa") == [("aa" * 32, 100.0)]
    assert await store.addresses.hashes_of("pb") == [("aa" * 32, 200.0), ("bb" * 32, 300.0)]
    assert await store.addresses.shared("pa", "pb", 100.0)
    assert await store.addresses.shared("pb", "pa", 100.0)
    assert not await store.addresses.shared("pa", "pb", 100.5)  # pa's sight is too old
    assert not await store.addresses.shared("pa", "pc", 0.0)  # nothing in common
    assert await store.addresses.shared("pb", "pc", 50.0)
    assert not await store.addresses.shared("pb", "pc", 51.0)
    assert await store.addresses.forget_before(100.0) == 1  # pc's, at 50
    assert await store.addresses.hashes_of("pc") == []
    assert await store.addresses.forget_before(250.0) == 2
    assert await store.addresses.hashes_of("pb") == [("bb" * 32, 300.0)]
    # Unrated at its end: the result and the reason in one write.
    rated = RoomOptions(rated=True)
    await store.create_player("pa", "Ana", "token-a")
    await store.create_player("pb", "Bob", "token-b")
    await store.create_room("u1", "connect4", {}, [_person("pa", "Ana"), _person("pb", "Bob")],
                            "playing", None, [], 10.0, rated)
    await store.record_result("u1", Outcome(0, 1, "resign"), None, 11.0,
                              unrated="shared_address")
    u1 = await store.load_room("u1")
    assert u1 is not None and u1.result is not None
    assert u1.room_options.rated is False
    assert u1.room_options.unrated_reason == "shared_address"
    await store.close()
    again = await backend.open()
    assert await again.addresses.key() == key
    await again.close()


async def test_an_unknown_kind_of_write_is_refused_and_writes_nothing(
        backend: Backend) -> None:
    """A row no trigger (SQLite) or function (PostgreSQL) knows fails its whole write."""
    store = await backend.open()
    with pytest.raises(Exception, match="unknown kind"):
        await store._commits.write(["player", "p", "Ana", "h", 1.0, 1.0], ["no_such_kind", "x"])
    assert await backend.rows("SELECT COUNT(*) FROM players") == [(0,)]
    await store.close()


def test_the_two_backends_migrations_are_in_step() -> None:
    """Migration N exists for both backends, under the same name: a database of either kind
    at version N has the same logical schema (migrations/README.md)."""
    assert [name for _, name, _ in migration_files()] == [
        name for _, name, _ in postgres_migrations()]
    assert migrations_folder("postgresql").parent.joinpath("README.md").is_file()


async def _sqlite_schema(store: SqliteStore) -> dict[str, Any]:
    async with store.db.execute(
            "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'index')"
            " AND name NOT LIKE 'sqlite_%'") as cur:
        objects = list(await cur.fetchall())
    columns: dict[str, set[str]] = {}
    for kind, name in objects:
        if kind == "table":
            async with store.db.execute(f"PRAGMA table_info({name})") as cur:
                columns[name] = {str(r[1]) for r in await cur.fetchall()}
    return {"columns": columns,
            "indexes": {name for kind, name in objects if kind == "index"}}


async def _postgres_schema(url: str) -> dict[str, Any]:
    con = await asyncpg.connect(url)
    try:
        columns: dict[str, set[str]] = {}
        for table, column in await con.fetch(
                "SELECT table_name, column_name FROM information_schema.columns"
                " WHERE table_schema = 'public'"):
            columns.setdefault(table, set()).add(column)
        # Named indexes only: SQLite names those of its keys sqlite_autoindex_*.
        indexes = {r[0] for r in await con.fetch(
            "SELECT i.indexname FROM pg_indexes i WHERE i.schemaname = 'public'"
            " AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)")}
    finally:
        await con.close()
    columns["rooms"].discard("seq")  # what SQLite's rowid is there
    return {"columns": columns, "indexes": indexes}


@pytest.mark.parametrize("version", range(1, len(migration_files()) + 1))
async def test_the_same_version_is_the_same_schema_on_both(
        tmp_path: Path, pg_url: str, version: int) -> None:
    sqlite = await SqliteStore.open(tmp_path / "t.db", upto=version)
    postgres = await PostgresStore.open(pg_url, upto=version)
    try:
        assert await sqlite.schema_version() == await postgres.schema_version() == version
        assert await _sqlite_schema(sqlite) == await _postgres_schema(pg_url)
    finally:
        await sqlite.close()
        await postgres.close()


@pytest.mark.parametrize("start", range(len(postgres_migrations()) + 1))
async def test_postgres_migrations_from_every_version(pg_cluster: Any, start: int) -> None:
    fresh, old = pg_cluster.new_database(), pg_cluster.new_database()
    s = await PostgresStore.open(fresh)
    await s.close()
    s = await PostgresStore.open(old, upto=start)
    assert await s.schema_version() == start
    if start >= 1:  # data written at the old version survives the upgrade
        con = await asyncpg.connect(old)
        await con.execute(
            "INSERT INTO players (id, name, token_hash, created_at) VALUES ($1, $2, $3, $4)",
            "p1", "Old", token_hash("tok"), 1.0)
        await con.execute(
            "INSERT INTO rooms (id, game, options, status, created_at)"
            " VALUES ('r1', 'connect4', '{}', 'playing', 1.0)")
        await con.execute(
            "INSERT INTO seats (room_id, seat, kind, level, player_id)"
            " VALUES ('r1', 0, 'human', NULL, 'p1'), ('r1', 1, 'bot', 'easy', NULL)")
        await con.execute(
            "INSERT INTO moves (room_id, ply, seat, move, created_at)"
            " VALUES ('r1', 0, 0, '{\"column\": 3}', 2.0)")
        await con.close()
    await s.close()
    s = await PostgresStore.open(old)
    assert await s.schema_version() == len(postgres_migrations())
    if start >= 1:
        found = await s.account_by_token("tok")
        assert found is not None and (found.player_id, found.name) == ("p1", "Old")
        record = await s.load_room("r1")
        assert record is not None and record.room_options.clock is None
        assert [a.clocks for a in record.actions] == [None] and record.final_clocks is None
        assert record.created_by == ("p1" if start < 5 else None)
        room = record.to_room()
        assert room.ply == 1 and room.bot_to_move() == 1
    await s.close()
    assert await _postgres_schema(old) == await _postgres_schema(fresh)
    con = await asyncpg.connect(old)
    versions = [r[0] for r in await con.fetch("SELECT version FROM schema_migrations ORDER BY 1")]
    await con.close()
    assert versions == list(range(1, len(postgres_migrations()) + 1))


async def test_nodes_starting_together_migrate_once(pg_url: str) -> None:
    import asyncio

    stores = await asyncio.gather(*(PostgresStore.open(pg_url) for _ in range(4)))
    for s in stores:
        assert await s.schema_version() == len(postgres_migrations())
        await s.close()


def test_database_texts() -> None:
    assert parse_database("tablas.sqlite3") == Database("sqlite", "tablas.sqlite3")
    assert parse_database("/var/db/t.db") == Database("sqlite", "/var/db/t.db")
    assert parse_database("sqlite:///t.db") == Database("sqlite", "t.db")
    assert parse_database("sqlite:////var/t.db") == Database("sqlite", "/var/t.db")
    url = "postgresql://u:pw@db.example:5432/tablas"
    assert parse_database(url) == Database("postgresql", url)
    assert parse_database("postgres://h/db") == Database("postgresql", "postgres://h/db")
    for bad in ("", "mysql://h/db", "sqlite://t.db", "sqlite:///", "redis://h:6379/0"):
        with pytest.raises(BadDatabase, match="postgresql://"):
            parse_database(bad)
    assert safe_url(url) == "postgresql://u:***@db.example:5432/tablas"
    assert safe_url("postgresql://u@h/db") == "postgresql://u@h/db"


async def test_open_store_picks_the_backend(backend: Backend) -> None:
    store = await open_store(backend.where)
    try:
        assert type(store) is {"sqlite": SqliteStore, "postgresql": PostgresStore}[backend.kind]
    finally:
        await store.close()


async def test_postgresql_without_asyncpg_says_which_extra_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "asyncpg", None)  # as if it were not installed
    monkeypatch.delitem(sys.modules, "tablas.server.store.postgres")
    with pytest.raises(BadDatabase, match=r"asyncpg.*pip install 'tablas\[cluster\]'"):
        await open_store("postgresql://tablas@127.0.0.1:1/x")


async def test_postgresql_commits_are_durable_whatever_the_database_says(pg_url: str) -> None:
    """The store's sessions commit with synchronous_commit on (a commit returns once its WAL
    is flushed), even on a database configured to acknowledge commits before that."""
    con = await asyncpg.connect(pg_url)
    name = await con.fetchval("SELECT current_database()")
    await con.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = off')
    await con.close()
    con = await asyncpg.connect(pg_url)
    assert await con.fetchval("SHOW synchronous_commit") == "off"
    await con.close()
    store = await PostgresStore.open(pg_url)
    try:
        for _ in range(3):  # every connection of the pool the store may use
            async with store.pool.acquire() as c:
                assert await c.fetchval("SHOW synchronous_commit") == "on"
    finally:
        await store.close()
