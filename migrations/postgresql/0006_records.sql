-- Version 6: records and reviews (contract section 7). A room's record carries its last 100
-- chat lines, read newest first by room: an index on (room_id, id) finds them without reading
-- the whole chat of the server.

CREATE INDEX chat_by_room ON chat (room_id, id);

-- A finished game's review (GET /api/rooms/{id}/review): computed once, in the bot pool, and
-- kept as the JSON text it is served as.
CREATE TABLE reviews (
    room_id     TEXT PRIMARY KEY REFERENCES rooms(id),
    json        TEXT NOT NULL,
    created_at  DOUBLE PRECISION NOT NULL
);

-- A review is computed once per room; should two ever be written, the first stays.
CREATE FUNCTION store_write_review(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO reviews (room_id, json, created_at)
    VALUES (r ->> 1, r ->> 2, (r ->> 3)::double precision)
    ON CONFLICT (room_id) DO NOTHING;
END
$$;
