-- Version 5: rooms that end (contract section 6). A room may also be 'adjourned' (a game in
-- play that nobody present plays: resumed by its players, expired after a while) or 'closed'
-- (a waiting room its creator left). PostgreSQL changes the CHECK constraint in place.
--   created_by    the player who opened the room: a waiting room lives while they are around,
--                 and counts against their cap on waiting rooms.
--   status_at     when the status last changed to adjourned or closed: adjourned rooms expire
--                 from it.

ALTER TABLE rooms DROP CONSTRAINT rooms_status;
ALTER TABLE rooms ADD CONSTRAINT rooms_status
    CHECK (status IN ('waiting', 'playing', 'finished', 'adjourned', 'closed'));
ALTER TABLE rooms ADD COLUMN created_by TEXT REFERENCES players(id);
ALTER TABLE rooms ADD COLUMN status_at DOUBLE PRECISION;

-- An older room's creator is not known: its first seated person stands in.
UPDATE rooms r SET created_by = (
    SELECT s.player_id FROM seats s WHERE s.room_id = r.id AND s.player_id IS NOT NULL
    ORDER BY s.seat LIMIT 1);

-- The expiry sweep reads the oldest adjourned rooms; a player's return reads what they opened.
CREATE INDEX rooms_adjourned ON rooms (status_at) WHERE status = 'adjourned';
CREATE INDEX rooms_waiting_by_creator ON rooms (created_by) WHERE status = 'waiting';

CREATE FUNCTION store_write_room_creator(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE rooms SET created_by = r ->> 2 WHERE id = r ->> 1;
END
$$;

-- Adjourned, closed, or playing again: a change of status without a move.
CREATE FUNCTION store_write_room_lapse(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE rooms SET status = r ->> 2, status_at = (r ->> 3)::double precision
    WHERE id = r ->> 1;
END
$$;
