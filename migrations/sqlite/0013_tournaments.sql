-- Version 13: tournaments (contract section 13, docs/tournaments.md).
-- A tournament's entrants and its pairings are stored; its standings never are: they are
-- recomputed from the results of its games' rooms (server/tournaments/pairing.py), so they
-- always agree with the games. Its owner (one node at a time, through the ownership port,
-- key 'tour:' || id) writes its rounds; joining, leaving and starting are conditional
-- statements any node may run (they check the tournament is still waiting).
--   tournaments         format: round_robin or swiss; rounds: the rounds it plays (a round
--                       robin's, computed at its start); round: the round in play (0 before
--                       the first); options, clock: JSON text as create_tournament gave them
--   tournament_players  one row per entrant: a person or bot account (level NULL), or a
--                       house bot level (player_id bot:GAME:LEVEL); seq: the order they
--                       entered, the seeding
--   tournament_games    one row per pairing: seat 0's player (p0), seat 1's (p1; NULL for a
--                       bye, room_id NULL too); room_id chosen before the room is made, so a
--                       round interrupted half-way is completed, never paired again

CREATE TABLE tournaments (
    id TEXT PRIMARY KEY,
    game TEXT NOT NULL,
    options TEXT NOT NULL,
    clock TEXT NOT NULL,
    format TEXT NOT NULL CHECK (format IN ('round_robin', 'swiss')),
    rounds INTEGER NOT NULL,
    games_per_pairing INTEGER NOT NULL,
    rated INTEGER NOT NULL,
    max_players INTEGER NOT NULL,
    created_by TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('waiting', 'playing', 'finished')),
    round INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);
CREATE INDEX tournaments_by_status ON tournaments (status, created_at);

CREATE TABLE tournament_players (
    tournament_id TEXT NOT NULL REFERENCES tournaments(id),
    player_id TEXT NOT NULL,
    name TEXT NOT NULL,
    registered INTEGER NOT NULL,
    bot INTEGER NOT NULL,
    level TEXT,
    seq INTEGER NOT NULL,
    PRIMARY KEY (tournament_id, player_id)
);

CREATE TABLE tournament_games (
    tournament_id TEXT NOT NULL REFERENCES tournaments(id),
    round INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    room_id TEXT,
    p0 TEXT NOT NULL,
    p1 TEXT,
    PRIMARY KEY (tournament_id, round, idx)
);
CREATE INDEX tournament_games_by_room ON tournament_games (room_id);
CREATE INDEX tournament_games_by_player0 ON tournament_games (p0);
CREATE INDEX tournament_games_by_player1 ON tournament_games (p1);
