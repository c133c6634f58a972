"""A room's game followed with the engine package, so that the moves the server lists (its
JSON MOVEs) reach an engine as text, written by each game's own ``move_text`` exactly as
``tablas moves`` writes them, and an engine's answer is read back against that list.

The state is rebuilt as the server's bots rebuild theirs (:func:`tablas.engine.records.replay`):
from the game's options, the opening rolls and every action with the rolls it led to, all of
which a snapshot carries (``history``, ``rolls``), then moved on by each ``update`` (its
``move`` and ``dice``). It is checked against the room's own notation at every step; a
mismatch (a missed update) says to ask the room for a fresh snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tablas.engine.core import Game
from tablas.engine.games import get_game
from tablas.engine.records import replay


class Follow:
    """The state of one room's game as the engine package holds it."""

    def __init__(self, game_id: str, options: Mapping[str, Any]) -> None:
        self.game: Game[Any, Any] = get_game(game_id)
        self.options = dict(options)
        self.state: Any = None
        self.ply = -1  # actions followed; -1: none yet (waiting for a snapshot)

    def reset(self, snapshot: Mapping[str, Any]) -> bool:
        """Follows the room from its snapshot; False if that cannot be done (then the
        snapshot is not followed: ask again)."""
        rolls: dict[int, list[Sequence[int]]] = {}
        for r in snapshot.get("rolls") or []:
            rolls.setdefault(int(r["ply"]), []).append(r["dice"])
        history = snapshot.get("history") or []
        try:
            self.state = replay(self.game, self.options, rolls.get(0, []),
                                [(m, rolls.get(i + 1, [])) for i, m in enumerate(history)])
        except Exception:
            self.ply = -1
            return False
        self.ply = len(history)
        return self.matches(snapshot["state"])

    def advance(self, update: Mapping[str, Any]) -> bool:
        """Follows one ``update``; False if it is not the next one (one was missed) or
        does not lead where the room says: then follow a fresh snapshot."""
        if self.ply < 0 or update["ply"] != self.ply + 1:
            return False
        game = self.game
        try:
            state = game.apply(self.state, game.move_from_json(self.state, update["move"]))
            if update.get("dice") is not None:
                state = game.apply_chance(state, tuple(update["dice"]))
        except Exception:
            self.ply = -1
            return False
        self.state, self.ply = state, self.ply + 1
        return self.matches(update["state"])

    def matches(self, room_state: Mapping[str, Any]) -> bool:
        """Whether the followed state is the room's (the same notation)."""
        if self.game.position_text(self.state) == room_state.get("notation"):
            return True
        self.ply = -1
        return False

    def texts(self, legal: Sequence[Mapping[str, Any]]) -> list[str]:
        """The room's legal moves (its JSON MOVEs) as the game writes them."""
        game, state = self.game, self.state
        return [game.move_text(state, game.move_from_json(state, dict(m))) for m in legal]
