-- The cluster's room leases (contract section 9, docs/server.md "Several nodes"): which node
-- owns each live room, with a fencing token. Only PostgreSQL's nodes use them; SQLite keeps
-- the table so that both schemas stay in step, and a 'fence' row checks it the same way.
-- expires_at is seconds since the epoch, from the database's own clock in PostgreSQL.

CREATE TABLE room_leases (
    room_id    TEXT PRIMARY KEY,
    node       TEXT NOT NULL,
    fence      INTEGER NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX room_leases_node ON room_leases (node);

DROP TRIGGER store_write_unknown;
CREATE TRIGGER store_write_unknown INSTEAD OF INSERT ON store_write
WHEN NEW.kind NOT IN ('player', 'player_seen', 'room', 'seat', 'seat_holder', 'room_status',
                      'move', 'result', 'room_finished', 'seat_to_bot', 'seat_change', 'chat',
                      'room_creator', 'room_lapse', 'review', 'room_seeds', 'register',
                      'player_token', 'rating', 'rating_change', 'fence')
BEGIN
    SELECT RAISE(ABORT, 'store_write: unknown kind');
END;

-- A room's write is allowed only while the lease still carries the writer's fence
-- (a = room, b = node, c = fence): a stale owner's write fails, all of its transaction.
CREATE TRIGGER store_write_fence INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'fence' AND NOT EXISTS (
    SELECT 1 FROM room_leases WHERE room_id = NEW.a AND node = NEW.b AND fence = NEW.c)
BEGIN
    SELECT RAISE(ABORT, 'store_write: lease lost');
END;
