"""What a live room's owner is asked to run, and what it writes.

A player's command comes from a client message (:data:`RoomCommand`); the room's own tasks
and the hub send the others (:data:`OWN`): the bot's decision, the timer's tick, a change of
who is online, the expiry of an adjourned game. What the owner persists, then commits, is a
:data:`Change`.
"""

from __future__ import annotations

from dataclasses import dataclass

from tablas.engine.core import Outcome
from tablas.engine.search.decision import Decision
from tablas.server.protocol import (
    Abort,
    AcceptResign,
    Berserk,
    Chat,
    ClaimWin,
    DeclineResign,
    HandToBot,
    Join,
    Leave,
    Move,
    Offer,
    Resign,
    Seed,
    Spectate,
)
from tablas.server.room import BotJob, Lapse, Pending, SeatChange


@dataclass(frozen=True, slots=True)
class BotMove:
    """The bot's decision for ``job`` came back (None: no answer in time)."""

    job: BotJob
    decision: Decision | None


@dataclass(frozen=True, slots=True)
class Tick:
    """The room's timer fired: a flag may have fallen, an absent player's seat be due."""


@dataclass(frozen=True, slots=True)
class PresenceChanged:
    """A player seated here (or its creator, while it waits) came online or went offline."""


@dataclass(frozen=True, slots=True)
class Expire:
    """The game has been adjourned too long: it ends without a winner (``expired``)."""


# A player's command, from a client message; the room's own tasks and the hub send the others.
RoomCommand = (Join | Spectate | Leave | Move | Resign | HandToBot | Chat | Seed | Abort | ClaimWin
               | AcceptResign | DeclineResign | Offer | Berserk)
Command = RoomCommand | BotMove | Tick | PresenceChanged | Expire
# The room's own commands: never refused by its inbox (server.live_room.INBOX).
OWN = (BotMove, Tick, PresenceChanged, Expire)


@dataclass(frozen=True, slots=True)
class Ending:
    """The end of a game without a move (a resignation, a flag fall)."""

    outcome: Outcome
    clocks: list[int] | None


# What the owner persists, then commits: a move, a seat change, the end of a game without a
# move, a change of status without one.
Change = Pending | SeatChange | Ending | Lapse
