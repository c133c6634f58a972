-- Version 8: accounts and Glicko-2 ratings (contract section 8, docs/ratings.md); the
-- PostgreSQL form of SQLite's 0008 (the columns and tables are explained there).

ALTER TABLE players ADD COLUMN name_key TEXT;
ALTER TABLE players ADD COLUMN password_hash TEXT;
ALTER TABLE players ADD COLUMN registered_at DOUBLE PRECISION;
CREATE UNIQUE INDEX players_by_name_key ON players (name_key) WHERE name_key IS NOT NULL;

CREATE TABLE player_tokens (
    token_hash  TEXT PRIMARY KEY,
    player_id   TEXT NOT NULL REFERENCES players(id),
    created_at  DOUBLE PRECISION NOT NULL
);

-- player_id is a player's id or a bot level's ("bot:GAME:LEVEL"): no foreign key.
CREATE TABLE ratings (
    player_id   TEXT NOT NULL,
    game        TEXT NOT NULL,
    rating      DOUBLE PRECISION NOT NULL,
    rd          DOUBLE PRECISION NOT NULL,
    volatility  DOUBLE PRECISION NOT NULL,
    games       INTEGER NOT NULL,
    PRIMARY KEY (player_id, game)
);
CREATE INDEX ratings_by_game ON ratings (game, rating DESC);

CREATE TABLE rating_changes (
    room_id        TEXT NOT NULL REFERENCES rooms(id),
    seat           INTEGER NOT NULL CHECK (seat IN (0, 1)),
    player_id      TEXT NOT NULL,
    score          DOUBLE PRECISION NOT NULL,
    rating_before  DOUBLE PRECISION NOT NULL,
    rd_before      DOUBLE PRECISION NOT NULL,
    rating_after   DOUBLE PRECISION NOT NULL,
    rd_after       DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (room_id, seat)
);

-- a: player id, b: name key, c: password hash, d: when. A player registers once.
CREATE FUNCTION store_write_register(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM players WHERE id = r ->> 1 AND password_hash IS NOT NULL) THEN
        RAISE EXCEPTION 'register: already registered';
    END IF;
    UPDATE players SET name_key = r ->> 2, password_hash = r ->> 3,
                       registered_at = (r ->> 4)::double precision
    WHERE id = r ->> 1;
END
$$;

-- a: token hash, b: player id, c: when.
CREATE FUNCTION store_write_player_token(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO player_tokens (token_hash, player_id, created_at)
    VALUES (r ->> 1, r ->> 2, (r ->> 3)::double precision);
END
$$;

-- a: player id, b: game, c: rating, d: rd, e: volatility, f: games (after this game). A
-- rating computed from a stale one (its games not one more than the stored) is refused.
-- The row is locked (FOR UPDATE) so that two nodes' writes for one player go one at a time.
CREATE FUNCTION store_write_rating(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    stored integer;
BEGIN
    SELECT games INTO stored FROM ratings
    WHERE player_id = r ->> 1 AND game = r ->> 2 FOR UPDATE;
    IF coalesce(stored, 0) <> (r ->> 6)::integer - 1 THEN
        RAISE EXCEPTION 'rating: computed from a stale rating';
    END IF;
    INSERT INTO ratings (player_id, game, rating, rd, volatility, games)
    VALUES (r ->> 1, r ->> 2, (r ->> 3)::double precision, (r ->> 4)::double precision,
            (r ->> 5)::double precision, (r ->> 6)::integer)
    ON CONFLICT (player_id, game) DO UPDATE SET rating = excluded.rating, rd = excluded.rd,
        volatility = excluded.volatility, games = excluded.games;
END
$$;

-- a: room id, b: seat, c: player id, d: score, e: rating before, f: rd before,
-- g: rating after, h: rd after.
CREATE FUNCTION store_write_rating_change(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO rating_changes (room_id, seat, player_id, score, rating_before, rd_before,
                                rating_after, rd_after)
    VALUES (r ->> 1, (r ->> 2)::integer, r ->> 3, (r ->> 4)::double precision,
            (r ->> 5)::double precision, (r ->> 6)::double precision,
            (r ->> 7)::double precision, (r ->> 8)::double precision);
END
$$;
