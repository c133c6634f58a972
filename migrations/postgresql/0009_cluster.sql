-- The cluster's room leases (contract section 9, docs/server.md "Several nodes"): which node
-- owns each live room, with a fencing token. A node claims a room before it loads it (a new
-- row; or one whose lease has expired, fence + 1 if another node held it last; a node that
-- held it last keeps its fence) and renews its leases every lease_s / 3. expires_at comes
-- from PostgreSQL's clock_timestamp(), never a node's (no skew between nodes). Every write
-- of a room's change starts with a 'fence' row: the write fails, all of its transaction,
-- unless the lease still carries the writer's node and fence.

CREATE TABLE room_leases (
    room_id    TEXT PRIMARY KEY,
    node       TEXT NOT NULL,
    fence      BIGINT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX room_leases_node ON room_leases (node);

CREATE FUNCTION store_write_fence(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM room_leases
    WHERE room_id = r ->> 1 AND node = r ->> 2 AND fence = (r ->> 3)::bigint
    -- Held to the commit: a claim (UPDATE of the row) waits for this write to commit, so the
    -- new owner loads the room with it; a write after a claim sees the new fence and fails.
    FOR SHARE;
    IF NOT FOUND THEN
        -- SQLSTATE TB001: the store turns it into LeaseLost for this room.
        RAISE EXCEPTION 'store_write: lease lost for room %', r ->> 1
            USING ERRCODE = 'TB001';
    END IF;
END
$$;
