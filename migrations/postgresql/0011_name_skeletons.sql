-- Version 11: names that deceive (contract section 10); the PostgreSQL form of SQLite's 0011
-- (the columns, indexes and the backfill are explained there).

ALTER TABLE players ADD COLUMN name_skeleton TEXT;
ALTER TABLE players ADD COLUMN name_skeleton_shared INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX players_by_name_skeleton ON players (name_skeleton)
    WHERE name_skeleton IS NOT NULL AND name_skeleton_shared = 0;
CREATE INDEX players_without_skeleton ON players (registered_at)
    WHERE name_key IS NOT NULL AND name_skeleton IS NULL;

-- a: player id, b: name key, c: password hash, d: when, e: name skeleton.
CREATE OR REPLACE FUNCTION store_write_register(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM players WHERE id = r ->> 1 AND password_hash IS NOT NULL) THEN
        RAISE EXCEPTION 'register: already registered';
    END IF;
    UPDATE players SET name_key = r ->> 2, password_hash = r ->> 3,
                       registered_at = (r ->> 4)::double precision, name_skeleton = r ->> 5
    WHERE id = r ->> 1;
END
$$;

-- a: player id, b: name skeleton (the backfill of a player registered before version 11).
CREATE FUNCTION store_write_name_skeleton(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE players SET name_skeleton = r ->> 2,
        name_skeleton_shared = CASE WHEN EXISTS (
            SELECT 1 FROM players AS p WHERE p.name_skeleton = r ->> 2
            AND p.name_skeleton_shared = 0 AND p.id <> r ->> 1) THEN 1 ELSE 0 END
    WHERE id = r ->> 1 AND name_skeleton IS NULL;
END
$$;
