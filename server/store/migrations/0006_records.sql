-- Version 6: records (contract section 7). A room's record carries its last 100 chat lines,
-- read newest first by room: an index on (room_id, id) finds them without reading the whole
-- chat of the server.

CREATE INDEX chat_by_room ON chat (room_id, id);
