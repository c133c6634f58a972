-- Version 15: a new thing's lease made by its first write (kind 'lease'), so that opening a
-- room is one transaction, not a claim and then a write; and store_write (0004) calls the
-- functions of the kinds known at this version directly. Finding a function by its name
-- and running `EXECUTE format(...)` plans that statement again for every row (PL/pgSQL
-- caches no plan for EXECUTE): 9 µs of the database's CPU a row, most of a move's cost
-- beside the commit itself. A direct call keeps its plan for the session. A kind added by a later migration is still found by its name
-- (the ELSE branch) until a migration adds it here.

-- a: key, b: node, c: fence (1: nobody held it before), d: seconds the lease lasts, from
-- the database's clock as every lease's. Fails (the primary key) if the key has a lease.
CREATE FUNCTION store_write_lease(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO room_leases (room_id, node, fence, expires_at)
    VALUES (r ->> 1, r ->> 2, (r ->> 3)::bigint,
            extract(epoch FROM clock_timestamp()) + (r ->> 4)::double precision);
END
$$;

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
