"""A sans-I/O room: the authoritative game, its seats, its history. No asyncio, sockets or SQL.

Every change is two steps, so that the owner of the room (:class:`server.live_room.LiveRoom`)
can persist it in between: a ``prepare_*`` method checks it and computes what it leads to
without changing the room (or raises :class:`RoomError` with the contract's error code), and
``commit``, ``commit_seats`` or ``finish`` makes it so. A move prepares a :class:`Pending`, a
seat taken, freed or handed to a bot a :class:`SeatChange`, the end of a game without a move
an :class:`~engine.core.Outcome`. Time (``clock``) and dice (a
:class:`~server.dice.DiceSource`) are injected.

Chance nodes are resolved by the room itself at once: the opening roll when the game starts,
and any roll an action leads to (backgammon's ``roll``, ``take`` or a play when the cube is
not available). The rolls are recorded with the action that caused them; the opening roll
belongs to ply 0 (``opening_rolls``).

Room options (:class:`~server.protocol.RoomOptions`, not the game's): a chess clock per seat
(each action costs the time since the previous one, then earns the increment; the seat whose
time runs out loses on ``timeout``), and handing a seat to a bot, by its holder or after its
player has been away ``abandon_to_bot_after_ms``. Every time is read from the injected clock.

Fair rated play (contract section 10): until each seat has made its first play a seated
person may ``abort`` the game (no winner, ``aborted``), and a rated game that ends in any
other way before then ends ``aborted`` too (:meth:`Room.conclude`); a rated game with a clock
is never adjourned (its clock runs whoever is away), and the present player may claim a game
whose opponent has been away for the server's ``claim_after`` (:meth:`Room.prepare_claim`).

Rooms end (contract section 6): a person is *absent* once they have had no connection for the
server's ``abandon_after`` seconds. :meth:`Room.due` says what that makes of the room: a game
whose absent player faces a present person is won by that person (``abandoned``); a game with
no person present is ``adjourned`` (resumed when one of its players joins, :meth:`resume`); a
waiting room whose creator is absent is ``closed``. A :class:`Lapse` carries such a change of
status, prepared and committed like the others.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from engine.core import JSON, Game, Outcome
from engine.errors import IllegalMoveError, InvalidDiceError, InvalidInputError, UnknownGameError
from engine.games import get_game
from engine.records import replay
from engine.search.decision import Level
from server.dice import NO_SEEDS, CommitRevealDice, DiceSource, Seeds
from server.errors import ErrorCode, RoomError
from server.protocol import (
    RoomOptions,
    RoomSnapshot,
    RoomStatus,
    RoomSummary,
    SeatSummary,
    Update,
)
from server.ratings import RatingChange, bot_rating_id

Status = RoomStatus
# A game ended before each seat made its first play (contract section 10): unrated.
ABORTED = Outcome(winner=None, points=0, reason="aborted")
# The statuses of a room people can still join or watch play: the lobby lists these, and a
# room in one of them stays in memory until the absence of its people ends it.
LIVE: frozenset[Status] = frozenset({"waiting", "playing"})
Dice = tuple[int, int]
Clock = Callable[[], float]


class Flagged(RoomError):
    """A move came after its seat's time ran out: the caller ends the game with ``outcome``
    (and ``clocks``), then refuses the move (``game_over``)."""

    def __init__(self, outcome: Outcome, clocks: list[int]) -> None:
        super().__init__("game_over", f"seat {1 - (outcome.winner or 0)}'s time ran out")
        self.outcome = outcome
        self.clocks = clocks


@dataclass(slots=True)
class SeatState:
    kind: Literal["human", "bot"]
    level: Level | None = None
    player_id: str | None = None
    name: str | None = None

    @property
    def filled(self) -> bool:
        return self.kind == "bot" or self.player_id is not None


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


@dataclass(frozen=True, slots=True)
class Handover:
    """A seat handed to a bot, as the log of seat changes records it."""

    seat: int
    level: Level
    from_player: str | None
    reason: str  # "hand_to_bot" or "abandoned"
    ply: int
    time: float


@dataclass(frozen=True, slots=True)
class SeatChange:
    """Seats taken, freed or handed to a bot, and the start of the game if that fills the
    last one: checked, not yet part of the room. Persist it, then :meth:`Room.commit_seats`."""

    seats: tuple[SeatState, ...]
    status: Status
    opening_rolls: tuple[Dice, ...]
    state: Any
    started_at: float | None  # when the game started, if this starts it
    handover: Handover | None = None
    seeds: Seeds | None = None  # the seats' dice seeds after the change (None: no seeds)
    unrated: bool = False  # a rated room paired past the pair's cap: rated no more


@dataclass(frozen=True, slots=True)
class Lapse:
    """A change of status without a move: ``adjourned`` or ``playing`` again (a game), or
    ``closed`` (a waiting room), at ``at``. Persist it, then :meth:`Room.commit_lapse`."""

    status: Status
    at: float


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


def game_for(game_id: str) -> Game[Any, Any]:
    try:
        return get_game(game_id)
    except UnknownGameError as e:
        raise RoomError("unknown_game", str(e)) from None


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


class Room:
    """One game between two seats, watched by any number of spectators."""

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
        try:
            self.state: Any = self.game.initial(self.options)
            json.dumps(self.options)
        except (InvalidInputError, TypeError, ValueError) as e:
            raise RoomError("bad_request", f"bad options: {e}") from None
        self.seats = [SeatState(s.kind, s.level, s.player_id, s.name) for s in seats]
        self.clock = clock
        self.created_at = clock() if created_at is None else created_at
        self.seed = seed
        # Each seat's dice seed (docs/dice.md), in games with chance only; None there too for
        # a room stored before seat seeds, whose rolls keep the message without them.
        self.seeds: Seeds | None = (
            (seeds[0], seeds[1]) if seeds is not None and self.game.has_chance else None)
        if dice is None and self.game.has_chance:
            source = CommitRevealDice(room_id, seed, self.seeds)
            self.seed = source.seed
            dice = source
        self.dice = dice
        self.status: Status = "waiting"
        self.history: list[Action] = []
        self.opening_rolls: tuple[Dice, ...] = ()
        self.result: Outcome | None = None
        self._legal_cache: tuple[int, list[JSON]] | None = None
        # Per state object (states are immutable): every message of a move reads them, and
        # the rules recompute them each time (the state's JSON is ~15 µs for Connect-4).
        self._to_move_cache: tuple[Any, int | None] | None = None
        self._state_json_cache: tuple[Any, JSON] | None = None
        self.room_options = room_options or RoomOptions()
        clock_spec = self.room_options.clock
        # Each seat's time left (ms) when its clock last stopped; the running one started at
        # ``turn_started`` (the injected clock's time).
        self.remaining: list[int] | None = (
            None if clock_spec is None else [clock_spec.base_ms, clock_spec.base_ms]
        )
        self.turn_started: float | None = None
        # Since when each seat's player has been disconnected (while the game is played),
        # and the creator (while the room waits).
        self.away_since: list[float | None] = [None, None]
        # Whether each seat has made a play (its first move: contract section 10's abort).
        self.played: list[bool] = [False, False]
        self.creator_away_since: float | None = None
        # Who opened the room (a waiting room lives while they are around), and when it was
        # adjourned or closed.
        self.created_by = created_by
        self.status_at = status_at
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
        if player_id is None:
            return []
        return [i for i, s in enumerate(self.seats) if s.player_id == player_id]

    def legal_moves(self) -> list[JSON]:
        """The full list for the seat to move (cached per ply)."""
        if self.to_move is None:
            return []
        if self._legal_cache is None or self._legal_cache[0] != self.ply:
            moves = [self.game.move_to_json(m) for m in self.game.legal_moves(self.state)]
            self._legal_cache = (self.ply, moves)
        return self._legal_cache[1]

    def legal_for(self, player_id: str | None) -> list[JSON]:
        """``legal_moves`` as the contract sends it: only to the seat to move."""
        seat = self.to_move
        if seat is None or self.seats[seat].kind != "human":
            return []
        if self.seats[seat].player_id != player_id or player_id is None:
            return []
        return self.legal_moves()

    def bot_to_move(self) -> int | None:
        seat = self.to_move
        return seat if seat is not None and self.seats[seat].kind == "bot" else None

    def commitment(self) -> str | None:
        return self.dice.commitment() if self.dice is not None else None

    def revealed_seed(self) -> str | None:
        return self.seed.hex() if self.seed is not None and self.status == "finished" else None

    def result_data(self) -> dict[str, Any] | None:
        """The result as the messages carry it (the contract's ``Result``), None while playing."""
        r = self.result
        return None if r is None else {"winner": r.winner, "points": r.points, "reason": r.reason}

    def roll_data(self) -> list[dict[str, Any]]:
        """Every roll so far as the snapshot carries it (``Roll``): ``ply`` is the number of
        actions applied before it (0: the opening roll)."""
        return [{"ply": 0, "dice": list(r)} for r in self.opening_rolls] + [
            {"ply": a.index + 1, "dice": list(r)} for a in self.history for r in a.rolls]

    @property
    def rated(self) -> bool:
        return self.room_options.rated

    def rating_id(self, seat: int, seats: Sequence[SeatState] | None = None) -> str | None:
        """Who seat ``seat`` (of ``seats``, default the room's) is as a rated player: its
        person, or its bot's level in this game (None: an open seat)."""
        s = (self.seats if seats is None else seats)[seat]
        if s.kind == "bot":
            return bot_rating_id(self.game_id, s.level or "medium")
        return s.player_id

    def rating_ids(self) -> list[str]:
        return [pid for i in range(len(self.seats)) if (pid := self.rating_id(i)) is not None]

    def seat_rating(self, seat: int) -> int | None:
        """The seat's rating in this game, rounded, in a rated room (None elsewhere)."""
        pid = self.rating_id(seat) if self.rated else None
        rating = None if pid is None else self.ratings.get(pid)
        return None if rating is None else round(rating)

    def rated_players(self, seats: Sequence[SeatState] | None = None
                      ) -> tuple[str, str] | None:
        """Both seats' rated players (of ``seats``, default the room's), once the game is
        rated and both seats are filled."""
        if not self.rated:
            return None
        a, b = self.rating_id(0, seats), self.rating_id(1, seats)
        return None if a is None or b is None else (a, b)

    def unrate(self) -> None:
        """The game is rated no more (paired past its pair's cap: contract section 10)."""
        self.room_options = self.room_options.model_copy(update={"rated": False})

    def commit_ratings(self, changes: Sequence[RatingChange]) -> None:
        """The ratings a finished rated game left (shown in the final snapshot)."""
        for c in changes:
            self.ratings[c.player_id] = c.after.rating

    def snapshot(
        self,
        viewer: str | None,
        connected: Callable[[str], bool] = lambda _p: False,
        spectators: int = 0,
    ) -> RoomSnapshot:
        """The ``room`` message as ``viewer`` sees it (``connected`` says which players are)."""
        return RoomSnapshot.model_validate(self.snapshot_data(viewer, connected, spectators))

    def snapshot_data(
        self,
        viewer: str | None,
        connected: Callable[[str], bool] = lambda _p: False,
        spectators: int = 0,
    ) -> dict[str, Any]:
        """:meth:`snapshot` as the plain data its model holds, fields in the model's order,
        for :func:`~server.protocol.json_text` (the server sends one to every follower at the
        start and end of every game). A test holds this to the ``RoomSnapshot`` model."""
        seats = [
            {
                "seat": i,
                "kind": s.kind,
                "name": s.name if s.kind == "human" else f"bot ({s.level})",
                "level": s.level,
                "connected": True if s.kind == "bot" else (s.player_id is not None
                                                           and connected(s.player_id)),
                "player_id": s.player_id,
                "rating": self.seat_rating(i),
            }
            for i, s in enumerate(self.seats)
        ]
        return {
            "type": "room",
            "room_id": self.room_id,
            "game": self.game_id,
            "options": self.options,
            "seats": seats,
            "status": self.status,
            "ply": self.ply,
            "to_move": self.to_move,
            "state": self.state_json(),
            "legal_moves": self.legal_for(viewer),
            "history": [a.move for a in self.history],
            "result": self.result_data(),
            "spectators": spectators,
            "your_seats": self.seats_of(viewer),
            "rolls": self.roll_data(),
            "dice_commitment": self.commitment(),
            "dice_seed": self.revealed_seed(),
            "seeds": None if self.seeds is None else list(self.seeds),
            "room_options": self.room_options.model_dump(mode="json"),
            "clocks": self.live_clocks(),
            "clock_running": self.clock_running,
            "rated": self.rated,
            "abortable": self.status == "playing" and self.opening,
            "away_since_ms": self.away_since_ms(),
        }

    def update(self, action: Action, viewer: str | None) -> Update:
        """The ``update`` for ``action`` (which must be the latest) as ``viewer`` sees it."""
        return Update.model_validate(self.update_data(action, self.legal_for(viewer)))

    def update_data(self, action: Action, legal_moves: list[JSON]) -> dict[str, Any]:
        """:meth:`update` as the plain data its model holds, fields in the model's order, for
        :func:`~server.protocol.json_text`: every move sends it to every follower, and
        validating the room's own data would cost as much again as writing it. (A test
        holds this to the ``Update`` model.)"""
        return {
            "type": "update",
            "room_id": self.room_id,
            "ply": action.index + 1,
            "seat": action.seat,
            "move": action.move,
            "state": self.state_json(),
            "to_move": self.to_move,
            "legal_moves": legal_moves,
            "status": self.status,
            "result": self.result_data(),
            "dice": list(action.rolls[-1]) if action.rolls else None,
            "clocks": self.live_clocks(),
            "clock_running": self.clock_running,
            "abortable": self.status == "playing" and self.opening,
            "away_since_ms": self.away_since_ms(),
        }

    def away_since_ms(self) -> list[int | None]:
        """Since when each seat's player has been away, in epoch milliseconds of the room's
        clock (null: present, a bot, or the game is not being played)."""
        return [None if t is None else round(t * 1000) for t in self.away_since]

    def summary(self, spectators: int = 0) -> RoomSummary:
        return RoomSummary(
            room_id=self.room_id,
            game=self.game_id,
            status=self.status,
            seats=[
                SeatSummary(
                    seat=i,
                    kind=s.kind,
                    name=s.name if s.kind == "human" else f"bot ({s.level})",
                    level=s.level,
                    player_id=s.player_id,
                    rating=self.seat_rating(i),
                )
                for i, s in enumerate(self.seats)
            ],
            spectators=spectators,
            room_options=self.room_options,
            rated=self.rated,
        )

    # --- seats ---------------------------------------------------------------------------

    def prepare_join(self, player_id: str, name: str, seat: int | None = None,
                     seed: str | None = None, *, registered: bool = False
                     ) -> SeatChange | None:
        """Taking ``seat`` (or the first open one) with the seat's dice ``seed``, and the start
        of the game if it fills the last; None when the player holds it already (or any seat,
        when none is named) and the seed changes nothing. A rated room's seats are for
        registered players, one seat each."""
        if self.status == "closed":
            self._check_not_over()
        # A join's seed is ignored where there are no seat seeds (no dice, or a room from
        # before them): a client may then send one with every join without knowing the game.
        seed = None if self.seeds is None else seed
        held = self.seats_of(player_id)
        if seat is None:
            if held:
                return self._join_seed(player_id, seed)
            open_seats = [i for i, s in enumerate(self.seats) if not s.filled]
            if not open_seats:
                raise RoomError("seat_taken", f"room {self.room_id} has no open seat")
            seat = open_seats[0]
        if not 0 <= seat < len(self.seats):
            raise RoomError("bad_request", f"seat must be 0 or 1, got {seat}")
        if seat in held:
            return self._join_seed(player_id, seed)
        if self.seats[seat].filled:
            raise RoomError("seat_taken", f"seat {seat} of room {self.room_id} is taken")
        if self.rated and not registered:
            raise RoomError("not_authenticated", "a rated game's seats are for registered"
                            " players: register (or log in) first")
        if self.rated and held:
            raise RoomError("bad_request", "a rated game is played against someone else:"
                            " you hold a seat already")
        seats = self._seats_copy()
        seats[seat] = SeatState("human", None, player_id, name)
        return self._seat_change(seats, seeds=self._with_seed((seat,), seed))

    def _join_seed(self, player_id: str, seed: str | None) -> SeatChange | None:
        """A join of a seat already held: its seed changes while the room waits; once the
        game has started the seed is fixed and the join (a reconnection) just follows."""
        if seed is None or self.status != "waiting" or self.seeds is None:
            return None
        seeds = self._with_seed(self.seats_of(player_id), seed)
        return None if seeds == self.seeds else self._seat_change(self._seats_copy(),
                                                                    seeds=seeds)

    def _with_seed(self, seats: Sequence[int], seed: str | None) -> Seeds | None:
        """The room's seeds with ``seed`` for ``seats`` (None: unchanged)."""
        if self.seeds is None or seed is None:
            return self.seeds
        new = list(self.seeds)
        for i in seats:
            new[i] = seed
        return (new[0], new[1])

    def prepare_seed(self, player_id: str | None, seed: str) -> SeatChange:
        """The ``seed`` message: the holder's seats take ``seed`` while the room waits."""
        if self.seeds is None:
            raise RoomError("bad_request", f"room {self.room_id} takes no dice seeds")
        held = self.seats_of(player_id)
        if not held:
            raise RoomError("not_seated", f"you hold no seat of room {self.room_id}")
        if self.status == "closed":
            self._check_not_over()  # game_over: a closed room never rolls
        if self.status != "waiting":
            raise RoomError("bad_request", "seeds are fixed at the first roll")
        return self._seat_change(self._seats_copy(), seeds=self._with_seed(held, seed))

    def prepare_leave(self, player_id: str) -> SeatChange | None:
        """Freeing the player's seats while the game waits (during play they stay held);
        None when that changes nothing."""
        held = self.seats_of(player_id) if self.status == "waiting" else []
        if not held:
            return None
        seats = self._seats_copy()
        for i in held:
            seats[i] = SeatState(seats[i].kind, seats[i].level)
        # A freed seat's seed was its holder's: the next one starts from the empty seed.
        return self._seat_change(seats, seeds=self._with_seed(held, ""))

    def check_hand_to_bot(self, player_id: str | None, seat: int) -> None:
        """Refuses a handover by anyone but the seat's holder, or of a finished game."""
        if not 0 <= seat < len(self.seats):
            raise RoomError("bad_request", f"seat must be 0 or 1, got {seat}")
        if player_id is None or self.seats[seat].player_id != player_id:
            raise RoomError("not_seated", f"you do not hold seat {seat} of room {self.room_id}")
        self._check_not_over()
        if self.rated:
            raise RoomError("bad_request", "a rated game is not handed to a bot: resign it"
                            " or play it out")

    def _check_not_over(self) -> None:
        """Refuses an act in a room whose game is over or closed (``game_over``), or
        adjourned (it is resumed by joining it)."""
        if self.status == "finished":
            raise RoomError("game_over", f"the game in room {self.room_id} is over")
        if self.status == "closed":
            raise RoomError("game_over", f"room {self.room_id} is closed: its creator left")
        if self.status == "adjourned":
            raise RoomError("bad_request", f"the game in room {self.room_id} is adjourned:"
                            " join the room to resume it")

    def prepare_hand_to_bot(self, seat: int, level: Level, reason: str) -> SeatChange:
        """Seat ``seat`` becoming a bot's (a waiting room whose seats are all filled then
        starts); the caller has checked who may (:meth:`check_hand_to_bot`)."""
        seats = self._seats_copy()
        seats[seat] = SeatState("bot", level)
        handover = Handover(seat, level, self.seats[seat].player_id, reason, self.ply,
                            self.clock())
        return self._seat_change(seats, handover)

    def commit_seats(self, change: SeatChange) -> None:
        """Makes a prepared seat change part of the room."""
        self.seats = list(change.seats)
        self.seeds = change.seeds
        if change.unrated:
            self.unrate()
        if isinstance(self.dice, CommitRevealDice):
            self.dice.seeds = change.seeds
        if change.handover is not None:
            self.away_since[change.handover.seat] = None
        if change.started_at is not None:
            self.state, self.opening_rolls = change.state, change.opening_rolls
            self.status = change.status
            self.turn_started = change.started_at
            self._settle()

    def _seats_copy(self) -> list[SeatState]:
        return [SeatState(s.kind, s.level, s.player_id, s.name) for s in self.seats]

    def _seat_change(self, seats: list[SeatState], handover: Handover | None = None,
                     seeds: Seeds | None = None) -> SeatChange:
        """The change to ``seats`` (and the seats' dice ``seeds``; None: unchanged), with the
        start of the game (the opening roll, if the game has one) when they fill the last
        open seat of a waiting room. The opening roll already uses the new seeds: a seed
        given with the join that starts the game counts."""
        seeds = self.seeds if seeds is None else seeds
        if self.status == "waiting" and all(s.filled for s in seats):
            dice = self.dice
            if isinstance(dice, CommitRevealDice):
                dice = dice.with_seeds(seeds)
            state, rolls = resolve_chance(self.game, self.state, dice, 0)
            return SeatChange(tuple(seats), "playing", rolls, state, self.clock(), handover,
                              seeds)
        return SeatChange(tuple(seats), self.status, self.opening_rolls, self.state, None,
                          handover, seeds)

    def join(self, player_id: str, name: str, seat: int | None = None,
             seed: str | None = None, *, registered: bool = False) -> bool:
        """:meth:`prepare_join` and commit at once (a room nobody else sees yet: one being
        created); True if a seat changed hands."""
        change = self.prepare_join(player_id, name, seat, seed, registered=registered)
        if change is not None:
            self.commit_seats(change)
        return change is not None

    def hand_to_bot(self, seat: int, level: Level) -> None:
        """:meth:`prepare_hand_to_bot` and commit at once (for a room nobody else sees)."""
        self.commit_seats(self.prepare_hand_to_bot(seat, level, "hand_to_bot"))

    def rename(self, player_id: str, name: str) -> None:
        for i in self.seats_of(player_id):
            self.seats[i].name = name

    @property
    def ready(self) -> bool:
        return self.status == "waiting" and all(s.filled for s in self.seats)

    @property
    def open_seats(self) -> int:
        return sum(not s.filled for s in self.seats)

    @property
    def vacant(self) -> bool:
        """Waiting, and no person holds a seat: an open table nobody sits at."""
        return self.status == "waiting" and all(s.player_id is None for s in self.seats)

    def start(self) -> None:
        """Starts the game (every seat filled): the opening roll, if the game has one."""
        if not self.ready:
            raise RoomError("bad_request", "the game starts when every seat is filled")
        self.commit_seats(self._seat_change(self._seats_copy()))

    # --- clocks --------------------------------------------------------------------------

    @property
    def clock_running(self) -> int | None:
        """The seat whose clock runs: the seat to move, in a room with a clock."""
        return None if self.remaining is None else self.to_move

    def live_clocks(self, now: float | None = None) -> list[int] | None:
        """Each seat's time left now (ms, never below 0); None without a clock."""
        if self.remaining is None:
            return None
        out = list(self.remaining)
        seat = self.clock_running
        if seat is not None and self.turn_started is not None:
            now = self.clock() if now is None else now
            out[seat] -= round((now - self.turn_started) * 1000)
        return [max(0, ms) for ms in out]

    def stake(self) -> int:
        """What a game ended by resignation, timeout or abandonment is worth (the game's
        :meth:`~engine.core.Game.stake`: 1, the cube's value, or a whole match)."""
        return self.game.stake(self.state)

    def flag_fall(self, now: float | None = None) -> tuple[Outcome, list[int]] | None:
        """The end of the game if the running clock's time is up (the room is unchanged)."""
        seat = self.clock_running
        clocks = self.live_clocks(now)
        if seat is None or clocks is None or clocks[seat] > 0:
            return None
        return self.conclude(Outcome(winner=1 - seat, points=self.stake(),
                                     reason="timeout")), clocks

    def _clocks_after(self, seat: int, now: float) -> tuple[int, int] | None:
        """The clocks once ``seat`` acts at ``now``; :class:`Flagged` if its time is up."""
        if self.remaining is None or self.room_options.clock is None:
            return None
        flagged = self.flag_fall(now)
        if flagged is not None:
            raise Flagged(*flagged)
        left = list(self.remaining)
        started = self.turn_started if self.turn_started is not None else now
        left[seat] += -round((now - started) * 1000) + self.room_options.clock.increment_ms
        return left[0], left[1]

    def seconds_to_flag(self, now: float | None = None) -> float | None:
        """How long until the running clock's time is up (None: no clock is running)."""
        seat = self.clock_running
        clocks = self.live_clocks(now)
        if seat is None or clocks is None:
            return None
        return clocks[seat] / 1000

    # --- presence and bots taking over ---------------------------------------------------

    def sync_presence(self, connected: Callable[[str], bool], now: float | None = None) -> None:
        """Notes since when each seated player has been away (while the game is played) and
        the creator (while the room waits; a room without a known creator counts as left)."""
        now = self.clock() if now is None else now
        for i, s in enumerate(self.seats):
            away = (self.status == "playing" and s.kind == "human" and s.player_id is not None
                    and not connected(s.player_id))
            if not away:
                self.away_since[i] = None
            elif self.away_since[i] is None:
                self.away_since[i] = now
        creator_away = self.status == "waiting" and (
            self.created_by is None or not connected(self.created_by))
        if not creator_away:
            self.creator_away_since = None
        elif self.creator_away_since is None:
            self.creator_away_since = now

    def due(self, abandon_after: float | None, now: float | None = None) -> Outcome | Lapse | None:
        """What the absence of people makes of the room at ``now`` (contract section 6), from
        the presence last noted by :meth:`sync_presence`: a win for the present person over an
        absent one, the game adjourned (no person present), the waiting room closed (its
        creator absent); None: nothing yet, or ``abandon_after`` is None (rooms never end).
        A room with ``abandon_to_bot_after_ms`` hands absent seats to bots instead."""
        if abandon_after is None:
            return None
        now = self.clock() if now is None else now
        if self.status == "waiting":
            since = self.creator_away_since
            return Lapse("closed", now) if since is not None and now - since >= abandon_after \
                else None
        if self.status != "playing" or self.room_options.abandon_to_bot_after_ms is not None:
            return None
        people = [i for i, s in enumerate(self.seats) if s.kind == "human"]
        absent = [i for i in people if (t := self.away_since[i]) is not None
                  and now - t >= abandon_after]
        if not absent:
            return None
        present = [i for i in people if self.away_since[i] is None]
        if present:
            winner = present[0]
            return self.conclude(Outcome(winner=winner, points=self.stake(),
                                         reason="abandoned"))
        if len(absent) == len(people) and not self.never_adjourned:
            return Lapse("adjourned", now)
        return None  # the other person is away, not yet absent: their time decides

    def seconds_to_due(self, abandon_after: float | None, now: float | None = None
                       ) -> float | None:
        """How long until :meth:`due` may have something to say (0: now; None: never, as
        long as nobody comes or goes)."""
        if abandon_after is None:
            return None
        now = self.clock() if now is None else now
        if self.due(abandon_after, now) is not None:
            return 0.0
        if self.status == "waiting":
            since = [self.creator_away_since]
        elif self.status == "playing" and self.room_options.abandon_to_bot_after_ms is None:
            since = self.away_since
        else:
            return None
        waits = [t + abandon_after - now for t in since
                 if t is not None and t + abandon_after > now]
        return min(waits) if waits else None

    @property
    def never_adjourned(self) -> bool:
        """A rated game with a clock is never adjourned: its clock runs whoever is away, and
        a flag falls as usual (contract section 10)."""
        return self.rated and self.remaining is not None

    def prepare_resume(self, player_id: str) -> Lapse | None:
        """The adjourned game played again, when ``player_id`` holds a seat in it; None when
        the room is not adjourned or they hold none (a join then goes on as usual)."""
        if self.status != "adjourned" or not self.seats_of(player_id):
            return None
        return Lapse("playing", self.clock())

    def commit_lapse(self, lapse: Lapse) -> None:
        """Makes a prepared change of status part of the room. The clocks stop while a game is
        adjourned and run again from its resumption."""
        if lapse.status == "playing":
            self.turn_started = lapse.at
            self.away_since = [None, None]
        elif self.remaining is not None and self.status == "playing":
            live = self.live_clocks(lapse.at)
            assert live is not None
            self.remaining = live
        self.status = lapse.status
        self.status_at = lapse.at

    def seconds_to_abandon(self, now: float | None = None) -> float | None:
        """How long until an away player's seat goes to a bot (None: nobody will)."""
        after = self.room_options.abandon_to_bot_after_ms
        if after is None or self.status != "playing":
            return None
        now = self.clock() if now is None else now
        waits = [t + after / 1000 - now for t in self.away_since if t is not None]
        return max(0.0, min(waits)) if waits else None

    def abandoned(self, now: float | None = None) -> list[int]:
        """The seats whose player has been away for ``abandon_to_bot_after_ms``."""
        after = self.room_options.abandon_to_bot_after_ms
        if after is None or self.status != "playing":
            return []
        now = self.clock() if now is None else now
        return [i for i, t in enumerate(self.away_since)
                if t is not None and now - t >= after / 1000 and self.seats[i].kind == "human"]

    # --- moves ---------------------------------------------------------------------------

    def _check_in_play(self, seats: list[int], code: ErrorCode, not_started: str) -> None:
        """Refuses an act by the holder of ``seats`` (none: not seated) unless its game is
        being played; while a seat is open the error is ``code`` with ``not_started`` (moves
        and resignations answer it differently)."""
        if not seats:
            raise RoomError("not_seated", f"you hold no seat in room {self.room_id}")
        self._check_not_over()
        if self.status == "waiting":
            raise RoomError(code, not_started)

    def _check_turn(self, player_id: str | None, bot_seat: int | None, ply: int) -> int:
        if bot_seat is not None:
            seats = [bot_seat] if self.seats[bot_seat].kind == "bot" else []
        else:
            seats = self.seats_of(player_id)
        self._check_in_play(seats, "not_your_turn",
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
        """Checks a move by a player (or by the bot on ``bot_seat``); the room is unchanged."""
        seat = self._check_turn(player_id, bot_seat, ply)
        game = self.game
        try:
            listed = game.check_move(self.state, game.move_from_json(self.state, move))
        except InvalidInputError as e:
            raise RoomError("illegal_move", f"not a move of {game.id}: {e}") from None
        except IllegalMoveError as e:
            raise RoomError("illegal_move", str(e)) from None
        now = self.clock()
        clocks = self._clocks_after(seat, now)
        state = game.apply(self.state, listed)
        state, rolls = resolve_chance(game, state, self.dice, self.ply + 1)
        action = Action(self.ply, seat, game.move_to_json(listed), rolls, now, clocks)
        outcome = game.outcome(state)
        if outcome is not None:
            played = list(self.played)
            played[seat] = played[seat] or game.is_play(listed)
            outcome = self.conclude(outcome, played)
        return Pending(action, state, outcome)

    def commit(self, pending: Pending) -> Action:
        """Makes a prepared move part of the room (it must still be the next ply)."""
        if pending.action.index != self.ply:
            raise RoomError("stale", "the room moved on since the move was prepared")
        self._note_play(pending.action.seat, pending.action.move)
        self.history.append(pending.action)
        self.state = pending.state
        if pending.action.clocks is not None:
            self.remaining = list(pending.action.clocks)
            self.turn_started = pending.action.time
        if pending.outcome is not None:
            self.result = pending.outcome
            self.status = "finished"
        self._settle()
        return pending.action

    def _settle(self) -> None:
        outcome = self.game.outcome(self.state)
        if outcome is not None and self.status == "playing":
            self.result = outcome
            self.status = "finished"

    def _note_play(self, seat: int, move: JSON) -> None:
        """Seat ``seat`` made ``move`` (a move of the current state, in listed form)."""
        if not self.played[seat]:
            self.played[seat] = self.game.is_play(self.game.move_from_json(self.state, move))

    @property
    def opening(self) -> bool:
        """Whether a seat has yet to make its first play: the game may still be aborted."""
        return not all(self.played)

    def conclude(self, outcome: Outcome, played: Sequence[bool] | None = None) -> Outcome:
        """How a game ending with ``outcome`` ends: a rated game that ends before each seat
        has made its first play (``played``, default the room's) is ``aborted`` — no winner,
        no rating (contract section 10)."""
        played = self.played if played is None else played
        if self.rated and not all(played) and outcome.reason != "aborted":
            return ABORTED
        return outcome

    def prepare_resign(self, player_id: str) -> Outcome:
        seats = self.seats_of(player_id)
        self._check_in_play(seats, "bad_request", "the game has not started")
        # Holding both seats (playing oneself), the seat to move resigns.
        seat = self.to_move if self.to_move in seats else seats[0]
        assert seat is not None
        return self.conclude(Outcome(winner=1 - seat, points=self.stake(), reason="resign"))

    def prepare_abort(self, player_id: str | None) -> Outcome:
        """The ``abort`` message: a seated person ends the game without a winner while a seat
        has yet to make its first play; afterwards it is ``bad_request``."""
        seats = self.seats_of(player_id)
        self._check_in_play(seats, "bad_request",
                            "the game has not started: leave the room instead")
        if not self.opening:
            raise RoomError("bad_request", "both sides have moved: the game can no longer be"
                            " aborted (resign it, or play it out)")
        return ABORTED

    def prepare_claim(self, player_id: str | None, claim_after: float,
                      now: float | None = None) -> Outcome:
        """The ``claim_win`` message: the present player wins a game whose opponent has been
        away for ``claim_after`` seconds (from the presence last noted by
        :meth:`sync_presence`); earlier, or with the opponent present, ``bad_request``."""
        seats = self.seats_of(player_id)
        self._check_in_play(seats, "bad_request", "the game has not started")
        if len(seats) > 1:
            raise RoomError("bad_request", "you hold both seats: there is nobody to claim from")
        seat = seats[0]
        other = 1 - seat
        if self.seats[other].kind != "human":
            raise RoomError("bad_request", "your opponent is a bot: it never leaves")
        since = self.away_since[other]
        if since is None:
            raise RoomError("bad_request", "your opponent is here: play on")
        now = self.clock() if now is None else now
        if now - since < claim_after:
            raise RoomError("bad_request", (
                f"your opponent has been away for {max(0.0, now - since):.0f} s: you may claim"
                f" the win once they have been away for {claim_after:g} s"))
        return self.conclude(Outcome(winner=seat, points=self.stake(), reason="abandoned"))

    def finish(self, outcome: Outcome, clocks: Sequence[int] | None = None) -> None:
        """Ends the game without a move; the clocks stop at ``clocks`` (default: now)."""
        if self.remaining is not None:
            live = self.live_clocks() if clocks is None else list(clocks)
            assert live is not None
            self.remaining = live
        self.result = outcome
        self.status = "finished"

    # --- bots and restore ----------------------------------------------------------------

    def bot_job(self, budget_seed: int = 0) -> BotJob | None:
        seat = self.bot_to_move()
        if seat is None:
            return None
        level = self.seats[seat].level or "medium"
        clocks = self.live_clocks()
        return BotJob(
            game_id=self.game_id,
            options=self.options,
            opening_rolls=self.opening_rolls,
            actions=tuple((a.move, a.rolls) for a in self.history),
            seat=seat,
            ply=self.ply,
            level=level,
            seed=int.from_bytes(
                hashlib.sha256(f"{self.room_id}:{self.ply}:{budget_seed}".encode()).digest()[:4]
            ),
            time_left_ms=None if clocks is None else clocks[seat],
        )

    def restore(
        self,
        status: Status,
        opening_rolls: Sequence[Dice],
        actions: Sequence[Action],
        result: Outcome | None,
        final_clocks: Sequence[int] | None = None,
    ) -> None:
        """Rebuilds the room from stored data by replaying every action with its dice.

        Clocks resume from the time left after the last action (``final_clocks`` once the
        game is over); the running clock restarts now, so time the server was down is not
        charged to anyone."""
        self.opening_rolls = tuple(opening_rolls)
        self.history = list(actions)
        if status != "waiting":
            self.state = replay(
                self.game, self.options, self.opening_rolls,
                [(a.move, a.rolls) for a in actions],
            )
            for a in actions:  # (moves in listed form: their shape says whether they play)
                if not self.played[a.seat]:
                    self.played[a.seat] = self.game.is_play(
                        self.game.move_from_json(self.state, a.move))
        self.status = status
        self.result = result
        if self.remaining is not None:
            if final_clocks is not None and status == "finished":
                self.remaining = list(final_clocks)
            else:
                for a in reversed(actions):
                    if a.clocks is not None:
                        self.remaining = list(a.clocks)
                        break
            self.turn_started = self.clock()
        if status == "playing":
            self._settle()


@dataclass(slots=True)
class RoomRecord:
    """A room as the store keeps it (the arguments of :meth:`Room.restore`)."""

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

    def to_room(self, clock: Clock = time.time) -> Room:
        room = Room(
            self.room_id, self.game_id, self.options, self.seats,
            clock=clock, seed=self.seed, seeds=self.seeds, created_at=self.created_at,
            room_options=self.room_options, created_by=self.created_by,
            status_at=self.status_at,
        )
        room.restore(self.status, self.opening_rolls, self.actions, self.result,
                     self.final_clocks)
        return room
