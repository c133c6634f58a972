"""Backgammon's state as data: the board counts, a match's score (:class:`Match`), the state
(:class:`BGState`) and its GNU Backgammon Position ID. The rules are
:mod:`tablas.engine.games.backgammon`, which holds the meaning of every field (its docstring) and
hands out all these names too.

Why a module of its own: both the rules and the ``.mat`` writer
(:mod:`tablas.engine.games.backgammon_mat`) build on these types, and the rules name the writer as
the game's record format. With the types here, below both, the rules import the writer and
the writer imports only the types: no circle.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from tablas.engine.core import Outcome

Board = tuple[int, ...]  # 26 counts from the owner's side: 0 off, 1..24 points, 25 bar
Step = tuple[int, int]
Play = tuple[Step, ...]

BAR = 25
OFF = 0
CHECKERS = 15


@dataclass(frozen=True, slots=True)
class Resignation:
    """A resignation the other side accepted: ``seat`` gives up the current game for
    ``points`` (1 a single, 2 a gammon, 3 a backgammon) times the cube. Never a legal move
    (a server offers it with ``resign`` and applies it once accepted), but an action of the
    game's record like any other: replayed, it ends the game as a finished one ends."""

    seat: int
    points: int


RESIGN_VALUES = {1: "single", 2: "gammon", 3: "backgammon"}


@dataclass(frozen=True, slots=True)
class Match:
    """Where a match stands during one of its games: ``score`` before this game, ``game`` its
    number (1-based), ``crawford`` whether it is the Crawford game, ``post_crawford`` whether
    the Crawford game has been played, ``last_game`` the previous game's result (None in the
    first game; at the end of the match, the deciding game's)."""

    match_to: int
    score: tuple[int, int] = (0, 0)
    game: int = 1
    crawford: bool = False
    post_crawford: bool = False
    last_game: Outcome | None = None

    def away(self, seat: int) -> int:
        """The points ``seat`` still needs."""
        return max(0, self.match_to - self.score[seat])

    def after(self, outcome: Outcome) -> Match:
        """The match once a game ends with ``outcome`` (its winner takes its points): the
        next game's, or the finished match's if a side now has ``match_to``."""
        assert outcome.winner is not None
        score = list(self.score)
        score[outcome.winner] += outcome.points
        done = self.crawford or self.post_crawford
        over = max(score) >= self.match_to
        return Match(
            self.match_to,
            (score[0], score[1]),
            self.game if over else self.game + 1,
            crawford=not done and not over and self.match_to > 1 and self.match_to - 1 in score,
            post_crawford=done,
            last_game=outcome,
        )

    @property
    def over(self) -> bool:
        return max(self.score) >= self.match_to


class BGState:
    """An immutable backgammon state; see the module docstring for the fields' meaning."""

    __slots__ = ("boards", "cube", "cube_enabled", "dice", "match", "owner", "phase", "result",
                 "turn")

    boards: tuple[Board, Board]
    turn: int
    phase: str
    dice: tuple[int, int] | None
    cube: int
    owner: int | None
    cube_enabled: bool
    result: Outcome | None
    match: Match | None

    def __init__(
        self,
        boards: tuple[Board, Board],
        turn: int,
        phase: str,
        dice: tuple[int, int] | None = None,
        cube: int = 1,
        owner: int | None = None,
        cube_enabled: bool = True,
        result: Outcome | None = None,
        match: Match | None = None,
    ) -> None:
        object.__setattr__(self, "boards", boards)
        object.__setattr__(self, "turn", turn)
        object.__setattr__(self, "phase", phase)
        object.__setattr__(self, "dice", dice)
        object.__setattr__(self, "cube", cube)
        object.__setattr__(self, "owner", owner)
        object.__setattr__(self, "cube_enabled", cube_enabled)
        object.__setattr__(self, "result", result)
        object.__setattr__(self, "match", match)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("BGState is immutable")

    def key(self) -> tuple[Any, ...]:
        return (
            self.boards,
            self.turn,
            self.phase,
            self.dice,
            self.cube,
            self.owner,
            self.cube_enabled,
            self.result,
            self.match,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BGState) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __repr__(self) -> str:
        return (
            f"BGState({position_id(self)!r}, turn={self.turn}, phase={self.phase!r}, "
            f"dice={self.dice}, cube={self.cube}, owner={self.owner})"
        )


def encode_position_id(on_roll: Board, other: Board) -> str:
    """The gnubg Position ID: first the player NOT on roll, then the player on roll."""
    val = 0
    pos = 0
    for side in (other, on_roll):
        for i in range(1, 26):
            c = side[i]
            if c:
                val |= ((1 << c) - 1) << pos
                pos += c
            pos += 1
    return base64.b64encode(val.to_bytes(10, "little")).decode("ascii")[:14]


def position_id(state: BGState) -> str:
    """The Position ID of ``state`` from the point of view of the player on roll."""
    return encode_position_id(state.boards[state.turn], state.boards[1 - state.turn])
