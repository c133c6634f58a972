"""The pure parts a room's rules are made of: no asyncio, sockets or SQL, every time given.

:class:`~tablas.server.room.Room` holds one of each: its
:class:`~tablas.server.rules.seats.Seating`, its :class:`~tablas.server.rules.clock.Clocks` (a room
with a clock) and its :class:`~tablas.server.rules.presence.Absence`, and decides what they make of
the room.
"""
