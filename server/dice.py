"""Commit-reveal dice (docs/dice.md): every roll of a room is fixed by a secret seed.

The room picks a 32-byte seed when it is created and publishes ``sha256(seed)`` at once; each
roll is read from ``HMAC-SHA256(seed, f"{room_id}:{ply}")`` without modulo bias; the seed is
revealed when the game ends, so anyone can recompute every roll and check the commitment.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Iterator
from typing import Protocol

SEED_BYTES = 32
ACCEPT_BELOW = 252  # 252 = 6 * 42: a byte below it is uniform on 1..6 via (byte % 6) + 1


class DiceSource(Protocol):
    """Where a room's rolls come from. ``attempt`` counts re-rolls of the same chance node."""

    def commitment(self) -> str | None: ...

    def roll(self, ply: int, attempt: int) -> tuple[int, int]: ...


def commitment_of(seed: bytes) -> str:
    return hashlib.sha256(seed).hexdigest()


def _stream(seed: bytes, message: str) -> Iterator[int]:
    """The bytes of HMAC(seed, message), then HMAC(seed, message + "#1"), "#2", …"""
    block = 0
    while True:
        suffix = "" if block == 0 else f"#{block}"
        yield from hmac.new(seed, (message + suffix).encode(), hashlib.sha256).digest()
        block += 1


def dice_from_seed(seed: bytes, room_id: str, ply: int, attempt: int = 0) -> tuple[int, int]:
    """Two dice 1..6 for the chance node reached after ``ply`` actions (``attempt``: re-rolls)."""
    message = f"{room_id}:{ply}" if attempt == 0 else f"{room_id}:{ply}:{attempt}"
    dice: list[int] = []
    for byte in _stream(seed, message):
        if byte < ACCEPT_BELOW:
            dice.append(byte % 6 + 1)
            if len(dice) == 2:
                return dice[0], dice[1]
    raise AssertionError("unreachable: the stream is endless")


class CommitRevealDice:
    """The production source: HMAC-SHA256 of a secret seed, committed by its SHA-256."""

    def __init__(self, room_id: str, seed: bytes | None = None) -> None:
        self.room_id = room_id
        self.seed = secrets.token_bytes(SEED_BYTES) if seed is None else seed

    def commitment(self) -> str | None:
        return commitment_of(self.seed)

    def roll(self, ply: int, attempt: int) -> tuple[int, int]:
        return dice_from_seed(self.seed, self.room_id, ply, attempt)


class FixedDice:
    """A test source: hands out the given rolls in order (then repeats the last)."""

    def __init__(self, rolls: list[tuple[int, int]]) -> None:
        self.rolls = list(rolls)
        self.i = 0

    def commitment(self) -> str | None:
        return None

    def roll(self, ply: int, attempt: int) -> tuple[int, int]:
        r = self.rolls[min(self.i, len(self.rolls) - 1)]
        self.i += 1
        return r


SeedFactory = Callable[[], bytes]
