-- Version 14: bot accounts (contract section 12); the PostgreSQL form of SQLite's 0013 (the
-- column and the write are explained there).

ALTER TABLE players ADD COLUMN bot INTEGER NOT NULL DEFAULT 0;

-- a: player id (registered in the same write, just before).
CREATE FUNCTION store_write_bot_account(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE players SET bot = 1 WHERE id = r ->> 1 AND password_hash IS NOT NULL;
END
$$;
