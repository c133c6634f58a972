-- Version 13: tournaments (contract section 13); the PostgreSQL form of SQLite's 0013 (the
-- columns are explained there).

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
    created_at DOUBLE PRECISION NOT NULL
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
