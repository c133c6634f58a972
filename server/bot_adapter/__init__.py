"""``tablas bot``: a bot account driven by an engine program (contract section 12,
docs/bots.md).

One file per job:

- :mod:`.options`: the command line's options, checked before anything starts (a bad one is
  one line on stderr and exit code 2);
- :mod:`.engine`: one engine process, spoken to over the engine protocol (lines on its
  stdin and stdout), with the time it has for each answer;
- :mod:`.notation`: a room's game followed with the engine package, so that its legal moves
  are written as ``tablas moves`` writes them (each game's own ``move_text``);
- :mod:`.game`: one room's game loop: its engine, the room's position, the turn, the end;
- :mod:`.session`: the WebSocket session: login (or registration of the bot account),
  challenges accepted or kept waiting, seeks kept open, reconnection with backoff.

The adapter depends on the server only through the protocol (and on the engine package for
notations): it is a client like any other, shipped with the server so that every student has
it.
"""
