"""A checkout's code, imported from that checkout: what the side-by-side benchmarks and the
type check put on a child's ``PYTHONPATH``.

Since the package became ``tablas`` (``tablas.server``, ``tablas.engine``; the folders stay
at the top of the repository and setuptools maps them), a checkout cannot be imported by
putting its folder on the path: the editable install's hook would hand out the installed
checkout's ``tablas.server`` instead. :func:`python_path` builds, for such a checkout, a
folder holding ``tablas/`` with links to the checkout's own ``server``, ``engine``, ``client``
and ``migrations``; a checkout from before (``import server``) is its own folder.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

FOLDERS = ("server", "engine", "client", "migrations")


def packaged(src: Path) -> bool:
    """Whether the checkout at ``src`` imports as ``tablas.*`` (it has ``client/`` at the top)."""
    return (src / "client").is_dir() and (src / "server").is_dir()


def server_module(src: Path) -> str:
    """The server package's import name in that checkout: ``tablas.server`` or ``server``."""
    return "tablas.server" if packaged(src) else "server"


def import_root(src: Path) -> Path:
    """A folder whose ``tablas/`` is the checkout at ``src`` (made once, under the temporary
    folder, named by the checkout's path)."""
    src = src.resolve()
    key = hashlib.sha256(str(src).encode()).hexdigest()[:12]
    root = Path(tempfile.gettempdir()) / f"tablas-import-{key}"
    package = root / "tablas"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").touch()
    for name in FOLDERS:
        link = package / name
        if not link.is_symlink():
            link.symlink_to(src / name, target_is_directory=True)
    return root


def python_path(src: Path) -> str:
    """``PYTHONPATH`` for a child that runs the checkout at ``src``: its ``tablas`` (or its
    top-level ``server`` and ``engine`` before the package), then the checkout itself, for its
    ``tools``."""
    src = src.resolve()
    parts = [str(import_root(src))] if packaged(src) else []
    return os.pathsep.join([*parts, str(src)])
