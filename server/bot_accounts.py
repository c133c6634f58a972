"""Bot accounts (contract section 12): who is one, and the one limit they have.

A bot account is a registered player that a program drives (``register`` with ``"bot":
true``; ``players.bot``, migration 0013). It plays like anyone, rated games included; what
differs is shown (its seats, leaderboard rows and page say ``"bot": true``) and that it holds
at most :data:`MAX_GAMES` games at once, so that one program cannot fill the server.

The places it holds are its games waiting, in play or adjourned, and its open seeks: a seek
becomes a game the moment it pairs, which nobody can refuse then, so it holds its place from
the start. A new seek, the taking of a seek and a challenge's acceptance are refused
(``rate_limited``, nothing changed: an unanswered challenge stays open) while every place is
taken. ``tablas bot`` keeps within it, and lets a challenge that comes while it is full wait
until one of its games ends (docs/bots.md). The count is read from the database, shared by
every node; two games made for one bot account in the same instant on two nodes may both
pass it.
"""

from __future__ import annotations

from tablas.server.connections import Player
from tablas.server.errors import MeetError
from tablas.server.store import Storage

MAX_GAMES = 8  # games (and open seeks) a bot account holds at once


class BotAccounts:
    def __init__(self, store: Storage) -> None:
        self.store = store

    async def is_bot(self, player: Player) -> bool:
        """Whether ``player`` is a bot account. A player told from another node of a
        cluster comes without the flag (the nodes' messages predate it), so a registered
        player's is read from the store, and kept."""
        if player.bot or not player.registered:
            return player.bot
        player.bot = bool(await self.store.bot_accounts([player.id]))
        return player.bot

    async def places(self, player_id: str) -> int:
        """The places a bot account holds: its games not over, and its open seeks."""
        games = {room_id for room_id, _, _ in await self.store.seats_held(player_id)}
        seeks, _ = await self.store.seeks.counts(player_id, "")
        return len(games) + seeks

    async def check_room(self, player: Player, re: str | int | None) -> None:
        """Refuses (``rate_limited``) another game or seek for ``player`` if it is a bot
        account whose every place is taken."""
        if not await self.is_bot(player):
            return
        held = await self.places(player.id)
        if held >= MAX_GAMES:
            raise MeetError("rate_limited", f"{player.name} is a bot account holding {held} "
                            f"games and seeks: at most {MAX_GAMES} at once; try again when one"
                            " of its games has ended", re,
                            reason="bot_busy", params={"name": player.name, "limit": MAX_GAMES})
