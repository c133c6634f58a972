"""HTTP on the WebSocket's port: the page, the lobby as JSON, the games and bot levels, the
health check, the explain tree.

Static files are served from the package's own ``server/web/`` (found through
:mod:`importlib.resources`, so an installed wheel serves them from wherever it is installed):
a path is URL-decoded, resolved and must stay inside that folder; anything else is 404.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import mimetypes
from collections.abc import Callable
from http import HTTPStatus
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from engine.errors import TablasError
from engine.games import GAME_IDS, get_game, profile
from engine.search.decision import LEVELS
from server.bots import BotPool
from server.errors import MissingFiles

log = logging.getLogger("tablas.server")

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
_PAGES = {"/explain": "/explain.html"}


def web_folder() -> Path:
    """The page's files as shipped in the package (``server/web/``); :class:`MissingFiles`
    if they are not there (the server cannot serve without them)."""
    folder = resources.files("server") / "web"
    if not isinstance(folder, Path) or not (folder / "index.html").is_file():
        raise MissingFiles(f"the web page's files are missing: no {folder}/index.html "
                           "(reinstall tablas: pip install --force-reinstall tablas)")
    return folder


def response(status: HTTPStatus, body: bytes, content_type: str) -> Response:
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-cache"),
            ("X-Content-Type-Options", "nosniff"),
        ]
    )
    return Response(status.value, status.phrase, headers, body)


def json_response(status: HTTPStatus, obj: Any) -> Response:
    return response(status, json.dumps(obj).encode(), "application/json")


@functools.cache
def games_info() -> dict[str, Any]:
    """``GET /api/games`` (additive): every game with its title and how to read its scores,
    and the bot levels, so that a page keeps no copy of the engine's lists."""
    games = []
    for game_id in GAME_IDS:
        scale = profile(game_id).score
        games.append({"game": game_id, "title": get_game(game_id).title,
                      "score_unit": scale.unit, "score_typical": scale.typical})
    return {"games": games, "levels": list(LEVELS)}


def explain_answer(query: dict[str, str]) -> tuple[HTTPStatus, dict[str, Any]]:
    """``GET /api/explain``'s status and body, computed in a worker process (a tree of
    thousands of nodes is CPU work); bad parameters are a 400 with the engine's message."""
    from engine.explain import explain_query

    try:
        return HTTPStatus.OK, explain_query(query)
    except TablasError as e:
        return HTTPStatus.BAD_REQUEST, {"error": str(e)}


class Http:
    """Answers every HTTP request but the WebSocket's upgrade."""

    def __init__(self, web: Path, lobby_rooms: Callable[[], list[dict[str, Any]]],
                 bots: BotPool) -> None:
        self.web = web.resolve()
        self.lobby_rooms = lobby_rooms
        self.bots = bots

    async def answer(self, request: Request) -> Response:
        url = urlsplit(request.path)
        path = url.path
        if path == "/healthz":
            return json_response(HTTPStatus.OK, {"status": "ok"})
        if path == "/api/rooms":
            return json_response(HTTPStatus.OK, {"rooms": self.lobby_rooms()})
        if path == "/api/games":
            return json_response(HTTPStatus.OK, games_info())
        if path == "/api/explain":
            return await self._explain(dict(parse_qsl(url.query)))
        return await self._static(_PAGES.get(path, path))

    async def _explain(self, query: dict[str, str]) -> Response:
        status, body = await self.bots.compute(explain_answer, query)
        return json_response(status, body)

    async def _static(self, path: str) -> Response:
        rel = unquote(path).lstrip("/") or "index.html"
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
