"""The Connect-4 solver's two searches for the tests: the pure-Python one always, the
compiled kernel where a C compiler exists (skipped where none does). A compiler that exists
but fails to build the kernel is a failure, never a skip."""

from __future__ import annotations

import pytest
from tablas.engine.search import c4kernel

KERNELS = ["python", "c"]


def need_kernel(kernel: str) -> None:
    """Skips the calling test for ``"c"`` where there is no compiler; fails it where the
    compiler exists and the build or the load failed."""
    if kernel != "c":
        return
    if c4kernel.compiler() is None:
        pytest.skip("no C compiler ($CC, cc, gcc, clang): the compiled kernel is not built")
    if c4kernel.library() is None:
        pytest.fail(f"a C compiler exists but the kernel is unavailable: {c4kernel.last_error()}")
