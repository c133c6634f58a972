-- Version 12: seeks (contract section 11, docs/server.md "Seeks and challenges").
-- The open seeks of every node, in one table: a seek is paired by taking the oldest
-- compatible row and deleting it in one statement, so no seek is paired twice, whichever
-- node pairs it. A seek lives as long as the connection that made it (node, cid): the node
-- deletes its rows when the connection closes, and every row of a node at its start.
--   seek_id      the id the seeker was given (seeking.seek_id)
--   node, cid    the node the seeker is connected to and the connection there
--   player_id    the seeker; name, registered, bot: shown in GET /api/seeks
--   address      the seeker's client address (the cap on open seeks per address)
--   rating       the seeker's rating for the game when the seek was made (1500 without)
--   game, options, clock   the game; its options and clock as canonical JSON text
--                (sorted keys; 'null' for no clock): equal texts, equal seeks
--   rated        1 for a rated seek
--   lo, hi       the rating range the seeker accepts (NULL: any)
--   created_at   when it was made; oldest first

CREATE TABLE seeks (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    seek_id TEXT NOT NULL UNIQUE,
    node TEXT NOT NULL,
    cid INTEGER NOT NULL,
    player_id TEXT NOT NULL,
    name TEXT NOT NULL,
    registered INTEGER NOT NULL,
    bot INTEGER NOT NULL DEFAULT 0,
    address TEXT NOT NULL,
    rating REAL NOT NULL,
    game TEXT NOT NULL,
    options TEXT NOT NULL,
    clock TEXT NOT NULL,
    rated INTEGER NOT NULL,
    lo REAL,
    hi REAL,
    created_at REAL NOT NULL
);
CREATE INDEX seeks_by_kind ON seeks (game, rated, seq);
CREATE INDEX seeks_by_player ON seeks (player_id);
CREATE INDEX seeks_by_connection ON seeks (node, cid);
