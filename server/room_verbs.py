"""One small helper per verb a live room runs: each checks its command (a ``prepare_*`` of
the room or of the part whose job it is), then hands the change to its owner to persist,
commit and send (:meth:`Owner.apply`), as lichess's round actor hands each verb to a small
helper. They run under the room's lock, called by :func:`handle` from the owner's one door
(:meth:`tablas.server.live_room.LiveRoom.run`), and touch nothing else.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Literal, Protocol

from tablas.engine.core import Outcome
from tablas.engine.search.profiles import profile
from tablas.server import room_offers
from tablas.server.bot_pool import random_move
from tablas.server.connections import Conn
from tablas.server.errors import RoomError
from tablas.server.protocol import (
    Abort,
    AcceptResign,
    Berserk,
    Chat,
    ChatMessage,
    ClaimWin,
    DeclineResign,
    HandToBot,
    Join,
    Leave,
    Left,
    Move,
    Offer,
    Resign,
    Seed,
    Spectate,
)
from tablas.server.room import LIVE, Flagged, Lapse, Room, SeatChange
from tablas.server.room_berserk import go_berserk
from tablas.server.room_commands import (
    BotMove,
    Change,
    Command,
    Ending,
    Expire,
    PresenceChanged,
    Tick,
)
from tablas.server.room_feed import Feed
from tablas.server.room_services import RoomEvents, RoomServices

if TYPE_CHECKING:
    from tablas.server.ownership import Fence
    from tablas.server.ratings import RatingChange

log = logging.getLogger("tablas.server")

Re = str | int | None


class Owner(Protocol):
    """The room's owner, as its verbs see it (:class:`tablas.server.live_room.LiveRoom`)."""

    room: Room
    services: RoomServices
    events: RoomEvents
    feed: Feed
    touched: float

    def subscribe(self, conn: Conn, spectator: bool) -> None: ...
    def unsubscribe(self, conn: Conn) -> None: ...
    def waits_for(self, player_id: str) -> bool: ...
    def fence(self) -> Fence | None: ...
    async def persist(self, change: Change) -> list[RatingChange]: ...
    def commit(self, change: Change, answer: Conn | None = None, re: Re = None) -> None: ...
    async def apply(self, change: Change, answer: Conn | None = None, re: Re = None) -> None: ...


async def handle(owner: Owner, command: Command, conn: Conn | None) -> None:
    """Hands ``command`` (from ``conn``, for a player's) to the helper of its verb."""
    match command:
        case Move():
            await move(owner, command, _asker(conn))
        case BotMove():
            await bot_move(owner, command)
        case Join():
            await join(owner, command, _asker(conn))
        case Spectate():
            spectate(owner, command, _asker(conn))
        case Leave():
            await leave(owner, command, _asker(conn))
        case Resign(points=int()):
            await offer_resign(owner, command, _asker(conn))
        case Resign() | Abort() | ClaimWin():
            await end(owner, command, _asker(conn))
        case AcceptResign():
            await accept_resign(owner, command, _asker(conn))
        case DeclineResign():
            decline_resign(owner, command, _asker(conn))
        case Offer():
            await room_offers.handle(owner, command, _asker(conn))
        case Seed():
            await seed(owner, command, _asker(conn))
        case HandToBot():
            await hand_to_bot(owner, command, _asker(conn))
        case Chat():
            await chat(owner, command, _asker(conn))
        case Berserk():
            await berserk(owner, command, _asker(conn))
        case Tick():
            await tick(owner)
        case PresenceChanged():
            presence_changed(owner)
        case Expire():
            await expire(owner)


def _asker(conn: Conn | None) -> Conn:
    assert conn is not None  # a player's command comes from a connection
    return conn


# --- moves -----------------------------------------------------------------------------------

async def move(owner: Owner, msg: Move, conn: Conn) -> None:
    try:
        pending = owner.room.prepare_move(conn.player_id, msg.ply, dict(msg.move))
    except Flagged as f:  # the move came too late: the game is lost on time
        await owner.apply(Ending(f.outcome, f.clocks))
        raise
    await owner.apply(pending, conn, msg.id)


async def bot_move(owner: Owner, msg: BotMove) -> None:
    """The bot's decision, or a random move if it has none or a bad one."""
    room, job, decision = owner.room, msg.job, msg.decision
    if room.ply != job.ply or room.bot_to_move() != job.seat or any(
            a.move != m for a, (m, _) in zip(room.history, job.actions, strict=True)):
        return  # the room moved on (or back: a takeback) while the bot thought
    pending = None
    try:
        if decision is not None:
            try:
                pending = room.prepare_move(None, job.ply, decision.move, bot_seat=job.seat)
                owner.feed.send_analysis(job, decision.info(), final=True)
            except Flagged:
                raise
            except RoomError as e:
                log.warning("bot move %s refused in room %s: %s", decision.move,
                            room.room_id, e.message)
        if pending is None:  # no answer in time, or a bad one: a random move
            fallback = random_move(room.game, room.state, job.seed)
            pending = room.prepare_move(None, job.ply, fallback, bot_seat=job.seat)
    except Flagged as f:  # the bot's own clock ran out
        await owner.apply(Ending(f.outcome, f.clocks))
        return
    await owner.apply(pending)


# --- seats -----------------------------------------------------------------------------------

async def join(owner: Owner, msg: Join, conn: Conn) -> None:
    """Takes a seat (or comes back to an adjourned game), then follows the room."""
    assert conn.player is not None
    room, player = owner.room, conn.player
    if room.status == "waiting" and room.open_seats > 1 and not owner.waits_for(player.id):
        owner.events.check_waiting_cap(player.id)  # the room goes on waiting
    change: SeatChange | Lapse | None = room.presence.prepare_resume(player.id)
    if change is None:
        if room.rated and player.id not in room.ratings:
            await _read_ratings(owner, player.id)
        change = room.seating.prepare_join(player.id, player.name, msg.seat, msg.seed,
                                           registered=player.registered, bot=player.bot)
        change = await _pair_capped(owner, change)
    if change is not None:
        await owner.persist(change)
    owner.subscribe(conn, spectator=False)
    if change is not None:
        owner.commit(change, conn, msg.id)
    else:
        conn.send(owner.feed.snapshot_for(conn, msg.id))
    if room.status == "waiting":
        owner.events.waiting_for(player.id, room.room_id)


async def _read_ratings(owner: Owner, player_id: str) -> None:
    """A player about to sit in this rated room: their rating, for the seat's."""
    rated = owner.services.rated
    if rated is not None:
        owner.room.ratings.update(await rated.current(owner.room, [player_id]))


async def _pair_capped(owner: Owner, change: SeatChange | None) -> SeatChange | None:
    """``change``, unrated (saying why) if it starts a rated game between a pair that may not
    rate each other: past its cap, or of one address (:meth:`RatedGames.unrated_reason`)."""
    rated, room = owner.services.rated, owner.room
    if change is None or change.started_at is None or rated is None:
        return change
    reason = await rated.unrated_reason(room, change.seats)
    return change if reason is None else dataclasses.replace(change, unrated=reason)


def spectate(owner: Owner, msg: Spectate, conn: Conn) -> None:
    owner.subscribe(conn, spectator=not owner.room.seats_of(conn.player_id))
    conn.send(owner.feed.snapshot_for(conn, msg.id))


async def leave(owner: Owner, msg: Leave, conn: Conn) -> None:
    """Stops following the room, and frees the seat of a game not started."""
    assert conn.player is not None
    room = owner.room
    owner.unsubscribe(conn)
    change = room.seating.prepare_leave(conn.player.id)
    if change is not None:
        await owner.apply(change)
    if room.vacant and room.created_by == conn.player.id:
        # The host leaves their own empty table: nobody is left to wait for.
        await owner.apply(Lapse("closed", owner.services.clock()))
    conn.send(Left(re=msg.id, room_id=room.room_id))


async def seed(owner: Owner, msg: Seed, conn: Conn) -> None:
    await owner.apply(owner.room.seating.prepare_seed(conn.player_id, msg.seed), conn, msg.id)


async def hand_to_bot(owner: Owner, msg: HandToBot, conn: Conn) -> None:
    seating = owner.room.seating
    seating.check_hand_to_bot(conn.player_id, msg.seat)
    change = seating.prepare_hand_to_bot(msg.seat, msg.level, "hand_to_bot")
    await owner.apply(change, conn, msg.id)


async def berserk(owner: Owner, msg: Berserk, conn: Conn) -> None:
    """An arena game's player goes berserk (server.room_berserk): everyone sees the clocks."""
    await go_berserk(owner.room, owner.services.store.tournaments, conn.player_id,
                     owner.fence())
    owner.feed.send_snapshot(conn, msg.id)


# --- endings ---------------------------------------------------------------------------------

async def end(owner: Owner, msg: Resign | Abort | ClaimWin, conn: Conn) -> None:
    """A player ends the game: resigns, aborts it or claims it (server.rules.endings)."""
    room = owner.room
    endings = room.endings
    match msg:
        case Resign():
            outcome = endings.prepare_resign(conn.player_id or "")
        case Abort():
            outcome = endings.prepare_abort(conn.player_id)
        case ClaimWin():
            room.presence.sync(owner.services.presence.connected)
            outcome = endings.prepare_claim(conn.player_id, owner.services.claim_after)
    await owner.apply(Ending(outcome, room.clocks.live()), conn, msg.id)


async def offer_resign(owner: Owner, msg: Resign, conn: Conn) -> None:
    """A backgammon player offers to give up the current game for ``points``: everyone sees
    the offer; a bot facing it answers at once."""
    room = owner.room
    assert msg.points is not None
    offer = room.endings.prepare_offer(conn.player_id or "", msg.points)
    room.endings.offer = offer
    owner.feed.send_resign_offer(offer, conn, msg.id)
    await _bot_answers(owner)


async def _bot_answers(owner: Owner) -> None:
    """The house bot facing the resignation offered answers it: it takes what is worth at
    least its equity (its game's profile says), and declines the rest."""
    room = owner.room
    offer = room.endings.offer
    if offer is None or room.seats[1 - offer.seat].kind != "bot":
        return
    accepts = profile(room.game_id).accepts_resignation
    if accepts is not None and accepts(room.state, offer.seat, offer.points):
        await _resign_game(owner, None, None)
    else:
        room.endings.offer = None
        owner.feed.send_resign_declined(None, None)


async def accept_resign(owner: Owner, msg: AcceptResign, conn: Conn) -> None:
    """The other side takes the resignation offered: the current game ends for its points
    (the update); a match goes on to its next game."""
    owner.room.endings.prepare_answer(conn.player_id)
    await _resign_game(owner, conn, msg.id)


async def _resign_game(owner: Owner, conn: Conn | None, re: Re) -> None:
    room = owner.room
    offer = room.endings.offer
    assert offer is not None
    try:
        pending = room.prepare_resignation(offer)
    except Flagged as f:  # the clock that runs had run out before the answer
        await owner.apply(Ending(f.outcome, f.clocks))
        raise
    await owner.apply(pending, conn, re)


def decline_resign(owner: Owner, msg: DeclineResign, conn: Conn) -> None:
    """The other side declines the resignation offered: play goes on."""
    room = owner.room
    room.endings.prepare_answer(conn.player_id)
    room.endings.offer = None
    owner.feed.send_resign_declined(conn, msg.id)


async def expire(owner: Owner) -> None:
    """An adjourned game nobody resumed ends without a winner."""
    room = owner.room
    if room.status == "adjourned":
        await owner.apply(Ending(Outcome(None, 0, "expired"), room.clocks.live()))


# --- chat ------------------------------------------------------------------------------------

async def chat(owner: Owner, msg: Chat, conn: Conn) -> None:
    """A follower's line: written, then sent to the followers it reaches (contract
    section 15: :meth:`~tablas.server.room_feed.Feed.send_chat`)."""
    assert conn.player is not None
    if conn not in owner.feed.conns:
        raise RoomError("not_seated", "join or spectate the room to chat in it")
    text = msg.text.strip()
    if not text:
        raise RoomError("bad_request", "empty chat line", reason="empty_chat")
    room_id, now = owner.room.room_id, owner.services.clock()
    # A seated player's line is the players' chat; anyone else's the spectators'.
    audience: Literal["players", "spectators"] = \
        "players" if owner.room.seats_of(conn.player.id) else "spectators"
    await owner.services.store.record_chat(room_id, conn.player.id, text, now,
                                           audience=audience, fence=owner.fence())
    line = ChatMessage(room_id=room_id, player_id=conn.player.id, name=conn.player.name,
                       text=text, time=now, audience=audience)
    owner.feed.send_chat(line, conn, msg.id)


# --- time and presence -----------------------------------------------------------------------

async def tick(owner: Owner) -> None:
    """The timer fired: a flag's fall, seats of the absent to bots, the room's due end."""
    room, services = owner.room, owner.services
    if room.status not in LIVE:
        return
    flagged = room.clocks.flag_fall()
    if flagged is not None:
        await owner.apply(Ending(*flagged))
        return
    room.presence.sync(services.presence.connected)
    for s in room.presence.abandoned():
        await owner.apply(room.seating.prepare_hand_to_bot(s, "medium", "abandoned"))
    due = room.presence.due(services.abandon_after)
    if isinstance(due, Lapse):
        await owner.apply(due)
    elif due is not None:
        await owner.apply(Ending(due, room.clocks.live()))


def presence_changed(owner: Owner) -> None:
    """Someone of the room came or went: the snapshot says since when each is away."""
    owner.touched = owner.services.clock()
    owner.room.presence.sync(owner.services.presence.connected)
    owner.feed.send_snapshot()
