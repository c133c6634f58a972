"""The engine's exceptions, rooted at :class:`TablasError`.

The tree, split by cause so a caller can answer each one the right way::

    TablasError
    ├── UnknownGameError     the game id is not registered: pick one of ``GAME_IDS``
    ├── InvalidInputError    malformed text or JSON: fix the input; the rules were not consulted
    │   ├── InvalidPositionError
    │   ├── InvalidMoveError
    │   └── InvalidDiceError
    └── IllegalMoveError     well formed, but the rules forbid it here: choose from ``legal_moves``
        └── GameOverError    the game has ended: nothing more can be played

Every message names the input and, where there is one, the position it was tried in.
"""

from __future__ import annotations


class TablasError(Exception):
    """Root of every error the engine raises on purpose."""


class UnknownGameError(TablasError, LookupError):
    """No game with this id; ``tablas.engine.games.GAME_IDS`` lists the ones there are."""

    def __init__(self, game_id: str, known: list[str]) -> None:
        self.game_id = game_id
        super().__init__(f"unknown game {game_id!r}; known games: {', '.join(known)}")


class InvalidInputError(TablasError, ValueError):
    """Malformed input: it could not be read at all, whatever the position."""


class InvalidPositionError(InvalidInputError):
    """A position text that does not describe a reachable, valid position of the game."""


class InvalidMoveError(InvalidInputError):
    """A move (text or JSON) that does not have the shape of a move of the game."""


class InvalidDiceError(InvalidInputError):
    """Dice text that is not two digits from 1 to 6, or dice given where none are wanted."""


class IllegalMoveError(TablasError, ValueError):
    """A well-formed move the rules forbid in this position; choose one from ``legal_moves``."""


class GameOverError(IllegalMoveError):
    """The game has ended; no move can be played in it."""
