"""Persistence: the store a server writes every change through before anyone hears of it.

:class:`~tablas.server.store.base.Storage` is the interface the server types against; a backend is
chosen by the ``--db`` text (:func:`open_store`): a file path or ``sqlite:///PATH`` opens the
embedded SQLite backend (:mod:`tablas.server.store.sqlite`, aiosqlite: the default), a
``postgresql://…`` (or ``postgres://…``) URL the PostgreSQL one
(:mod:`tablas.server.store.postgres`, asyncpg: the ``cluster`` extra). Each backend's schema is its
own folder of numbered SQL files shipped with the package, ``migrations/sqlite/`` and
``migrations/postgresql/``, kept in step: the same numbers, the same logical schema
(``migrations/README.md``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from tablas.server.store.base import Storage, migration_files, token_hash
from tablas.server.store.commit import CommitStats
from tablas.server.store.sqlite import SqliteStore, Store

__all__ = ["BadDatabase", "CommitStats", "Database", "SqliteStore", "Storage", "Store",
           "migration_files", "open_store", "parse_database", "token_hash"]

ACCEPTED = "a file path, sqlite:///PATH or postgresql://USER@HOST:PORT/NAME"


class BadDatabase(ValueError):
    """A ``--db`` text that names no database this server can use."""


@dataclass(frozen=True)
class Database:
    """Which backend, and where: a SQLite file's path, or PostgreSQL's connection URL."""

    kind: Literal["sqlite", "postgresql"]
    target: str


def parse_database(text: str) -> Database:
    """``--db``'s text as a :class:`Database`; :class:`BadDatabase` naming the accepted forms
    for anything else (an empty text, another scheme such as ``mysql://``)."""
    if not text:
        raise BadDatabase(f"no database given: use {ACCEPTED}")
    if text.startswith(("postgresql://", "postgres://")):
        return Database("postgresql", text)
    if text.startswith("sqlite://"):
        path = text.removeprefix("sqlite://")
        # sqlite:///rel.db is rel.db, sqlite:////abs.db is /abs.db (SQLAlchemy's reading)
        if not path.startswith("/") or path == "/":
            raise BadDatabase(f"{text!r}: a SQLite URL is sqlite:///PATH; use {ACCEPTED}")
        return Database("sqlite", path[1:])
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", text):
        raise BadDatabase(f"{text!r} is not a database this server can use: use {ACCEPTED}")
    return Database("sqlite", text)


async def open_store(db: str | Database, *, upto: int | None = None) -> Storage:
    """Opens (and migrates, up to ``upto``) the store ``db`` names (:func:`parse_database`).
    PostgreSQL needs asyncpg (``pip install 'tablas[cluster]'``): :class:`BadDatabase`
    says so when it is missing."""
    where = db if isinstance(db, Database) else parse_database(db)
    if where.kind == "sqlite":
        return await SqliteStore.open(where.target, upto=upto)
    try:
        from tablas.server.store.postgres import PostgresStore
    except ImportError as e:
        raise BadDatabase(f"PostgreSQL needs asyncpg ({e.name} is missing): "
                          "pip install 'tablas[cluster]'") from None
    return await PostgresStore.open(where.target, upto=upto)
