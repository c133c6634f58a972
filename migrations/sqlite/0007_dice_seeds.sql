-- Version 7: each seat's dice seed (contract section 8, docs/dice.md), a JSON list of two
-- strings. NULL is a room stored before seat seeds: its rolls were read from the message
-- without them, so it still replays (from its stored rolls) and still verifies.

ALTER TABLE rooms ADD COLUMN dice_seeds TEXT;

DROP TRIGGER store_write_unknown;
CREATE TRIGGER store_write_unknown INSTEAD OF INSERT ON store_write
WHEN NEW.kind NOT IN ('player', 'player_seen', 'room', 'seat', 'seat_holder', 'room_status',
                      'move', 'result', 'room_finished', 'seat_to_bot', 'seat_change', 'chat',
                      'room_creator', 'room_lapse', 'review', 'room_seeds')
BEGIN
    SELECT RAISE(ABORT, 'store_write: unknown kind');
END;

CREATE TRIGGER store_write_room_seeds INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'room_seeds'
BEGIN
    UPDATE rooms SET dice_seeds = NEW.b WHERE id = NEW.a;
END;
