"""The registry: every game's rules by its contract id.

A game is one rules module here (a line in ``_MODULES``) and one profile in
:mod:`tablas.engine.search.profiles` (its bots, analysis and score scale), which
:func:`tablas.engine.search.profiles.profile` hands out. The registry knows only the rules: it
imports nothing of search, so the layers stay one above the other (rules, then search).
Modules are imported on first use, so a tool that needs one game does not load them all,
and one that needs only the rules never loads the search.
"""

from __future__ import annotations

import importlib
from typing import Any

from tablas.engine.core import Game
from tablas.engine.errors import UnknownGameError

_MODULES: dict[str, tuple[str, str]] = {
    "tictactoe": ("tablas.engine.games.tictactoe", "TicTacToe"),
    "grundy": ("tablas.engine.games.grundy", "Grundy"),
    "connect4": ("tablas.engine.games.connect4", "Connect4"),
    "boom": ("tablas.engine.games.boom", "Boom"),
    "backgammon": ("tablas.engine.games.backgammon", "Backgammon"),
}
GAME_IDS: tuple[str, ...] = tuple(_MODULES)
_loaded: dict[str, Game[Any, Any]] = {}


def get_game(game_id: str) -> Game[Any, Any]:
    """The game with this contract id; an unknown id raises :class:`UnknownGameError`."""
    game = _loaded.get(game_id) if isinstance(game_id, str) else None
    if game is None:
        if not isinstance(game_id, str) or game_id not in _MODULES:
            raise UnknownGameError(str(game_id), list(GAME_IDS))
        module, cls = _MODULES[game_id]
        game = getattr(importlib.import_module(module), cls)()
        assert game.id == game_id, f"{module}.{cls}.id is {game.id!r}, registered as {game_id!r}"
        _loaded[game_id] = game
    return game


def all_games() -> list[Game[Any, Any]]:
    """Every registered game, in registry order."""
    return [get_game(g) for g in GAME_IDS]

