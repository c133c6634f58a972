-- Version 3: room options (clock, analysis, handover to a bot), clocks with every move and
-- at the end of a game, and a log of seats handed over to a bot.

ALTER TABLE rooms ADD COLUMN room_options TEXT NOT NULL DEFAULT '{}';  -- JSON RoomOptions

ALTER TABLE moves ADD COLUMN clock0_ms INTEGER;  -- seat 0's time left after this action
ALTER TABLE moves ADD COLUMN clock1_ms INTEGER;  -- seat 1's (both NULL: no clock)

ALTER TABLE results ADD COLUMN clock0_ms INTEGER;  -- the clocks when the game ended
ALTER TABLE results ADD COLUMN clock1_ms INTEGER;

CREATE TABLE seat_changes (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    room_id      TEXT NOT NULL REFERENCES rooms(id),
    seat         INTEGER NOT NULL CHECK (seat IN (0, 1)),
    ply          INTEGER NOT NULL,          -- the room's ply when it happened
    from_player  TEXT REFERENCES players(id),
    kind         TEXT NOT NULL CHECK (kind IN ('human', 'bot')),
    level        TEXT,
    reason       TEXT NOT NULL,             -- 'hand_to_bot' or 'abandoned'
    created_at   REAL NOT NULL
);
