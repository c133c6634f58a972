"""Whom each player here has blocked (contract section 15), as the rooms' chat reads it:
:class:`BlockList`, in memory, no I/O. The store keeps the blocks
(:class:`~tablas.server.store.blocks.BlockStore`); :class:`~tablas.server.meet.blocks.Blocks`
fills this from it at each ``hello`` and after each ``block``/``unblock``, so a room's feed
asks a dict, not the database, for every chat line."""

from __future__ import annotations

from collections.abc import Iterable


class BlockList:
    def __init__(self) -> None:
        self._blocked: dict[str, frozenset[str]] = {}

    def set(self, player_id: str, blocked: Iterable[str]) -> None:
        """``player_id`` has blocked exactly ``blocked`` (player ids)."""
        ids = frozenset(blocked)
        if ids:
            self._blocked[player_id] = ids
        else:
            self._blocked.pop(player_id, None)

    def hides(self, viewer_id: str | None, sender_id: str) -> bool:
        """Whether ``viewer_id`` blocked ``sender_id`` (their lines are not delivered)."""
        return viewer_id is not None and sender_id in self._blocked.get(viewer_id, ())
