"""What every live room is given (:class:`RoomServices`), and whom it tells what: the keeper
of the rooms in memory (:class:`RoomEvents`, the hub), the lobby (:class:`GameEvents`) and the
review computed ahead (:class:`MoveEvents`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from tablas.server.blocklist import BlockList
from tablas.server.bot_turns import RoomShares
from tablas.server.connections import Conn, Presence
from tablas.server.metrics import Metrics
from tablas.server.ownership import Ownership
from tablas.server.room import Room

if TYPE_CHECKING:
    from tablas.server.bot_pool import BotPool
    from tablas.server.rated import RatedGames
    from tablas.server.store import Storage

# Commands of players that may wait for one room at once; one more is refused at once
# (``rate_limited``, nothing changed). A command holds the room for about one group commit
# (a few ms, docs/benchmarks.md): 64 in line is already a fraction of a second behind, and a
# room's own traffic is two players and a few followers, each connection sending its next
# command only once its last was answered; a line that long is a room flooded (a crowd of
# followers chatting, a relay's backlog), which is told to come back rather than queued
# without end, as Nakama closes a match whose bounded input queue fills.
INBOX = 64


class RoomEvents(Protocol):
    """What a live room tells the keeper of the rooms in memory (the hub, which makes it)."""

    def check_waiting_cap(self, player_id: str) -> None:
        """Refuses one more waiting room for ``player_id`` past the cap."""

    def waiting_for(self, player_id: str, room_id: str) -> None:
        """``room_id`` now waits for ``player_id`` (it counts against their cap)."""

    def subscribed(self, conn: Conn) -> None:
        """``conn`` has just subscribed to a room (it lets go of its old finished ones)."""


class GameEvents(Protocol):
    """What a live room tells the lobby."""

    def game_finished(self, room: Room) -> None:
        """``room``'s game has just ended (status ``finished``): told by the room's owner
        after the end is on disk, under the room's lock."""


class MoveEvents(Protocol):
    """What a live room tells whoever follows its moves (the review computed ahead,
    :mod:`tablas.server.review_ahead`)."""

    def moved(self, room: Room) -> None:
        """``room`` has just committed an action (the last of its history): told by the
        room's owner after it is on disk, under the room's lock."""


@dataclass
class RoomServices:
    """What every live room shares, passed in by the composition root (``tablas.server.app``):
    where changes are written, who owns the rooms (and so what each write carries), where
    bots think, who is online, the time, who hears of a game's end, what is counted."""

    store: Storage
    bots: BotPool
    presence: Presence
    clock: Callable[[], float]
    ownership: Ownership = field(kw_only=True)
    games: GameEvents = field(kw_only=True)
    bot_pause: float = 0.0  # seconds a bot waits before its move is played (for people)
    # Seconds without a connection after which a person is absent (None: rooms never end).
    abandon_after: float | None = None
    # Seconds an opponent must have been away before the present player may claim the win.
    claim_after: float = 30.0
    closing: bool = False  # the server is shutting down: no new bot or timer tasks
    # Rates a rated room's finished game (None: no game is rated).
    rated: RatedGames | None = None
    inbox: int = INBOX  # players' commands that may wait for one room (INBOX)
    # Which address's line at the bot workers each room's jobs wait in (contract section 15).
    shares: RoomShares = field(default_factory=RoomShares, kw_only=True)
    # Whom each player here blocked: their chat lines are not delivered to them.
    blocklist: BlockList = field(default_factory=BlockList, kw_only=True)
    # The server's figures (tablas_moves_total is counted as a move commits).
    metrics: Metrics = field(default_factory=Metrics, kw_only=True)
    # Told of every action committed (None: nobody follows the moves).
    moves: MoveEvents | None = field(default=None, kw_only=True)
