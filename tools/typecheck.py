"""mypy, strict, over the shipped code: ``python -m tools.typecheck``.

mypy does not follow the editable install's import hook (setuptools maps ``tablas.server`` to
``server/`` at import time), so this runs it on :func:`tools.checkout.import_root`'s
``tablas/``, links to this checkout's folders, with the project's own settings.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tools.checkout import import_root

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    """mypy's exit status; its report on standard output. Extra arguments go to mypy."""
    root = import_root(ROOT)
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
               "-p", "tablas.engine", "-p", "tablas.server", *(argv or sys.argv[1:])]
    return subprocess.run(command, cwd=root).returncode


if __name__ == "__main__":
    sys.exit(main())
