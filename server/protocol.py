"""Every WebSocket message as a pydantic v2 model (contract section 3).

Client messages form one discriminated union on ``type``; they forbid unknown fields and are
validated strictly (a string where an integer belongs is a ``bad_request``, never coerced).
Server messages are models too, so ``docs/protocol.schema.json`` describes both directions;
``python -m tablas.server.protocol`` rewrites that file and a test checks it is current.

:func:`parse_client` turns one raw frame into a message or a :class:`ProtocolError` carrying the
contract's error code and the ``id`` to echo.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticSerializationError, to_json
from tablas.engine.search.decision import Level
from tablas.engine.search.scores import Proven
from tablas.server.dice import SEAT_SEED_PATTERN
from tablas.server.errors import ErrorCode, ProtocolError, Refused

MsgId = Annotated[str, Field(max_length=128)] | int
RoomId = Annotated[str, Field(min_length=1, max_length=64)]
Seat = Annotated[int, Field(ge=0, le=1)]
JSONObject = dict[str, Any]

MAX_NAME = 24
MAX_CHAT = 500

# What a name may not hold, by Unicode general category, with how the refusal names it.
# Co (private use) is refused too: its glyphs are whatever a font puts there, so nobody can
# tell what others see. Cn is judged by the running Python's Unicode database.
_NAME_REFUSED = {
    "Cc": "a control character",
    "Cf": "a format character (bidi control, zero-width character)",
    "Cn": "an unassigned code point",
    "Co": "a private-use character",
    "Cs": "a lone surrogate",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}
# Letters and symbols that draw nothing (fonts leave them blank), so a name of only these
# (with spaces) would look empty. U+3164 and U+FFA0 become U+1160 under NFKC, and U+180E (Cf)
# and U+17B4/U+17B5 (Mn) never count anyway: they are listed so the set reads as the list of
# known blanks it is.
INVISIBLE_FILLERS = frozenset(
    "\u115f\u1160\u3164\uffa0"  # Hangul choseong, jungseong, compatibility, halfwidth fillers
    "\u2800"  # braille pattern blank
    "\u180e"  # Mongolian vowel separator
    "\u17b4\u17b5"  # Khmer inherent vowels
    "\U0001d159"  # musical symbol null notehead
)
# Marks draw on the character before them, never by themselves (and some, the variation
# selectors, draw nothing): they do not make a name visible.
_NOT_VISIBLE_CATEGORIES = frozenset({"Zs", "Mn", "Me"})


def clean_name(name: str) -> str:
    """A display name as stored and shown: the NFKC form, runs of spaces made one space and
    the ends stripped, 1–24 characters, with no control, format, unassigned, private-use or
    surrogate character and at least one visible character; else ``ValueError`` saying
    what is wrong."""
    _refuse(name, _NAME_REFUSED, "name")
    # NFKC first: it turns the other spaces (no-break, ideographic, en…) into U+0020.
    name = " ".join(unicodedata.normalize("NFKC", name).split())
    if not name:
        raise ValueError("name is empty (or only spaces)")
    if len(name) > MAX_NAME:
        raise ValueError(f"name is {len(name)} characters after NFKC normalisation;"
                         f" at most {MAX_NAME}")
    if not any(unicodedata.category(c) not in _NOT_VISIBLE_CATEGORIES
               and c not in INVISIBLE_FILLERS for c in name):
        raise ValueError("name has no visible character (only spaces, fillers such as"
                         " U+3164 or combining marks)")
    return name


# What a chat line may not hold: a newline is the one control character it keeps.
_CHAT_REFUSED = {
    "Cc": "a control character other than a newline",
    "Cf": "a format character (bidi control, zero-width character)",
    "Cs": "a lone surrogate",
    "Zl": "a line separator (use a newline)",
    "Zp": "a paragraph separator (use a newline)",
}


def clean_chat(text: str) -> str:
    """A chat line as stored and sent: ``\\r\\n`` and a lone ``\\r`` become ``\\n``; any other
    control character, a format character or a lone surrogate is a ``ValueError``."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    _refuse(text.replace("\n", ""), _CHAT_REFUSED, "chat text")
    return text


def _refuse(text: str, refused: dict[str, str], what: str) -> None:
    for c in text:
        reason = refused.get(unicodedata.category(c))
        if reason is not None:
            raise ValueError(f"{what} must not contain {reason}: U+{ord(c):04X}")


# --- client → server ----------------------------------------------------------------------


class ClientMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    id: MsgId | None = None


class Hello(ClientMessage):
    type: Literal["hello"]
    name: str
    token: Annotated[str, Field(min_length=1, max_length=128)] | None = None
    password: Annotated[str, Field(min_length=1, max_length=128)] | None = Field(
        default=None, description="additive: log into the registered player of this name"
        " (without a token)")

    @model_validator(mode="after")
    def _one_way_in(self) -> Hello:
        if self.password is not None and self.token is not None:
            raise ValueError("give a token or a password, not both")
        return self

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return clean_name(v)


class Register(ClientMessage):
    """Additive: the sender's current name (or ``name``) becomes theirs, with this password."""

    type: Literal["register"]
    password: Annotated[str, Field(min_length=8, max_length=128)]
    name: str | None = Field(
        default=None, description="additive: register this name instead of the current one"
        " (the player is renamed to it; refused as hello refuses a name, nothing changed)")
    bot: bool = Field(
        default=False, description="additive: register a bot account, a player a program"
        " drives (contract section 12); an account never changes kind")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str | None) -> str | None:
        return None if v is None else clean_name(v)


class HumanSeat(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    kind: Literal["human"]


class BotSeat(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    kind: Literal["bot"]
    level: Level = "medium"


SeatSpec = Annotated[HumanSeat | BotSeat, Field(discriminator="kind")]


MAX_CLOCK_MS = 24 * 3600 * 1000
MIN_CLOCK_MS = 10_000  # contract section 6: a clock gives each side at least 10 seconds


class ClockSpec(BaseModel):
    """Additive: a chess clock per seat, ``base_ms`` each, ``increment_ms`` added per action."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    base_ms: Annotated[int, Field(ge=1, le=MAX_CLOCK_MS)]
    increment_ms: Annotated[int, Field(ge=0, le=MAX_CLOCK_MS)] = 0


def _long_enough(clock: ClockSpec) -> ClockSpec:
    """A clock a request asks for (``create_room``, ``seek``, ``challenge``,
    ``create_tournament``) gives each side :data:`MIN_CLOCK_MS` at least. On requests only:
    rooms stored with a shorter clock still load."""
    if clock.base_ms < MIN_CLOCK_MS:
        raise ValueError(f"a clock gives each side at least {MIN_CLOCK_MS} ms")
    return clock


RequestedClock = Annotated[ClockSpec, AfterValidator(_long_enough)]


def _rated_has_clock(rated: bool, clock: ClockSpec | None) -> None:
    """Contract section 10: a rated game (a room, a seek, a challenge) has a clock."""
    if rated and clock is None:
        raise ValueError("a rated game has a clock: give clock {base_ms, increment_ms}"
                         " (contract section 10)")


# Why a game created or sought rated is not (contract sections 10 and 16).
UnratedReason = Literal["pair_cap", "shared_address"]


class RoomOptions(BaseModel):
    """Additive: options of the room itself (not of the game), set at ``create_room``."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    show_analysis: bool = Field(
        default=False, description="players too (not only spectators) receive `analysis`")
    clock: ClockSpec | None = None
    abandon_to_bot_after_ms: Annotated[int, Field(ge=1, le=MAX_CLOCK_MS)] | None = Field(
        default=None,
        description="a seat whose player is disconnected this long goes to a medium bot")
    rated: bool = Field(default=False, description="the game changes Glicko-2 ratings")
    tournament_id: str | None = Field(
        default=None, description="the tournament whose game this is (never adjourned)")
    unrated_reason: UnratedReason | None = Field(
        default=None, description="set by the server: why a game asked rated is not")


# Additive: a seat's dice seed (docs/dice.md); the pattern keeps ":" and "#" out of it.
SeatSeed = Annotated[str, Field(pattern=SEAT_SEED_PATTERN, max_length=64,
                                description="a seat's dice seed: 0-64 of [0-9A-Za-z]")]


class CreateRoom(ClientMessage):
    type: Literal["create_room"]
    game: Annotated[str, Field(max_length=64)]
    options: JSONObject = Field(default_factory=dict)
    seats: Annotated[list[SeatSpec], Field(min_length=2, max_length=2)]
    join_seat: Seat | None = None
    show_analysis: bool = Field(default=False, description="additive: see RoomOptions")
    clock: RequestedClock | None = Field(default=None, description="additive: see RoomOptions")
    abandon_to_bot_after_ms: Annotated[int, Field(ge=1, le=MAX_CLOCK_MS)] | None = Field(
        default=None, description="additive: see RoomOptions")
    seed: SeatSeed | None = Field(default=None, description="additive: join_seat's dice seed")
    rated: bool = Field(default=False, description="additive: see RoomOptions")

    @model_validator(mode="after")
    def _rated(self) -> CreateRoom:
        _rated_has_clock(self.rated, self.clock)
        if self.rated and all(isinstance(s, BotSeat) for s in self.seats):
            raise ValueError("a rated game needs a person: bot against bot is not rated")
        if self.rated and self.abandon_to_bot_after_ms is not None:
            raise ValueError("a rated game cannot hand seats to bots"
                             " (abandon_to_bot_after_ms): an absent player loses it")
        return self

    def room_options(self) -> RoomOptions:
        return RoomOptions(show_analysis=self.show_analysis, clock=self.clock,
                           abandon_to_bot_after_ms=self.abandon_to_bot_after_ms,
                           rated=self.rated)


class Join(ClientMessage):
    type: Literal["join"]
    room_id: RoomId
    seat: Seat | None = None
    seed: SeatSeed | None = Field(default=None, description="additive: the seat's dice seed")


class Seed(ClientMessage):
    """Additive: the sender's seats take this dice seed (while the room waits)."""

    type: Literal["seed"]
    room_id: RoomId
    seed: SeatSeed


class Spectate(ClientMessage):
    type: Literal["spectate"]
    room_id: RoomId


class Leave(ClientMessage):
    type: Literal["leave"]
    room_id: RoomId


class ListRooms(ClientMessage):
    type: Literal["list_rooms"]


class Move(ClientMessage):
    type: Literal["move"]
    room_id: RoomId
    ply: Annotated[int, Field(ge=0)]
    move: JSONObject


class Resign(ClientMessage):
    """Gives up the game (a backgammon match: the whole match) at once; with ``points``
    (backgammon, contract section 8), offers to give up the current game for 1 (single), 2
    (gammon) or 3 (backgammon) times the cube, which the other side accepts or declines."""

    type: Literal["resign"]
    room_id: RoomId
    points: Annotated[int, Field(strict=True, ge=1, le=3)] | None = Field(
        default=None, description="additive: backgammon: the value of the game given up (times"
        " the cube: 1 single, 2 gammon, 3 backgammon), offered to the other side")


class AcceptResign(ClientMessage):
    """The other side's resignation offer accepted: the current game ends for its points
    (contract section 8)."""

    type: Literal["accept_resign"]
    room_id: RoomId


class DeclineResign(ClientMessage):
    """The other side's resignation offer declined: play goes on."""

    type: Literal["decline_resign"]
    room_id: RoomId


class Abort(ClientMessage):
    """Ends a game before each seat has made its first move, without a winner (``aborted``,
    unrated). Contract section 10."""

    type: Literal["abort"]
    room_id: RoomId


class ClaimWin(ClientMessage):
    """The present player claims the game of an opponent away for ``--claim-after`` seconds
    (contract section 10)."""

    type: Literal["claim_win"]
    room_id: RoomId


class Offer(ClientMessage):
    """A draw offer or a takeback (contract section 7), and their answers: not in
    backgammon; takebacks in casual games only."""

    type: Literal["offer_draw", "accept_draw", "decline_draw", "takeback", "accept_takeback",
                  "decline_takeback"]
    room_id: RoomId


class Chat(ClientMessage):
    """Additive: a line of text to everyone in the room (players and spectators)."""

    type: Literal["chat"]
    room_id: RoomId
    text: Annotated[str, Field(min_length=1, max_length=MAX_CHAT)]

    @field_validator("text")
    @classmethod
    def _text(cls, v: str) -> str:
        return clean_chat(v)


class Rematch(ClientMessage):
    """Additive: a new room with the same game, options and seat kinds, the seats swapped."""

    type: Literal["rematch"]
    room_id: RoomId


class HandToBot(ClientMessage):
    """Additive: the holder of ``seat`` hands it to a bot of ``level`` (mid-game too)."""

    type: Literal["hand_to_bot"]
    room_id: RoomId
    seat: Seat
    level: Level = "medium"


# --- meeting an opponent (contract section 11) ---

GameId = Annotated[str, Field(max_length=64)]
RatingBound = Annotated[float, Field(ge=0, le=10_000)]
# A seek's or challenge's id: what the server gave (``seeking``, ``challenge_sent``).
MeetId = Annotated[str, Field(min_length=1, max_length=64)]


class _Terms(ClientMessage):
    """What a seek and a challenge both ask for: the game, its options, the clock, rated."""

    game: GameId
    options: JSONObject = Field(default_factory=dict)
    clock: RequestedClock | None = None
    rated: bool = False

    @model_validator(mode="after")
    def _rated(self) -> _Terms:
        _rated_has_clock(self.rated, self.clock)
        return self

    def room_options(self) -> RoomOptions:
        return RoomOptions(clock=self.clock, rated=self.rated)


class SeekRequest(_Terms):
    """Asks for an opponent: paired at once with the oldest compatible seek, else open
    until paired, canceled or its connection closes."""

    type: Literal["seek"]
    rating_range: tuple[RatingBound, RatingBound] | None = None

    @field_validator("rating_range")
    @classmethod
    def _range(cls, v: tuple[float, float] | None) -> tuple[float, float] | None:
        if v is not None and v[0] > v[1]:
            raise ValueError("a rating range is [LO, HI] with LO <= HI")
        return v


class CancelSeek(ClientMessage):
    type: Literal["cancel_seek"]
    seek_id: MeetId


class AcceptSeek(ClientMessage):
    type: Literal["accept_seek"]
    seek_id: MeetId


class ChallengeRequest(_Terms):
    """Challenges the registered player ``to`` (or a house bot, by its shown name)."""

    type: Literal["challenge"]
    to: Annotated[str, Field(min_length=1, max_length=64)]


class AcceptChallenge(ClientMessage):
    type: Literal["accept_challenge"]
    challenge_id: MeetId


class DeclineChallenge(ClientMessage):
    type: Literal["decline_challenge"]
    challenge_id: MeetId


class CancelChallenge(ClientMessage):
    type: Literal["cancel_challenge"]
    challenge_id: MeetId


# --- tournaments (contract section 13) ---

TournamentId = Annotated[str, Field(min_length=1, max_length=64)]
InvitedName = Annotated[str, Field(min_length=1, max_length=64)]


class CreateTournament(ClientMessage):
    """A tournament, waiting for its entrants (registered players only)."""

    type: Literal["create_tournament"]
    game: GameId
    options: JSONObject = Field(default_factory=dict)
    clock: RequestedClock
    format: Literal["round_robin", "swiss", "arena"]
    rounds: Annotated[int, Field(ge=1, le=30)] | None = None
    minutes: Annotated[int, Field(ge=10, le=180)] | None = Field(
        default=None, description="an arena's length (contract section 19)")
    games_per_pairing: Literal[1, 2] = 1
    rated: bool = False
    max_players: Annotated[int, Field(ge=2, le=64)] = 64
    house_bots: Annotated[list[Level], Field(max_length=5)] = Field(default_factory=list)
    entry: Literal["open", "invite"] = "open"  # section 17: invite-only refuses others
    invited: Annotated[list[InvitedName], Field(max_length=64)] = Field(default_factory=list)

    @model_validator(mode="after")
    def _shape(self) -> CreateTournament:
        if self.format == "swiss" and self.rounds is None:
            raise ValueError("a Swiss tournament says how many rounds it has: give rounds")
        if (self.format == "arena") != (self.minutes is not None):
            raise ValueError("an arena, and only an arena, says how many minutes it lasts:"
                             " give minutes (10-180)")
        if self.format == "arena" and self.rounds is not None:
            raise ValueError("an arena has no rounds: give minutes")
        if len(set(self.house_bots)) != len(self.house_bots):
            raise ValueError("a house bot level enters once")
        if len(self.house_bots) > self.max_players:
            raise ValueError("more house bots than max_players")
        return self


class JoinTournament(ClientMessage):
    type: Literal["join_tournament"]
    tournament_id: TournamentId


class InviteTournament(ClientMessage):
    """Section 17: its creator invites more names while it waits."""

    type: Literal["invite_tournament"]
    tournament_id: TournamentId
    names: Annotated[list[InvitedName], Field(min_length=1, max_length=64)]


class LeaveTournament(ClientMessage):
    type: Literal["leave_tournament"]
    tournament_id: TournamentId


class StartTournament(ClientMessage):
    type: Literal["start_tournament"]
    tournament_id: TournamentId


class Berserk(ClientMessage):
    """Contract section 19: in an arena game, before one's first move: half one's time, no
    increment, and a win scores one point more. Answered with the room's snapshot."""

    type: Literal["berserk"]
    room_id: RoomId


class Block(ClientMessage):
    """Contract section 15: a registered player stops hearing from the player named
    ``name`` (challenges, pairing, chat); kept with the account."""

    type: Literal["block"]
    name: Annotated[str, Field(min_length=1, max_length=128)]


class Unblock(ClientMessage):
    type: Literal["unblock"]
    name: Annotated[str, Field(min_length=1, max_length=128)]


class BlocksRequest(ClientMessage):
    """One's own list of blocked players (answered by :class:`BlocksList`)."""

    type: Literal["blocks"]


_CLIENT_MODELS = (Hello, CreateRoom, Join, Spectate, Leave, ListRooms, Move, Resign, Chat,
                  Rematch, HandToBot, Seed, Register, Abort, ClaimWin, AcceptResign,
                  DeclineResign, SeekRequest, CancelSeek, AcceptSeek, ChallengeRequest,
                  AcceptChallenge, DeclineChallenge, CancelChallenge, CreateTournament,
                  JoinTournament, LeaveTournament, StartTournament, Block, Unblock,
                  BlocksRequest, Offer, InviteTournament, Berserk)
AnyClientMessage = Annotated[
    Hello | CreateRoom | Join | Spectate | Leave | ListRooms | Move | Resign | Chat | Rematch
    | HandToBot | Seed | Register | Abort | ClaimWin | AcceptResign | DeclineResign
    | SeekRequest | CancelSeek | AcceptSeek | ChallengeRequest | AcceptChallenge
    | DeclineChallenge | CancelChallenge | CreateTournament | JoinTournament | LeaveTournament
    | StartTournament | Block | Unblock | BlocksRequest | Offer | InviteTournament | Berserk,
    Field(discriminator="type"),
]
CLIENT_ADAPTER: TypeAdapter[AnyClientMessage] = TypeAdapter(AnyClientMessage)
CLIENT_TYPES: frozenset[str] = frozenset(
    t for m in _CLIENT_MODELS
    for t in m.model_fields["type"].annotation.__args__  # type: ignore[union-attr]
)


# How a person is told what is wrong with a hello or a register (the page shows the message
# as it is): a sentence per field and kind of error, never a path like "register.password".
_ACCOUNT_SENTENCES = {
    ("password", "string_too_short"): "A password needs at least {min_length} characters.",
    ("password", "string_too_long"): "A password may have at most {max_length} characters.",
    ("password", "string_type"): "A password must be text.",
    ("name", "string_type"): "A name must be text.",
    ("name", "missing"): "Please give a name.",
    ("token", "string_too_short"): "A token must not be empty.",
    ("token", "string_too_long"): "That token is not one this server gave.",
    ("token", "string_type"): "A token must be text.",
}


def _sentence(kind: str, err: Any) -> str:
    """A hello's or register's error as a sentence."""
    field = str(err["loc"][1]) if len(err["loc"]) > 1 else ""
    if err["type"] == "extra_forbidden":
        return f"A {kind} message has no field {field!r}."
    if err["type"] == "value_error":
        why = str(err.get("ctx", {}).get("error", err["msg"]))
        if field == "name":
            return f"That name cannot be used: the {why}."
        return why[:1].upper() + why[1:] + "."
    if field == "password" and err["type"] == "string_too_short" and \
            err.get("ctx", {}).get("min_length") == 1:
        return "A password must not be empty."
    template = _ACCOUNT_SENTENCES.get((field, err["type"]))
    if template is None:
        return f"The {field or 'message'} of this {kind} is not right: {err['msg']}."
    return template.format(**err.get("ctx", {}))


def _account_reason(e: ValidationError
                    ) -> tuple[str | None, dict[str, str | int | float] | None]:
    """The kind of a hello's or register's first error, for a page that words it in its own
    language (the ``error``'s additive ``reason`` and ``params``), when a page can word it."""
    err = e.errors()[0]
    field = str(err["loc"][1]) if len(err["loc"]) > 1 else ""
    ctx = err.get("ctx", {})
    if field == "password" and err["type"] == "string_too_short":
        return "password_too_short", {"min": int(ctx.get("min_length", 1))}
    if field == "password" and err["type"] == "string_too_long":
        return "password_too_long", {"max": int(ctx.get("max_length", 0))}
    if field == "name":
        return "name_invalid", None
    return None, None


def _describe(kind: str, e: ValidationError) -> str:
    parts = []
    for err in e.errors()[:3]:
        if kind in ("hello", "register"):
            parts.append(_sentence(kind, err))
            continue
        where = ".".join(str(x) for x in err["loc"]) or "message"
        parts.append(f"{where}: {err['msg']}")
    return " ".join(parts) if kind in ("hello", "register") else "; ".join(parts)


def parse_client(raw: str | bytes) -> AnyClientMessage:
    """One frame as a client message, or :class:`ProtocolError` (bad_request/unknown_type)."""
    try:
        # A well-formed frame is parsed and validated in one pass; anything this refuses
        # (also what Python's json module would read differently: NaN, lone surrogates)
        # takes the path below, which decides and words the error.
        return CLIENT_ADAPTER.validate_json(raw)
    except ValidationError:
        pass
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        raise ProtocolError("bad_request", "the frame is not valid JSON") from None
    if not isinstance(obj, dict):
        raise ProtocolError("bad_request", "a frame must be a JSON object")
    msg_id = obj.get("id")
    re = msg_id if isinstance(msg_id, str | int) and not isinstance(msg_id, bool) else None
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise ProtocolError("bad_request", "a frame needs a string field 'type'", re)
    if kind not in CLIENT_TYPES:
        raise ProtocolError("unknown_type", f"unknown message type {kind[:40]!r}", re)
    try:
        return CLIENT_ADAPTER.validate_python(obj)
    except ValidationError as e:
        if kind in ("hello", "register"):  # a person reads these: sentences only
            reason, params = _account_reason(e)
            raise ProtocolError("bad_request", _describe(kind, e), re, reason=reason,
                                params=params) from None
        raise ProtocolError("bad_request", f"{kind}: {_describe(kind, e)}", re) from None


def peek_id(raw: str | bytes) -> str | int | None:
    """The ``id`` of a frame, if it has a usable one (for answers to refused frames)."""
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    msg_id = obj.get("id") if isinstance(obj, dict) else None
    return msg_id if isinstance(msg_id, str | int) and not isinstance(msg_id, bool) else None


# --- server → client ----------------------------------------------------------------------


class ServerMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    re: str | int | None = Field(default=None, description="the id of the message answered")

    def to_json(self) -> str:
        try:
            # pydantic's own serialiser writes the text at once (a third of the time of a
            # dict dumped by json.dumps, and it is every update's cost).
            return self.model_dump_json(exclude=_NO_RE if self.re is None else None)
        except PydanticSerializationError:  # a lone surrogate (an odd client id): not UTF-8
            data = self.model_dump(mode="json")
            if data.get("re") is None:
                data.pop("re", None)
            return json_text(data)


_NO_RE: set[str] = {"re"}  # never changed: pydantic asks for a set


def json_text(value: Any) -> str:
    """``value`` (plain JSON data) as compact JSON text, by pydantic-core's encoder: the
    standard library's ``json.dumps`` builds an encoder per call, several times the cost, and
    the server writes such a text for every move. A lone surrogate (an odd client id),
    which is not UTF-8, is escaped by ``json`` instead."""
    try:
        return to_json(value).decode()
    except PydanticSerializationError:
        return json.dumps(value, separators=(",", ":"))


def with_re(text: str, re: str | int | None) -> str:
    """``text`` (a :meth:`ServerMessage.to_json` without ``re``) as the answer to ``re``:
    one message serialised once, then sent to the asker and to everyone else."""
    if re is None:
        return text
    return '{"re":' + (str(re) if type(re) is int else json_text(re)) + "," + text[1:]


def _nobody_away() -> list[int | None]:
    return [None, None]


# "adjourned" and "closed": contract section 6 (server/room.py says when).
RoomStatus = Literal["waiting", "playing", "finished", "adjourned", "closed"]


class Result(BaseModel):
    model_config = ConfigDict(extra="forbid")

    winner: Seat | None
    points: int
    reason: str


class SeatView(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seat: Seat
    kind: Literal["human", "bot"]
    name: str | None
    level: Level | None
    connected: bool
    player_id: str | None = Field(default=None, description="additive: the seated player")
    rating: int | None = Field(
        default=None, description="additive: the seat's rating in this game (rated rooms)")
    bot: bool = Field(
        default=False, description="additive: the seated player is a bot account (kind"
        " human: a registered player a program drives; contract section 12)")


class SeatSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seat: Seat
    kind: Literal["human", "bot"]
    name: str | None
    level: Level | None
    player_id: str | None = Field(default=None, description="additive: the seated player")
    rating: int | None = Field(
        default=None, description="additive: the seat's rating in this game (rated rooms)")
    bot: bool = Field(
        default=False, description="additive: the seated player is a bot account (kind"
        " human: a registered player a program drives; contract section 12)")


class RoomSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    room_id: str
    game: str
    status: RoomStatus
    seats: list[SeatSummary]
    spectators: int
    room_options: RoomOptions = Field(
        default_factory=RoomOptions, description="additive: the room's options (its clock)")
    rated: bool = Field(default=False, description="additive: a rated game")


class RecentGame(BaseModel):
    """Additive: a game that ended since the server started, as the lobby lists it (its
    ``recent`` games, each with a link to its review): the seats as they were at its end,
    ``plies`` the actions played, ``ended_at`` the server's time it ended (seconds)."""

    model_config = ConfigDict(extra="forbid")

    room_id: str
    game: str
    seats: list[SeatSummary]
    result: Result | None
    plies: int
    ended_at: float


class Roll(BaseModel):
    """Additive: dice rolled by the room; ``ply`` is the number of actions applied before."""

    model_config = ConfigDict(extra="forbid")

    ply: int
    dice: list[int]


class Welcome(ServerMessage):
    type: Literal["welcome"] = "welcome"
    player_id: str
    name: str
    token: str
    seats: list[JSONObject] = Field(
        default_factory=list,
        description="additive: [{room_id, seat, status}] seats held in rooms waiting,"
                    " playing or adjourned",
    )
    registered: bool = Field(default=False, description="additive: a registered player")
    bot: bool = Field(default=False, description="additive: a bot account (contract"
                      " section 12)")


class Registered(ServerMessage):
    """Additive: the answer to ``register``: ``name`` is the player's from now on."""

    type: Literal["registered"] = "registered"
    player_id: str
    name: str


class RoomCreated(ServerMessage):
    type: Literal["room_created"] = "room_created"
    room_id: str


class ResignOfferView(BaseModel):
    """A resignation waiting for its answer: ``seat`` gives up the current game for
    ``points`` times the cube."""

    seat: Seat
    points: int


class RatingMove(BaseModel):
    """What a finished rated game did to one seat's rating."""

    model_config = ConfigDict(extra="forbid")

    before: float
    after: float


class RoomSnapshot(ServerMessage):
    type: Literal["room"] = "room"
    room_id: str
    game: str
    options: JSONObject
    seats: list[SeatView]
    status: RoomStatus
    ply: int
    to_move: Seat | None
    state: JSONObject
    legal_moves: list[JSONObject]
    history: list[JSONObject]
    result: Result | None
    spectators: int = 0
    your_seats: list[int] = Field(default_factory=list, description="additive")
    rolls: list[Roll] = Field(default_factory=list, description="additive: every roll so far")
    dice_commitment: str | None = Field(default=None, description="additive: sha256(seed) hex")
    dice_seed: str | None = Field(default=None, description="additive: revealed when finished")
    seeds: list[str] | None = Field(
        default=None, description="additive: each seat's dice seed (null: no dice, or a room"
        " from before seat seeds)")
    room_options: RoomOptions = Field(default_factory=RoomOptions, description="additive")
    clocks: list[int] | None = Field(
        default=None, description="additive: each seat's time left in ms (null: no clock)")
    clock_running: Seat | None = Field(
        default=None, description="additive: the seat whose clock runs")
    rated: bool = Field(default=False, description="additive: a rated game")
    unrated_reason: UnratedReason | None = Field(
        default=None, description="additive: why a game asked rated is not (pair_cap,"
        " shared_address)")
    abortable: bool = Field(
        default=False, description="additive: the game is being played and a side has yet to"
        " make its first move, so a seated player may abort it")
    away_since_ms: list[int | None] = Field(
        default_factory=_nobody_away,
        description="since when each seat's player has been away (the server's epoch ms;"
                    " null: present, a bot, or not playing)")
    resign_offer: ResignOfferView | None = Field(
        default=None, description="additive: a backgammon resignation waiting for the other"
        " seat's answer")
    draw_offer: Seat | None = Field(
        default=None, description="additive: the seat whose draw offer waits for an answer")
    takeback_offer: Seat | None = Field(
        default=None, description="additive: the seat whose takeback waits for an answer")
    rating_change: list[RatingMove] | None = Field(
        default=None, description="a rated game's end: each seat's rating before and after"
        " it (contract section 8)")
    claim_after_ms: int | None = Field(
        default=None, description="additive: in a rated room, how long the other seat must be"
        " away before `claim_win` is taken (the server's --claim-after)")


class Update(ServerMessage):
    type: Literal["update"] = "update"
    room_id: str
    ply: int
    seat: Seat
    move: JSONObject | None = Field(description="the action applied; null after a takeback")
    state: JSONObject
    to_move: Seat | None
    legal_moves: list[JSONObject]
    status: RoomStatus
    result: Result | None
    takeback: int = Field(
        default=0, description="additive: after a takeback, how many actions it took back"
        " (`ply` is then the room's ply now, `seat` the seat whose move it was, `move` null);"
        " 0 for an action")
    dice: list[int] | None = Field(default=None, description="additive: the roll this caused")
    clocks: list[int] | None = Field(
        default=None, description="additive: each seat's time left in ms (null: no clock)")
    clock_running: Seat | None = Field(
        default=None, description="additive: the seat whose clock runs")
    abortable: bool = Field(default=False, description="additive: as the snapshot's")
    away_since_ms: list[int | None] = Field(
        default_factory=_nobody_away,
        description="since when each seat's player has been away (the server's epoch ms;"
                    " null: present, a bot, or not playing)")


class Rooms(ServerMessage):
    type: Literal["rooms"] = "rooms"
    rooms: list[RoomSummary]
    recent: list[RecentGame] = Field(
        default_factory=list,
        description="additive: the games that ended last (since the server started), newest"
                    " first")


class Error(ServerMessage):
    type: Literal["error"] = "error"
    code: ErrorCode
    message: str
    reason: str | None = Field(
        default=None,
        description="additive: the kind of refusal, finer than code (e.g. 'claim_too_early'),"
                    " for a client that words refusals in its own language; absent when the"
                    " code says it all")
    params: dict[str, str | int | float] | None = Field(
        default=None,
        description="additive: the values that wording needs (a limit, a name, seconds)")

    @classmethod
    def of(cls, e: Refused, re: str | int | None) -> Error:
        """The ``error`` answering the refusal ``e``."""
        return cls(re=re, code=e.code, message=e.message, reason=e.reason, params=e.params)

    def to_json(self) -> str:
        # Absent, not null, when not given: the message is as it was for a reader of old.
        skip = {k for k in ("re", "reason", "params") if getattr(self, k) is None}
        try:
            return self.model_dump_json(exclude=skip)
        except PydanticSerializationError:  # a lone surrogate (an odd client id): not UTF-8
            return json.dumps(self.model_dump(mode="json", exclude=skip))


class Left(ServerMessage):
    """Additive: the answer to ``leave``; also sent unprompted (no ``re``) when the server
    lets go of an old finished room the connection followed: no more of its messages come."""

    type: Literal["left"] = "left"
    room_id: str


class ChatMessage(ServerMessage):
    type: Literal["chat"] = "chat"
    room_id: str
    player_id: str
    name: str
    text: str
    time: float
    # Contract section 15: the players' chat, or the spectators' (which the players of a
    # rated game receive only once it has finished).
    audience: Literal["players", "spectators"] = "players"


class RematchOffer(ServerMessage):
    """Additive: ``player_id`` (named ``name``), a player of the finished room ``room_id``,
    opened ``new_room_id`` as its rematch. The server sends it to everyone following
    ``room_id``; a chat line never stands for one."""

    type: Literal["rematch_offer"] = "rematch_offer"
    room_id: str
    new_room_id: str
    player_id: str
    name: str


class ResignOffer(ServerMessage):
    """Additive (contract section 8): ``seat`` offers to give up the current backgammon game
    for ``points`` times the cube; sent to everyone following the room. The other seat
    answers with ``accept_resign`` (then the ``update`` of the resignation) or
    ``decline_resign`` (then ``resign_declined``)."""

    type: Literal["resign_offer"] = "resign_offer"
    room_id: str
    seat: Seat
    points: int


class ResignDeclined(ServerMessage):
    """Additive: the resignation offered in ``room_id`` was declined; play goes on."""

    type: Literal["resign_declined"] = "resign_declined"
    room_id: str


class OfferNews(ServerMessage):
    """Additive (contract section 7): ``seat`` offers a draw (``draw_offer``) or asks to take
    back its last move (``takeback_offer``), or the other side declined its offer
    (``draw_declined``, ``takeback_declined``); sent to everyone following the room."""

    type: Literal["draw_offer", "draw_declined", "takeback_offer", "takeback_declined"]
    room_id: str
    seat: Seat


class Analysis(ServerMessage):
    """Additive: what a bot thinks while it thinks (``final``: the decision it took).

    ``ply`` is the room's ply when the bot started thinking (its move will be ``ply`` + 1's
    update); ``score`` is from ``seat``'s side, in the engine's units: ``score_unit`` names
    them, ``score_typical`` is the size of a clear advantage in them (an evaluation bar's
    scale), and a proof is told by ``proven`` and ``distance``, never by the number."""

    type: Literal["analysis"] = "analysis"
    room_id: str
    ply: int
    seat: Seat
    depth: int
    score: int | float | None
    pv: list[str]
    nodes: int
    final: bool
    proven: Proven | None = Field(
        default=None, description="additive: the result the search proved for `seat`")
    distance: int | None = Field(
        default=None, description="additive: with `proven`, plies to the end under best play")
    score_unit: Literal["equity", "points"] = Field(
        default="points", description="additive: `equity` (points per game) or `points`")
    score_typical: float = Field(
        default=150.0, description="additive: a clear advantage, in `score_unit`")


class Seeking(ServerMessage):
    """The answer to ``seek``: it is open (or paired at once: ``paired`` follows)."""

    type: Literal["seeking"] = "seeking"
    seek_id: str


class SeekCanceled(ServerMessage):
    """The answer to ``cancel_seek``: the seek is withdrawn."""

    type: Literal["seek_canceled"] = "seek_canceled"
    seek_id: str


class Paired(ServerMessage):
    """A seek or a challenge met its opponent: the room, started, and the seat that is the
    receiver's; its ``room`` snapshot follows."""

    type: Literal["paired"] = "paired"
    seek_id: str | None = Field(default=None, description="the receiver's seek, if a seek")
    challenge_id: str | None = Field(default=None,
                                     description="additive: the challenge, if a challenge")
    room_id: str
    seat: int


class MeetPlayer(BaseModel):
    """Who made a seek or a challenge, as others see them."""

    model_config = ConfigDict(extra="forbid")

    player_id: str
    name: str
    rating: float
    bot: bool = False
    registered: bool = Field(
        default=False, description="additive: a registered player (`tablas bot --accept"
        " registered` takes only their challenges)")


class ChallengeSent(ServerMessage):
    type: Literal["challenge_sent"] = "challenge_sent"
    challenge_id: str


class ChallengeOffer(ServerMessage):
    """To every connection of the challenged player."""

    type: Literal["challenge"] = "challenge"
    challenge_id: str
    from_: MeetPlayer = Field(alias="from", serialization_alias="from")
    game: str
    options: JSONObject
    clock: ClockSpec | None
    rated: bool

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, exclude=_NO_RE if self.re is None else None)


class ChallengeDeclined(ServerMessage):
    type: Literal["challenge_declined"] = "challenge_declined"
    challenge_id: str


class ChallengeCanceled(ServerMessage):
    """To both: canceled by the challenger, unanswered in 60 s, or the challenger gone."""

    type: Literal["challenge_canceled"] = "challenge_canceled"
    challenge_id: str


class TournamentCreated(ServerMessage):
    type: Literal["tournament_created"] = "tournament_created"
    tournament_id: str


class TournamentChanged(ServerMessage):
    """Additive: the answer to ``join_tournament``, ``leave_tournament``,
    ``start_tournament`` and ``invite_tournament`` (``joined``, ``left``, ``started``,
    ``invited``)."""

    type: Literal["tournament_joined", "tournament_left", "tournament_started",
                  "tournament_invited"]
    tournament_id: str


class BlockChanged(ServerMessage):
    """The answer to ``block`` and ``unblock``: the name as the blocked player holds it."""

    type: Literal["blocked", "unblocked"]
    name: str


class BlocksList(ServerMessage):
    type: Literal["blocks"] = "blocks"
    names: list[str]


class TournamentGame(ServerMessage):
    """A tournament game of the receiver's: its room (seats filled, the game started)."""

    type: Literal["tournament_game"] = "tournament_game"
    tournament_id: str
    round: int
    room_id: str
    seat: int


class Owner(ServerMessage):
    """A cluster's hint (docs/protocol.md "Several nodes"): ``room_id``, which the receiver
    plays or watches through this node, lives on node ``node``, reachable at ``url`` (its
    ``--public-url``). A client may connect there (``hello`` with its token, then ``join``
    or ``spectate`` the room again) to save the hop every one of its commands takes; one
    that stays is served as before."""

    type: Literal["owner"] = "owner"
    room_id: str
    node: str
    url: str


AnyServerMessage = Annotated[
    Welcome | RoomCreated | RoomSnapshot | Update | Rooms | Error | Left | ChatMessage
    | RematchOffer | Analysis | Registered | ResignOffer | ResignDeclined | OfferNews | Seeking
    | SeekCanceled | Paired | ChallengeSent | ChallengeOffer | ChallengeDeclined
    | ChallengeCanceled | TournamentCreated | TournamentChanged | TournamentGame | Owner,
    Field(discriminator="type"),
]

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "docs" / "protocol.schema.json"


def json_schema() -> JSONObject:
    """The JSON Schema of both directions, as written to ``docs/protocol.schema.json``."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Tablas WebSocket protocol",
        "description": "Generated by `python -m tablas.server.protocol` from server/protocol.py.",
        "client_to_server": CLIENT_ADAPTER.json_schema(),
        "server_to_client": TypeAdapter(AnyServerMessage).json_schema(),
    }


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m tablas.server.protocol [--check]``: writes (or checks) the schema file."""
    args = sys.argv[1:] if argv is None else argv
    text = schema_text()
    if "--check" in args:
        current = SCHEMA_PATH.read_text(encoding="utf-8") if SCHEMA_PATH.exists() else ""
        if current != text:
            print(f"{SCHEMA_PATH} is out of date: run python -m tablas.server.protocol",
                  file=sys.stderr)
            return 1
        return 0
    SCHEMA_PATH.parent.mkdir(parents=True, exist_ok=True)
    SCHEMA_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
