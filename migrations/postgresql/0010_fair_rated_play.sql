-- Version 10: fair rated play (contract section 10, docs/ratings.md).
--
-- House bot levels are anchors: each level of each game has a fixed rating and RD, set from
-- the bot ladder's measured play (tools/anchors.py; engine/search/profiles.py's bot_ratings,
-- which a test holds these rows to). Games never move them again; the server rates a person
-- against them and writes the anchor back unchanged (its games still count). The rows of
-- levels nobody has played yet are made too, so the leaderboard shows every anchor. People's
-- ratings stay as they are.
INSERT INTO ratings (player_id, game, rating, rd, volatility, games) VALUES
    ('bot:tictactoe:random', 'tictactoe', 700, 30, 0.06, 0),
    ('bot:tictactoe:easy', 'tictactoe', 879, 62, 0.06, 0),
    ('bot:tictactoe:medium', 'tictactoe', 1181, 99, 0.06, 0),
    ('bot:tictactoe:hard', 'tictactoe', 1396, 119, 0.06, 0),
    ('bot:tictactoe:max', 'tictactoe', 1396, 119, 0.06, 0),
    ('bot:grundy:random', 'grundy', 700, 30, 0.06, 0),
    ('bot:grundy:easy', 'grundy', 800, 36, 0.06, 0),
    ('bot:grundy:medium', 'grundy', 939, 52, 0.06, 0),
    ('bot:grundy:hard', 'grundy', 1615, 135, 0.06, 0),
    ('bot:grundy:max', 'grundy', 1615, 135, 0.06, 0),
    ('bot:connect4:random', 'connect4', 700, 30, 0.06, 0),
    ('bot:connect4:easy', 'connect4', 1177, 94, 0.06, 0),
    ('bot:connect4:medium', 'connect4', 1409, 109, 0.06, 0),
    ('bot:connect4:hard', 'connect4', 1608, 121, 0.06, 0),
    ('bot:connect4:max', 'connect4', 1608, 121, 0.06, 0),
    ('bot:boom:random', 'boom', 700, 30, 0.06, 0),
    ('bot:boom:easy', 'boom', 987, 106, 0.06, 0),
    ('bot:boom:medium', 'boom', 1273, 149, 0.06, 0),
    ('bot:boom:hard', 'boom', 1785, 233, 0.06, 0),
    ('bot:boom:max', 'boom', 1785, 233, 0.06, 0),
    ('bot:backgammon:random', 'backgammon', 700, 30, 0.06, 0),
    ('bot:backgammon:easy', 'backgammon', 1498, 175, 0.06, 0),
    ('bot:backgammon:medium', 'backgammon', 1671, 179, 0.06, 0),
    ('bot:backgammon:hard', 'backgammon', 1871, 183, 0.06, 0),
    ('bot:backgammon:max', 'backgammon', 1884, 186, 0.06, 0)
ON CONFLICT (player_id, game) DO UPDATE SET rating = excluded.rating, rd = excluded.rd,
    volatility = excluded.volatility;

-- A rated room made unrated when it is paired past the pair's cap (a: room id), in the
-- transaction that seats the pair.
CREATE FUNCTION store_write_room_unrated(r jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE rooms SET room_options = jsonb_set(room_options::jsonb, '{rated}', 'false')::text
    WHERE id = r ->> 1;
END
$$;
