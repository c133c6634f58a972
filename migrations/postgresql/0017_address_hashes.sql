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

-- The dispatcher calls the new kind directly, as 0015's does the kinds before it (a player's
-- every hello writes one).
CREATE OR REPLACE FUNCTION store_write(batch jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    r jsonb;
BEGIN
    FOR r IN SELECT e.value FROM jsonb_array_elements(batch) WITH ORDINALITY AS e(value, n)
             ORDER BY e.n
    LOOP
        CASE r ->> 0
        WHEN 'fence' THEN PERFORM store_write_fence(r);
        WHEN 'move' THEN PERFORM store_write_move(r);
        WHEN 'lease' THEN PERFORM store_write_lease(r);
        WHEN 'room_status' THEN PERFORM store_write_room_status(r);
        WHEN 'result' THEN PERFORM store_write_result(r);
        WHEN 'room_finished' THEN PERFORM store_write_room_finished(r);
        WHEN 'room' THEN PERFORM store_write_room(r);
        WHEN 'seat' THEN PERFORM store_write_seat(r);
        WHEN 'seat_holder' THEN PERFORM store_write_seat_holder(r);
        WHEN 'room_creator' THEN PERFORM store_write_room_creator(r);
        WHEN 'room_seeds' THEN PERFORM store_write_room_seeds(r);
        WHEN 'room_lapse' THEN PERFORM store_write_room_lapse(r);
        WHEN 'room_unrated' THEN PERFORM store_write_room_unrated(r);
        WHEN 'seat_to_bot' THEN PERFORM store_write_seat_to_bot(r);
        WHEN 'seat_change' THEN PERFORM store_write_seat_change(r);
        WHEN 'chat' THEN PERFORM store_write_chat(r);
        WHEN 'review' THEN PERFORM store_write_review(r);
        WHEN 'player' THEN PERFORM store_write_player(r);
        WHEN 'player_seen' THEN PERFORM store_write_player_seen(r);
        WHEN 'player_token' THEN PERFORM store_write_player_token(r);
        WHEN 'register' THEN PERFORM store_write_register(r);
        WHEN 'name_skeleton' THEN PERFORM store_write_name_skeleton(r);
        WHEN 'bot_account' THEN PERFORM store_write_bot_account(r);
        WHEN 'rating' THEN PERFORM store_write_rating(r);
        WHEN 'rating_change' THEN PERFORM store_write_rating_change(r);
        WHEN 'address_seen' THEN PERFORM store_write_address_seen(r);
        ELSE
            IF coalesce(r ->> 0, '') !~ '^[a-z_]+$'
               OR to_regprocedure('store_write_' || (r ->> 0) || '(jsonb)') IS NULL THEN
                RAISE EXCEPTION 'store_write: unknown kind %', r ->> 0;
            END IF;
            EXECUTE format('SELECT %I($1)', 'store_write_' || (r ->> 0)) USING r;
        END CASE;
    END LOOP;
END
$$;
