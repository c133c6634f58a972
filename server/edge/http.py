"""HTTP on the WebSocket's port: the page, the lobby as JSON, the games and bot levels, the
health check, the explain tree, and rooms' records (``/api/rooms/{id}``, its ``/export`` and
``/review``: :mod:`tablas.server.room_records` answers, this module turns the answers into HTTP). A
finished game's review page, ``/review/{id}``, is the file ``review.html`` for any room id
that could be one (the page asks ``/api/rooms/{id}/review`` itself and says what it finds).

Static files are served from the package's own ``client/`` (found through
:mod:`importlib.resources`, so an installed wheel serves them from wherever it is installed):
a path is URL-decoded, resolved and must stay inside that folder; anything else is 404.

Operators (contract section 14): ``/readyz`` says whether the node can serve
(:mod:`tablas.server.readiness`; ``503`` until it can, and until then every path but
``/healthz``, ``/readyz`` and ``/metrics`` answers ``503`` too), ``/metrics`` renders the
server's figures (:mod:`tablas.server.metrics`) to the addresses of ``--metrics-allow``
(:class:`~tablas.server.edge.networks.AddressAllow`; ``403`` to the others).

A request HTTP itself tells a server to refuse gets a 4xx and nothing else happens
(:func:`malformed`; RFC 9112 §3.2): no ``Host``, two ``Host`` or ``Origin`` headers, a target
that is neither a path nor an absolute URL; a method other than GET and HEAD is 405, a path
whose percent-encoding is broken or not UTF-8 is 400. HEAD answers as GET would, without the
body.

Limits (contract section 10; docs/security.md, "Limits" and "Pages"): every ``/api/*`` request is
charged to its client address's token bucket (:class:`~tablas.server.edge.limits.AddressBudget`,
``--max-api-per-address``); past it the answer is 429 with ``Retry-After`` and a JSON
``{"error"}``, held :data:`HOLD_S` first. ``/api/explain`` is checked on the event loop
(cheap: names, numbers of at most 12 digits, ranges), then built *and serialised* in a
process of its own
(:data:`EXPLAIN_WORKERS`, see :class:`Http`), at most :data:`EXPLAIN_PER_ADDRESS` at a time
per address (429 past it) and :data:`EXPLAIN_TOTAL` for everyone (503 past it).

Every answer says ``X-Content-Type-Options: nosniff`` and carries :data:`CSP`, which pages
are written to work under: no inline script or style, nothing from another origin, framed by
nobody.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import mimetypes
import re
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures.process import BrokenProcessPool
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from tablas.engine.errors import TablasError
from tablas.engine.games import GAME_IDS, get_game
from tablas.engine.search.decision import LEVELS
from tablas.engine.search.profiles import profile
from tablas.server.bot_pool import BotPool
from tablas.server.edge.limits import AddressBudget, AddressSlots
from tablas.server.edge.networks import LOOPBACK, AddressAllow, parse_networks
from tablas.server.errors import RecordError, RecordRefusal
from tablas.server.metrics import Metrics
from tablas.server.readiness import Readiness
from tablas.server.room_records import Records, check_room_id
from tablas.server.shipped import package_folder
from tablas.server.standings import Standings
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

log = logging.getLogger("tablas.server")

# The page's files are all this server's own: scripts and styles come from files (no inline
# <script>, style= attribute or <style> element, no eval), the page talks to this server only
# (fetch and its own ws://, which 'self' covers), and no other site may frame it
# (clickjacking). Sent on every answer: it costs nothing on JSON, and an SVG or a file opened
# on its own is held to it too.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")
# /api/* requests a second per client address, and the bucket's size in seconds of that
# rate: a person's pages ask a few a second at most (the explain page one per change, the
# review page one every 2 s), a script asking faster is refused.
API_RATE = 20.0
API_BURST_S = 3.0
# A request past the /api/ budget is answered after HOLD_S (its 429 all the same): an
# answer at once would let a script that asks again at once cost the event loop a
# connection's accept, parse and close each time (thousands a second from one loop: 90% of a
# core, measured), while a held one costs a sleeping coroutine. At most HELD_PER_ADDRESS held
# per address (its WebSockets' cap) and HELD_TOTAL for everyone; past them, at once.
HOLD_S = 1.0
HELD_PER_ADDRESS = 64
HELD_TOTAL = 1024
# Explain trees: built in EXPLAIN_WORKERS processes of their own, at most EXPLAIN_PER_ADDRESS
# at a time per address and EXPLAIN_TOTAL for everyone (running or queued for a worker: the
# largest tree takes about 20 ms to build and serialise, so a full queue waits under 0.1 s).
EXPLAIN_WORKERS = 1
EXPLAIN_PER_ADDRESS = 2
EXPLAIN_TOTAL = 4
# Below the bot workers' priority (server.bot_pool.WORKER_NICE is 5): on a busy machine a bot's
# move and the event loop come before a tree.
EXPLAIN_NICE = 10

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
    ".wasm": "application/wasm",
}
# Pages whose address has no file extension.
_PAGES = {"/explain": "/explain.html", "/leaderboard": "/leaderboard.html"}
# A player's page: the same file whatever the id (the page asks /api/players/{id}).
_PLAYER_PAGE = re.compile(r"/players/[^/]+")
# A tournament's page: one file whatever the id (the page asks /api/tournaments/{id}).
_TOURNAMENT_PAGE = re.compile(r"/tournaments/[^/]+")
# A JSON body looked up by the rest of the path (GET /api/tournaments/{id}).
_LOOKUP = re.compile(r"(/api/[a-z]+/)([^/]+)")
# A document about one thing: /api/tournaments/{id}/crosstable.
_SHEET = re.compile(r"(/api/[a-z]+/)([^/]+)/([a-z]+)")
_PLAYER_ROUTE = re.compile(r"/api/players/([^/]+)(/history)?")
# The review page of one room: the same file whatever the id (the page reads the id from its
# address).
_REVIEW_ROUTE = re.compile(r"/review/([^/]*)")
_METHODS = ("GET", "HEAD")
# What answers before the server has started (everything else: 503).
_WHILE_STARTING = frozenset(("/healthz", "/readyz", "/metrics"))
STARTING = "the server is starting: try again in a moment"
# A ``%`` not followed by two hex digits: ``unquote`` would leave it as it is.
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
# A room's record and what hangs off it; the id is checked by :mod:`tablas.server.room_records`.
_ROOM_ROUTE = re.compile(r"/api/rooms/([^/]+)(?:/(export|review))?")
REVIEW_RETRY = 2  # seconds after which to ask again for a review being computed
_RECORD_STATUS: dict[RecordRefusal, HTTPStatus] = {
    "bad_request": HTTPStatus.BAD_REQUEST,
    "unknown_room": HTTPStatus.NOT_FOUND,
    "not_finished": HTTPStatus.CONFLICT,
    "busy": HTTPStatus.SERVICE_UNAVAILABLE,
    "internal": HTTPStatus.INTERNAL_SERVER_ERROR,
}


def web_folder() -> Path:
    """The page's files as shipped in the package (``client/``); :class:`MissingFiles`
    if they are not there (the server cannot serve without them)."""
    return package_folder("client", "index.html")


# What every answer of the server carries, errors included (contract sections 10 and 15).
SAFE_HEADERS = (("X-Content-Type-Options", "nosniff"), ("Content-Security-Policy", CSP))


def response(status: HTTPStatus, body: bytes, content_type: str) -> Response:
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-cache"),
            *SAFE_HEADERS,
        ]
    )
    return Response(status.value, status.phrase, headers, body)


def starting() -> Response:
    """The ``503`` a request gets before the server has started (``Retry-After: 1``)."""
    refused = response(HTTPStatus.SERVICE_UNAVAILABLE, STARTING.encode() + b"\n", "text/plain")
    refused.headers["Retry-After"] = "1"
    return refused


def json_response(status: HTTPStatus, obj: Any) -> Response:
    return response(status, json.dumps(obj).encode(), "application/json")


def refusal(status: HTTPStatus, why: str, retry_after: int | None = None) -> Response:
    """An ``/api/*`` refusal: ``{"error": why}``, with ``Retry-After`` (seconds) if given."""
    refused = json_response(status, {"error": why})
    if retry_after is not None:
        refused.headers["Retry-After"] = str(retry_after)
    return refused


def bad_request(why: str) -> Response:
    """A 400 whose body says what was wrong, in a line."""
    return response(HTTPStatus.BAD_REQUEST, why.encode() + b"\n", "text/plain")


def split_target(target: str) -> tuple[str, str] | None:
    """The path and query of a request target in origin form (``/path?query``) or absolute
    form (``http://host/path?query``, which a server must accept too); None for any other
    form (``*``, a bare name)."""
    if target.startswith("/"):
        path, _, query = target.partition("?")
        return path, query
    try:
        url = urlsplit(target)
    except ValueError:  # a broken authority, such as "http://[::1"
        return None
    if url.scheme.lower() in ("http", "https", "ws", "wss") and url.netloc:
        return url.path or "/", url.query
    return None


def malformed(request: Request) -> Response | None:
    """The 400 a request gets when HTTP says to refuse it, whatever its path (``/ws``
    included): an HTTP/1.1 request without ``Host``, two ``Host`` headers, two ``Origin``
    headers (a browser sends one at most), or a target :func:`split_target` does not read.
    None when the request is well formed."""
    hosts = request.headers.get_all("Host")
    if len(hosts) > 1:
        return bad_request("more than one Host header")
    if not hosts and request.protocol == "HTTP/1.1":
        return bad_request("no Host header")
    if len(request.headers.get_all("Origin")) > 1:
        return bad_request("more than one Origin header")
    if split_target(request.path) is None:
        return bad_request("the request target must be a path starting with /")
    return None


@functools.cache
def games_info() -> dict[str, Any]:
    """``GET /api/games`` (additive): every game with its title, how to read its scores and
    the formats its records export in, and the bot levels, so that a page keeps no copy of
    the engine's lists."""
    games = []
    for game_id in GAME_IDS:
        scale = profile(game_id).score
        game = get_game(game_id)
        formats = ["json", *(f.name for f in game.record_formats())]
        games.append({"game": game_id, "title": game.title,
                      "score_unit": scale.unit, "score_typical": scale.typical,
                      "formats": formats})
    return {"games": games, "levels": list(LEVELS)}


def explain_answer(arguments: dict[str, Any]) -> tuple[HTTPStatus, bytes]:
    """``GET /api/explain``'s status and body, built and serialised in a worker process (a
    tree of thousands of nodes is CPU work, and so is writing its megabyte of JSON; bytes
    cross the process boundary at the cost of a copy, a tree of dicts would be unpickled on
    the event loop); a tree too large is a 400 with the engine's message."""
    from tablas.engine.explain import explain, to_json

    try:
        return HTTPStatus.OK, json.dumps(to_json(explain(**arguments))).encode()
    except TablasError as e:
        return HTTPStatus.BAD_REQUEST, json.dumps({"error": str(e)}).encode()


# A JSON body read when asked (GET /api/seeks, /api/stats).
Feed = Callable[[], Awaitable[bytes]]
# A JSON body found by an id (GET /api/tournaments/{id}); None: no such thing (404).
Lookup = Callable[[str], Awaitable[bytes | None]]
# A document about one thing, in the format its query asks (GET
# /api/tournaments/{id}/crosstable?format=csv): its body and content type; None: no such
# thing (404); ValueError: a format it does not have (400).
Sheet = Callable[[str, str], Awaitable[tuple[bytes, str] | None]]


class Http:
    """Answers every HTTP request but the WebSocket's upgrade."""

    def __init__(self, web: Path, lobby_body: Callable[[], bytes], explainer: BotPool,
                 records: Records, standings: Standings, node: str = "",
                 max_api_per_address: float | None = API_RATE,
                 feeds: Mapping[str, Feed] | None = None,
                 lookups: Mapping[str, Lookup] | None = None,
                 sheets: Mapping[str, Sheet] | None = None, *, metrics: Metrics,
                 readiness: Readiness, metrics_allow: AddressAllow | None = None) -> None:
        """``lobby_body``: the body of ``GET /api/rooms``, as JSON text; ``feeds``: more
        JSON bodies by their path (``/api/seeks``, ``/api/stats``); ``lookups``: JSON bodies
        by a path's prefix and an id after it (``/api/tournaments/``); ``explainer``: the
        processes explain trees are built in; ``records``: the answers about one room;
        ``standings``: the leaderboards and players; ``node``: this node's name
        (``/healthz`` says it); ``max_api_per_address``: ``/api/*`` requests a second per
        client address (None or 0: no limit); ``metrics``: what ``/metrics`` renders, to the
        addresses ``metrics_allow`` allows (default: loopback); ``readiness``: what
        ``/readyz`` says.

        Trees are built in a pool of their own rather than the bots'
        (:mod:`tablas.server.bot_pool`): a ``ProcessPoolExecutor`` takes jobs first come first
        served, so trees queued there would make every bot's move wait behind them (measured: the
        easy bot's reply went from 12 ms to 1 s under a flood of trees); a thread would not do
        either, building a tree is pure Python and would hold the GIL the event loop needs. Its one
        process runs below the bots' priority, and :data:`EXPLAIN_TOTAL` bounds its queue."""
        self.web = web.resolve()
        self.node = node
        self.metrics = metrics
        self.metrics_allow = metrics_allow or AddressAllow(parse_networks(LOOPBACK))
        self.readiness = readiness
        self.lobby_body = lobby_body
        self.feeds = dict(feeds or {})
        self.lookups = dict(lookups or {})
        self.sheets = dict(sheets or {})
        self.explainer = explainer
        self.records = records
        self.standings = standings
        self.api_budget = (AddressBudget(max_api_per_address,
                                         burst=max_api_per_address * API_BURST_S)
                           if max_api_per_address else None)
        self.explaining = AddressSlots(EXPLAIN_PER_ADDRESS, EXPLAIN_TOTAL)
        self.held = AddressSlots(HELD_PER_ADDRESS, HELD_TOTAL)

    async def answer(self, request: Request, address: str = "") -> Response:
        """The response to a request :func:`malformed` let through (400 otherwise) from the
        client ``address``."""
        target = split_target(request.path)
        if target is None:
            return bad_request("the request target must be a path starting with /")
        budget = self.api_budget
        if request.method not in _METHODS:
            refused = response(HTTPStatus.METHOD_NOT_ALLOWED, b"only GET and HEAD\n",
                               "text/plain")
            refused.headers["Allow"] = ", ".join(_METHODS)
            return refused
        if target[0] == "/metrics":
            answer = self._metrics(address, request.headers.get("Accept"))
        elif not self.readiness.started and target[0] not in _WHILE_STARTING:
            answer = starting()
        elif target[0].startswith("/api/") and budget is not None and not budget.take(address):
            if self.held.enter(address) is None:
                try:
                    await asyncio.sleep(HOLD_S)
                finally:
                    self.held.leave(address)
            answer = refusal(HTTPStatus.TOO_MANY_REQUESTS,
                             f"more than {budget.rate:g} requests a second to /api/ from your "
                             "address", budget.retry_after(address))
        else:
            answer = await self._get(*target, address)
        if request.method == "HEAD":
            return Response(answer.status_code, answer.reason_phrase, answer.headers, b"")
        return answer

    async def _get(self, path: str, query: str, address: str) -> Response:
        if path == "/healthz":
            return json_response(HTTPStatus.OK, {"status": "ok", "node": self.node})
        if path == "/readyz":
            return self._readyz()
        if path == "/api/rooms":
            return response(HTTPStatus.OK, self.lobby_body(), "application/json")
        if path == "/api/games":
            return json_response(HTTPStatus.OK, games_info())
        if (feed := self.feeds.get(path)) is not None:
            return response(HTTPStatus.OK, await feed(), "application/json")
        if (m := _LOOKUP.fullmatch(path)) is not None and m.group(1) in self.lookups:
            found = await self.lookups[m.group(1)](unquote(m.group(2)))
            if found is None:
                return refusal(HTTPStatus.NOT_FOUND, f"nothing at {path}")
            return response(HTTPStatus.OK, found, "application/json")
        if (m := _SHEET.fullmatch(path)) is not None and \
                (sheet := self.sheets.get(m.group(1) + m.group(3))) is not None:
            return await self._sheet(sheet, unquote(m.group(2)), query, path)
        if path == "/api/explain":
            return await self._explain(dict(parse_qsl(query)), address)
        if path.startswith("/api/rooms/"):
            return await self._record(path, query)
        if path.startswith("/review/"):
            return await self._review_page(path)
        if path == "/api/leaderboard" or path.startswith("/api/players/"):
            return await self._standings(path, query)
        if _PLAYER_PAGE.fullmatch(path):
            return await self._static("/player.html")
        if _TOURNAMENT_PAGE.fullmatch(path):
            return await self._static("/tournament.html")
        return await self._static(_PAGES.get(path, path))

    async def _sheet(self, sheet: Sheet, key: str, query: str, path: str) -> Response:
        asked = [v for k, v in parse_qsl(query, keep_blank_values=True) if k == "format"]
        if len(asked) > 1:
            return bad_request("give format once")
        try:
            found = await sheet(key, asked[0] if asked else "json")
        except ValueError as e:
            return bad_request(str(e))
        if found is None:
            return refusal(HTTPStatus.NOT_FOUND, f"nothing at {path}")
        return response(HTTPStatus.OK, *found)

    def _readyz(self) -> Response:
        """``200`` once the node can serve, ``503`` otherwise; the body says which check
        fails (:class:`~tablas.server.readiness.Readiness`)."""
        checks = self.readiness.checks()
        ready = all(checks.values())
        return json_response(HTTPStatus.OK if ready else HTTPStatus.SERVICE_UNAVAILABLE,
                             {"status": "ready" if ready else "not ready", "node": self.node,
                              "checks": checks})

    def _metrics(self, address: str, accept: str | None) -> Response:
        """The figures in Prometheus' format, to an address ``--metrics-allow`` allows."""
        if not self.metrics_allow.allows(address):
            return response(HTTPStatus.FORBIDDEN,
                            b"/metrics is not served to your address (--metrics-allow)\n",
                            "text/plain")
        body, content_type = self.metrics.render(accept)
        return response(HTTPStatus.OK, body, content_type)

    async def _standings(self, path: str, query: str) -> Response:
        """``/api/leaderboard?game=G`` and ``/api/players/{id}``; a refusal is its status
        with ``{"error": why, …}``."""
        try:
            games = [v for k, v in parse_qsl(query, keep_blank_values=True) if k == "game"]
            if len(games) > 1:
                raise RecordError("bad_request", "give game once")
            game = games[0] if games else None
            if path == "/api/leaderboard":
                body = await self.standings.leaderboard(game)
            else:
                route = _PLAYER_ROUTE.fullmatch(path)
                if route is None:
                    raise RecordError("unknown_room", "no such endpoint: /api/players/{id}"
                                      " or /api/players/{id}/history")
                player_id = unquote(route.group(1))
                body = await (self.standings.history(player_id, game) if route.group(2)
                              else self.standings.player(player_id))
        except RecordError as e:
            return json_response(_RECORD_STATUS[e.code], {"error": e.message, **e.extra})
        return json_response(HTTPStatus.OK, body)

    async def _review_page(self, path: str) -> Response:
        """``review.html`` for ``/review/{id}``; 400 for an id no room can have (as the
        records refuse it), 404 for any other path under ``/review/``."""
        route = _REVIEW_ROUTE.fullmatch(path)
        if route is None:
            return response(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain")
        try:
            check_room_id(route.group(1))
        except RecordError as e:
            return bad_request(e.message)
        return await self._static("/review.html")

    async def _record(self, path: str, query: str) -> Response:
        """A room's record, its export or its review; a refusal is its status with
        ``{"error": why, …}``."""
        route = _ROOM_ROUTE.fullmatch(path)
        if route is None:
            return json_response(HTTPStatus.NOT_FOUND, {
                "error": "no such endpoint: /api/rooms/{id}, /api/rooms/{id}/export or "
                         "/api/rooms/{id}/review"})
        room_id, what = route.groups()
        try:
            if what is None:
                return json_response(HTTPStatus.OK, await self.records.room(room_id))
            if what == "review":
                review = await self.records.review(room_id)
                if review is None:  # still being computed: ask again
                    later = json_response(HTTPStatus.ACCEPTED, {
                        "room_id": room_id, "status": "computing", "retry_after": REVIEW_RETRY})
                    later.headers["Retry-After"] = str(REVIEW_RETRY)
                    return later
                return response(HTTPStatus.OK, review.encode(), "application/json")
            formats = [v for k, v in parse_qsl(query, keep_blank_values=True) if k == "format"]
            if len(formats) > 1:
                raise RecordError("bad_request", "give format once")
            export = await self.records.export(room_id, formats[0] if formats else "json")
        except RecordError as e:
            refused = json_response(_RECORD_STATUS[e.code], {"error": e.message, **e.extra})
            if e.code == "busy":
                refused.headers["Retry-After"] = "60"
            return refused
        answer = response(HTTPStatus.OK, export.body.encode(), export.media_type)
        answer.headers["Content-Disposition"] = f'attachment; filename="{export.filename}"'
        return answer

    async def _explain(self, query: dict[str, str], address: str) -> Response:
        """The tree, or a refusal: bad parameters at once (400), a third tree of one address
        at a time (429) or more trees at a time than the server builds (503)."""
        from tablas.engine.explain import query_arguments

        try:
            arguments = query_arguments(query)
        except TablasError as e:
            return refusal(HTTPStatus.BAD_REQUEST, str(e))
        full = self.explaining.enter(address)
        if full == "address":
            return refusal(HTTPStatus.TOO_MANY_REQUESTS,
                           f"more than {EXPLAIN_PER_ADDRESS} explain trees at a time from "
                           "your address", 1)
        if full is not None:
            return refusal(HTTPStatus.SERVICE_UNAVAILABLE,
                           "the server is building as many explain trees as it can", 1)
        try:
            status, body = await self.explainer.compute(explain_answer, arguments)
        except BrokenProcessPool:  # the pool is rebuilt for the next one
            return refusal(HTTPStatus.SERVICE_UNAVAILABLE, "the tree's worker died", 1)
        finally:
            self.explaining.leave(address)
        return response(status, body, "application/json")

    async def _static(self, path: str) -> Response:
        if _BAD_ESCAPE.search(path):
            return bad_request("a % in the path must start an escape such as %2F")
        try:
            rel = unquote(path, errors="strict").lstrip("/") or "index.html"
        except UnicodeDecodeError:
            return bad_request("the path's escapes must spell UTF-8")
        not_found = response(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain")
        try:
            target = (self.web / rel).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_relative_to(self.web) or not target.is_file():
                return not_found
        except (ValueError, OSError):  # a NUL byte, a name too long: no such file either
            return not_found
        ctype = _TYPES.get(target.suffix.lower()) or (
            mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        )
        body = await asyncio.to_thread(target.read_bytes)
        return response(HTTPStatus.OK, body, ctype)
