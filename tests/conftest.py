"""Shared test settings: hypothesis profiles sized for a 2-core CI machine."""

from __future__ import annotations

import os
import tempfile
from typing import Any

import pytest
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
# Every tablas bot adapter a test started ends with the test.
from bot_support import end_adapters  # noqa: E402
from browser_support import base, browser  # noqa: E402, F401
from pg_support import backend, pg_cluster, pg_url  # noqa: E402, F401

# A real Redis for the cluster's tests (skipped where it is not installed).
from redis_support import redis_server  # noqa: E402, F401


# Under CI (CI=true) a skip is a failure: a test skipped for a missing tool (Chromium, gnubg,
# PostgreSQL, Redis, a C compiler) would otherwise pass silently, and .ci/run installs every
# one of them. On a developer's machine a missing tool still skips, saying which.
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") == "true" and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped under CI, which installs every tool: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """The same for a module skipped as it is collected (``pytest.importorskip`` at its
    top)."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") == "true" and report.skipped:
        report.outcome = "failed"
        report.longrepr = f"skipped under CI, which installs every tool: {report.longrepr}"


@pytest.fixture(autouse=True)
def _adapters_end_with_their_test() -> Any:
    yield
    end_adapters()
