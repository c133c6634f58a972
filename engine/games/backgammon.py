"""Backgammon: the money game with the doubling cube, or a match to N points.

Rules as played here (a *money game*, unless the options ask for a match):

* Seats 0 and 1, 15 checkers each. Points are numbered from the mover's side: 24..1, ``25`` is
  the bar and ``0`` is off. A checker on the bar must enter before any other moves; a point
  with two or more opposing checkers is blocked; landing on a single opposing checker (a blot)
  hits it to the bar. Doubles play four times. A player must use as many dice as possible; when
  only one die can be used, the larger one if it can be. Bearing off needs all 15 checkers in
  the home board (points 1-6 or off); a checker bears off with the exact number, or with a
  larger number from the highest occupied point only.
* The opening roll: each seat rolls one die (ties are re-rolled, so they never occur); the
  higher die moves first and plays both dice. Nobody can double before that first play.
* The cube starts centred at 1. Before rolling, a player may double if the cube is centred or
  theirs and its value is below 64. The opponent takes (cube x2, the taker owns it, and the
  doubler rolls) or drops (the doubler wins the cube value before doubling, reason ``drop``).
  Option ``{"cube": false}`` plays without the cube.
* The game ends when a player has borne off all 15: the cube value times 1 (``single``),
  2 (``gammon``: the loser has borne off none) or 3 (``backgammon``: the loser has borne off none
  and still has a checker on the bar or in the winner's home board).
* No Jacoby rule, no beavers.
* A match (option ``{"match_to": N}``, N from 1 to 25): games follow one another until a side
  has N points or more; each game's points (cube x 1, 2 or 3, or the cube before a drop) go
  to its winner's score, uncapped. The game after a side first reaches N-1 is the *Crawford*
  game: nobody may double in it; doubling is allowed again in the games after it. A match to
  1 has no Crawford game (it has one game). A game that ends without ending the match leads
  straight to the next game's opening roll, with a fresh centred cube; only the end of the
  match is an outcome (``points``: the winner's match score, reason ``match``), and the last
  game's own result stays readable as ``state.match.last_game``. ``cube: false`` combines
  with a match (every game then worth 1, 2 or 3).

Phases of a :class:`BGState` (``state.phase``):

``opening``  chance: the opening roll, outcomes ``(d0, d1)`` = seat 0's die, seat 1's die.
``dice``     chance: the roll of the player on roll (``state.turn``); 21 outcomes ``(a, b)``.
``move``     decision: ``state.turn`` plays ``state.dice``; moves are plays.
``roll``     decision: ``state.turn`` may ``"double"`` or ``"roll"``.
``take``     decision: ``state.turn`` has doubled; the opponent ``"take"``\\ s or ``"drop"``\\ s.
``over``     terminal: ``state.result`` is the :class:`Outcome` (of the game, or of the match).

Moves: a play is a tuple of steps ``((from, to), ...)``, one per die used, in the mover's
numbering; ``()`` is the play when no checker can move (it must still be played). Actions are
the strings ``"roll"``, ``"double"``, ``"take"`` and ``"drop"``. A :class:`Resignation`
(``{"action": "resign", "seat": S, "points": P}``) is a resignation accepted: seat S gives up
the current game for P (1 single, 2 gammon, 3 backgammon) times the cube, reason ``resign``,
as if the game had ended on the board (a match goes on to its next game). It is never among
the legal moves (:meth:`Backgammon.resignation` checks one; a server applies it once the other
side accepts), so ``check_move`` refuses it, and its seat need not be the one on roll
(:meth:`Backgammon.actor`).

Position notation: the GNU Backgammon Position ID (14 characters), written from the point of
view of the player on roll (``state.turn``). Parsing one gives seat 0 on roll, awaiting its
roll (a ``dice`` chance state), cube centred at 1. A parsed position where a side has no
checker left is terminal, that side the winner.

Helpers for evaluations and tools: :func:`board` (a seat's 26 counts from its own side:
index 0 off, 1..24 points, 25 bar), :func:`boards_for_mover` (the mover's and the opponent's
counts, both from the mover's side), :func:`pip_count`, :func:`position_id`,
:func:`decode_position_id`, :func:`generate_plays` (plays with their resulting counts) and the
:class:`BGState` attributes ``boards``, ``turn``, ``phase``, ``dice``, ``cube``, ``owner``,
``cube_enabled``, ``result`` and ``match`` (a :class:`Match`, or None in a money game);
:func:`single_game` is a match's current game seen as a money game (what searches walk).
The state's types and the Position ID's writer are :mod:`tablas.engine.games.backgammon_state`'s,
below this module and the ``.mat`` writer; the plays' generation is
:mod:`tablas.engine.games.backgammon_plays`', the texts (Position ID read, plays written and
read, moves from JSON) :mod:`tablas.engine.games.backgammon_notation`'s; all handed out here
too.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from tablas.engine.core import JSON, Game, Outcome, RecordFormat, check_options
from tablas.engine.errors import (
    GameOverError,
    IllegalMoveError,
    InvalidDiceError,
    InvalidInputError,
    InvalidMoveError,
)
from tablas.engine.games.backgammon_mat import MAT
from tablas.engine.games.backgammon_notation import ACTIONS as ACTIONS
from tablas.engine.games.backgammon_notation import NO_PLAY as NO_PLAY
from tablas.engine.games.backgammon_notation import decode_position_id as decode_position_id
from tablas.engine.games.backgammon_notation import format_play as format_play
from tablas.engine.games.backgammon_notation import (
    move_from_json,
    parse_dice,
    parse_move,
)
from tablas.engine.games.backgammon_plays import apply_steps, reach
from tablas.engine.games.backgammon_plays import generate_plays as generate_plays

# The state's types are a module below this one and the .mat writer, which builds on them
# (engine.games.backgammon_state says why); this module hands them out as its own.
from tablas.engine.games.backgammon_state import BAR as BAR
from tablas.engine.games.backgammon_state import CHECKERS as CHECKERS
from tablas.engine.games.backgammon_state import OFF as OFF
from tablas.engine.games.backgammon_state import RESIGN_VALUES as RESIGN_VALUES
from tablas.engine.games.backgammon_state import BGState as BGState
from tablas.engine.games.backgammon_state import Board as Board
from tablas.engine.games.backgammon_state import Match as Match
from tablas.engine.games.backgammon_state import Play as Play
from tablas.engine.games.backgammon_state import Resignation as Resignation
from tablas.engine.games.backgammon_state import Step as Step
from tablas.engine.games.backgammon_state import encode_position_id as encode_position_id
from tablas.engine.games.backgammon_state import position_id as position_id

Move = Play | str | Resignation

MAX_CUBE = 64
PHASES: tuple[str, ...] = ("opening", "dice", "move", "roll", "take", "over")

START: Board = (0, 0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0)

OPENING_OUTCOMES: tuple[tuple[tuple[int, int], float], ...] = tuple(
    ((a, b), 1 / 30) for a in range(1, 7) for b in range(1, 7) if a != b
)
DICE_OUTCOMES: tuple[tuple[tuple[int, int], float], ...] = tuple(
    ((a, b), (1 if a == b else 2) / 36) for a in range(6, 0, -1) for b in range(a, 0, -1)
)

MAX_MATCH = 25


# --- helpers --------------------------------------------------------------------------------


def board(state: BGState, seat: int) -> Board:
    """``seat``'s 26 counts from its own side: index 0 off, 1..24 points, 25 bar."""
    return state.boards[seat]


def boards_for_mover(state: BGState) -> tuple[Board, Board]:
    """(player on roll's counts, opponent's counts), each from its owner's own side."""
    return state.boards[state.turn], state.boards[1 - state.turn]


def pip_count(state: BGState, seat: int) -> int:
    """The pips ``seat`` still has to move to bear off (bar counts 25)."""
    b = state.boards[seat]
    return sum(i * b[i] for i in range(1, 26))


def _outcome_for(winner: int, loser_board: Board, cube: int) -> Outcome:
    if loser_board[OFF] > 0:
        return Outcome(winner, cube, "single")
    # The winner's home board (its points 1..6) is the loser's 19..24.
    if loser_board[BAR] or any(loser_board[19:25]):
        return Outcome(winner, 3 * cube, "backgammon")
    return Outcome(winner, 2 * cube, "gammon")


def _game_over(state: BGState, boards: tuple[Board, Board], turn: int,
               outcome: Outcome) -> BGState:
    """The state once a game ends with ``outcome``: the end (a money game, or the last game of
    a match: then the match's outcome) or the next game's opening roll."""
    m = state.match
    if m is None:
        return BGState(boards, turn, "over", None, state.cube, state.owner, state.cube_enabled,
                       outcome)
    nxt = m.after(outcome)
    if nxt.over:
        assert outcome.winner is not None
        won = Outcome(outcome.winner, nxt.score[outcome.winner], "match")
        return BGState(boards, turn, "over", None, state.cube, state.owner, state.cube_enabled,
                       won, nxt)
    return BGState((START, START), 0, "opening", cube_enabled=state.cube_enabled, match=nxt)


def single_game(state: BGState) -> BGState:
    """``state`` as a money game: a match's current game with the match left out, so that its
    end is an end (searches walk this; a match's next game is no part of a position's
    future that they should see)."""
    if state.match is None:
        return state
    s = state
    return BGState(s.boards, s.turn, s.phase, s.dice, s.cube, s.owner, s.cube_enabled, s.result)


def may_double(state: BGState, seat: int) -> bool:
    """Whether ``seat`` may double before its roll: the cube in play, centred or its own and
    below 64, and not the Crawford game of a match."""
    return (
        state.cube_enabled
        and state.cube < MAX_CUBE
        and (state.owner is None or state.owner == seat)
        and not (state.match is not None and state.match.crawford)
    )


# --- the game -------------------------------------------------------------------------------


class Backgammon(Game[BGState, Move]):
    id = "backgammon"
    title = "Backgammon"
    has_chance = True

    # positions

    def initial(self, options: Mapping[str, Any] | None = None) -> BGState:
        check_options(self.id, options, {"cube", "match_to"})
        enabled = True
        if options and "cube" in options:
            enabled = options["cube"]
            if not isinstance(enabled, bool):
                raise InvalidInputError(
                    f"backgammon: option 'cube' must be true or false, got {enabled!r}"
                )
        match = None
        if options and options.get("match_to") is not None:
            n = options["match_to"]
            if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_MATCH:
                raise InvalidInputError(
                    f"backgammon: option 'match_to' must be an integer from 1 to {MAX_MATCH} "
                    f"(or null for money play), got {n!r}"
                )
            match = Match(n)
        return BGState((START, START), 0, "opening", cube_enabled=enabled, match=match)

    def parse_position(self, text: str) -> BGState:
        on_roll, other = decode_position_id(text)
        boards = (on_roll, other)
        if on_roll[OFF] == CHECKERS:
            return BGState(boards, 0, "over", result=_outcome_for(0, other, 1))
        if other[OFF] == CHECKERS:
            return BGState(boards, 0, "over", result=_outcome_for(1, on_roll, 1))
        return BGState(boards, 0, "dice")

    def position_text(self, state: BGState) -> str:
        return position_id(state)

    def record_formats(self) -> Sequence[RecordFormat]:
        """``mat``: GNU Backgammon's match file (:mod:`tablas.engine.games.backgammon_mat`)."""
        return (MAT,)

    def key(self, state: BGState) -> Hashable:
        return state.key()

    def state_to_json(self, state: BGState) -> JSON:
        m = state.match
        last = None if m is None or m.last_game is None else m.last_game.to_json()
        return {
            "notation": position_id(state),
            "turn": None if state.phase == "opening" else state.turn,
            "phase": state.phase,
            "dice": list(state.dice) if state.dice else None,
            "board": [list(state.boards[0]), list(state.boards[1])],
            "cube": {"value": state.cube, "owner": state.owner, "enabled": state.cube_enabled},
            "pips": [pip_count(state, 0), pip_count(state, 1)],
            "match_to": None if m is None else m.match_to,
            "score": [0, 0] if m is None else list(m.score),
            "crawford": m is not None and m.crawford,
            "game_number": 1 if m is None else m.game,
            "last_game": last,
        }

    def stake(self, state: BGState) -> int:
        """A game ended by resignation, timeout or abandonment is worth the cube; in a match
        the whole match goes: the winner's score becomes ``match_to``."""
        return state.match.match_to if state.match is not None else state.cube

    # rules

    def to_move(self, state: BGState) -> int | None:
        phase = state.phase
        if phase in ("move", "roll"):
            return state.turn
        if phase == "take":
            return 1 - state.turn
        return None

    def outcome(self, state: BGState) -> Outcome | None:
        return state.result

    def plays(self, state: BGState) -> list[tuple[Play, Board, Board]]:
        """The plays of a ``move`` state with their resulting (mover, opponent) counts."""
        assert state.dice is not None
        me, opp = state.boards[state.turn], state.boards[1 - state.turn]
        return generate_plays(me, opp, state.dice[0], state.dice[1])

    def legal_moves(self, state: BGState) -> list[Move]:
        phase = state.phase
        if phase == "move":
            return [p for p, _, _ in self.plays(state)]
        if phase == "roll":
            return ["roll", "double"]
        if phase == "take":
            return ["take", "drop"]
        return []

    def successors(self, state: BGState) -> list[tuple[Move, BGState]]:
        if state.phase == "move":
            return [(p, self._after_play(state, me, opp)) for p, me, opp in self.plays(state)]
        return super().successors(state)

    def _after_play(self, state: BGState, me: Board, opp: Board) -> BGState:
        turn = state.turn
        nxt = 1 - turn
        boards = (me, opp) if turn == 0 else (opp, me)
        if me[OFF] == CHECKERS:
            return _game_over(state, boards, nxt, _outcome_for(turn, opp, state.cube))
        return BGState(
            boards,
            nxt,
            "roll" if may_double(state, nxt) else "dice",
            None,
            state.cube,
            state.owner,
            state.cube_enabled,
            match=state.match,
        )

    def resignation(self, state: BGState, seat: int, points: int) -> Resignation:
        """``seat``'s resignation of the current game for ``points`` (1, 2 or 3) times the
        cube, checked: the game is being played (not over, no roll pending). Applying it
        ends the game; :class:`IllegalMoveError` says why it cannot be offered."""
        if state.result is not None:
            raise GameOverError("backgammon: the game is over: there is nothing to resign")
        if seat not in (0, 1) or points not in RESIGN_VALUES:
            raise IllegalMoveError(
                f"backgammon: a resignation is seat 0 or 1 giving up 1, 2 or 3 points times"
                f" the cube, got seat {seat!r}, points {points!r}")
        if self.is_chance(state):
            raise IllegalMoveError("backgammon: the dice are being rolled: resign after them")
        return Resignation(seat, points)

    def check_action(self, state: BGState, move: Move) -> Move:
        """A record's action: a legal move, or a resignation that could be offered here."""
        if isinstance(move, Resignation):
            return self.resignation(state, move.seat, move.points)
        return self.check_move(state, move)

    def actor(self, state: BGState, move: Move) -> int | None:
        """A resignation is its resigner's, whoever is on roll."""
        if isinstance(move, Resignation):
            return move.seat
        return self.to_move(state)

    def apply(self, state: BGState, move: Move) -> BGState:
        if isinstance(move, Resignation):
            won = Outcome(1 - move.seat, move.points * state.cube, "resign")
            return _game_over(state, state.boards, state.turn, won)
        if isinstance(move, str):
            s = state
            if move == "roll":
                return BGState(s.boards, s.turn, "dice", None, s.cube, s.owner, s.cube_enabled,
                               match=s.match)
            if move == "double":
                return BGState(s.boards, s.turn, "take", None, s.cube, s.owner, s.cube_enabled,
                               match=s.match)
            if move == "take":
                return BGState(
                    s.boards, s.turn, "dice", None, 2 * s.cube, 1 - s.turn, s.cube_enabled,
                    match=s.match,
                )
            if move == "drop":
                return _game_over(s, s.boards, s.turn, Outcome(s.turn, s.cube, "drop"))
            raise InvalidMoveError(f"backgammon: unknown action {move!r}")
        me, opp = apply_steps(state.boards[state.turn], state.boards[1 - state.turn], move)
        return self._after_play(state, me, opp)

    def _illegal(self, state: BGState, move: Any, why: str = "") -> IllegalMoveError:
        dice = f"{state.dice[0]}{state.dice[1]}" if state.dice else "none"
        return IllegalMoveError(
            f"backgammon: illegal move {self.move_repr(move)} in position "
            f"{position_id(state)!r} (phase {state.phase}, dice {dice}){why}"
        )

    def check_move(self, state: BGState, move: Move) -> Move:
        if state.result is not None:
            raise GameOverError(
                f"backgammon: move {self.move_repr(move)} after the end of the game "
                f"in position {position_id(state)!r}"
            )
        if isinstance(move, Resignation):
            raise self._illegal(state, move, ": a resignation is offered with resign and"
                                " applied when the other side accepts it, never moved")
        if isinstance(move, str):
            if move in self.legal_moves(state):
                return move
            raise self._illegal(state, move)
        if state.phase != "move" or state.dice is None or not isinstance(move, tuple):
            raise self._illegal(state, move)
        plays = self.plays(state)
        by_result = {(mt, ot): p for p, mt, ot in plays}
        for p, _, _ in plays:
            if p == move:
                return p
        me, opp = state.boards[state.turn], state.boards[1 - state.turn]
        try:
            steps = tuple((int(f), int(t)) for f, t in move)
        except (TypeError, ValueError):
            raise self._illegal(state, move) from None
        for res in reach(me, opp, state.dice, steps):
            if res in by_result:
                return by_result[res]
        raise self._illegal(state, move)

    # chance

    def is_chance(self, state: BGState) -> bool:
        return state.phase in ("opening", "dice")

    def chance_outcomes(self, state: BGState) -> Sequence[tuple[Any, float]]:
        if state.phase == "opening":
            return OPENING_OUTCOMES
        if state.phase == "dice":
            return DICE_OUTCOMES
        return ()

    def _check_dice(self, state: BGState, outcome: Any) -> tuple[int, int]:
        ok = (
            isinstance(outcome, tuple | list)
            and len(outcome) == 2
            and all(isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 6 for d in outcome)
        )
        if not ok:
            raise InvalidDiceError(
                f"backgammon: roll {outcome!r} must be two dice 1..6 "
                f"(position {position_id(state)!r})"
            )
        return int(outcome[0]), int(outcome[1])

    def apply_chance(self, state: BGState, outcome: Any) -> BGState:
        s = state
        if s.phase == "opening":
            d0, d1 = self._check_dice(s, outcome)
            if d0 == d1:
                raise InvalidDiceError(
                    f"backgammon: opening roll {d0}{d1}: the dice must differ (ties re-roll)"
                )
            turn = 0 if d0 > d1 else 1
            return BGState(
                s.boards,
                turn,
                "move",
                (max(d0, d1), min(d0, d1)),
                s.cube,
                s.owner,
                s.cube_enabled,
                match=s.match,
            )
        if s.phase == "dice":
            a, b = self._check_dice(s, outcome)
            return BGState(
                s.boards, s.turn, "move", (max(a, b), min(a, b)), s.cube, s.owner, s.cube_enabled,
                match=s.match,
            )
        raise InvalidDiceError(
            f"backgammon: no dice to roll in phase {s.phase!r} (position {position_id(s)!r})"
        )

    def parse_chance(self, state: BGState, text: str) -> Any:
        if state.phase not in ("opening", "dice"):
            raise InvalidDiceError(
                f"backgammon: dice {text!r} given, but no roll is due (phase {state.phase!r})"
            )
        return parse_dice(text, opening=state.phase == "opening")

    def chance_text(self, outcome: Any) -> str:
        a, b = outcome
        return f"{a}{b}"

    # notations

    def is_play(self, move: Move) -> bool:
        # "roll", "double", "take", "drop" and a resignation are no plays
        return not isinstance(move, str | Resignation)

    def move_to_json(self, move: Move) -> JSON:
        if isinstance(move, Resignation):
            return {"action": "resign", "seat": move.seat, "points": move.points}
        if isinstance(move, str):
            return {"action": move}
        return {"play": [[f, t] for f, t in move]}

    def move_from_json(self, state: BGState, obj: Any) -> Move:
        return move_from_json(obj)

    def move_text(self, state: BGState, move: Move) -> str:
        if isinstance(move, Resignation):
            return f"resigns a {RESIGN_VALUES[move.points]}"
        if isinstance(move, str):
            return move
        return format_play(state.boards[1 - state.turn], move)

    def parse_move(self, state: BGState, text: str) -> Move:
        rolled = state.phase == "move" and state.dice is not None
        boards = (state.boards[state.turn], state.boards[1 - state.turn]) if rolled else None
        return parse_move(text, boards, state.dice)
