"""The optional compiled kernel of the Connect-4 solver (``_c4kernel.c``), through ctypes.

The C source ships with the package. On first use it is compiled with the machine's C
compiler (``$CC``, else ``cc``, ``gcc`` or ``clang`` on the ``PATH``) into the per-user
cache (``$TABLAS_CACHE``, as the bear-off database), under a name that carries the hash of
the source and of the compile command, so an edited source is never run stale; a build is
written to a temporary file and renamed, so processes building at once do not see half a
library. Nothing is built at install time and there is no new build backend.

``$TABLAS_C4_KERNEL`` chooses: ``auto`` (the default) uses the kernel if it builds and loads,
else the pure-Python search, silently (one debug line in the log); ``python`` never builds
it; ``c`` insists on it (:class:`KernelUnavailable` if it cannot be had).
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("_c4kernel.c")
VERSION = 1  # C4K_VERSION in the source
CHOICES = ("auto", "c", "python")
TIMEOUT = 1000  # c4k_solve's answer when the clock ran out
NO_MEMORY = 1001  # ... when the table could not grow
CLOCK = ctypes.CFUNCTYPE(ctypes.c_double)
NO_CLOCK = CLOCK()  # a null pointer: no budget
FLAGS = ("-O2", "-shared", "-fPIC")


class KernelUnavailable(RuntimeError):
    """The compiled kernel was asked for (``TABLAS_C4_KERNEL=c``) and cannot be had."""


_lock = threading.Lock()
_loaded: dict[str, ctypes.CDLL | None] = {}  # by compiler: the library, or None (failed)
_errors: dict[str, str] = {}


def choice(kernel: str | None = None) -> str:
    """``kernel`` if given, else ``$TABLAS_C4_KERNEL``, else ``auto``."""
    want = (kernel or os.environ.get("TABLAS_C4_KERNEL") or "auto").strip().lower()
    if want not in CHOICES:
        raise ValueError(f"TABLAS_C4_KERNEL must be one of {', '.join(CHOICES)}, not {want!r}")
    return want


def compiler() -> str | None:
    """The C compiler to build with: ``$CC`` (its first word), else the first of ``cc``,
    ``gcc``, ``clang`` on the ``PATH``; None if there is none."""
    env = os.environ.get("CC", "").split()
    for name in (env[0] if env else None, "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return name
    return None


def library_path(cc: str) -> Path:
    from tablas.engine.search.bearoff import cache_dir

    tag = hashlib.sha256(
        SOURCE.read_bytes() + repr((cc, FLAGS, platform.machine())).encode()
    ).hexdigest()[:16]
    return cache_dir() / f"c4kernel-{tag}.so"


def _build(cc: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        done = subprocess.run([cc, *FLAGS, "-o", tmp, str(SOURCE)], capture_output=True,
                              text=True, timeout=120)
        if done.returncode != 0:
            raise OSError(f"{cc} failed ({done.returncode}): {done.stderr.strip()[:2000]}")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _open(path: Path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(path))
    lib.c4k_version.restype = ctypes.c_int
    lib.c4k_version.argtypes = []
    if lib.c4k_version() != VERSION:
        raise OSError(f"{path} is kernel version {lib.c4k_version()}, not {VERSION}")
    lib.c4k_new.restype = ctypes.c_void_p
    lib.c4k_new.argtypes = []
    lib.c4k_free.restype = None
    lib.c4k_free.argtypes = [ctypes.c_void_p]
    lib.c4k_clear.restype = None
    lib.c4k_clear.argtypes = [ctypes.c_void_p]
    lib.c4k_size.restype = ctypes.c_uint64
    lib.c4k_size.argtypes = [ctypes.c_void_p]
    lib.c4k_solve.restype = ctypes.c_int
    lib.c4k_solve.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int,
                              ctypes.c_uint64, CLOCK, ctypes.c_double,
                              ctypes.POINTER(ctypes.c_uint64)]
    return lib


def library() -> ctypes.CDLL | None:
    """The kernel, built on first use; None (and the reason in :func:`last_error`) if there
    is no compiler or the build or the load fails. Tried once per process."""
    cc = compiler()
    key = cc or ""
    with _lock:
        if key in _loaded:
            return _loaded[key]
        lib = None
        if cc is None:
            _errors[key] = "no C compiler ($CC, cc, gcc or clang) on the PATH"
        else:
            try:
                path = library_path(cc)
                if not path.exists():
                    _build(cc, path)
                lib = _open(path)
            except (OSError, subprocess.SubprocessError) as exc:
                _errors[key] = f"{type(exc).__name__}: {exc}"
        if lib is None:
            log.debug("connect4 solver: the compiled kernel is unavailable (%s); "
                      "the pure-Python search runs", _errors[key])
        _loaded[key] = lib
        return lib


def last_error() -> str | None:
    """Why :func:`library` returned None for the current compiler, if it did."""
    return _errors.get(compiler() or "")


def resolve(kernel: str | None = None) -> ctypes.CDLL | None:
    """The library to solve with for the choice ``kernel`` (see :func:`choice`): None means
    the pure-Python search."""
    want = choice(kernel)
    if want == "python":
        return None
    lib = library()
    if lib is None and want == "c":
        raise KernelUnavailable(f"TABLAS_C4_KERNEL=c but the kernel is unavailable: "
                                f"{last_error()}")
    return lib
