"""A real PostgreSQL server for the tests, from Debian's binaries (``postgresql``).

One cluster per test session: ``initdb`` into a temporary folder, ``pg_ctl`` starts it on a
free port of 127.0.0.1 (its unix socket in that folder too), and it is stopped when the
session ends. Each test that asks for ``pg_url`` gets a database of its own (``CREATE
DATABASE``: cheap). initdb and postgres refuse to run as root: as root (CI is) they run as
the ``postgres`` system user the Debian package creates, in a folder chowned to it. Where the
binaries are missing the tests that need them are skipped, saying so.

``fsync`` is off in this cluster: the tests kill ``tablas serve``, never PostgreSQL, and a
commit a client saw is in the database server's memory whatever fsync says.
``synchronous_commit`` stays on, as the store requires.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from server_support import free_port
from tablas.server.store import Storage, open_store

USER = "tablas"


def pg_bin() -> Path | None:
    """The folder of the newest installed PostgreSQL's binaries, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name))
    return Path(found[-1]).parent if found else None


class Cluster:
    """A PostgreSQL cluster in a folder of its own, listening on 127.0.0.1:``port``."""

    def __init__(self, bin_dir: Path, fsync: bool = False) -> None:
        """``fsync``: as a production server runs (the tests run without: see above)."""
        self.bin = bin_dir
        self.fsync = fsync
        self.as_root = os.geteuid() == 0
        # As root, in /tmp: the postgres user must reach the folder (a TMPDIR of root's may
        # be closed to it).
        self.root = Path(tempfile.mkdtemp(prefix="tablas-pg-",
                                          dir="/tmp" if self.as_root else None))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = free_port()
        self._names = itertools.count()
        if self.as_root:
            shutil.chown(self.root, "postgres", "postgres")

    def _run(self, args: Sequence[str], timeout: float = 120) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_root else []
        r = subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=timeout,
                           cwd=self.root)
        if r.returncode != 0:
            log = self.log.read_text() if self.log.exists() else ""
            raise RuntimeError(f"{args[0]} failed: {r.stdout}{r.stderr}{log[-2000:]}")

    def start(self) -> None:
        self._run([str(self.bin / "initdb"), "-D", str(self.data), "-U", USER,
                   "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"])
        for attempt in range(3):
            # autovacuum off: its ANALYZE takes transaction ids, which Backend.commits counts.
            opts = (f"-h 127.0.0.1 -p {self.port} -k {self.root}{'' if self.fsync else ' -F'}"
                    " -c max_connections=200 -c shared_buffers=32MB -c autovacuum=off")
            try:
                self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                           "-o", opts, "-w", "-t", "60", "start"])
                return
            except RuntimeError:
                if attempt == 2:
                    raise
                self.port = free_port()  # taken between free_port() and the bind: another

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast",
                           "-w", "-t", "60", "stop"])
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        name = f"t{os.getpid()}_{next(self._names)}"
        self._run([str(self.bin / "psql"), "-q", "-h", "127.0.0.1", "-p", str(self.port),
                   "-U", USER, "-d", "postgres", "-c", f"CREATE DATABASE {name}"])
        return self.url(name)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    bin_dir = pg_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql): "
                    "no /usr/lib/postgresql/*/bin/initdb")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        pytest.skip("running as root without runuser: PostgreSQL refuses to run as root")
    cluster = Cluster(bin_dir)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    """The URL of a fresh database of the session's cluster."""
    return pg_cluster.new_database()


class Backend:
    """A store's database for the tests that run on every backend: where it is (what
    ``--db`` takes), and what another connection sees there."""

    def __init__(self, kind: str, where: str) -> None:
        self.kind, self.where = kind, where
        self._reads = 0  # PostgreSQL: the transaction ids our own reads of the counter took

    def __repr__(self) -> str:
        return self.kind

    async def open(self, upto: int | None = None) -> Storage:
        return await open_store(self.where, upto=upto)

    async def rows(self, sql: str) -> list[tuple[Any, ...]]:
        """What another connection reads: what the store committed."""
        if self.kind == "sqlite":
            con = sqlite3.connect(self.where)
            try:
                return con.execute(sql).fetchall()
            finally:
                con.close()
        pg = await asyncpg.connect(self.where)
        try:
            return [tuple(r) for r in await pg.fetch(sql)]
        finally:
            await pg.close()

    async def commits(self) -> int:
        """A counter of the write transactions committed to the database (differences
        count): SQLite's from its write-ahead log, PostgreSQL's from its transaction ids,
        which only a transaction that writes takes (the read of the counter takes one too,
        not counted)."""
        if self.kind == "sqlite":
            return wal_commits(Path(self.where))
        pg = await asyncpg.connect(self.where)
        try:
            xid = int(await pg.fetchval("SELECT pg_current_xact_id()::text::bigint"))
        finally:
            await pg.close()
        self._reads += 1
        return xid - (self._reads - 1)

    @property
    def integrity_error(self) -> type[Exception]:
        """What a write that breaks a constraint (a second ply 0) raises."""
        return sqlite3.IntegrityError if self.kind == "sqlite" else asyncpg.UniqueViolationError


def wal_commits(db: Path) -> int:
    """The transactions committed to ``db``'s write-ahead log since its last checkpoint,
    read from the file itself (the WAL format: a 32-byte header, then frames of a 24-byte
    header and a page; a frame whose bytes 4–7 are not 0 ends a commit, and only frames
    carrying the header's salts are the log's own)."""
    wal = db.with_name(db.name + "-wal").read_bytes()
    if len(wal) < 32:
        return 0
    page = int.from_bytes(wal[8:12], "big")
    salts = wal[16:24]
    commits = 0
    for at in range(32, len(wal) - 24 - page + 1, 24 + page):
        frame = wal[at:at + 24]
        if frame[8:16] != salts:
            break
        commits += int.from_bytes(frame[4:8], "big") != 0
    return commits


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """Each backend in turn: a fresh SQLite file, then a fresh PostgreSQL database (skipped
    where PostgreSQL is not installed)."""
    if request.param == "sqlite":
        return Backend("sqlite", str(tmp_path / "t.db"))
    return Backend("postgresql", request.getfixturevalue("pg_url"))
