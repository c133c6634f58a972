-- Version 11: names that deceive (contract section 10, docs/security.md "Names that deceive").
--   name_skeleton         server.names.skeleton_key(name) of a registered player (NFKC and
--                         casefold, fillers dropped, then Unicode TR39's confusable skeleton):
--                         no new name may have a registered player's. NULL for a guest.
--   name_skeleton_shared  1 for a player registered before this version whose skeleton an
--                         earlier registrant already had: both keep their names and accounts,
--                         the earliest holds the skeleton (the unique index), new names are
--                         refused against it. 0 for every player registered from now on.
-- The skeletons of players registered before are written by the server when it opens the
-- database (the 'name_skeleton' write below): SQL cannot compute them. The partial index
-- players_without_skeleton makes finding the ones left a lookup of nothing once done.

ALTER TABLE players ADD COLUMN name_skeleton TEXT;
ALTER TABLE players ADD COLUMN name_skeleton_shared INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX players_by_name_skeleton ON players (name_skeleton)
    WHERE name_skeleton IS NOT NULL AND name_skeleton_shared = 0;
CREATE INDEX players_without_skeleton ON players (registered_at)
    WHERE name_key IS NOT NULL AND name_skeleton IS NULL;

DROP TRIGGER store_write_unknown;
CREATE TRIGGER store_write_unknown INSTEAD OF INSERT ON store_write
WHEN NEW.kind NOT IN ('player', 'player_seen', 'room', 'seat', 'seat_holder', 'room_status',
                      'move', 'result', 'room_finished', 'seat_to_bot', 'seat_change', 'chat',
                      'room_creator', 'room_lapse', 'review', 'room_seeds', 'register',
                      'player_token', 'rating', 'rating_change', 'fence', 'room_unrated',
                      'name_skeleton')
BEGIN
    SELECT RAISE(ABORT, 'store_write: unknown kind');
END;

-- a: player id, b: name key, c: password hash, d: when, e: name skeleton. A player registers
-- once; the unique indexes on name_key and name_skeleton refuse a name that is taken or looks
-- like one that is.
DROP TRIGGER store_write_register;
CREATE TRIGGER store_write_register INSTEAD OF INSERT ON store_write WHEN NEW.kind = 'register'
BEGIN
    SELECT RAISE(ABORT, 'register: already registered')
    WHERE EXISTS (SELECT 1 FROM players WHERE id = NEW.a AND password_hash IS NOT NULL);
    UPDATE players SET name_key = NEW.b, password_hash = NEW.c, registered_at = NEW.d,
                       name_skeleton = NEW.e
    WHERE id = NEW.a;
END;

-- a: player id, b: name skeleton. The backfill of a player registered before version 11:
-- written once (a player who has one keeps it), shared when an earlier one holds it.
CREATE TRIGGER store_write_name_skeleton INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'name_skeleton'
BEGIN
    UPDATE players SET name_skeleton = NEW.b,
        name_skeleton_shared = EXISTS (SELECT 1 FROM players AS p WHERE p.name_skeleton = NEW.b
                                       AND p.name_skeleton_shared = 0 AND p.id != NEW.a)
    WHERE id = NEW.a AND name_skeleton IS NULL;
END;
