"""The players and their ratings as the HTTP API shows them: ``GET /api/leaderboard?game=G``
and ``GET /api/players/{player_id}``. Read from the store; nothing secret (no token, no
password hash) is ever read for them.
"""

from __future__ import annotations

from typing import Any

from tablas.engine.games import GAME_IDS
from tablas.engine.search.decision import LEVELS
from tablas.server.errors import RecordError
from tablas.server.ratings import Rating, is_bot_rating_id
from tablas.server.store import Storage
from tablas.server.views import bot_name

LEADERBOARD_SIZE = 100  # the leaderboard lists the best 100 of a game
PLAYER_GAMES = 50  # a player's page lists their latest 50 rooms
HISTORY_POINTS = 500  # a rating history gives the latest 500 rated games' ratings


def _bot_parts(player_id: str) -> tuple[str, str] | None:
    """(game, level) of a bot's rated id (``bot:GAME:LEVEL``)."""
    parts = player_id.split(":")
    if len(parts) != 3 or parts[1] not in GAME_IDS or parts[2] not in LEVELS:
        return None
    return parts[1], parts[2]


def _shown(r: Rating) -> dict[str, Any]:
    return {"rating": r.rating, "rd": r.rd, "games": r.games}


class Standings:
    def __init__(self, store: Storage) -> None:
        self.store = store

    async def leaderboard(self, game: str | None) -> dict[str, Any]:
        """``{"game", "players": [{player_id, name, rating, rd, games, bot}]}``, best first
        (by rating, then the smaller RD, the more games, the player id), at most
        :data:`LEADERBOARD_SIZE`; an unknown game is ``bad_request``. Without a game, every
        game's: ``{"games": [{"game", "players"}, …]}``, in the games' order."""
        if game is None:
            return {"games": [await self.leaderboard(g) for g in GAME_IDS]}
        _check_game(game, "/api/leaderboard?game=G")
        assert game is not None
        rows = await self.store.leaderboard(game, LEADERBOARD_SIZE)
        # A row is a bot's: a house level's, or a bot account's (contract section 12).
        accounts = await self.store.bot_accounts([pid for pid, _, _ in rows
                                                  if not is_bot_rating_id(pid)])
        players = []
        for pid, name, rating in rows:
            house = is_bot_rating_id(pid)
            parts = _bot_parts(pid) if house else None
            shown_name = bot_name(parts[1]) if parts is not None else name
            players.append({"player_id": pid, "name": shown_name, **_shown(rating),
                            "bot": house or pid in accounts})
        return {"game": game, "players": players}

    async def player(self, player_id: str) -> dict[str, Any]:
        """``{"player_id", "name", "registered", "bot", "ratings": {G: {rating, rd, games}},
        "games": [ROOM_SUMMARY + result, …]}`` (the latest :data:`PLAYER_GAMES` rooms
        they sat in, newest first); ``unknown_room`` (404) for no such player."""
        if len(player_id) > 100:
            raise RecordError("unknown_room", "no such player")
        ratings = await self.store.ratings_by_game(player_id)
        if is_bot_rating_id(player_id):
            parts = _bot_parts(player_id)
            if parts is None:
                raise RecordError("unknown_room", "no such player")
            return {"player_id": player_id, "name": bot_name(parts[1]), "registered": False,
                    "bot": True, "ratings": {g: _shown(r) for g, r in ratings.items()},
                    "games": []}
        info = await self.store.player_info(player_id)
        if info is None:
            raise RecordError("unknown_room", "no such player")
        name, registered = info
        games = await self.store.games_of(player_id, PLAYER_GAMES)
        # The bot accounts among the player and everyone they sat with, in one read.
        bots = await self.store.bot_accounts(
            [player_id, *(s["player_id"] for g in games for s in g["seats"]
                          if s["player_id"] is not None)])
        return {"player_id": player_id, "name": name, "registered": registered,
                "bot": player_id in bots,
                "ratings": {g: _shown(r) for g, r in ratings.items()},
                "games": [_summary(g, bots) for g in games]}


    async def history(self, player_id: str, game: str | None) -> dict[str, Any]:
        """``{"game", "points": [{at_ms, rating, rd}], "wins", "draws", "losses"}``: the
        player's rating after each of their latest :data:`HISTORY_POINTS` rated games of
        ``game``, oldest first, and how all their finished games of it ended (contract
        section 8); ``unknown_room`` (404) for no such player, ``bad_request`` for a game."""
        _check_game(game, "/api/players/{id}/history?game=G")
        assert game is not None
        if len(player_id) > 100 or (
                _bot_parts(player_id) is None if is_bot_rating_id(player_id)
                else await self.store.player_info(player_id) is None):
            raise RecordError("unknown_room", "no such player")
        points = await self.store.rating_history(player_id, game, HISTORY_POINTS)
        wins, draws, losses = await self.store.tally(player_id, game)
        return {"game": game,
                "points": [{"at_ms": round(t * 1000), "rating": r, "rd": rd}
                           for t, r, rd in points],
                "wins": wins, "draws": draws, "losses": losses}


def _check_game(game: str | None, usage: str) -> None:
    """``bad_request`` for a missing or unknown game."""
    if not game:
        raise RecordError("bad_request", f"give a game: {usage}")
    if game not in GAME_IDS:
        raise RecordError("bad_request", f"unknown game {game[:40]!r}",
                          {"games": list(GAME_IDS)})


def _summary(g: dict[str, Any], bots: set[str]) -> dict[str, Any]:
    """A stored room as a ROOM_SUMMARY (additive: its ``result``, ``created_at``, ``rated``);
    ``bots``: the bot accounts among its players."""
    ropts = g["room_options"]
    return {
        "room_id": g["room_id"], "game": g["game"], "status": g["status"],
        "seats": [{"seat": s["seat"], "kind": s["kind"],
                   "name": s["name"] if s["kind"] == "human" else bot_name(s["level"]),
                   "level": s["level"], "player_id": s["player_id"],
                   "bot": s["player_id"] in bots} for s in g["seats"]],
        "spectators": 0,
        "room_options": ropts,
        "rated": bool(ropts.get("rated")),
        "result": g["result"],
        "created_at": g["created_at"],
    }
