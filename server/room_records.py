"""Rooms as records, read only: a room of any status as a spectator sees it, with its chat;
its game exported (the server's JSON, or a format of the game's own); its review.

A room in memory is read from its owner (the hub's :class:`~tablas.server.live_room.LiveRoom`); any
other is read from the store and rebuilt as a throwaway :class:`~tablas.server.room.Room`, never
added to the hub: reading records does not fill memory with old rooms. Nothing here writes a
room, and nothing answers with what a spectator could not see (no token, no legal moves, no
dice seed before the game is over).

A finished game's review (:func:`tablas.engine.review.review_game`, seconds of CPU) is assembled
when first asked for: from the entries judged while the game was played
(:mod:`tablas.server.review_ahead`), the rest computed then in the bot pool, never on the event
loop; it is stored, then served, and served from the store from then on. Requests for a room
whose review is being computed wait for that one computation, a few seconds at most: then
they are told it is still being computed, and ask again. At most half the pool's
workers compute reviews at once (the others play the bots' moves), and at most
``MAX_REVIEWS`` reviews wait or compute: past that a request is refused (``busy``), not
queued.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import TYPE_CHECKING, Any

from tablas.engine.core import GameRecord
from tablas.engine.errors import InvalidInputError
from tablas.engine.games import get_game
from tablas.engine.records import record_format, steps
from tablas.engine.review import players_summary
from tablas.server import views
from tablas.server.errors import RecordError
from tablas.server.protocol import json_text
from tablas.server.review_ahead import ReviewAhead
from tablas.server.room import Room

if TYPE_CHECKING:
    from tablas.server.hub import Hub

log = logging.getLogger("tablas.server")

CHAT_LINES = 100  # the chat lines a room's record carries, the last ones
MAX_REVIEWS = 16  # reviews waiting or being computed at most; past it: busy
# Seconds a request waits for a review being computed before it is answered "computing"
# (202): websockets gives a request 10 s to be answered (its open_timeout) before it closes
# the connection, and a long backgammon game's review takes a minute or more.
REVIEW_WAIT = 5.0
# Room ids are 16 hexadecimal digits today; older rooms' may be other URL-safe text.
ROOM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
RECORD_VERSION = 1  # of the JSON export's shape (docs/protocol.md)


def check_room_id(room_id: str) -> None:
    """A room id as a path holds one, else ``bad_request`` (before the store is asked)."""
    if not ROOM_ID.fullmatch(room_id):
        raise RecordError("bad_request", "a room id is 1 to 64 letters, digits, '-' or '_'")


def seat_name(room: Room, seat: int) -> str:
    """The seat's name as a record shows it: its player's, ``bot (level)``, or ``seat N``
    while nobody holds it."""
    return views.seat_name(room.seats[seat]) or f"seat {seat}"


def game_record(room: Room) -> GameRecord:
    return GameRecord(
        game_id=room.game_id,
        options=dict(room.options),
        opening_rolls=tuple(room.opening_rolls),
        actions=tuple((a.move, a.rolls) for a in room.history),
        names=(seat_name(room, 0), seat_name(room, 1)),
        result=room.result,
        created_at=room.created_at,
    )


def record_json(room: Room) -> dict[str, Any]:
    """The JSON export: the whole game, every action with its text and dice (the shape of
    docs/protocol.md, "The JSON record")."""
    game = get_game(room.game_id)
    snapshot = views.snapshot_data(room, None)
    seats = [{k: v for k, v in s.items() if k != "connected"} for s in snapshot["seats"]]
    actions = []
    for step, action in zip(steps(game, game_record(room)), room.history, strict=True):
        actions.append({
            "ply": action.index,
            "seat": action.seat,
            "move": action.move,
            "move_text": game.move_text(step.before, step.move),
            "dice": [list(r) for r in action.rolls],
            "time": action.time,
            "clocks": None if action.clocks is None else list(action.clocks),
        })
    return {
        "version": RECORD_VERSION,
        "room_id": room.room_id,
        "game": room.game_id,
        "title": game.title,
        "options": room.options,
        "room_options": snapshot["room_options"],
        "status": room.status,
        "created_at": room.created_at,
        "seats": seats,
        "result": views.result_data(room.result),
        "opening_rolls": [list(r) for r in room.opening_rolls],
        "actions": actions,
        "position": snapshot["state"]["notation"],
        "dice_commitment": views.commitment(room),
        "dice_seed": views.revealed_seed(room),
        # Additive: the seats' dice seeds, which every roll mixes in (docs/dice.md).
        "seeds": None if room.seeds is None else list(room.seeds),
    }


def with_players(text: str) -> str:
    """A stored review as served: with each side's summary (``players``), which a review
    stored before it lacks (added from its entries on the way out)."""
    review = json.loads(text)
    if "players" in review:
        return text
    return json_text({**review, "players": players_summary(review.get("moves") or [])})


class Export:
    """An export's text, media type and file name."""

    def __init__(self, body: str, media_type: str, filename: str) -> None:
        self.body = body
        self.media_type = media_type
        self.filename = filename


class Records:
    """Answers for ``/api/rooms/{id}``, ``…/export`` and ``…/review``."""

    def __init__(self, hub: Hub, reviews: ReviewAhead) -> None:
        self.hub = hub
        self.services = hub.services
        self.reviews = reviews  # the entries judged while the game was played
        # Half the pool at most, so that bots still have workers to think in.
        self._slots = asyncio.Semaphore(max(1, self.services.bots.workers // 2))
        self._reviewing: dict[str, asyncio.Task[str]] = {}
        self.max_reviews = MAX_REVIEWS
        self.review_wait = REVIEW_WAIT

    async def _room(self, room_id: str) -> tuple[Room, int]:
        """The room (its owner's, or rebuilt from the store for this answer only) and its
        spectators now; ``unknown_room`` if there is none."""
        check_room_id(room_id)
        live = self.hub.rooms.get(room_id)
        if live is not None:
            return live.room, len(live.spectators)
        record = await self.services.store.load_room(room_id)
        if record is None:
            raise RecordError("unknown_room", f"no room {room_id!r}")
        live = self.hub.rooms.get(room_id)  # loaded by a command meanwhile: its owner's
        if live is not None:
            return live.room, len(live.spectators)
        return record.to_room(self.services.clock), 0

    async def room(self, room_id: str) -> dict[str, Any]:
        """``GET /api/rooms/{id}``: the ``room`` snapshot a spectator would get, and
        ``chat``, the room's last 100 lines, oldest first (a rated game's spectators' lines
        once it has finished)."""
        room, spectators = await self._room(room_id)
        data = views.snapshot_data(room, None, self.services.presence.connected, spectators)
        lines = await self.services.store.chat_lines(room_id, CHAT_LINES)
        if room.rated and room.status != "finished":
            # The spectators' chat reaches the players of a rated game once it has
            # finished, here as on the socket (contract section 15).
            lines = [line for line in lines if line["audience"] == "players"]
        data["chat"] = lines
        return data

    async def export(self, room_id: str, fmt: str) -> Export:
        """``GET /api/rooms/{id}/export?format=F``: ``json`` (every game) or a format of the
        game's own (:meth:`tablas.engine.core.Game.record_formats`), for a room of any status (the
        game so far); ``bad_request`` naming the game's formats for any other."""
        room, _ = await self._room(room_id)
        if fmt == "json":
            return Export(json_text(record_json(room)), "application/json",
                          f"tablas-{room.room_id}.json")
        game = get_game(room.game_id)
        try:
            form = record_format(game, fmt)
        except InvalidInputError as e:
            formats = ["json", *(f.name for f in game.record_formats())]
            raise RecordError("bad_request", str(e), {"formats": formats}) from None
        return Export(form.write(game, game_record(room)), form.media_type,
                      f"tablas-{room.room_id}.{form.extension}")

    async def review(self, room_id: str) -> str | None:
        """``GET /api/rooms/{id}/review``: the stored review of a finished game as JSON text,
        computed (and stored) first if it has none; None if that takes more than
        ``review_wait`` seconds (it goes on: ask again). ``unknown_room``, ``not_finished``
        (a game not over), ``busy`` (``max_reviews`` under way), ``internal`` (it failed)."""
        check_room_id(room_id)
        stored = await self.services.store.review(room_id)
        if stored is not None:
            return with_players(stored)
        task = self._reviewing.get(room_id)
        if task is None:
            room, _ = await self._room(room_id)
            if room.status != "finished":
                raise RecordError("not_finished", (
                    f"room {room_id} is {room.status}: only a finished game has a review"))
            task = self._reviewing.get(room_id)  # asked for again while the room was read
            if task is None:
                if len(self._reviewing) >= self.max_reviews:
                    raise RecordError("busy", (
                        f"{len(self._reviewing)} reviews are being computed: ask again in a "
                        "minute"))
                task = asyncio.create_task(self._compute(room))
                self._reviewing[room_id] = task
                task.add_done_callback(self._done)
        # Waiting does not cancel the computation: not on a timeout, nor when an asker goes.
        done, _ = await asyncio.wait({task}, timeout=self.review_wait)
        return task.result() if done else None

    def _done(self, task: asyncio.Task[str]) -> None:
        for room_id, t in list(self._reviewing.items()):
            if t is task:
                del self._reviewing[room_id]
        if not task.cancelled():
            task.exception()  # retrieved: one nobody waits for any more is not logged again

    async def _compute(self, room: Room) -> str:
        """The review of ``room``, computed in the bot pool, stored, as JSON text."""
        try:
            entries = await self.reviews.entries(room, self._slots)
            text = json_text({"room_id": room.room_id, "game": room.game_id,
                              "players": players_summary(entries), "moves": entries})
            await self.services.store.save_review(room.room_id, text, self.services.clock())
            self.reviews.forget(room)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("the review of room %s failed", room.room_id)
            raise RecordError("internal", "the review failed: ask again later") from None
        return text

    def stop(self) -> None:
        """Cancels the reviews under way (the server is shutting down)."""
        for task in list(self._reviewing.values()):
            task.cancel()
