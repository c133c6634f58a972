-- Version 19: invite-only tournaments; the PostgreSQL form of SQLite's 0019 (the tables are
-- explained there).

CREATE TABLE tournament_entry (
    tournament_id TEXT PRIMARY KEY,
    entry TEXT NOT NULL CONSTRAINT tournament_entry_entry CHECK (entry IN ('open', 'invite'))
);

CREATE TABLE tournament_invites (
    tournament_id TEXT NOT NULL,
    name_key TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (tournament_id, name_key)
);
