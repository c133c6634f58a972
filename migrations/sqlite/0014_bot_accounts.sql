-- Version 14: bot accounts (contract section 12, docs/bots.md).
--   bot   1 for a bot account: a registered player that a program drives (registered with
--         "bot": true); its seats, leaderboard rows and player page say so, and it holds at
--         most 8 games at once. 0 for everyone else; a player never changes kind.
-- A bot account registers in one transaction: the 'register' row, then 'bot_account' (a:
-- player id), so no account is ever registered half a bot.

ALTER TABLE players ADD COLUMN bot INTEGER NOT NULL DEFAULT 0;

DROP TRIGGER store_write_unknown;
CREATE TRIGGER store_write_unknown INSTEAD OF INSERT ON store_write
WHEN NEW.kind NOT IN ('player', 'player_seen', 'room', 'seat', 'seat_holder', 'room_status',
                      'move', 'result', 'room_finished', 'seat_to_bot', 'seat_change', 'chat',
                      'room_creator', 'room_lapse', 'review', 'room_seeds', 'register',
                      'player_token', 'rating', 'rating_change', 'fence', 'room_unrated',
                      'name_skeleton', 'bot_account')
BEGIN
    SELECT RAISE(ABORT, 'store_write: unknown kind');
END;

-- a: player id (registered in the same write, just before).
CREATE TRIGGER store_write_bot_account INSTEAD OF INSERT ON store_write
WHEN NEW.kind = 'bot_account'
BEGIN
    UPDATE players SET bot = 1 WHERE id = NEW.a AND password_hash IS NOT NULL;
END;
