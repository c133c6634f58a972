-- Version 2: an index for the lobby and reload-at-start, a player's last visit, room chat.

CREATE INDEX rooms_by_status ON rooms (status, created_at);
CREATE INDEX seats_by_player ON seats (player_id);

ALTER TABLE players ADD COLUMN last_seen REAL;

CREATE TABLE chat (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    room_id     TEXT NOT NULL REFERENCES rooms(id),
    player_id   TEXT NOT NULL REFERENCES players(id),
    text        TEXT NOT NULL,
    created_at  REAL NOT NULL
);
