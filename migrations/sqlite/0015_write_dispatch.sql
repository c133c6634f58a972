-- Version 15: a new thing's lease made by its first write (kind 'lease'), so that opening a
-- room in a cluster is one transaction, not a claim and then a write. A single server (the
-- only user of SQLite) writes no leases; the kind is here so that both backends know the
-- same kinds (a = key, b = node, c = fence, d = seconds the lease lasts). It fails if the
-- key has a lease already (the primary key). PostgreSQL's migration of this number also
-- calls the write functions of the known kinds directly instead of by name; here the
-- triggers' WHEN clauses choose them already.

DROP TRIGGER store_write_unknown;
CREATE TRIGGER store_write_unknown INSTEAD OF INSERT ON store_write
WHEN NEW.kind NOT IN ('player', 'player_seen', 'room', 'seat', 'seat_holder', 'room_status',
                      'move', 'result', 'room_finished', 'seat_to_bot', 'seat_change', 'chat',
                      'room_creator', 'room_lapse', 'review', 'room_seeds', 'register',
                      'player_token', 'rating', 'rating_change', 'fence', 'room_unrated',
                      'name_skeleton', 'bot_account', 'lease')
BEGIN
    SELECT RAISE(ABORT, 'store_write: unknown kind');
END;

CREATE TRIGGER store_write_lease INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'lease'
BEGIN
    INSERT INTO room_leases (room_id, node, fence, expires_at)
    VALUES (NEW.a, NEW.b, NEW.c, (julianday('now') - 2440587.5) * 86400.0 + NEW.d);
END;
