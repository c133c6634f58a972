"""``tablas match`` (contract section 17, docs/bots.md): engines and house levels play each
other on this machine, no server. One file per job:

- :mod:`.options`: the command line's options, checked before anything starts;
- :mod:`.players`: an engine (a process per game, over the engine protocol of
  :mod:`tablas.server.bot_adapter.engine`) or a house level (the engine package's bots);
- :mod:`.play`: one game, from its opening to its end, timed; its record;
- :mod:`.runner`: the games of the match, paired openings, concurrency, progress, the SPRT;
- :mod:`.stats`: Elo, its interval and the GSPRT (pure arithmetic);
- :mod:`.report`: the report card, from the records;
- :mod:`.command`: the command from its arguments to its exit code.
"""
