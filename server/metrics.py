"""What an operator can measure (contract section 14): the server's figures, in Prometheus'
format through its client library (``prometheus_client``).

Each server has a :class:`Metrics` of its own, made by the composition root
(``tablas.server.app``) and handed to the parts that measure: its own registry, never the
library's global one, so that several servers in one process (the tests, the benchmarks)
count apart. Counters and histograms are moved where the thing happens, and that is all the
hot path does (an increment, an observation: a microsecond or two):

===============================  ==============================================================
figure                           moved by
===============================  ==============================================================
``tablas_moves_total{game}``     a move committed in a room this node owns (people's and bots')
``tablas_move_seconds``          the edge: a ``move`` frame's receipt to the end of its
                                 handling, by which the mover's ``update`` has been written
``tablas_bot_decision_seconds``  the bot pool: a decision asked to its answer (queue included)
``tablas_store_commit_seconds``  the group commit: one transaction, handed over to committed
``tablas_errors_total{code}``    every ``error`` message the server sends
``tablas_http_requests_total``   every HTTP answer, by status (``101``: a WebSocket accepted)
===============================  ==============================================================

The gauges are read when ``/metrics`` is asked (:class:`StateGauges`), from the parts that
know them: the open WebSockets, the rooms in memory by status, the bot decisions waiting for a
worker. Nothing keeps them up to date in between, so they cannot drift. In a cluster every
sample carries ``node`` (:class:`_NodeLabel`, added as it is rendered).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from tablas.engine.games import GAME_IDS
from tablas.server.errors import ERROR_CODES
from tablas.server.protocol import RoomStatus

# Buckets, in seconds, where each figure's interesting values fall: an acknowledged move
# takes a few milliseconds (a group commit and its fsync); a bot thinks up to its level's
# budget (5 s at ``max``) and the pool gives up at 3 budgets + 10 s; a commit is a fsync.
MOVE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
BOT_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 25.0)
COMMIT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
ROOM_STATUSES: tuple[RoomStatus, ...] = ("waiting", "playing", "finished", "adjourned",
                                         "closed")


class Metrics:
    """One server's counters and histograms, in a registry of its own; :meth:`render`
    answers ``/metrics``. ``node``: a cluster's node name, put on every sample (None on a
    single server)."""

    def __init__(self, node: str | None = None) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        moves = Counter("tablas_moves", "Moves committed in the rooms this node owns.",
                        ["game"], registry=r)
        self.move_seconds = Histogram(
            "tablas_move_seconds",
            "A move's receipt to its update sent to the mover (written to the socket).",
            buckets=MOVE_BUCKETS, registry=r)
        self._bot_seconds = Histogram(
            "tablas_bot_decision_seconds",
            "A bot's decision, asked of the pool to answered (its wait for a worker included).",
            ["game", "level"], buckets=BOT_BUCKETS, registry=r)
        self.commit_seconds = Histogram(
            "tablas_store_commit_seconds",
            "One group commit: a transaction of the writes handed over meanwhile, to committed.",
            buckets=COMMIT_BUCKETS, registry=r)
        errors = Counter("tablas_errors", "Error messages sent, by code.", ["code"],
                         registry=r)
        self._http = Counter("tablas_http_requests", "HTTP answers, by status code "
                             "(101: a WebSocket accepted).", ["code"], registry=r)
        # The children the hot path moves, made once: each game's and each code's series
        # exist from the start (at 0), as Prometheus' rate() wants.
        self._moves = {game: moves.labels(game=game) for game in GAME_IDS}
        self._errors = {code: errors.labels(code=code) for code in ERROR_CODES}
        self._bots: dict[tuple[str, str], Any] = {}
        self._codes: dict[int, Any] = {}
        self._exposed: Collector = r
        if node is not None:
            self._exposed = CollectorRegistry()
            self._exposed.register(_NodeLabel(r, node))

    # --- the hot path: one increment or observation each ------------------------------------

    def move(self, game: str) -> None:
        """A move was committed in a room of ``game``."""
        self._moves[game].inc()

    def bot_decision(self, game: str, level: str, seconds: float) -> None:
        child = self._bots.get((game, level))
        if child is None:
            child = self._bots[(game, level)] = self._bot_seconds.labels(game=game,
                                                                         level=level)
        child.observe(seconds)

    def error(self, code: str) -> None:
        """An ``error`` message with ``code`` was sent."""
        self._errors[code].inc()

    def http(self, status: int) -> None:
        """An HTTP answer with ``status`` was sent."""
        child = self._codes.get(status)
        if child is None:
            child = self._codes[status] = self._http.labels(code=str(status))
        child.inc()

    def commit(self, writes: int, seconds: float) -> None:
        """A group commit of ``writes`` writes took ``seconds``."""
        self.commit_seconds.observe(seconds)

    # --- the scrape ---------------------------------------------------------------------------

    def watch(self, gauges: Collector) -> None:
        """Adds ``gauges`` (read at every scrape) to what is rendered."""
        self.registry.register(gauges)

    def render(self, accept: str | None) -> tuple[bytes, str]:
        """The body of ``/metrics`` and its content type, in the format the ``Accept``
        header asks for (Prometheus' text format without one)."""
        encode, content_type = choose_encoder(accept or "")
        return encode(self._exposed), content_type


class StateGauges(Collector):
    """The gauges, each read from its part at scrape time: ``tablas_connections`` (open
    WebSockets), ``tablas_rooms{status}`` (the rooms this node holds in memory, every status
    listed), ``tablas_bot_queue`` (bot decisions waiting for a worker)."""

    def __init__(self, connections: Callable[[], int],
                 rooms: Callable[[], Iterable[RoomStatus]],
                 bot_queue: Callable[[], int]) -> None:
        self.connections = connections
        self.rooms = rooms
        self.bot_queue = bot_queue

    def collect(self) -> Iterable[Metric]:
        yield GaugeMetricFamily("tablas_connections", "Open WebSockets on this node.",
                                value=self.connections())
        counts = dict.fromkeys(ROOM_STATUSES, 0)
        for status in self.rooms():
            counts[status] += 1
        rooms = GaugeMetricFamily("tablas_rooms", "Rooms this node holds in memory, by status.",
                                  labels=["status"])
        for status, n in counts.items():
            rooms.add_metric([status], n)
        yield rooms
        yield GaugeMetricFamily("tablas_bot_queue", "Bot decisions waiting for a worker.",
                                value=self.bot_queue())


class _NodeLabel(Collector):
    """Another registry's metrics with ``node="NAME"`` on every sample (a cluster's node)."""

    def __init__(self, inner: CollectorRegistry, node: str) -> None:
        self.inner = inner
        self.node = node

    def collect(self) -> Iterable[Metric]:
        for metric in self.inner.collect():
            labelled = Metric(metric.name, metric.documentation, metric.type, metric.unit)
            labelled.samples = [s._replace(labels={**s.labels, "node": self.node})
                                for s in metric.samples]
            yield labelled

