"""``tablas bot --challenge NAME`` (additive to contract section 12): the bot challenges NAME,
a registered player or a house level (``bot (LEVEL)``, which accepts at once), to a rated game
of each of its games with its ``--clock``, and again after each of those games ends, until it
has played NAME from both seats of that game. Seats are drawn at random, so that takes three
games on average: "beat each reference bot as first and as second player" in one command.

A refused or expired challenge is sent again 30 s later; a declined one is not (NAME said
no). This class keeps the books; the session sends and hears.
"""

from __future__ import annotations

from typing import Any

RETRY_S = 30.0  # before a refused or expired challenge is sent again


class Challenger:
    def __init__(self, target: str, games: tuple[str, ...], clock: dict[str, int]) -> None:
        self.target = target
        self.games = games
        self.clock = clock
        self.out: dict[str, str | None] = {}  # game -> its challenge out (None: not yet sent)
        self.playing: dict[str, str] = {}  # game -> the room of its game against the target
        self.seats: dict[str, set[int]] = {g: set() for g in games}  # seats played so far
        self.hold_until: dict[str, float] = {}  # game -> not before this time

    @property
    def places(self) -> int:
        """The places its challenges out take."""
        return len(self.out)

    def due(self, now: float) -> list[str]:
        """The games to challenge the target to now."""
        return [g for g in self.games if g not in self.out and g not in self.playing
                and self.seats[g] != {0, 1} and self.hold_until.get(g, 0.0) <= now]

    def message(self, game: str) -> dict[str, Any]:
        """The challenge for ``game``, about to be sent."""
        self.out[game] = None
        return {"type": "challenge", "to": self.target, "game": game, "options": {},
                "clock": self.clock, "rated": True}

    def sent(self, game: str, challenge_id: str) -> None:
        if game in self.out:
            self.out[game] = challenge_id

    def paired(self, challenge_id: str, room_id: str, seat: int) -> bool:
        """Whether ``challenge_id`` was one of ours (its game is now being played)."""
        for game, out in list(self.out.items()):
            if out == challenge_id:
                del self.out[game]
                self.playing[game] = room_id
                self.seats[game].add(seat)
                return True
        return False

    def ended(self, room_id: str) -> None:
        for game, room in list(self.playing.items()):
            if room == room_id:
                del self.playing[game]

    def over(self, challenge_id: str, declined: bool, now: float) -> str | None:
        """Ours ended unanswered (``declined``: refused by the target, for good); its game."""
        for game, out in list(self.out.items()):
            if out == challenge_id:
                del self.out[game]
                self.hold_until[game] = float("inf") if declined else now + RETRY_S
                return game
        return None

    def refused(self, game: str, now: float) -> None:
        """The server refused to send it (the target is offline, say)."""
        self.out.pop(game, None)
        self.hold_until[game] = now + RETRY_S

    def lost_connection(self) -> None:
        """Challenges not yet acknowledged may never have arrived: sent again."""
        for game, out in list(self.out.items()):
            if out is None:
                del self.out[game]
