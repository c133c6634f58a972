"""John Tromp's and Pascal Pons' Connect-4 test positions with their exact scores, as the
project's shared folder holds them beside the repository (``../shared/data/connect4``).

A developer's clone may lack the folder: the tests that read it are skipped there. CI always
lays a copy of shared/ beside the clone it tests (``CI=true``): there a missing folder is a
failure, never a silent skip."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

C4_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "connect4"


def pons_data() -> Path:
    """The folder of the Pons test sets; skips the calling test where it is missing, and
    fails it under CI."""
    if C4_DATA.is_dir():
        return C4_DATA
    why = f"the Pons test sets are not at {C4_DATA} (shared/data/connect4 beside the repo)"
    if os.environ.get("CI"):
        pytest.fail(why + ": CI lays shared/ beside the clone, so this is an error")
    pytest.skip(why)
