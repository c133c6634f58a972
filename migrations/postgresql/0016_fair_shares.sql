-- Version 16: fair shares (contract section 15); the PostgreSQL form of SQLite's 0016 (the
-- tables and columns are explained there).

CREATE TABLE blocks (
    player_id  TEXT NOT NULL REFERENCES players(id),
    blocked_id TEXT NOT NULL REFERENCES players(id),
    created_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (player_id, blocked_id)
);
CREATE INDEX blocks_by_blocked ON blocks (blocked_id);

ALTER TABLE tournaments ADD COLUMN created_from TEXT NOT NULL DEFAULT '';
CREATE INDEX tournaments_by_creator ON tournaments (created_by, status);

ALTER TABLE chat ADD COLUMN audience TEXT NOT NULL DEFAULT 'players';

CREATE OR REPLACE FUNCTION store_write_chat(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO chat (room_id, player_id, text, created_at, audience)
    VALUES (r ->> 1, r ->> 2, r ->> 3, (r ->> 4)::double precision,
            COALESCE(r ->> 5, 'players'));
END
$$;

-- Name skeletons now drop combining marks (server/names.py): every registered player's is
-- computed again by the server when it opens the database, the earliest registered first,
-- as migration 11's were (a later one that now meets an earlier one's is marked shared).
UPDATE players SET name_skeleton = NULL, name_skeleton_shared = 0
WHERE name_skeleton IS NOT NULL;
