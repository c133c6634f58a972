"""The event loop the server runs on: uvloop where it is installed, asyncio's own otherwise.

uvloop (libuv, in C) runs the same asyncio code. Under load much of the server's time goes
to the transport (reading, writing, waking tasks), which uvloop does in C: the figures are
in docs/benchmarks.md (the load generator's ``--loop``). Nothing in the server depends on which loop
runs it; the test suite runs in-process servers on asyncio's loop and ``tablas serve``
subprocesses on uvloop, so both are exercised.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

LOOPS = ("auto", "asyncio", "uvloop")


def loop_in_use(choice: str = "auto") -> str:
    """The loop :func:`run` would use for ``choice`` (one of :data:`LOOPS`): ``asyncio`` or
    ``uvloop``. Raises ``ValueError`` for an unknown choice and ``ImportError`` when
    ``uvloop`` is asked for and is not installed (``pip install uvloop``; not on Windows)."""
    if choice not in LOOPS:
        raise ValueError(f"unknown event loop {choice!r}: one of {', '.join(LOOPS)}")
    if choice == "asyncio":
        return "asyncio"
    try:
        import uvloop  # noqa: F401
    except ImportError:
        if choice == "uvloop":
            raise
        return "asyncio"
    return "uvloop"


def run(main: Coroutine[Any, Any, T], choice: str = "auto") -> T:
    """``asyncio.run(main)`` on the loop ``choice`` names (see :func:`loop_in_use`)."""
    try:
        name = loop_in_use(choice)
    except BaseException:
        main.close()  # never awaited: say so quietly rather than warn at exit
        raise
    if name == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)
