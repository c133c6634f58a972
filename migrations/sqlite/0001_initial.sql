-- Tablas schema, version 1: players, rooms, seats, moves, results.
-- Applied by server/store.py inside one transaction, recorded in schema_migrations.

CREATE TABLE players (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    token_hash  TEXT NOT NULL UNIQUE,      -- sha256(token) hex; the token itself is never stored
    created_at  REAL NOT NULL
);

CREATE TABLE rooms (
    id            TEXT PRIMARY KEY,
    game          TEXT NOT NULL,
    options       TEXT NOT NULL,           -- JSON object
    status        TEXT NOT NULL CHECK (status IN ('waiting', 'playing', 'finished')),
    dice_seed     BLOB,                    -- the commit-reveal secret (games with dice)
    opening_dice  TEXT NOT NULL DEFAULT '[]',  -- JSON list of rolls made at game start
    created_at    REAL NOT NULL
);

CREATE TABLE seats (
    room_id    TEXT NOT NULL REFERENCES rooms(id),
    seat       INTEGER NOT NULL CHECK (seat IN (0, 1)),
    kind       TEXT NOT NULL CHECK (kind IN ('human', 'bot')),
    level      TEXT,
    player_id  TEXT REFERENCES players(id),
    PRIMARY KEY (room_id, seat)
);

CREATE TABLE moves (
    room_id     TEXT NOT NULL REFERENCES rooms(id),
    ply         INTEGER NOT NULL,          -- 0-based index in the history
    seat        INTEGER NOT NULL,
    move        TEXT NOT NULL,             -- the MOVE object in listed form, JSON
    dice        TEXT NOT NULL DEFAULT '[]',-- JSON list of rolls this action led to
    created_at  REAL NOT NULL,
    PRIMARY KEY (room_id, ply)
);

CREATE TABLE results (
    room_id      TEXT PRIMARY KEY REFERENCES rooms(id),
    winner       INTEGER,
    points       INTEGER NOT NULL,
    reason       TEXT NOT NULL,
    finished_at  REAL NOT NULL
);
