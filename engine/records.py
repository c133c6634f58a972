"""A game's record replayed, and the text formats a game can write it in.

A :class:`~tablas.engine.core.GameRecord` is what is needed to replay a game exactly: the game, its
options, the opening rolls and every action with the rolls it led to (the form the server
stores), plus the players' names, the result and when it began. A game may be written in
formats of its own (:meth:`tablas.engine.core.Game.record_formats`, each a
:class:`~tablas.engine.core.RecordFormat`): ``moves`` (:data:`MOVES`) for the games whose POSITION
text spells the whole game (Connect-4's and BOOM's column digits, tic-tac-toe's board), and
backgammon's ``mat`` (:mod:`tablas.engine.games.backgammon_mat`). A record need not be finished: a
format writes the game so far.

Everything here is given the game: the games build on this module (``MOVES``), so it does not
look a game up by its id in the registry (:func:`tablas.engine.games.get_game`), which is above it;
its callers do.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tablas.engine.core import JSON, Dice, Game, GameRecord, RecordFormat
from tablas.engine.errors import InvalidInputError


@dataclass(frozen=True, slots=True)
class Step:
    """One action of a record, replayed: ``before`` is the state it was played in."""

    index: int
    seat: int | None
    before: Any
    move: Any
    move_json: JSON
    rolls: tuple[Dice, ...]
    after: Any


def replay(
    game: Game[Any, Any],
    options: Mapping[str, Any],
    opening_rolls: Sequence[Sequence[int]],
    actions: Sequence[tuple[JSON, Sequence[Sequence[int]]]],
) -> Any:
    """The state after the opening rolls and ``actions`` (trusted: moves in listed form)."""
    state = start(game, options, opening_rolls)
    for move, rolls in actions:
        state = game.apply(state, game.move_from_json(state, move))
        for roll in rolls:
            state = game.apply_chance(state, tuple(roll))
    return state


def start(game: Game[Any, Any], options: Mapping[str, Any],
          opening_rolls: Sequence[Sequence[int]]) -> Any:
    """The state before the first action: the initial position after the opening rolls."""
    state = game.initial(dict(options))
    for roll in opening_rolls:
        state = game.apply_chance(state, tuple(roll))
    return state


def steps(game: Game[Any, Any], record: GameRecord) -> Iterator[Step]:
    """Every action of ``record`` (a game of ``game``) with the states around it, in order."""
    state = start(game, record.options, record.opening_rolls)
    for i, (move_json, rolls) in enumerate(record.actions):
        move = game.move_from_json(state, move_json)
        seat = game.actor(state, move)
        after = game.apply(state, move)
        for roll in rolls:
            after = game.apply_chance(after, tuple(roll))
        yield Step(i, seat, state, move, move_json, tuple(rolls), after)
        state = after


def final_state(game: Game[Any, Any], record: GameRecord) -> Any:
    return replay(game, record.options, record.opening_rolls, record.actions)


def final_position(game: Game[Any, Any], record: GameRecord) -> str:
    """The POSITION text of the game so far, on a line."""
    return game.position_text(final_state(game, record)) + "\n"


# The games whose POSITION text is the game itself (the moves so far, or tic-tac-toe's board).
MOVES = RecordFormat("moves", "text/plain; charset=utf-8", "txt", final_position)


def record_format(game: Game[Any, Any], name: str) -> RecordFormat:
    """The format ``name`` of ``game``; :class:`InvalidInputError` naming the formats it has
    (``json`` first: every game has the server's own)."""
    formats = {f.name: f for f in game.record_formats()}
    if name not in formats:
        have = ", ".join(["json", *formats])
        raise InvalidInputError(f"{game.id} has no format {name!r}; its formats: {have}")
    return formats[name]
