"""Whether this node can serve (``GET /readyz``, contract section 14), as against whether it
lives (``/healthz``).

A server listens first, then does what must come before anyone is served (a cluster's node
reaches Redis, waiting for it if it must; the names registered before migration 11 get their
skeletons), then is *started*. Until then only ``/healthz``, ``/readyz`` and ``/metrics``
answer, everything else ``503``. Ready means started, the store open (opened and migrated
before the server is built; closed once shutdown begins) and, on a cluster's node, Redis
reached at its last look (every ``lease_s / 3``): a node that loses Redis keeps serving what
it can, and says it is not ready until Redis is back.
"""

from __future__ import annotations

from collections.abc import Callable


class Readiness:
    """The checks ``/readyz`` reports; each True when it holds."""

    def __init__(self, store_open: Callable[[], bool],
                 redis_reached: Callable[[], bool] | None = None) -> None:
        """``redis_reached``: a cluster's node's look at Redis (None on a single server)."""
        self.store_open = store_open
        self.redis_reached = redis_reached
        self.started = False  # set by the server once its start's work is done

    def checks(self) -> dict[str, bool]:
        checks = {"started": self.started, "store": self.store_open()}
        if self.redis_reached is not None:
            checks["redis"] = self.redis_reached()
        return checks

    def ready(self) -> bool:
        return all(self.checks().values())
