"""The reads of players' pages and the lobby's list of who is online (contract section 8):
a rating's history, a player's wins, draws and losses in a game, the players online. Every
backend gives them (:class:`PlayerReads`, which :class:`~tablas.server.store.base.Storage`
is); the SQL they share is here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any

from tablas.server.ratings import Rating


def tally_of(rows: Iterable[Sequence[Any]]) -> tuple[int, int, int]:
    """(wins, draws, losses) from the rows (won, drawn) of a backend's query of a player's
    finished games of a game (aborted and expired ones left out)."""
    wins = draws = losses = 0
    for won, drawn in rows:
        if drawn:
            draws += 1
        elif won:
            wins += 1
        else:
            losses += 1
    return wins, draws, losses


def online_rows(people: Iterable[Sequence[Any]], playing: Iterable[Sequence[Any]],
                ratings: Iterable[Sequence[Any]]
                ) -> list[tuple[str, str, bool, bool, dict[str, Rating]]]:
    """:meth:`Storage.online_players` from its three reads: the registered players (id,
    name, bot), those seated in a game being played (id), every rating of theirs (id, game,
    rating, rd, volatility, games)."""
    busy = {str(r[0]) for r in playing}
    by_player: dict[str, dict[str, Rating]] = {}
    for pid, game, r, rd, v, n in ratings:
        by_player.setdefault(str(pid), {})[str(game)] = Rating(float(r), float(rd), float(v),
                                                               int(n))
    return [(str(pid), str(name), bool(bot), str(pid) in busy, by_player.get(str(pid), {}))
            for pid, name, bot in people]


class PlayerReads(ABC):
    """What players' pages and the list of who is online read."""

    @abstractmethod
    async def rating_history(self, player_id: str, game: str, limit: int
                             ) -> list[tuple[float, float, float]]:
        """The player's rating in ``game`` after each of their last ``limit`` rated games
        that changed it: (when the game finished, rating, RD), oldest first."""

    @abstractmethod
    async def tally(self, player_id: str, game: str) -> tuple[int, int, int]:
        """The player's finished games of ``game`` (aborted and expired ones left out):
        (wins, draws, losses)."""

    @abstractmethod
    async def online_players(self, player_ids: Sequence[str]
                             ) -> list[tuple[str, str, bool, bool, dict[str, Rating]]]:
        """The registered players among ``player_ids``: (id, name, whether a bot account,
        whether seated in a game being played, their ratings by game), by name."""
