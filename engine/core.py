"""The game protocol: what every game module implements, and what search and server rely on.

States are immutable values: ``apply`` returns a new state and never changes its argument, so a
state can be shared between a room, a search tree and a cache. ``key`` gives a cheap hashable
value for transposition tables; two states with equal keys have the same future.

Seats are ``0`` and ``1``. A state is exactly one of:

* terminal: ``outcome(state)`` is an :class:`Outcome`, ``to_move`` is ``None``;
* a chance node (dice): ``is_chance(state)``, ``to_move`` is ``None``; the caller picks an
  outcome (the server rolls, a test injects, search weighs ``chance_outcomes``) and calls
  ``apply_chance``. Randomness never lives inside the rules;
* a decision: ``to_move(state)`` is the seat that acts, ``legal_moves(state)`` what it may do.

Moves are small immutable values private to each game; ``move_to_json``/``move_from_json``
and ``move_text``/``parse_move`` are the inverse pairs that cross the module's boundary.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from tablas.engine.errors import (
    GameOverError,
    IllegalMoveError,
    InvalidDiceError,
    InvalidInputError,
)

S = TypeVar("S")
M = TypeVar("M")

JSON = dict[str, Any]
Dice = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended: ``winner`` is a seat or ``None`` for a draw."""

    winner: int | None
    points: int
    reason: str

    def to_json(self) -> JSON:
        return {"winner": self.winner, "points": self.points, "reason": self.reason}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Outcome:
        return cls(obj["winner"], obj["points"], obj["reason"])


class Game(ABC, Generic[S, M]):
    """One game's rules and notations. Subclasses are stateless; one instance serves all."""

    id: ClassVar[str]
    title: ClassVar[str]
    has_chance: ClassVar[bool] = False

    # --- positions -------------------------------------------------------------------------

    @abstractmethod
    def initial(self, options: Mapping[str, Any] | None = None) -> S:
        """The start of a new game. Bad options raise :class:`InvalidInputError`."""

    @abstractmethod
    def parse_position(self, text: str) -> S:
        """Reads the contract's position notation; raises :class:`InvalidPositionError`."""

    @abstractmethod
    def position_text(self, state: S) -> str:
        """Writes the contract's position notation; the inverse of :meth:`parse_position`."""

    @abstractmethod
    def key(self, state: S) -> Hashable:
        """A cheap hashable summary: equal keys mean equal futures."""

    def state_to_json(self, state: S) -> JSON:
        """The state as the server shows it; always carries ``notation``."""
        return {"notation": self.position_text(state)}

    # --- the rules -------------------------------------------------------------------------

    @abstractmethod
    def to_move(self, state: S) -> int | None:
        """The seat that acts now, or ``None`` at a terminal or chance node."""

    @abstractmethod
    def outcome(self, state: S) -> Outcome | None:
        """The end of the game as data, or ``None`` while it goes on."""

    @abstractmethod
    def legal_moves(self, state: S) -> list[M]:
        """Every legal move, one per distinct resulting position, in a stable order."""

    @abstractmethod
    def apply(self, state: S, move: M) -> S:
        """The state after ``move``, unchecked: ``move`` must come from :meth:`legal_moves`.

        Search calls this in its inner loop; callers holding untrusted input call :meth:`play`.
        """

    def successors(self, state: S) -> list[tuple[M, S]]:
        """Each legal move with the state it leads to, in :meth:`legal_moves` order. A game
        whose move generator already builds the resulting positions overrides this to skip
        the second :meth:`apply`; searches that look at every child call it."""
        return [(m, self.apply(state, m)) for m in self.legal_moves(state)]

    def check_move(self, state: S, move: M) -> M:
        """The listed form of ``move`` if it is legal here; else :class:`IllegalMoveError`."""
        if self.outcome(state) is not None:
            raise GameOverError(
                f"{self.id}: move {self.move_repr(move)} after the end of the game "
                f"in position {self.position_text(state)!r}"
            )
        if move in self.legal_moves(state):
            return move
        raise IllegalMoveError(
            f"{self.id}: illegal move {self.move_repr(move)} in position "
            f"{self.position_text(state)!r}"
        )

    def resignation(self, state: S, seat: int, points: int) -> M:
        """``seat``'s offer to give up the current game for ``points``, as the action that
        ends it once the other side accepts; :class:`IllegalMoveError` in a game whose
        resignations have no value (all but backgammon: a resignation gives the game)."""
        raise IllegalMoveError(f"{self.id}: a resignation here has no value: resign without"
                               " points to give up the game")

    def check_action(self, state: S, move: M) -> M:
        """An action of a game's record, checked: :meth:`check_move`, unless the game has
        actions that are never listed moves (backgammon's accepted resignation)."""
        return self.check_move(state, move)

    def actor(self, state: S, move: M) -> int | None:
        """The seat that makes ``move`` in ``state``: the seat to move, unless the game has
        actions any seat may take (backgammon's accepted resignation)."""
        return self.to_move(state)

    def play(self, state: S, move: M) -> S:
        """``apply`` for untrusted moves: checks legality first."""
        return self.apply(state, self.check_move(state, move))

    def stake(self, state: S) -> int:
        """What a game ended without its rules (resignation, timeout, abandonment) is worth to
        its winner in ``state``: 1 unless the game says (a cube, a match)."""
        return 1

    # --- chance ----------------------------------------------------------------------------

    def is_chance(self, state: S) -> bool:
        """True where the next thing to happen is a roll of the dice."""
        return False

    def chance_outcomes(self, state: S) -> Sequence[tuple[Any, float]]:
        """Each outcome of the roll with its probability (summing to 1)."""
        return ()

    def apply_chance(self, state: S, outcome: Any) -> S:
        """The state after the roll ``outcome``; a roll not possible here is an error."""
        raise InvalidDiceError(f"{self.id}: no dice are rolled in this game")

    def parse_chance(self, state: S, text: str) -> Any:
        """Reads a roll (``--dice 31``) for :meth:`apply_chance`."""
        raise InvalidDiceError(f"{self.id}: this game takes no dice (got {text!r})")

    def chance_text(self, outcome: Any) -> str:
        """Writes a roll; the inverse of :meth:`parse_chance`."""
        raise InvalidDiceError(f"{self.id}: this game takes no dice")

    # --- move notations --------------------------------------------------------------------

    @abstractmethod
    def move_to_json(self, move: M) -> JSON:
        """The contract's MOVE object."""

    @abstractmethod
    def move_from_json(self, state: S, obj: Any) -> M:
        """Reads a MOVE object; bad shape raises :class:`InvalidMoveError`, legality unchecked."""

    @abstractmethod
    def move_text(self, state: S, move: M) -> str:
        """The move as a person writes it, in the position where it is played."""

    @abstractmethod
    def parse_move(self, state: S, text: str) -> M:
        """Reads :meth:`move_text` back; bad syntax raises :class:`InvalidMoveError`."""

    def is_play(self, move: M) -> bool:
        """Whether ``move`` is a play of the game rather than a roll or a cube action: a seat
        has made its first move once it has made a play (a server lets a game be aborted
        until each seat has). Every move is one unless the game says."""
        return True

    def move_repr(self, move: M) -> str:
        """The move for an error message, without needing the position."""
        try:
            import json

            return json.dumps(self.move_to_json(move), separators=(",", ":"))
        except Exception:  # a malformed move must still produce a message
            return repr(move)

    # --- records ---------------------------------------------------------------------------

    def record_formats(self) -> Sequence[RecordFormat]:
        """The text formats a record of this game can be written in, besides the server's
        JSON (:mod:`tablas.engine.records`): none unless the game says."""
        return ()


# A game's record and its formats are part of the protocol (a game names its formats, a
# format writes a game's record), so they live here, below the games and
# :mod:`tablas.engine.records` (which replays records) alike: neither imports the other's layer.


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
    and writer, which is given the game (``record.game_id``'s) and the record."""

    name: str
    media_type: str
    extension: str
    write: Callable[[Game[Any, Any], GameRecord], str]


def option_int(
    game_id: str, options: Mapping[str, Any] | None, name: str, default: int, lo: int, hi: int
) -> int:
    """An integer option within ``[lo, hi]``; anything else raises :class:`InvalidInputError`."""
    if not options or name not in options:
        return default
    value = options[name]
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise InvalidInputError(
            f"{game_id}: option {name!r} must be an integer from {lo} to {hi}, got {value!r}"
        )
    return value


def check_options(game_id: str, options: Mapping[str, Any] | None, known: set[str]) -> None:
    """Refuses options the game does not know, so a typo is not silently ignored."""
    if options is None:
        return
    if not isinstance(options, Mapping):
        raise InvalidInputError(f"{game_id}: options must be an object, got {options!r}")
    unknown = sorted(set(options) - known)
    if unknown:
        allowed = ", ".join(sorted(known)) or "none"
        raise InvalidInputError(
            f"{game_id}: unknown option(s) {', '.join(map(repr, unknown))}; allowed: {allowed}"
        )
