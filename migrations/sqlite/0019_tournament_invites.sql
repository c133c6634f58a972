-- Version 19: invite-only tournaments (contract section 17, "Tournaments for bots").
--   tournament_entry    a row for each invite-only tournament (entry 'invite'); an open one
--                       has none. Written before the tournament's own row, so no reference:
--                       a row left by a creation that failed names no tournament, harmlessly.
--   tournament_invites  the names invited, by their name key (server/accounts.py: NFKC
--                       casefold), as given (name).

CREATE TABLE tournament_entry (
    tournament_id TEXT PRIMARY KEY,
    entry TEXT NOT NULL CHECK (entry IN ('open', 'invite'))
);

CREATE TABLE tournament_invites (
    tournament_id TEXT NOT NULL,
    name_key TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (tournament_id, name_key)
);
