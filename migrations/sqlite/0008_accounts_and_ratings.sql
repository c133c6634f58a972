-- Version 8: accounts and Glicko-2 ratings (contract section 8, docs/ratings.md).
--   name_key       casefold(NFKC(name)) of a registered player: unique among them, so that
--                  "Ana", "ANA" and a fullwidth "Ａna" are one name. NULL for a guest.
--   password_hash  "scrypt$N$R$P$SALT$HASH" (hex): the parameters travel with the hash, so
--                  they can change without breaking older hashes. NULL for a guest.
-- A registered player may log in from several devices: each login gets a token of its own,
-- kept (as its sha256, like players.token_hash) in player_tokens.

ALTER TABLE players ADD COLUMN name_key TEXT;
ALTER TABLE players ADD COLUMN password_hash TEXT;
ALTER TABLE players ADD COLUMN registered_at REAL;
CREATE UNIQUE INDEX players_by_name_key ON players (name_key) WHERE name_key IS NOT NULL;

CREATE TABLE player_tokens (
    token_hash  TEXT PRIMARY KEY,
    player_id   TEXT NOT NULL REFERENCES players(id),
    created_at  REAL NOT NULL
);

-- One row per rated player and game. player_id is a player's id, or a bot level's
-- ("bot:GAME:LEVEL"), which has no row in players: hence no foreign key.
CREATE TABLE ratings (
    player_id   TEXT NOT NULL,
    game        TEXT NOT NULL,
    rating      REAL NOT NULL,
    rd          REAL NOT NULL,
    volatility  REAL NOT NULL,
    games       INTEGER NOT NULL,
    PRIMARY KEY (player_id, game)
);
CREATE INDEX ratings_by_game ON ratings (game, rating DESC);

-- What each finished rated game did to each side: written with the result, in the same
-- statement, so a room is rated exactly once (its primary key) and never lost to a crash.
CREATE TABLE rating_changes (
    room_id        TEXT NOT NULL REFERENCES rooms(id),
    seat           INTEGER NOT NULL CHECK (seat IN (0, 1)),
    player_id      TEXT NOT NULL,
    score          REAL NOT NULL,
    rating_before  REAL NOT NULL,
    rd_before      REAL NOT NULL,
    rating_after   REAL NOT NULL,
    rd_after       REAL NOT NULL,
    PRIMARY KEY (room_id, seat)
);

DROP TRIGGER store_write_unknown;
CREATE TRIGGER store_write_unknown INSTEAD OF INSERT ON store_write
WHEN NEW.kind NOT IN ('player', 'player_seen', 'room', 'seat', 'seat_holder', 'room_status',
                      'move', 'result', 'room_finished', 'seat_to_bot', 'seat_change', 'chat',
                      'room_creator', 'room_lapse', 'review', 'room_seeds', 'register',
                      'player_token', 'rating', 'rating_change')
BEGIN
    SELECT RAISE(ABORT, 'store_write: unknown kind');
END;

-- a: player id, b: name key, c: password hash, d: when. A player registers once.
CREATE TRIGGER store_write_register INSTEAD OF INSERT ON store_write WHEN NEW.kind = 'register'
BEGIN
    SELECT RAISE(ABORT, 'register: already registered')
    WHERE EXISTS (SELECT 1 FROM players WHERE id = NEW.a AND password_hash IS NOT NULL);
    UPDATE players SET name_key = NEW.b, password_hash = NEW.c, registered_at = NEW.d
    WHERE id = NEW.a;
END;

-- a: token hash, b: player id, c: when.
CREATE TRIGGER store_write_player_token INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'player_token'
BEGIN
    INSERT INTO player_tokens (token_hash, player_id, created_at) VALUES (NEW.a, NEW.b, NEW.c);
END;

-- a: player id, b: game, c: rating, d: rd, e: volatility, f: games (after this game).
-- A rating moves one game at a time: a write computed from a stale rating (its games not
-- one more than the stored ones) is refused rather than overwriting another game's update.
CREATE TRIGGER store_write_rating INSTEAD OF INSERT ON store_write WHEN NEW.kind = 'rating'
BEGIN
    SELECT RAISE(ABORT, 'rating: computed from a stale rating')
    WHERE COALESCE((SELECT games FROM ratings WHERE player_id = NEW.a AND game = NEW.b), 0)
          != NEW.f - 1;
    INSERT INTO ratings (player_id, game, rating, rd, volatility, games)
    VALUES (NEW.a, NEW.b, NEW.c, NEW.d, NEW.e, NEW.f)
    ON CONFLICT (player_id, game) DO UPDATE SET rating = excluded.rating, rd = excluded.rd,
        volatility = excluded.volatility, games = excluded.games;
END;

-- a: room id, b: seat, c: player id, d: score, e: rating before, f: rd before,
-- g: rating after, h: rd after.
CREATE TRIGGER store_write_rating_change INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'rating_change'
BEGIN
    INSERT INTO rating_changes (room_id, seat, player_id, score, rating_before, rd_before,
                                rating_after, rd_after)
    VALUES (NEW.a, NEW.b, NEW.c, NEW.d, NEW.e, NEW.f, NEW.g, NEW.h);
END;
