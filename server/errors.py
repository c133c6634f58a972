"""The server's exceptions, one tree.

::

    ServerError
    ├── Refused             a command refused with one of the contract's error codes: the
    │   │                   caller answers it with an ``error`` message; nothing changed
    │   ├── ProtocolError   the frame itself (not JSON, unknown type, wrong fields, no hello)
    │   └── RoomError       the room said no (seat taken, not your turn, illegal move…)
    │       └── Flagged     the move came after its seat's time ran out
    ├── LeaseLost           a room's write refused by the database: another node owns the
    │                       room now (its lease's fence moved on); nothing was written
    ├── NotOwner            a room this node may not load: another node owns it (cluster)
    ├── RecordError         a request for a room's record refused (HTTP): no such room, a
    │                       bad parameter, a review of a game not over, too many reviews at
    │                       once, a review that failed
    └── StartupError        the server cannot start; the message says why and what to do
        └── MissingFiles    a file the package ships is not where it belongs (a broken install)
"""

from __future__ import annotations

from typing import Literal, get_args

ErrorCode = Literal[
    "bad_request",
    "unknown_type",
    "not_authenticated",
    "unknown_room",
    "unknown_game",
    "seat_taken",
    "not_seated",
    "not_your_turn",
    "illegal_move",
    "stale",
    "game_over",
    "rate_limited",
    "too_large",
    "internal",
    "name_taken",
    "unknown_player",
]
ERROR_CODES: tuple[str, ...] = get_args(ErrorCode)


class ServerError(Exception):
    """Anything the server raises on purpose."""


class Refused(ServerError):
    """A command refused: ``code`` is the contract's error code, ``re`` the id of the message
    it answers when known here (else the caller's)."""

    def __init__(self, code: ErrorCode, message: str, re: str | int | None = None, *,
                 reason: str | None = None,
                 params: dict[str, str | int | float] | None = None) -> None:
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message
        self.re = re
        # Additive (contract section 18): the kind of refusal, finer than the code, and the
        # values a client needs to word it in its own language; the message stays English.
        self.reason = reason
        self.params = params


class ProtocolError(Refused):
    """A client frame refused as a frame: malformed, of an unknown type, or out of order."""


class RoomError(Refused):
    """A command the room refused; the room did not change."""


class MeetError(Refused):
    """A seek or a challenge refused (contract section 11); nothing changed."""


class LeaseLost(ServerError):
    """The database refused a write of ``room_id``: this node's lease on the room is gone
    (another node took it over, contract section 9). Nothing of the write was stored."""

    def __init__(self, room_id: str) -> None:
        super().__init__(f"the lease on room {room_id} is lost")
        self.room_id = room_id


class NotOwner(ServerError):
    """``room_id`` is owned by the node ``node`` (a live lease): it is not loaded here; a
    command for it goes to that node (``tablas.server.cluster``)."""

    def __init__(self, room_id: str, node: str) -> None:
        super().__init__(f"room {room_id} is owned by node {node}")
        self.room_id = room_id
        self.node = node


RecordRefusal = Literal["bad_request", "unknown_room", "not_finished", "busy", "internal"]


class RecordError(ServerError):
    """A request for a room's record (``/api/rooms/{id}…``) refused, nothing changed:
    ``code`` says why (the HTTP edge answers it with its status), ``extra`` more fields for
    the answer."""

    def __init__(self, code: RecordRefusal, message: str,
                 extra: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.code: RecordRefusal = code
        self.message = message
        self.extra = extra or {}


class StartupError(ServerError):
    """The server cannot start (the message says why); it exits at once."""


class MissingFiles(StartupError):
    """A file the package ships is missing: the install is broken."""
