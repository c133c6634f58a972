-- Version 7: each seat's dice seed (contract section 8, docs/dice.md), a JSON list of two
-- strings. NULL is a room stored before seat seeds: its rolls were read from the message
-- without them, so it still replays (from its stored rolls) and still verifies.

ALTER TABLE rooms ADD COLUMN dice_seeds TEXT;

CREATE FUNCTION store_write_room_seeds(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE rooms SET dice_seeds = r ->> 2 WHERE id = r ->> 1;
END
$$;
