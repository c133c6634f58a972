-- Version 16: fair shares (contract section 15, docs/security.md).
--   blocks                 who blocked whom (kept with the account): a blocked player's
--                          challenges are refused, their seeks are never paired with the
--                          blocker's, their chat lines are not delivered to the blocker.
--   tournaments.created_from  the client address (as the per-address rules count it) its
--                          creator made it from, while it waits or plays: at most 4 an
--                          address; emptied when it finishes.
--   chat.audience          'players' (a seated player's line) or 'spectators' (anyone
--                          else's, which the players of a rated game receive only once it has
--                          finished). The 'chat' write's e: the audience (NULL: players).

CREATE TABLE blocks (
    player_id  TEXT NOT NULL REFERENCES players(id),
    blocked_id TEXT NOT NULL REFERENCES players(id),
    created_at REAL NOT NULL,
    PRIMARY KEY (player_id, blocked_id)
);
CREATE INDEX blocks_by_blocked ON blocks (blocked_id);

ALTER TABLE tournaments ADD COLUMN created_from TEXT NOT NULL DEFAULT '';
CREATE INDEX tournaments_by_creator ON tournaments (created_by, status);

ALTER TABLE chat ADD COLUMN audience TEXT NOT NULL DEFAULT 'players';

DROP TRIGGER store_write_chat;
CREATE TRIGGER store_write_chat INSTEAD OF INSERT ON store_write WHEN NEW.kind = 'chat'
BEGIN
    INSERT INTO chat (room_id, player_id, text, created_at, audience)
    VALUES (NEW.a, NEW.b, NEW.c, NEW.d, COALESCE(NEW.e, 'players'));
END;

-- Name skeletons now drop combining marks (server/names.py): every registered player's is
-- computed again by the server when it opens the database, the earliest registered first,
-- as migration 11's were (a later one that now meets an earlier one's is marked shared).
UPDATE players SET name_skeleton = NULL, name_skeleton_shared = 0
WHERE name_skeleton IS NOT NULL;
