"""Tournaments (contract section 13): :mod:`.pairing` (pure: Berger tables, the Swiss
matching, standings), :mod:`.keeper` (the commands and the owner's loop), :mod:`.views`
(``GET /api/tournaments``); docs/tournaments.md."""
