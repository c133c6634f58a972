-- Version 17: ratings that one address cannot farm (contract section 16, docs/ratings.md).
--
-- address_seen  per player, the keyed hashes of the addresses they connected from (HMAC-SHA256
--               under the server's own key, hex; never the address), with when each was last
--               seen; rows older than 30 days are deleted by a sweep. Two players with a hash in
--               common seen in the last 30 days do not rate each other.
-- server_secrets the server's own secrets by name ('address_key': the HMAC key, made once by
--               the first server to need it, read by every node of a cluster).
-- A room made unrated says why: 'room_unrated' now takes b, the reason ('pair_cap' or
-- 'shared_address'), kept in room_options.unrated_reason.

CREATE TABLE address_seen (
    player_id TEXT NOT NULL,
    address_hash TEXT NOT NULL,
    seen_at REAL NOT NULL,
    PRIMARY KEY (player_id, address_hash)
);
CREATE INDEX address_seen_at ON address_seen (seen_at);

CREATE TABLE server_secrets (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

DROP TRIGGER store_write_unknown;
CREATE TRIGGER store_write_unknown INSTEAD OF INSERT ON store_write
WHEN NEW.kind NOT IN ('player', 'player_seen', 'room', 'seat', 'seat_holder', 'room_status',
                      'move', 'result', 'room_finished', 'seat_to_bot', 'seat_change', 'chat',
                      'room_creator', 'room_lapse', 'review', 'room_seeds', 'register',
                      'player_token', 'rating', 'rating_change', 'fence', 'room_unrated',
                      'name_skeleton', 'bot_account', 'lease', 'address_seen')
BEGIN
    SELECT RAISE(ABORT, 'store_write: unknown kind');
END;

-- a: player id, b: the address's keyed hash (hex), c: when (seconds).
CREATE TRIGGER store_write_address_seen INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'address_seen'
BEGIN
    INSERT INTO address_seen (player_id, address_hash, seen_at) VALUES (NEW.a, NEW.b, NEW.c)
    ON CONFLICT (player_id, address_hash)
    DO UPDATE SET seen_at = max(seen_at, excluded.seen_at);
END;

-- a: room id, b: why it is rated no more.
DROP TRIGGER store_write_room_unrated;
CREATE TRIGGER store_write_room_unrated INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'room_unrated'
BEGIN
    UPDATE rooms SET room_options = json_set(room_options, '$.rated', json('false'),
                                             '$.unrated_reason', NEW.b)
    WHERE id = NEW.a;
END;
