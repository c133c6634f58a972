-- Version 17: ratings that one address cannot farm (contract section 16); the PostgreSQL form
-- of SQLite's 0017 (the tables and the writes are explained there).

CREATE TABLE address_seen (
    player_id TEXT NOT NULL,
    address_hash TEXT NOT NULL,
    seen_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (player_id, address_hash)
);
CREATE INDEX address_seen_at ON address_seen (seen_at);

CREATE TABLE server_secrets (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- a: player id, b: the address's keyed hash (hex), c: when (seconds).
CREATE FUNCTION store_write_address_seen(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO address_seen (player_id, address_hash, seen_at)
    VALUES (r ->> 1, r ->> 2, (r ->> 3)::double precision)
    ON CONFLICT (player_id, address_hash)
    DO UPDATE SET seen_at = greatest(address_seen.seen_at, excluded.seen_at);
END
$$;

-- a: room id, b: why it is rated no more.
CREATE OR REPLACE FUNCTION store_write_room_unrated(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE rooms SET room_options = jsonb_set(
        jsonb_set(room_options::jsonb, '{rated}', 'false'),
        '{unrated_reason}', coalesce(r -> 2, 'null'::jsonb))::text
    WHERE id = r ->> 1;
END
$$;
