"""Commit-reveal dice (docs/dice.md): every roll of a room is fixed by a secret seed.

The room picks a 32-byte seed when it is created and publishes ``sha256(seed)`` at once; each
roll is read from ``HMAC-SHA256(seed, f"{room_id}:{ply}[:{attempt}]:{seed0}:{seed1}")`` without
modulo bias, where the seat seeds are strings the players chose (so the server could not pick
its seed to suit them); the seed is revealed when the game ends, so anyone can recompute every
roll and check the commitment. Rooms stored before seat seeds existed have ``seeds`` None and
keep the old message, without the ``:{seed0}:{seed1}`` part.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Iterator
from typing import Protocol

SEED_BYTES = 32
ACCEPT_BELOW = 252  # 252 = 6 * 42: a byte below it is uniform on 1..6 via (byte % 6) + 1
# A seat's seed: short and plain, so that it reads the same in every language's HMAC and
# cannot contain the ":" and "#" that separate the message's parts.
SEAT_SEED_PATTERN = r"^[0-9A-Za-z]{0,64}$"
_SEAT_SEED = re.compile(SEAT_SEED_PATTERN)
Seeds = tuple[str, str]
NO_SEEDS: Seeds = ("", "")


def valid_seat_seed(seed: str) -> bool:
    return _SEAT_SEED.fullmatch(seed) is not None


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


def roll_message(room_id: str, ply: int, attempt: int, seeds: Seeds | None) -> str:
    """The HMAC message of a roll: ``ROOM:PLY`` (+ ``:ATTEMPT`` for a re-roll) + ``:S0:S1``;
    ``seeds`` None is the message of rooms stored before seat seeds (no ``:S0:S1``)."""
    message = f"{room_id}:{ply}" if attempt == 0 else f"{room_id}:{ply}:{attempt}"
    return message if seeds is None else f"{message}:{seeds[0]}:{seeds[1]}"


def dice_from_seed(seed: bytes, room_id: str, ply: int, attempt: int = 0,
                   seeds: Seeds | None = NO_SEEDS) -> tuple[int, int]:
    """Two dice 1..6 for the chance node reached after ``ply`` actions (``attempt``: re-rolls)."""
    message = roll_message(room_id, ply, attempt, seeds)
    dice: list[int] = []
    for byte in _stream(seed, message):
        if byte < ACCEPT_BELOW:
            dice.append(byte % 6 + 1)
            if len(dice) == 2:
                return dice[0], dice[1]
    raise AssertionError("unreachable: the stream is endless")


class CommitRevealDice:
    """The production source: HMAC-SHA256 of a secret seed, committed by its SHA-256."""

    def __init__(self, room_id: str, seed: bytes | None = None,
                 seeds: Seeds | None = NO_SEEDS) -> None:
        self.room_id = room_id
        self.seed = secrets.token_bytes(SEED_BYTES) if seed is None else seed
        self.seeds = seeds  # the seats' seeds (None: a room stored before them)

    def with_seeds(self, seeds: Seeds | None) -> CommitRevealDice:
        """The same server seed with other seat seeds (a change not yet committed)."""
        return CommitRevealDice(self.room_id, self.seed, seeds)

    def commitment(self) -> str | None:
        return commitment_of(self.seed)

    def roll(self, ply: int, attempt: int) -> tuple[int, int]:
        return dice_from_seed(self.seed, self.room_id, ply, attempt, self.seeds)


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
