-- Version 18: takebacks (contract section 7, "Draws and takebacks"); see the SQLite file of
-- this number. r ->> 1: room id, 2: the first ply taken back, 3 and 4: the clocks the move
-- now last carries (null without a clock or when no move is left).

CREATE FUNCTION store_write_takeback(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM results WHERE room_id = r ->> 1) THEN
        RAISE EXCEPTION 'takeback: the game is over';
    END IF;
    DELETE FROM moves WHERE room_id = r ->> 1 AND ply >= (r ->> 2)::integer;
    IF r ->> 3 IS NOT NULL THEN
        UPDATE moves SET clock0_ms = (r ->> 3)::bigint, clock1_ms = (r ->> 4)::bigint
        WHERE room_id = r ->> 1 AND ply = (r ->> 2)::integer - 1;
    END IF;
END
$$;

-- The dispatcher calls every kind directly (migrations/README.md), 0017's address_seen and
-- this takeback among them.
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
        WHEN 'takeback' THEN PERFORM store_write_takeback(r);
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
