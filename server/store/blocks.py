"""Who blocked whom (contract section 15), kept with the account: a backend gives
:class:`BlockStore` (``store.blocks``). Any node reads and writes it; a block is one row."""

from __future__ import annotations

from abc import ABC, abstractmethod


class BlockStore(ABC):
    @abstractmethod
    async def block(self, player_id: str, blocked_id: str, when: float) -> None:
        """``player_id`` blocks ``blocked_id`` (again: nothing changes)."""

    @abstractmethod
    async def unblock(self, player_id: str, blocked_id: str) -> bool:
        """Lifts the block; False when there was none."""

    @abstractmethod
    async def names(self, player_id: str) -> list[str]:
        """The names of the players ``player_id`` blocked, as they go by now, in the order
        blocked."""

    @abstractmethod
    async def blocked_by(self, player_id: str) -> set[str]:
        """The ids of the players ``player_id`` blocked."""

    @abstractmethod
    async def either(self, a: str, b: str) -> bool:
        """Whether ``a`` blocked ``b`` or ``b`` blocked ``a``."""
