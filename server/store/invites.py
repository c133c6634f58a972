"""Who may enter a tournament (contract section 17): open to any registered player, or by
invitation, the names invited kept by their name key. A backend gives :class:`InviteStore`
(``store.invites``); the tournament's own row is :mod:`.tournaments`'s."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Literal

Entry = Literal["open", "invite"]


class InviteStore(ABC):
    @abstractmethod
    async def set_entry(self, tournament_id: str, entry: Entry,
                        names: Sequence[tuple[str, str]]) -> None:
        """How ``tournament_id`` is entered, and its first invitations (name key, name);
        written before the tournament itself."""

    @abstractmethod
    async def invite(self, tournament_id: str, names: Sequence[tuple[str, str]]) -> None:
        """More invitations (a name invited already stays so)."""

    @abstractmethod
    async def entry(self, tournament_id: str) -> Entry:
        """``open`` unless it was made invite-only."""

    @abstractmethod
    async def invited(self, tournament_id: str, name_key: str) -> bool:
        ...

    @abstractmethod
    async def names(self, tournament_id: str) -> list[str]:
        """The names invited, as given, in the order of their keys."""
