-- Version 4: a batch of writes is one statement. The store runs `SELECT store_write($1)` with
-- every row of every write of a group commit in one JSON array (one parameter); each row is
-- [kind, a, b, …] and goes to the function store_write_KIND, in the array's order. One
-- statement is one round trip, and atomic: if any row fails, none of them is written.
-- A new kind of write is a new function store_write_KIND(r jsonb) in a later migration (the
-- SQLite migration of the same number adds its trigger), in PL/pgSQL, which keeps the plan of
-- its statement for the session (an SQL function plans it again at every call). Values: r->1 is a, r->2 b, …, in
-- the order of each INSERT/UPDATE below; dice_seed as hexadecimal text.

CREATE FUNCTION store_write(batch jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    r jsonb;
BEGIN
    FOR r IN SELECT e.value FROM jsonb_array_elements(batch) WITH ORDINALITY AS e(value, n)
             ORDER BY e.n
    LOOP
        IF coalesce(r ->> 0, '') !~ '^[a-z_]+$'
           OR to_regprocedure('store_write_' || (r ->> 0) || '(jsonb)') IS NULL THEN
            RAISE EXCEPTION 'store_write: unknown kind %', r ->> 0;
        END IF;
        EXECUTE format('SELECT %I($1)', 'store_write_' || (r ->> 0)) USING r;
    END LOOP;
END
$$;

CREATE FUNCTION store_write_player(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO players (id, name, token_hash, created_at, last_seen)
    VALUES (r ->> 1, r ->> 2, r ->> 3, (r ->> 4)::double precision,
            (r ->> 5)::double precision);
END
$$;

CREATE FUNCTION store_write_player_seen(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE players SET name = r ->> 2, last_seen = (r ->> 3)::double precision
    WHERE id = r ->> 1;
END
$$;

CREATE FUNCTION store_write_room(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO rooms (id, game, options, status, dice_seed, opening_dice, created_at,
                       room_options)
    VALUES (r ->> 1, r ->> 2, r ->> 3, r ->> 4, decode(r ->> 5, 'hex'), r ->> 6,
            (r ->> 7)::double precision, r ->> 8);
END
$$;

CREATE FUNCTION store_write_seat(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO seats (room_id, seat, kind, level, player_id)
    VALUES (r ->> 1, (r ->> 2)::integer, r ->> 3, r ->> 4, r ->> 5);
END
$$;

CREATE FUNCTION store_write_seat_holder(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE seats SET player_id = r ->> 3 WHERE room_id = r ->> 1 AND seat = (r ->> 2)::integer;
END
$$;

CREATE FUNCTION store_write_room_status(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE rooms SET status = r ->> 2, opening_dice = r ->> 3 WHERE id = r ->> 1;
END
$$;

CREATE FUNCTION store_write_move(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO moves (room_id, ply, seat, move, dice, created_at, clock0_ms, clock1_ms)
    VALUES (r ->> 1, (r ->> 2)::integer, (r ->> 3)::integer, r ->> 4, r ->> 5,
            (r ->> 6)::double precision, (r ->> 7)::bigint, (r ->> 8)::bigint);
END
$$;

CREATE FUNCTION store_write_result(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO results (room_id, winner, points, reason, finished_at, clock0_ms, clock1_ms)
    VALUES (r ->> 1, (r ->> 2)::integer, (r ->> 3)::integer, r ->> 4,
            (r ->> 5)::double precision, (r ->> 6)::bigint, (r ->> 7)::bigint);
END
$$;

CREATE FUNCTION store_write_room_finished(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE rooms SET status = 'finished' WHERE id = r ->> 1;
END
$$;

CREATE FUNCTION store_write_seat_to_bot(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE seats SET kind = 'bot', level = r ->> 3, player_id = NULL
    WHERE room_id = r ->> 1 AND seat = (r ->> 2)::integer;
END
$$;

CREATE FUNCTION store_write_seat_change(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO seat_changes (room_id, seat, ply, from_player, kind, level, reason, created_at)
    VALUES (r ->> 1, (r ->> 2)::integer, (r ->> 3)::integer, r ->> 4, 'bot', r ->> 5,
            r ->> 6, (r ->> 7)::double precision);
END
$$;

CREATE FUNCTION store_write_chat(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO chat (room_id, player_id, text, created_at)
    VALUES (r ->> 1, r ->> 2, r ->> 3, (r ->> 4)::double precision);
END
$$;
