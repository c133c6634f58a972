"""A Prometheus stand-in during a measurement: ``GET /metrics`` N times a second from a thread
of the parent process, as a scraper would (a new connection each time: the server closes it
after its answer). What the server pays for being watched; the baseline, older than
``/metrics``, answers 404 (a path looked up and refused), which the report says."""

from __future__ import annotations

import http.client
import threading
import time
from collections import Counter
from typing import Any

from tools.load.stats import spread


class Scraper:
    """Scrapes ``/metrics`` on ``port`` ``per_s`` times a second from :meth:`start` until
    :meth:`stop`; :meth:`report` says how many, their statuses and their times."""

    def __init__(self, port: int, per_s: float) -> None:
        self.port = port
        self.every = 1.0 / per_s
        self.statuses: Counter[int] = Counter()
        self.times_ms: list[float] = []
        self.bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="scraper", daemon=True)
        self._began = 0.0
        self._ended = 0.0

    def start(self) -> None:
        self._began = time.perf_counter()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self._ended = time.perf_counter()

    def _run(self) -> None:
        due = time.perf_counter()
        while not self._stop.is_set():
            started = time.perf_counter()
            try:
                con = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                con.request("GET", "/metrics")
                answer = con.getresponse()
                self.bytes += len(answer.read())
                self.statuses[answer.status] += 1
                con.close()
            except OSError:
                self.statuses[0] += 1
            self.times_ms.append((time.perf_counter() - started) * 1000)
            due += self.every  # a steady rate: a slow answer is not waited for twice
            self._stop.wait(max(0.0, due - time.perf_counter()))

    def report(self) -> dict[str, Any]:
        seconds = max(1e-9, (self._ended or time.perf_counter()) - self._began)
        n = sum(self.statuses.values())
        return {"per_s": round(n / seconds, 1), "statuses": dict(self.statuses),
                "bytes_each": round(self.bytes / n) if n else None,
                "scrape": spread(self.times_ms)}
