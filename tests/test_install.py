"""The package as a user installs it: the built wheel (not this checkout) in a fresh virtual
environment, run from a folder that has nothing of the project in it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import urllib.request
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_support import free_port

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
                    str(ROOT)], check=True, capture_output=True, timeout=300)
    (built,) = out.glob("tablas-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed; its ``bin`` folder. The dependencies come from
    this interpreter's own site-packages (a ``.pth`` line: no download), which the venv's
    own come before; the checkout itself is nowhere on its path."""
    env = tmp_path_factory.mktemp("venv") / "venv"
    venv.create(env, with_pip=True)
    bin_dir = env / "bin"
    site = subprocess.run(
        [str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True).stdout.strip()
    ours = dict.fromkeys((sysconfig.get_path("purelib"), sysconfig.get_path("platlib")))
    (Path(site) / "dependencies.pth").write_text("\n".join(ours) + "\n")
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "--no-index",
                    "--no-deps", str(wheel)], check=True, capture_output=True, timeout=300)
    return bin_dir


def test_the_wheel_ships_the_page_and_the_migrations_and_no_tools(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"server/web/index.html", "server/web/js/app.js", "server/web/style.css",
            "server/web/review.html", "server/web/js/review.js",
            "server/web/js/boards/backgammon.js", "engine/search/bgnet.npz",
            "engine/search/_c4kernel.c"} <= names
    # Every file of the page ships: one the package-data globs miss is a page that breaks
    # only once installed.
    web = ROOT / "server" / "web"
    assert {f"server/web/{p.relative_to(web).as_posix()}" for p in web.rglob("*")
            if p.is_file()} <= names
    for backend in ("migrations", "migrations_postgresql"):
        folder = ROOT / "server" / "store" / backend
        assert {p.name for p in folder.glob("*.sql")} == {
            Path(n).name for n in names
            if n.startswith(f"server/store/{backend}/") and n.endswith(".sql")}
    assert "server/store/migrations_postgresql/README.md" in names
    assert not any(n.startswith(("tools/", "tests/")) for n in names)


def _serve(bin_dir: Path, cwd: Path, port: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(bin_dir / "tablas"), "serve", "--port", str(port), "--db", "t.sqlite3",
         "--bot-workers", "1"],
        cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        start_new_session=True,
    )


def _lines_until(proc: subprocess.Popen[str], wanted: str, seconds: float) -> Iterator[str]:
    assert proc.stdout is not None
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        yield line
        if wanted in line:
            return
    raise AssertionError(f"no line with {wanted!r} within {seconds} s")


def _get(port: int, path: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
        return r.status, r.read()


def test_the_installed_server_serves_the_page_and_the_database_from_any_folder(
        installed: Path, tmp_path: Path) -> None:
    where = subprocess.run(
        [str(installed / "python"), "-c", "import server, engine; print(server.__file__); "
         "print(engine.__file__)"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert str(ROOT) not in where.stdout and str(installed.parent) in where.stdout, where.stdout
    port = free_port()
    proc = _serve(installed, tmp_path, port)
    try:
        url = f"http://127.0.0.1:{port}/"
        assert any(line.strip() == url for line in _lines_until(proc, url, 60))
        status, page = _get(port, "/")
        assert status == 200 and b"<title>Tablas</title>" in page
        status, script = _get(port, "/js/app.js")
        assert status == 200 and b"import" in script
        assert json.loads(_get(port, "/healthz")[1])["status"] == "ok"
        import sqlite3

        con = sqlite3.connect(tmp_path / "t.sqlite3")
        versions = [v for (v,) in con.execute("SELECT version FROM schema_migrations")]
        con.close()
        assert versions == list(range(1, len(list(
            (ROOT / "server" / "store" / "migrations").glob("*.sql"))) + 1))
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.parametrize("missing", ["web/index.html", "store/migrations"])
def test_a_broken_install_says_what_is_missing_and_exits_at_once(
        installed: Path, tmp_path: Path, missing: str) -> None:
    """A file the package ships is gone: ``tablas serve`` names it and exits non-zero at once
    (it used to print a misleading "cannot serve" and hang on)."""
    site = subprocess.run(  # from tmp_path: from the checkout, -c would find its server/
        [str(installed / "python"), "-c", "import server; print(server.__path__[0])"],
        capture_output=True, text=True, check=True, cwd=tmp_path).stdout.strip()
    assert str(installed.parent) in site, site
    target = Path(site) / missing
    aside = target.with_name(target.name + ".aside")
    target.rename(aside)
    try:
        proc = _serve(installed, tmp_path, free_port())
        try:
            code = proc.wait(20)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        assert proc.stderr is not None
        err = proc.stderr.read()
        assert code != 0  # and within proc.wait's 20 s
        assert "missing" in err and Path(missing).name in err and "Traceback" not in err, err
    finally:
        aside.rename(target)
        shutil.rmtree(tmp_path / "__pycache__", ignore_errors=True)


def test_the_installed_solver_builds_its_kernel_from_the_shipped_source(
        installed: Path, tmp_path: Path) -> None:
    """Where a C compiler exists, the installed package compiles the Connect-4 kernel from
    the source the wheel ships into the user's cache; the pure-Python search runs anyway."""
    from c4kernel_support import need_kernel

    code = ("from engine.games import get_game; "
            "from engine.search.connect4_solver import Connect4Solver; "
            "s = Connect4Solver(); "
            "print(s.path, s.solve(get_game('connect4').parse_position("
            "'2252576253462244111563365343671351441')))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["TABLAS_CACHE"] = str(tmp_path / "cache")
    for kernel in ("python", "c"):
        if kernel == "c":
            need_kernel("c")
        env["TABLAS_C4_KERNEL"] = kernel
        out = subprocess.run([str(installed / "python"), "-c", code], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == [kernel, "-1"]
    assert [p.suffix for p in (tmp_path / "cache").iterdir()] == [".so"]
