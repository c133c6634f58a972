-- Version 20: arena tournaments (contract section 19, docs/tournaments.md "Arena").
--   tournaments.format      now also 'arena' (SQLite cannot change a CHECK in place: the
--                           table is rebuilt, as SQLite's documentation says to)
--   tournaments.minutes     an arena's length in arena minutes (0: not an arena)
--   tournaments.ends_at_ms  when an arena ends (ms since the epoch), set once at its start so
--                           every node agrees; NULL before it, and for other formats
--   tournament_players.active  1 while the entrant takes part; an arena entrant who left is
--                           kept (their games and points stay) with 0, and is not paired
--   tournament_games.berserk0, berserk1  1: that seat went berserk (an arena game: half its
--                           time, no increment, a win scores one point more)
-- An arena's games are stored one per "round" (round = the game's number, idx 0), so
-- tournaments.round counts the games paired and orders them.

CREATE TABLE tournaments_v17 (
    id TEXT PRIMARY KEY,
    game TEXT NOT NULL,
    options TEXT NOT NULL,
    clock TEXT NOT NULL,
    format TEXT NOT NULL CHECK (format IN ('round_robin', 'swiss', 'arena')),
    rounds INTEGER NOT NULL,
    games_per_pairing INTEGER NOT NULL,
    rated INTEGER NOT NULL,
    max_players INTEGER NOT NULL,
    created_by TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('waiting', 'playing', 'finished')),
    round INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    created_from TEXT NOT NULL DEFAULT '',
    minutes INTEGER NOT NULL DEFAULT 0,
    ends_at_ms INTEGER
);
INSERT INTO tournaments_v17 (id, game, options, clock, format, rounds, games_per_pairing,
                             rated, max_players, created_by, status, round, created_at,
                             created_from)
SELECT id, game, options, clock, format, rounds, games_per_pairing, rated, max_players,
       created_by, status, round, created_at, created_from
FROM tournaments;
DROP TABLE tournaments;
ALTER TABLE tournaments_v17 RENAME TO tournaments;
CREATE INDEX tournaments_by_status ON tournaments (status, created_at);
CREATE INDEX tournaments_by_creator ON tournaments (created_by, status);

ALTER TABLE tournament_players ADD COLUMN active INTEGER NOT NULL DEFAULT 1;
ALTER TABLE tournament_games ADD COLUMN berserk0 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tournament_games ADD COLUMN berserk1 INTEGER NOT NULL DEFAULT 0;
