"""The verbs of draw offers and takebacks (contract section 7), one small helper each, as
:mod:`tablas.server.room_verbs` has for the others: each checks with the room's
:class:`~tablas.server.rules.offers.Offers`, then persists what must be (a draw agreed is the
end of the game; a takeback deletes the moves it takes back) before anyone is told.

A house bot answers at once: it takes a takeback, and a draw when its own evaluation of the
position (a search three plies deep, cut at 20 ms) does not favour it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from tablas.engine.search.alphabeta import Limits
from tablas.engine.search.profiles import engine_for
from tablas.server.connections import Conn
from tablas.server.protocol import Offer
from tablas.server.room import Flagged, Room
from tablas.server.room_commands import Change, Ending
from tablas.server.room_feed import Feed
from tablas.server.room_services import RoomServices
from tablas.server.rules.offers import AGREED, Kind

if TYPE_CHECKING:
    from tablas.server.ownership import Fence

Re = str | int | None


class Owner(Protocol):
    """The room's owner, as these verbs see it (:class:`tablas.server.live_room.LiveRoom`)."""

    room: Room
    services: RoomServices
    feed: Feed

    def fence(self) -> Fence | None: ...
    async def apply(self, change: Change, answer: Conn | None = None, re: Re = None) -> None: ...


# How far a house bot looks before it answers a draw offer: three plies (a win or a loss a
# move away), cut at 20 ms: it answers at once, on the room's loop, which serves every room.
DRAW_SEARCH = Limits(depth=3, time_ms=20)


async def handle(owner: Owner, msg: Offer, conn: Conn) -> None:
    """Hands an offer's verb to its helper."""
    kind: Kind = "draw" if msg.type.endswith("draw") else "takeback"
    if msg.type in ("offer_draw", "takeback"):
        await offer(owner, kind, conn, msg.id)
    elif msg.type.startswith("accept"):
        seat = owner.room.offers.answer(kind, conn.player_id)
        await _accepted(owner, kind, seat, conn, msg.id)
    else:
        seat = owner.room.offers.answer(kind, conn.player_id)
        owner.room.offers.declined(kind, seat)
        owner.feed.send_offer_news(f"{kind}_declined", seat, conn, msg.id)


async def offer(owner: Owner, kind: Kind, conn: Conn, re: Re) -> None:
    """A seat offers a draw or asks for a takeback: everyone is told; a house bot facing it
    answers at once. A draw offered while the other side's waits is a draw agreed."""
    room = owner.room
    seat, agreed = room.offers.offer(kind, conn.player_id)
    if agreed:
        await _accepted(owner, kind, seat, conn, re)
        return
    if kind == "draw":
        room.offers.draw = seat
    else:
        room.offers.takeback = seat
    owner.feed.send_offer_news(f"{kind}_offer", seat, conn, re)
    if room.seats[1 - seat].kind != "bot":
        return
    if kind == "takeback" or bot_takes_draw(room, 1 - seat):
        await _accepted(owner, kind, seat, None, None)
    else:
        room.offers.declined(kind, seat)
        owner.feed.send_offer_news(f"{kind}_declined", seat, None, None)


async def _accepted(owner: Owner, kind: Kind, seat: int, conn: Conn | None, re: Re) -> None:
    """``seat``'s offer of ``kind`` is accepted: the game ends drawn, or the moves go."""
    room = owner.room
    now = owner.services.clock()
    try:
        clocks = room.clocks.charged(now)
    except Flagged as f:  # the clock that runs had run out before the answer
        await owner.apply(Ending(f.outcome, f.clocks))
        raise
    if kind == "draw":
        await owner.apply(Ending(room.conclude(AGREED), None if clocks is None else list(clocks)),
                          conn, re)
        return
    takeback = room.offers.prepare_takeback(seat, clocks)
    taken = room.ply - takeback.ply
    await owner.services.store.take_back(room.room_id, takeback.ply, takeback.clocks,
                                         fence=owner.fence())
    room.offers.commit_takeback(takeback, now)
    owner.feed.send_takeback(seat, taken, conn, re)


def bot_takes_draw(room: Room, bot_seat: int) -> bool:
    """Whether the house bot on ``bot_seat`` takes a draw: its search does not find the
    position better for it than even."""
    engine: Any = engine_for(room.game, room.state)
    result = engine.search(room.state, DRAW_SEARCH)
    score = result.score if room.to_move == bot_seat else -result.score
    return bool(score <= 0)
