"""The house rules as tests: ruff clean everywhere, mypy strict on engine/ and server/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_clean() -> None:
    pytest.importorskip("ruff")  # the test extra has it; run from this interpreter's install
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_clean() -> None:
    pytest.importorskip("mypy")
    # Through the tool: mypy cannot follow the editable install's mapping of tablas.server.
    r = subprocess.run([sys.executable, "-m", "tools.typecheck"], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout + r.stderr
