-- Version 4: a batch of writes is one statement. The store inserts every row of every write of
-- a group commit into the view `store_write` in one INSERT … SELECT over a JSON array (one
-- parameter), and these triggers put each row where its `kind` says. One statement is one
-- trip to the database's thread, and atomic: if any row fails, none of them is written.
-- Values: a to h, in the order of each INSERT/UPDATE below; dice_seed as hexadecimal text.

CREATE VIEW store_write (kind, a, b, c, d, e, f, g, h) AS
    SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL WHERE 0;

CREATE TRIGGER store_write_unknown INSTEAD OF INSERT ON store_write
WHEN NEW.kind NOT IN ('player', 'player_seen', 'room', 'seat', 'seat_holder', 'room_status',
                      'move', 'result', 'room_finished', 'seat_to_bot', 'seat_change', 'chat')
BEGIN
    SELECT RAISE(ABORT, 'store_write: unknown kind');
END;

CREATE TRIGGER store_write_player INSTEAD OF INSERT ON store_write WHEN NEW.kind = 'player'
BEGIN
    INSERT INTO players (id, name, token_hash, created_at, last_seen)
    VALUES (NEW.a, NEW.b, NEW.c, NEW.d, NEW.e);
END;

CREATE TRIGGER store_write_player_seen INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'player_seen'
BEGIN
    UPDATE players SET name = NEW.b, last_seen = NEW.c WHERE id = NEW.a;
END;

CREATE TRIGGER store_write_room INSTEAD OF INSERT ON store_write WHEN NEW.kind = 'room'
BEGIN
    INSERT INTO rooms (id, game, options, status, dice_seed, opening_dice, created_at,
                       room_options)
    VALUES (NEW.a, NEW.b, NEW.c, NEW.d, NEW.e, NEW.f, NEW.g, NEW.h);
END;

CREATE TRIGGER store_write_seat INSTEAD OF INSERT ON store_write WHEN NEW.kind = 'seat'
BEGIN
    INSERT INTO seats (room_id, seat, kind, level, player_id)
    VALUES (NEW.a, NEW.b, NEW.c, NEW.d, NEW.e);
END;

CREATE TRIGGER store_write_seat_holder INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'seat_holder'
BEGIN
    UPDATE seats SET player_id = NEW.c WHERE room_id = NEW.a AND seat = NEW.b;
END;

CREATE TRIGGER store_write_room_status INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'room_status'
BEGIN
    UPDATE rooms SET status = NEW.b, opening_dice = NEW.c WHERE id = NEW.a;
END;

CREATE TRIGGER store_write_move INSTEAD OF INSERT ON store_write WHEN NEW.kind = 'move'
BEGIN
    INSERT INTO moves (room_id, ply, seat, move, dice, created_at, clock0_ms, clock1_ms)
    VALUES (NEW.a, NEW.b, NEW.c, NEW.d, NEW.e, NEW.f, NEW.g, NEW.h);
END;

CREATE TRIGGER store_write_result INSTEAD OF INSERT ON store_write WHEN NEW.kind = 'result'
BEGIN
    INSERT INTO results (room_id, winner, points, reason, finished_at, clock0_ms, clock1_ms)
    VALUES (NEW.a, NEW.b, NEW.c, NEW.d, NEW.e, NEW.f, NEW.g);
END;

CREATE TRIGGER store_write_room_finished INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'room_finished'
BEGIN
    UPDATE rooms SET status = 'finished' WHERE id = NEW.a;
END;

CREATE TRIGGER store_write_seat_to_bot INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'seat_to_bot'
BEGIN
    UPDATE seats SET kind = 'bot', level = NEW.c, player_id = NULL
    WHERE room_id = NEW.a AND seat = NEW.b;
END;

CREATE TRIGGER store_write_seat_change INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'seat_change'
BEGIN
    INSERT INTO seat_changes (room_id, seat, ply, from_player, kind, level, reason, created_at)
    VALUES (NEW.a, NEW.b, NEW.c, NEW.d, 'bot', NEW.e, NEW.f, NEW.g);
END;

CREATE TRIGGER store_write_chat INSTEAD OF INSERT ON store_write WHEN NEW.kind = 'chat'
BEGIN
    INSERT INTO chat (room_id, player_id, text, created_at) VALUES (NEW.a, NEW.b, NEW.c, NEW.d);
END;
