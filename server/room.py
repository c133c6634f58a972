"""A sans-I/O room: the authoritative game, its seats, its history. No asyncio, sockets or SQL.

Every change is two steps, so that the owner of the room (:class:`tablas.server.live_room.LiveRoom`)
can persist it in between: a ``prepare_*`` method checks it and computes what it leads to
without changing the room (or raises :class:`RoomError` with the contract's error code), and
``commit``, ``commit_seats``, ``commit_lapse`` or ``finish`` makes it so. A move prepares a
:class:`Pending`, a seat taken, freed or handed to a bot a :class:`SeatChange`
(``room.seating``), the end of a game without a move an :class:`~tablas.engine.core.Outcome`
(``room.endings``, ``room.clocks.flag_fall``, ``room.presence.due``), a change of status
without one a :class:`Lapse`. Time (``clock``) and dice (a :class:`~tablas.server.dice.DiceSource`)
are injected.

Chance nodes are resolved by the room itself at once: the opening roll when the game starts,
and any roll an action leads to (backgammon's ``roll``, ``take`` or a play when the cube is
not available). The rolls are recorded with the action that caused them; the opening roll
belongs to ply 0 (``opening_rolls``).

Room options (:class:`~tablas.server.protocol.RoomOptions`, not the game's): a chess clock per seat
(:mod:`tablas.server.rules.clock`), and handing a seat to a bot, by its holder or after its player
has been away ``abandon_to_bot_after_ms`` (:mod:`tablas.server.rules.presence`, which also says when
rooms end: contract section 6).

Fair rated play (contract section 10): until each seat has made its first play (``played``)
a seated person may abort the game (:mod:`tablas.server.rules.endings`), and a rated game that ends
in any other way before then ends ``aborted`` too (:meth:`Room.conclude`).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tablas.engine.core import JSON, Game, Outcome
from tablas.engine.errors import (
    IllegalMoveError,
    InvalidDiceError,
    InvalidInputError,
    UnknownGameError,
)
from tablas.engine.games import get_game
from tablas.engine.records import replay
from tablas.engine.search.decision import Level
from tablas.server.dice import NO_SEEDS, CommitRevealDice, DiceSource, Seeds
from tablas.server.errors import ErrorCode, RoomError
from tablas.server.protocol import RoomOptions, RoomStatus, UnratedReason
from tablas.server.rules.clock import Clocks, Flagged
from tablas.server.rules.endings import ABORTED, Endings, ResignOffer
from tablas.server.rules.offers import Offers
from tablas.server.rules.presence import Lapse, Presence
from tablas.server.rules.seats import Handover, SeatChange, Seating, SeatState

# What the room's parts define, named here too: the room's callers import them from here.
__all__ = ["ABORTED", "LIVE", "Action", "BotJob", "Dice", "Flagged", "Handover", "Lapse",
           "Pending", "Room", "RoomRecord", "SeatChange", "SeatState", "Status", "game_for",
           "resolve_chance"]

Status = RoomStatus
# The statuses of a room people can still join or watch play: the lobby lists these, and a
# room in one of them stays in memory until the absence of its people ends it.
LIVE: frozenset[Status] = frozenset({"waiting", "playing"})
Dice = tuple[int, int]
Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class Action:
    """One history entry: ``index`` is its 0-based place (the update's ``ply`` is index + 1)."""

    index: int
    seat: int
    move: JSON
    rolls: tuple[Dice, ...] = ()
    time: float = 0.0
    clocks: tuple[int, int] | None = None  # each seat's time left after it (ms), with a clock


@dataclass(frozen=True, slots=True)
class Pending:
    """A checked move, not yet part of the room: persist it, then :meth:`Room.commit` it."""

    action: Action
    state: Any
    outcome: Outcome | None
    play: bool = True  # the move is a play (the game's is_play): its seat has moved


@dataclass(frozen=True, slots=True)
class BotJob:
    """Everything a bot worker needs, picklable: it rebuilds the state by replaying."""

    game_id: str
    options: JSON
    opening_rolls: tuple[Dice, ...]
    actions: tuple[tuple[JSON, tuple[Dice, ...]], ...]
    seat: int
    ply: int
    level: Level
    seed: int
    time_left_ms: float | None = None  # the bot's clock, when the room has one

    @staticmethod
    def of(room: Room, budget_seed: int = 0) -> BotJob | None:
        """What the bot to move in ``room`` needs to think (None: no bot is to move): hand it
        to the pool, then bring its decision back as the bot's move (``bot_seat``)."""
        seat = room.bot_to_move()
        if seat is None:
            return None
        clocks = room.clocks.live()
        seed = hashlib.sha256(f"{room.room_id}:{room.ply}:{budget_seed}".encode()).digest()
        return BotJob(room.game_id, room.options, room.opening_rolls,
                      tuple((a.move, a.rolls) for a in room.history), seat, room.ply,
                      room.seats[seat].level or "medium", int.from_bytes(seed[:4]),
                      None if clocks is None else clocks[seat])


def game_for(game_id: str) -> Game[Any, Any]:
    try:
        return get_game(game_id)
    except UnknownGameError as e:
        raise RoomError("unknown_game", str(e)) from None


def initial_state(game: Game[Any, Any], options: JSON) -> Any:
    """The game's first position with ``options``; ``bad_request`` if it refuses them (or
    they are not plain JSON)."""
    try:
        state = game.initial(options)
        json.dumps(options)
    except (InvalidInputError, TypeError, ValueError) as e:
        raise RoomError("bad_request", f"bad options: {e}") from None
    return state


def resolve_chance(
    game: Game[Any, Any], state: Any, dice: DiceSource | None, ply: int
) -> tuple[Any, tuple[Dice, ...]]:
    """Rolls until ``state`` is no chance node; a roll the game refuses (a tie) is re-rolled."""
    rolls: list[Dice] = []
    attempt = 0
    while game.is_chance(state):
        if dice is None:
            raise RuntimeError(f"{game.id}: a chance node but no dice source")
        roll = dice.roll(ply, attempt)
        attempt += 1
        try:
            state = game.apply_chance(state, roll)
        except InvalidDiceError:
            if attempt > 1000:
                raise
            continue
        rolls.append(roll)
    return state, tuple(rolls)


def _unrated(options: RoomOptions, reason: UnratedReason) -> RoomOptions:
    """``options`` of a game rated no more, for ``reason``."""
    return options.model_copy(update={"rated": False, "unrated_reason": reason})


def as_asked(options: RoomOptions) -> RoomOptions:
    """``options`` as their room was asked for (a rematch's): a game the server unrated was
    asked rated, and its pairing is looked at anew."""
    if options.unrated_reason is None:
        return options
    return options.model_copy(update={"rated": True, "unrated_reason": None})


class Room:
    """One game between two seats, watched by any number of spectators: the rules of a room.
    Its parts: :class:`Seating`, :class:`Clocks`, :class:`Presence` (who is away, and what
    that makes of the room), :class:`Endings`; :mod:`tablas.server.views` shows it."""

    def __init__(
        self,
        room_id: str,
        game_id: str,
        options: Mapping[str, Any] | None,
        seats: Sequence[SeatState],
        *,
        clock: Clock = time.time,
        dice: DiceSource | None = None,
        seed: bytes | None = None,
        seeds: Seeds | None = NO_SEEDS,
        created_at: float | None = None,
        room_options: RoomOptions | None = None,
        created_by: str | None = None,
        status_at: float | None = None,
    ) -> None:
        if len(seats) != 2:
            raise RoomError("bad_request", "a room has exactly two seats")
        self.room_id = room_id
        self.game = game_for(game_id)
        self.options: JSON = dict(options or {})
        self.state: Any = initial_state(self.game, self.options)
        # Each seat's dice seed (docs/dice.md), in games with chance only; None there too for
        # a room stored before seat seeds, whose rolls keep the message without them.
        self.seating = Seating(room_id, seats, (seeds[0], seeds[1]) if seeds is not None
                               and self.game.has_chance else None, self)
        self.clock = clock
        self.created_at = clock() if created_at is None else created_at
        self.seed = seed
        if dice is None and self.game.has_chance:
            source = CommitRevealDice(room_id, seed, self.seeds)
            self.seed = source.seed
            dice = source
        self.dice = dice
        self.status: Status = "waiting"
        self.history: list[Action] = []
        self.opening_rolls: tuple[Dice, ...] = ()
        self.result: Outcome | None = None
        # Per state object (states are immutable): every message of a move reads them.
        self._legal_cache: tuple[Any, list[JSON]] | None = None
        self._to_move_cache: tuple[Any, int | None] | None = None
        self._state_json_cache: tuple[Any, JSON] | None = None
        self.room_options = room_options or RoomOptions()
        self.clocks = Clocks(self.room_options.clock, self)
        self.presence = Presence(self)
        self.endings = Endings(self)
        self.offers = Offers(self)  # draw offers, takebacks; it withdraws a resign offer too
        self.rating_change: list[dict[str, float]] | None = None  # a rated game's end's
        # Whether each seat has made a play (its first move: contract section 10's abort).
        self.played: list[bool] = [False, False]
        self.created_by = created_by  # a waiting room lives while its opener is around
        self.status_at = status_at  # when it was adjourned or closed
        # The rated players' ratings in this game (rated rooms: the owner reads them when
        # the room is made or loaded and a seat is taken, and keeps the new ones at the end).
        self.ratings: dict[str, float] = {}

    # --- reading -------------------------------------------------------------------------

    @property
    def game_id(self) -> str:
        return self.game.id

    @property
    def ply(self) -> int:
        return len(self.history)

    @property
    def seats(self) -> list[SeatState]:
        return self.seating.seats

    @property
    def seeds(self) -> Seeds | None:
        return self.seating.seeds

    @property
    def to_move(self) -> int | None:
        if self.status != "playing":
            return None
        cached = self._to_move_cache
        if cached is None or cached[0] is not self.state:
            cached = self._to_move_cache = (self.state, self.game.to_move(self.state))
        return cached[1]

    def state_json(self) -> JSON:
        cached = self._state_json_cache
        if cached is None or cached[0] is not self.state:
            cached = self._state_json_cache = (self.state, self.game.state_to_json(self.state))
        return cached[1]

    def seats_of(self, player_id: str | None) -> list[int]:
        return self.seating.of(player_id)

    def legal_moves(self) -> list[JSON]:
        """The full list for the seat to move (cached per ply)."""
        if self.to_move is None:
            return []
        if self._legal_cache is None or self._legal_cache[0] is not self.state:
            moves = [self.game.move_to_json(m) for m in self.game.legal_moves(self.state)]
            self._legal_cache = (self.state, moves)
        return self._legal_cache[1]

    def legal_for(self, player_id: str | None) -> list[JSON]:
        """``legal_moves`` as the contract sends it: only to the seat to move."""
        seat = self.to_move
        if seat is None or player_id is None:
            return []
        held = self.seating.seats[seat]  # asked for every follower of every move
        if held.kind != "human" or held.player_id != player_id:
            return []
        return self.legal_moves()

    def bot_to_move(self) -> int | None:
        seat = self.to_move
        return seat if seat is not None and self.seats[seat].kind == "bot" else None

    @property
    def rated(self) -> bool:
        return self.room_options.rated

    def unrate(self, reason: UnratedReason) -> None:
        """The game is rated no more, for ``reason`` (contract sections 10 and 16)."""
        self.room_options = _unrated(self.room_options, reason)

    # --- seats ---------------------------------------------------------------------------

    def seat_change(self, seats: list[SeatState], seeds: Seeds | None,
                    handover: Handover | None = None) -> SeatChange:
        """The change to ``seats`` and the seats' dice ``seeds`` (:class:`Seating` prepares
        them), with the start of the game (the opening roll, if the game has one) when they
        fill the last open seat of a waiting room. The opening roll already uses the new
        seeds: a seed given with the join that starts the game counts."""
        if self.status == "waiting" and all(s.filled for s in seats):
            dice = self.dice
            if isinstance(dice, CommitRevealDice):
                dice = dice.with_seeds(seeds)
            state, rolls = resolve_chance(self.game, self.state, dice, 0)
            return SeatChange(tuple(seats), "playing", rolls, state, self.clock(), handover,
                              seeds)
        return SeatChange(tuple(seats), self.status, self.opening_rolls, self.state, None,
                          handover, seeds)

    def commit_seats(self, change: SeatChange) -> None:
        """Makes a prepared seat change part of the room."""
        self.seating.take(change.seats, change.seeds)
        if change.unrated is not None:
            self.unrate(change.unrated)
        if isinstance(self.dice, CommitRevealDice):
            self.dice.seeds = change.seeds
        if change.handover is not None:
            self.presence.back(change.handover.seat)
            self.offers.withdraw()  # a bot now holds a seat an offer was between
        if change.started_at is not None:
            self.state, self.opening_rolls = change.state, change.opening_rolls
            self.status = change.status
            self.clocks.start(change.started_at)
            self.finish_if_over()

    def join(self, player_id: str, name: str, seat: int | None = None,
             seed: str | None = None, *, registered: bool = False, bot: bool = False) -> bool:
        """:meth:`Seating.prepare_join` and commit at once (a room nobody else sees yet: one
        being created); True if a seat changed hands."""
        change = self.seating.prepare_join(player_id, name, seat, seed, registered=registered,
                                           bot=bot)
        if change is not None:
            self.commit_seats(change)
        return change is not None

    def hand_to_bot(self, seat: int, level: Level) -> None:
        """:meth:`Seating.prepare_hand_to_bot` and commit at once (a room nobody sees)."""
        self.commit_seats(self.seating.prepare_hand_to_bot(seat, level, "hand_to_bot"))

    @property
    def ready(self) -> bool:
        return self.status == "waiting" and self.seating.full

    @property
    def open_seats(self) -> int:
        return self.seating.open

    @property
    def vacant(self) -> bool:
        """Waiting, and no person holds a seat: an open table nobody sits at."""
        return self.status == "waiting" and self.seating.unoccupied

    def start(self) -> None:
        """Starts the game (every seat filled): the opening roll, if the game has one."""
        if not self.ready:
            raise RoomError("bad_request", "the game starts when every seat is filled")
        self.commit_seats(self.seat_change(self.seating.copy(), self.seeds))

    # --- status without a move -----------------------------------------------------------

    def commit_lapse(self, lapse: Lapse) -> None:
        """Makes a prepared change of status part of the room. The clocks stop while a game is
        adjourned and run again from its resumption."""
        if lapse.status == "playing":
            self.clocks.start(lapse.at)
            self.presence.back()
        elif self.status == "playing":
            self.clocks.stop(at=lapse.at)
            self.offers.withdraw()
        self.status = lapse.status
        self.status_at = lapse.at

    # --- moves ---------------------------------------------------------------------------

    def check_in_play(self, seats: list[int], code: ErrorCode, not_started: str) -> None:
        """Refuses an act by the holder of ``seats`` (none: not seated) unless its game is
        being played; while a seat is open the error is ``code`` with ``not_started`` (moves
        and resignations answer it differently)."""
        if not seats:
            raise RoomError("not_seated", f"you hold no seat in room {self.room_id}")
        self.check_not_over()
        if self.status == "waiting":
            raise RoomError(code, not_started)

    def check_not_over(self) -> None:
        """Refuses an act in a room whose game is over or closed (``game_over``), or
        adjourned (it is resumed by joining it)."""
        if self.status == "finished":
            raise RoomError("game_over", f"the game in room {self.room_id} is over")
        if self.status == "closed":
            raise RoomError("game_over", f"room {self.room_id} is closed: its creator left")
        if self.status == "adjourned":
            raise RoomError("bad_request", f"the game in room {self.room_id} is adjourned:"
                            " join the room to resume it")

    def _check_turn(self, player_id: str | None, bot_seat: int | None, ply: int) -> int:
        if bot_seat is not None:
            seats = [bot_seat] if self.seats[bot_seat].kind == "bot" else []
        else:
            seats = self.seats_of(player_id)
        self.check_in_play(seats, "not_your_turn",
                            "the game has not started: a seat is still open")
        if ply != self.ply:
            raise RoomError("stale", f"ply {ply} is stale: the room is at ply {self.ply}")
        seat = self.to_move
        if seat is None or seat not in seats:
            raise RoomError("not_your_turn", f"it is seat {seat}'s turn")
        return seat

    def prepare_move(
        self, player_id: str | None, ply: int, move: Any, *, bot_seat: int | None = None
    ) -> Pending:
        """Checks a move by a player (or by the bot on ``bot_seat``); the room is unchanged.
        Persist it, then :meth:`commit` it; on :class:`Flagged`, end the game on time."""
        seat = self._check_turn(player_id, bot_seat, ply)
        self.endings.check_no_offer()
        game = self.game
        try:
            listed = game.check_move(self.state, game.move_from_json(self.state, move))
        except InvalidInputError as e:
            raise RoomError("illegal_move", f"not a move of {game.id}: {e}") from None
        except IllegalMoveError as e:
            raise RoomError("illegal_move", str(e)) from None
        now = self.clock()
        return self._pending(seat, listed, now, self.clocks.after(seat, now))

    def prepare_resignation(self, offer: ResignOffer) -> Pending:
        """The resignation ``offer`` accepted, as an action of the game (backgammon's: the
        game ends for its points and a match goes on to its next game); the clock that runs
        is charged, without increment. Persist it, then :meth:`commit` it."""
        self.check_not_over()
        try:
            listed = self.game.resignation(self.state, offer.seat, offer.points)
        except IllegalMoveError as e:
            raise RoomError("bad_request", str(e)) from None
        now = self.clock()
        return self._pending(offer.seat, listed, now, self.clocks.charged(now))

    def _pending(self, seat: int, listed: Any, now: float,
                 clocks: tuple[int, int] | None) -> Pending:
        """The checked action ``listed`` of ``seat`` at ``now``, leaving ``clocks``."""
        game = self.game
        state = game.apply(self.state, listed)
        state, rolls = resolve_chance(game, state, self.dice, self.ply + 1)
        action = Action(self.ply, seat, game.move_to_json(listed), rolls, now, clocks)
        outcome = game.outcome(state)
        play = game.is_play(listed)
        if outcome is not None:
            played = list(self.played)
            played[seat] = played[seat] or play
            outcome = self.conclude(outcome, played)
        return Pending(action, state, outcome, play)

    def commit(self, pending: Pending) -> Action:
        """Makes a prepared move part of the room (it must still be the next ply)."""
        if pending.action.index != self.ply:
            raise RoomError("stale", "the room moved on since the move was prepared")
        if pending.play:
            self.played[pending.action.seat] = True
        self.history.append(pending.action)
        self.offers.moved(pending.action.seat)
        self.state = pending.state
        self.clocks.commit(pending.action.clocks, pending.action.time)
        if pending.outcome is not None:  # prepare_move's, asked of the game once a move
            self.result = pending.outcome
            self.status = "finished"
        return pending.action

    def finish_if_over(self) -> None:
        """Ends a game whose position is over (one started or restored that way)."""
        outcome = self.game.outcome(self.state)
        if outcome is not None and self.status == "playing":
            self.result = outcome
            self.status = "finished"

    def note_played(self, actions: Sequence[Action]) -> None:
        """Which seats have made a play, from stored ``actions`` (a room being restored: a
        move's shape, in listed form, says whether it is a play)."""
        for a in actions:
            if not self.played[a.seat]:
                self.played[a.seat] = self.game.is_play(
                    self.game.move_from_json(self.state, a.move))

    def stake(self) -> int:
        """What a game ended by resignation, timeout or abandonment is worth (the game's
        :meth:`~tablas.engine.core.Game.stake`: 1, the cube's value, or a whole match)."""
        return self.game.stake(self.state)

    @property
    def opening(self) -> bool:
        """Whether a seat has yet to make its first play: the game may still be aborted."""
        return not all(self.played)

    @property
    def abortable(self) -> bool:
        """Whether a seated person may ``abort`` the game now (contract section 10)."""
        return self.status == "playing" and self.opening

    def conclude(self, outcome: Outcome, played: Sequence[bool] | None = None) -> Outcome:
        """How a game ending with ``outcome`` ends: a rated game that ends before each seat
        has made its first play (``played``, default the room's) is ``aborted`` — no winner,
        no rating (contract section 10)."""
        played = self.played if played is None else played
        if self.rated and not all(played) and outcome.reason != "aborted":
            return ABORTED
        return outcome

    def finish(self, outcome: Outcome, clocks: Sequence[int] | None = None) -> None:
        """Ends the game without a move; the clocks stop at ``clocks`` (default: now)."""
        self.clocks.stop(clocks)
        self.offers.withdraw()
        self.result = outcome
        self.status = "finished"


@dataclass(slots=True)
class RoomRecord:
    """A room as the store keeps it: :meth:`to_room` rebuilds it."""

    room_id: str
    game_id: str
    options: JSON
    status: Status
    seed: bytes | None
    created_at: float
    seats: list[SeatState]
    # The seats' dice seeds; None for a room stored before them (the old roll message).
    seeds: Seeds | None = NO_SEEDS
    opening_rolls: list[Dice] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    result: Outcome | None = None
    room_options: RoomOptions = field(default_factory=RoomOptions)
    final_clocks: list[int] | None = None
    created_by: str | None = None
    status_at: float | None = None
    rating_change: list[dict[str, float]] | None = None  # a rated game's, once finished
    # An arena game's seats' time left when they went berserk (ms; 0: not berserk).
    berserk: tuple[int, int] = (0, 0)

    def to_room(self, clock: Clock = time.time) -> Room:
        """The room, its game replayed action by action with its dice. Clocks resume from the
        time left after the last action (``final_clocks`` once the game is over); the running
        clock restarts now, so time the server was down is not charged to anyone."""
        room = Room(
            self.room_id, self.game_id, self.options, self.seats,
            clock=clock, seed=self.seed, seeds=self.seeds, created_at=self.created_at,
            room_options=self.room_options, created_by=self.created_by,
            status_at=self.status_at,
        )
        room.opening_rolls = tuple(self.opening_rolls)
        room.history = list(self.actions)
        if self.status != "waiting":
            room.state = replay(room.game, room.options, room.opening_rolls,
                                [(a.move, a.rolls) for a in self.actions])
            room.note_played(self.actions)
        room.status = self.status
        room.result = self.result
        room.rating_change = self.rating_change
        room.clocks.restore([a.clocks for a in self.actions],
                            self.final_clocks if self.status == "finished" else None,
                            self.berserk)
        if self.status == "playing":
            room.finish_if_over()
        return room
