"""Berserk in an arena game (contract section 19): before one's first move, a player halves
their own time and gives up the increment, for one point more if they win. It is written
with the game's pairing (``tournament_games.berserk0/1``, the time left it gave) before the
room's clocks change, so a restart keeps both the clock and the point."""

from __future__ import annotations

from tablas.server.errors import RoomError
from tablas.server.ownership import Fence
from tablas.server.room import Room
from tablas.server.store.tournaments import TournamentStore

_REFUSED = {
    "unknown": "berserk is for the games of an arena",
    "not_seated": "only a player of this game goes berserk",
    "already": "you went berserk already",
}


async def go_berserk(room: Room, pool: TournamentStore, player_id: str | None,
                     fence: Fence | None) -> int:
    """``player_id`` goes berserk in ``room`` (its owner's, under its lock): the seat."""
    seats = room.seats_of(player_id)
    room.check_in_play(seats, "bad_request", "berserk once the game has started")
    seat = seats[0]
    if room.room_options.tournament_id is None or room.clocks.remaining is None:
        raise RoomError("bad_request", _REFUSED["unknown"])
    if room.played[seat]:
        raise RoomError("bad_request", "berserk comes before one's first move")
    now = room.clock()
    live = room.clocks.live(now)
    assert live is not None and player_id is not None
    half = max(1, live[seat] // 2)
    done, _ = await pool.berserk(room.room_id, player_id, half, fence)
    if done != "berserk":
        raise RoomError("bad_request", _REFUSED[done])
    room.clocks.berserk(seat, half, now)
    return seat
