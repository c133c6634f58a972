-- Version 16: takebacks (contract section 7, "Draws and takebacks"); see the SQLite file of
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
