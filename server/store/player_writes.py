"""The players' writes of the store (:class:`~tablas.server.store.base.Storage` inherits
them): a new player, one seen again, a registration, name skeletons, a token, an address
seen. Each is a row (``_row``: its kind names a trigger of SQLite's migrations and a
PostgreSQL function) written by the group commit, committed before the method returns."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from typing import Literal

from tablas.server.store.commit import GroupCommit, _row


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class PlayerWrites:
    _commits: GroupCommit

    def _refused(self, error: Exception) -> str | None:
        """The message of ``error`` if the database refused a write for its content (the
        backend's, :meth:`~tablas.server.store.base.Storage._refused`)."""
        raise NotImplementedError

    async def create_player(self, player_id: str, name: str, token: str) -> None:
        now = time.time()
        await self._commits.write(_row("player", player_id, name, token_hash(token), now, now))

    async def touch_player(self, player_id: str, name: str) -> None:
        await self._commits.write(_row("player_seen", player_id, name, time.time()))

    async def register_player(self, player_id: str, name: str, name_key: str,
                              password_hash: str, when: float, name_skeleton: str | None = None,
                              *, bot: bool = False
                              ) -> Literal["registered", "name_taken", "look_alike",
                                           "already_registered"]:
        """The player's name (``name``: renamed to it) becomes theirs, with their password's
        hash (``bot``: as a bot account, in the same transaction): ``registered``; or
        nothing is written, because the key is a registered player's (``name_taken``) or the
        skeleton is (``look_alike``; the unique indexes decide between two registrations at
        once), or the player registered already."""
        try:
            await self._commits.write(_row("player_seen", player_id, name, when),
                              _row("register", player_id, name_key, password_hash, when,
                                   name_skeleton),
                              *([_row("bot_account", player_id)] if bot else []))
        except Exception as e:
            why = self._refused(e)
            if why is None:
                raise
            if "already registered" in why:
                return "already_registered"
            return "look_alike" if "skeleton" in why else "name_taken"
        return "registered"

    async def set_name_skeletons(self, skeletons: Sequence[tuple[str, str]]) -> None:
        """Each (player id, skeleton) of players registered before migration 11, in the
        order given (the earliest registered first: the first of a skeleton holds it, any
        later one is written as sharing it)."""
        if skeletons:
            await self._commits.write(*(_row("name_skeleton", pid, sk) for pid, sk in skeletons))

    async def address_seen(self, player_id: str, address_hash: str, when: float) -> None:
        """The player connected from the address of this keyed hash (hex) at ``when``."""
        await self._commits.write(_row("address_seen", player_id, address_hash, when))

    async def add_token(self, player_id: str, token: str, when: float) -> None:
        """A new device's token for a registered player (stored as its hash only)."""
        await self._commits.write(_row("player_token", token_hash(token), player_id, when))
