"""``tablas migrate [--db URL]`` and ``--db``'s forms (contract sections 1 and 9): on a SQLite
file and on a real PostgreSQL (tests/pg_support.py); a bad or unreachable database is one line
on stderr and exit code 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pg_support import Backend
from server_support import ROOT, free_port
from tablas.server.store import migration_files


def tablas(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tablas.server.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


async def test_migrate_applies_every_migration_and_exits(backend: Backend) -> None:
    head = len(migration_files())
    r = tablas("migrate", "--db", backend.where)
    assert (r.returncode, r.stdout, r.stderr) == (0, f"schema version {head}\n", "")
    assert await backend.rows("SELECT version FROM schema_migrations ORDER BY version") == [
        (v,) for v in range(1, head + 1)]
    r = tablas("migrate", "--db", backend.where)  # nothing left to do: the same answer
    assert (r.returncode, r.stdout) == (0, f"schema version {head}\n")


def test_migrate_takes_a_sqlite_url_and_defaults_to_the_file_serve_uses(
        tmp_path: Path) -> None:
    r = tablas("migrate", "--db", f"sqlite:///{tmp_path}/u.db")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "u.db").is_file()
    r = tablas("migrate", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "tablas.sqlite3").is_file()


@pytest.mark.parametrize("command", ["migrate", "serve"])
@pytest.mark.parametrize("db, said", [
    ("mysql://h/db", "postgresql://"),
    ("sqlite://relative.db", "sqlite:///PATH"),
    ("postgresql://tablas:hunter2@127.0.0.1:{port}/db", "cannot use the database"),
])
def test_a_database_it_cannot_use_is_one_line_and_exit_2(
        tmp_path: Path, command: str, db: str, said: str) -> None:
    """Nothing listens on the port: refused at once. The password is never printed."""
    args = ["--port", "0"] if command == "serve" else []
    r = tablas(command, "--db", db.format(port=free_port()), *args, cwd=tmp_path)
    assert r.returncode == 2
    last = r.stderr.splitlines()[-1]
    assert said in last and last.startswith("tablas: "), r.stderr
    assert "hunter2" not in r.stderr and "Traceback" not in r.stderr
    assert [line for line in r.stderr.splitlines() if line.startswith("tablas:")] == [last]


def test_an_unknown_postgres_database_is_one_line_and_exit_2(pg_cluster: object) -> None:
    url = pg_cluster.url("no_such_database")  # type: ignore[attr-defined]
    r = tablas("migrate", "--db", url)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "no_such_database" in r.stderr and "Traceback" not in r.stderr
