"""A game's record, and the text formats a game can write it in.

A :class:`GameRecord` is what is needed to replay a game exactly: the game, its options, the
opening rolls and every action with the rolls it led to (the form the server stores), plus
the players' names, the result and when it began. A game may be written in formats of its own
(:meth:`engine.core.Game.record_formats`): ``moves`` (:data:`MOVES`) for the games whose
POSITION text spells the whole game (Connect-4's and BOOM's column digits, tic-tac-toe's
board), and backgammon's ``mat`` (:mod:`engine.games.backgammon_mat`). A record need not be
finished: a format writes the game so far.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.core import JSON, Game, Outcome
from engine.errors import InvalidInputError
from engine.games import get_game

Dice = tuple[int, int]


@dataclass(frozen=True, slots=True)
class GameRecord:
    """One game as played: ``actions`` are ``(MOVE, rolls it led to)`` in order, moves in
    their listed form (as the server stores them); ``names`` the seats' names; ``created_at``
    seconds since the epoch."""

    game_id: str
    options: JSON
    opening_rolls: tuple[Dice, ...]
    actions: tuple[tuple[JSON, tuple[Dice, ...]], ...]
    names: tuple[str, str]
    result: Outcome | None = None
    created_at: float = 0.0


@dataclass(frozen=True, slots=True)
class RecordFormat:
    """A text format of a game's record: its name (``?format=``), media type, file extension
    and writer."""

    name: str
    media_type: str
    extension: str
    write: Callable[[GameRecord], str]


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


def steps(record: GameRecord) -> Iterator[Step]:
    """Every action of ``record`` with the states around it, in order."""
    game = get_game(record.game_id)
    state = start(game, record.options, record.opening_rolls)
    for i, (move_json, rolls) in enumerate(record.actions):
        seat = game.to_move(state)
        move = game.move_from_json(state, move_json)
        after = game.apply(state, move)
        for roll in rolls:
            after = game.apply_chance(after, tuple(roll))
        yield Step(i, seat, state, move, move_json, tuple(rolls), after)
        state = after


def final_state(record: GameRecord) -> Any:
    return replay(get_game(record.game_id), record.options, record.opening_rolls,
                  record.actions)


def final_position(record: GameRecord) -> str:
    """The POSITION text of the game so far, on a line."""
    game = get_game(record.game_id)
    return game.position_text(final_state(record)) + "\n"


# The games whose POSITION text is the game itself (the moves so far, or tic-tac-toe's board).
MOVES = RecordFormat("moves", "text/plain; charset=utf-8", "txt", final_position)


def record_format(game_id: str, name: str) -> RecordFormat:
    """The format ``name`` of the game; :class:`InvalidInputError` naming the formats it has
    (``json`` first: every game has the server's own)."""
    game = get_game(game_id)
    formats = {f.name: f for f in game.record_formats()}
    if name not in formats:
        have = ", ".join(["json", *formats])
        raise InvalidInputError(f"{game_id} has no format {name!r}; its formats: {have}")
    return formats[name]
