-- Version 20: arena tournaments (contract section 19); the PostgreSQL form of SQLite's 0020
-- (the columns are explained there). The format's CHECK was unnamed (PostgreSQL named it
-- tournaments_format_check); it is named now.

ALTER TABLE tournaments DROP CONSTRAINT IF EXISTS tournaments_format_check;
ALTER TABLE tournaments ADD CONSTRAINT tournaments_format
    CHECK (format IN ('round_robin', 'swiss', 'arena'));
ALTER TABLE tournaments ADD COLUMN minutes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tournaments ADD COLUMN ends_at_ms BIGINT;

ALTER TABLE tournament_players ADD COLUMN active INTEGER NOT NULL DEFAULT 1;
ALTER TABLE tournament_games ADD COLUMN berserk0 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tournament_games ADD COLUMN berserk1 INTEGER NOT NULL DEFAULT 0;
