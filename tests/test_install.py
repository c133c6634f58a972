"""The package as a user installs it: the built wheel (not this checkout), and an editable
install of this checkout, each in a fresh virtual environment, run from a folder that has
nothing of the project in it. Both put one import package, ``tablas``, in site-packages."""

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


def _venv(where: Path) -> tuple[Path, Path]:
    """A fresh venv whose dependencies come from this interpreter's own site-packages (a
    ``.pth`` line: no download), which the venv's own come before; its ``bin`` folder and its
    site-packages."""
    venv.create(where, with_pip=True)
    bin_dir = where / "bin"
    site = subprocess.run(
        [str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True).stdout.strip()
    ours = dict.fromkeys((sysconfig.get_path("purelib"), sysconfig.get_path("platlib")))
    (Path(site) / "dependencies.pth").write_text("\n".join(ours) + "\n")
    return bin_dir, Path(site)


@pytest.fixture(scope="module")
def installs(wheel: Path, tmp_path_factory: pytest.TempPathFactory
             ) -> dict[str, tuple[Path, set[str]]]:
    """Two fresh venvs, the wheel installed in one and this checkout (editable) in the other:
    for each, its ``bin`` folder and what the install added to its site-packages."""
    out = {}
    for kind, target in (("wheel", [str(wheel)]), ("editable", ["-e", str(ROOT)])):
        bin_dir, site = _venv(tmp_path_factory.mktemp(kind) / "venv")
        before = {p.name for p in site.iterdir()}
        subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "--no-deps",
                        *target], check=True, capture_output=True, timeout=300)
        out[kind] = (bin_dir, {p.name for p in site.iterdir()} - before)
    return out


@pytest.fixture(scope="module")
def installed(installs: dict[str, tuple[Path, set[str]]]) -> Path:
    """The wheel's venv's ``bin`` folder."""
    return installs["wheel"][0]


def test_the_wheel_ships_the_page_and_the_migrations_and_no_tools(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"tablas/client/index.html", "tablas/client/js/app.js", "tablas/client/style.css",
            "tablas/client/review.html", "tablas/client/js/review.js",
            "tablas/client/js/boards/backgammon.js", "tablas/client/js/i18n/es.js",
            "tablas/engine/search/bgnet.npz",
            "tablas/engine/search/_c4kernel.c", "tablas/server/cli.py"} <= names
    # Every file of the page ships: one the package-data globs miss is a page that breaks
    # only once installed.
    client = ROOT / "client"
    assert {f"tablas/client/{p.relative_to(client).as_posix()}" for p in client.rglob("*")
            if p.is_file()} <= names
    for backend in ("sqlite", "postgresql"):
        folder = ROOT / "migrations" / backend
        assert {p.name for p in folder.glob("*.sql")} == {
            Path(n).name for n in names
            if n.startswith(f"tablas/migrations/{backend}/") and n.endswith(".sql")}
    assert "tablas/migrations/README.md" in names
    # One import package: nothing else at the top of the wheel but its metadata.
    assert {n.split("/")[0] for n in names} == {"tablas", "tablas-0.1.0.dist-info"}


@pytest.mark.parametrize("kind", ["wheel", "editable"])
def test_an_install_adds_only_tablas_to_site_packages(
        installs: dict[str, tuple[Path, set[str]]], tmp_path: Path, kind: str) -> None:
    """``pip install`` (and ``pip install -e``) claims the one name ``tablas``: no ``server``
    or ``engine`` of its own in everyone's site-packages, importable or not."""
    bin_dir, added = installs[kind]
    if kind == "wheel":
        assert added == {"tablas", "tablas-0.1.0.dist-info"}
    else:  # setuptools' editable install: its metadata, a .pth and the finder it names (and
        # that finder's bytecode cache)
        assert {n for n in added if not n.startswith("__editable__")} <= {
            "tablas-0.1.0.dist-info", "__pycache__"}, added
    where = subprocess.run(
        [str(bin_dir / "python"), "-c",
         "import importlib.util as u, tablas.server, tablas.engine; "
         "print(tablas.server.__file__, tablas.engine.__file__, "
         "u.find_spec('server'), u.find_spec('engine'))"],
        cwd=tmp_path, capture_output=True, text=True, check=True, env=_without_path())
    server_file, engine_file, server, engine = where.stdout.split()
    # The wheel's code is its own copy in the venv; the editable install's is this checkout.
    home = ROOT if kind == "editable" else bin_dir.parent
    assert Path(server_file).is_relative_to(home) and Path(engine_file).is_relative_to(home)
    assert Path(server_file).parent.name == "server"
    assert (server, engine) == ("None", "None")


def _without_path() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _serve(bin_dir: Path, cwd: Path, port: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(bin_dir / "tablas"), "serve", "--port", str(port), "--db", "t.sqlite3",
         "--bot-workers", "1"],
        cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=_without_path(), start_new_session=True,
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


@pytest.mark.parametrize("kind", ["wheel", "editable"])
def test_the_installed_server_serves_the_page_and_the_database_from_any_folder(
        installs: dict[str, tuple[Path, set[str]]], tmp_path: Path, kind: str) -> None:
    installed = installs[kind][0]
    port = free_port()
    proc = _serve(installed, tmp_path, port)
    try:
        url = f"http://127.0.0.1:{port}/"
        assert any(line.strip() == url for line in _lines_until(proc, url, 60))
        status, page = _get(port, "/")
        assert status == 200 and b">Tablas</title>" in page
        status, script = _get(port, "/js/app.js")
        assert status == 200 and b"import" in script
        assert json.loads(_get(port, "/healthz")[1])["status"] == "ok"
        import sqlite3

        con = sqlite3.connect(tmp_path / "t.sqlite3")
        versions = [v for (v,) in con.execute("SELECT version FROM schema_migrations")]
        con.close()
        assert versions == list(range(1, len(list(
            (ROOT / "migrations" / "sqlite").glob("*.sql"))) + 1))
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.parametrize("missing", ["client/index.html", "migrations/sqlite"])
def test_a_broken_install_says_what_is_missing_and_exits_at_once(
        installed: Path, tmp_path: Path, missing: str) -> None:
    """A file the package ships is gone: ``tablas serve`` names it and exits non-zero at once
    (it used to print a misleading "cannot serve" and hang on)."""
    site = subprocess.run(  # the installed package's folder, tablas/
        [str(installed / "python"), "-c",
         "import tablas.server as s, pathlib; print(pathlib.Path(s.__file__).parent.parent)"],
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

    code = ("from tablas.engine.games import get_game; "
            "from tablas.engine.search.connect4_solver import Connect4Solver; "
            "s = Connect4Solver(); "
            "print(s.path, s.solve(get_game('connect4').parse_position("
            "'2252576253462244111563365343671351441')))")
    env = _without_path()
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
