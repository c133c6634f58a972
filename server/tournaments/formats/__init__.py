"""Tournament formats (contract sections 13 and 19): each one module behind
:class:`~.base.Format`, chosen by its name here, in :data:`FORMATS` (docs/architecture.md
"How to add a tournament format")."""

from __future__ import annotations

from tablas.server.tournaments.formats.arena import Arena
from tablas.server.tournaments.formats.base import Format, Step, played, result
from tablas.server.tournaments.formats.round_robin import RoundRobin
from tablas.server.tournaments.formats.swiss import Swiss

FORMATS: dict[str, Format] = {f.name: f for f in (RoundRobin(), Swiss(), Arena())}


def format_of(name: str) -> Format:
    """The format called ``name`` (a stored tournament's: the database's CHECK keeps it
    one of :data:`FORMATS`)."""
    return FORMATS[name]


__all__ = ["FORMATS", "Format", "Step", "format_of", "played", "result"]
