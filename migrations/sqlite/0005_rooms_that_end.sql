-- Version 5: rooms that end (contract section 6). A room may also be 'adjourned' (a game in
-- play that nobody present plays: resumed by its players, expired after a while) or 'closed'
-- (a waiting room its creator left). SQLite cannot change a CHECK constraint in place, so the
-- rooms table is rebuilt (the migration runner turns foreign keys off around a migration and
-- checks them before it commits).
--   created_by    the player who opened the room: a waiting room lives while they are around,
--                 and counts against their cap on waiting rooms.
--   status_at     when the status last changed to adjourned or closed: adjourned rooms expire
--                 from it.

CREATE TABLE rooms_v5 (
    id            TEXT PRIMARY KEY,
    game          TEXT NOT NULL,
    options       TEXT NOT NULL,
    status        TEXT NOT NULL
                  CHECK (status IN ('waiting', 'playing', 'finished', 'adjourned', 'closed')),
    dice_seed     BLOB,
    opening_dice  TEXT NOT NULL DEFAULT '[]',
    created_at    REAL NOT NULL,
    room_options  TEXT NOT NULL DEFAULT '{}',
    created_by    TEXT REFERENCES players(id),
    status_at     REAL
);

-- An older room's creator is not known: its first seated person stands in.
INSERT INTO rooms_v5 (id, game, options, status, dice_seed, opening_dice, created_at,
                      room_options, created_by)
SELECT r.id, r.game, r.options, r.status, r.dice_seed, r.opening_dice, r.created_at,
       r.room_options,
       (SELECT s.player_id FROM seats s WHERE s.room_id = r.id AND s.player_id IS NOT NULL
        ORDER BY s.seat LIMIT 1)
FROM rooms r;

DROP TABLE rooms;
-- The triggers of version 4 name `rooms`, which is missing until the rename: the modern
-- RENAME checks every trigger and would refuse; the legacy one renames the table only.
PRAGMA legacy_alter_table = ON;
ALTER TABLE rooms_v5 RENAME TO rooms;
PRAGMA legacy_alter_table = OFF;

CREATE INDEX rooms_by_status ON rooms (status, created_at);
-- The expiry sweep reads the oldest adjourned rooms; a player's return reads what they opened.
CREATE INDEX rooms_adjourned ON rooms (status_at) WHERE status = 'adjourned';
CREATE INDEX rooms_waiting_by_creator ON rooms (created_by) WHERE status = 'waiting';

DROP TRIGGER store_write_unknown;
CREATE TRIGGER store_write_unknown INSTEAD OF INSERT ON store_write
WHEN NEW.kind NOT IN ('player', 'player_seen', 'room', 'seat', 'seat_holder', 'room_status',
                      'move', 'result', 'room_finished', 'seat_to_bot', 'seat_change', 'chat',
                      'room_creator', 'room_lapse')
BEGIN
    SELECT RAISE(ABORT, 'store_write: unknown kind');
END;

CREATE TRIGGER store_write_room_creator INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'room_creator'
BEGIN
    UPDATE rooms SET created_by = NEW.b WHERE id = NEW.a;
END;

-- Adjourned, closed, or playing again: a change of status without a move.
CREATE TRIGGER store_write_room_lapse INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'room_lapse'
BEGIN
    UPDATE rooms SET status = NEW.b, status_at = NEW.c WHERE id = NEW.a;
END;
