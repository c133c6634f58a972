"""A position as a user gives it (notation text and, for dice games, a roll) turned into a state.

Shared by the command line (``tablas moves``, ``tablas analyze``, ``tablas explain``) and the
HTTP API (``GET /api/explain``), so every entry point reads positions and dice the same way and
refuses them with the same messages.
"""

from __future__ import annotations

from typing import Any

from tablas.engine.core import Game
from tablas.engine.errors import InvalidDiceError


def position_state(
    game: Game[Any, Any], position: str, dice: str | None, *, before_roll: bool = False
) -> Any:
    """The state of ``position`` with ``dice`` rolled, or an error naming what is wrong.

    A position that awaits a roll needs ``dice``, unless ``before_roll`` is set: then, without
    dice, the state before the roll (a chance node) is returned for the caller to expand."""
    state = game.parse_position(position)
    if dice is not None:
        if not game.has_chance:
            raise InvalidDiceError(f"{game.id}: this game takes no dice (got --dice {dice!r})")
        return game.apply_chance(state, game.parse_chance(state, dice))
    if game.is_chance(state) and not before_roll:
        raise InvalidDiceError(f"{game.id}: position {position!r} needs the dice (--dice AB)")
    return state
