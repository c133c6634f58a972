"""The old name of :mod:`server.bot_pool`, for ``server/live_room.py``'s imports until they
name ``server.bot_pool`` (issue 34); delete this file then."""

from server.bot_pool import BotPool as BotPool, random_move as random_move  # noqa: I001
