-- Version 18: takebacks (contract section 7, "Draws and takebacks"). A casual game's last
-- moves taken back by agreement leave the history as if they had never been played: the room
-- is replayed from its stored moves, so they are deleted (a = room id, b = the first ply
-- taken back). The clocks keep the time spent: the move now last carries them (c, d: seat
-- 0's and seat 1's time left in ms, NULL without a clock or when no move is left).

DROP TRIGGER store_write_unknown;
CREATE TRIGGER store_write_unknown INSTEAD OF INSERT ON store_write
WHEN NEW.kind NOT IN ('player', 'player_seen', 'room', 'seat', 'seat_holder', 'room_status',
                      'move', 'result', 'room_finished', 'seat_to_bot', 'seat_change', 'chat',
                      'room_creator', 'room_lapse', 'review', 'room_seeds', 'register',
                      'player_token', 'rating', 'rating_change', 'fence', 'room_unrated',
                      'name_skeleton', 'bot_account', 'lease', 'address_seen', 'takeback')
BEGIN
    SELECT RAISE(ABORT, 'store_write: unknown kind');
END;

CREATE TRIGGER store_write_takeback INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'takeback'
BEGIN
    SELECT RAISE(ABORT, 'takeback: the game is over')
    WHERE EXISTS (SELECT 1 FROM results WHERE room_id = NEW.a);
    DELETE FROM moves WHERE room_id = NEW.a AND ply >= NEW.b;
    UPDATE moves SET clock0_ms = NEW.c, clock1_ms = NEW.d
    WHERE room_id = NEW.a AND ply = NEW.b - 1 AND NEW.c IS NOT NULL;
END;
