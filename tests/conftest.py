"""Shared test settings: hypothesis profiles sized for a 2-core CI machine."""

from __future__ import annotations

import os
import tempfile

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile("fuzz", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

# The bear-off database is cached on disk; keep the tests' copy out of the home folder.
os.environ.setdefault("TABLAS_CACHE", tempfile.mkdtemp(prefix="tablas-test-cache-"))

# A real PostgreSQL for the tests that ask for it (skipped where it is not installed).
# Debian's Chromium and a server per test module, for the browser tests that ask for them.
from browser_support import base, browser  # noqa: E402, F401
from pg_support import backend, pg_cluster, pg_url  # noqa: E402, F401

# A real Redis for the cluster's tests (skipped where it is not installed).
from redis_support import redis_server  # noqa: E402, F401
