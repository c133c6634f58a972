-- Version 6: records and reviews (contract section 7). A room's record carries its last 100
-- chat lines, read newest first by room: an index on (room_id, id) finds them without reading
-- the whole chat of the server.

CREATE INDEX chat_by_room ON chat (room_id, id);

-- A finished game's review (GET /api/rooms/{id}/review): computed once, in the bot pool, and
-- kept as the JSON text it is served as.
CREATE TABLE reviews (
    room_id     TEXT PRIMARY KEY REFERENCES rooms(id),
    json        TEXT NOT NULL,
    created_at  REAL NOT NULL
);

DROP TRIGGER store_write_unknown;
CREATE TRIGGER store_write_unknown INSTEAD OF INSERT ON store_write
WHEN NEW.kind NOT IN ('player', 'player_seen', 'room', 'seat', 'seat_holder', 'room_status',
                      'move', 'result', 'room_finished', 'seat_to_bot', 'seat_change', 'chat',
                      'room_creator', 'room_lapse', 'review')
BEGIN
    SELECT RAISE(ABORT, 'store_write: unknown kind');
END;

-- A review is computed once per room; should two ever be written, the first stays.
CREATE TRIGGER store_write_review INSTEAD OF INSERT ON store_write WHEN NEW.kind = 'review'
BEGIN
    INSERT OR IGNORE INTO reviews (room_id, json, created_at) VALUES (NEW.a, NEW.b, NEW.c);
END;
