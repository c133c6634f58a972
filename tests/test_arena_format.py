"""The arena's format, pure (server/tournaments/formats/arena.py), on cases worked out by hand
here: a streak's doubling and its end, a berserk win on a streak, an aborted game that counts
nothing and leaves the streak as it was; the free players' pairing (no rematch while another
is free, the nearest in the standings, one left waiting); nothing paired once the time is up,
the end only once the last game is over."""

from __future__ import annotations

from tablas.server.store.tournaments import EntrantRow, PairingRow, TournamentRow
from tablas.server.tournaments.formats.arena import Arena

ARENA = Arena()


def entrants(*ids: str, away: tuple[str, ...] = ()) -> list[EntrantRow]:
    return [EntrantRow(p, p.upper(), True, False, None, i, p not in away)
            for i, p in enumerate(ids, 1)]


def game(n: int, a: str, b: str, winner: int | None, reason: str = "resign",
         berserk: tuple[int, int] = (0, 0), over: bool = True) -> PairingRow:
    return PairingRow(n, 0, f"r{n}", a, b, "finished" if over else "playing",
                      winner if over else None, reason if over else None, 1 if over else None,
                      berserk)


def tournament(ends_at_ms: int = 10_000) -> TournamentRow:
    return TournamentRow("t", "tictactoe", "{}", "{}", "arena", 0, 1, False, 64, "a", "playing",
                         0, 0.0, 10, ends_at_ms)


def test_streaks_berserk_and_an_aborted_game() -> None:
    games = [
        game(1, "a", "b", 0),                      # a 2
        game(2, "a", "c", 1),                      # c 2 (a's run ends)
        game(3, "a", "b", 0),                      # a 2
        game(4, "c", "a", 1, berserk=(0, 5000)),   # a 2 + 1 berserk: a has won two in a row
        game(5, "a", "b", None, "aborted"),        # nothing; a's run stays at 2
        game(6, "a", "c", 0, berserk=(5000, 0)),   # a on a streak: 4 + 1 = 5
        game(7, "b", "a", None, "draw"),           # a on a streak: a draw doubled, 2; run ends
        game(8, "a", "c", 0),                      # a 2, no streak any more
    ]
    rows = {r["player_id"]: r for r in ARENA.standings(entrants("a", "b", "c"), games)}
    assert (rows["a"]["points"], rows["a"]["wins"], rows["a"]["draws"], rows["a"]["losses"]) \
        == (2 + 0 + 2 + 3 + 5 + 2 + 2, 5, 1, 1)
    assert rows["a"]["scores"] == [2, 0, 2, 3, 5, 2, 2] and rows["a"]["games"] == 7
    assert rows["a"]["streak"] is False
    assert (rows["b"]["points"], rows["b"]["games"]) == (1, 3)
    assert (rows["c"]["points"], rows["c"]["games"]) == (2, 4)
    assert [r["player_id"] for r in ARENA.standings(entrants("a", "b", "c"), games)] == \
        ["a", "c", "b"]


def test_on_a_streak_after_two_wins() -> None:
    games = [game(1, "a", "b", 0), game(2, "b", "a", 1)]
    rows = {r["player_id"]: r for r in ARENA.standings(entrants("a", "b"), games)}
    assert rows["a"]["streak"] is True and rows["a"]["points"] == 4
    rows = {r["player_id"]: r for r in ARENA.standings(
        entrants("a", "b"), [*games, game(3, "a", "b", 0)])}
    assert rows["a"]["points"] == 8 and rows["a"]["scores"] == [2, 2, 4]


def test_free_players_are_paired_without_a_rematch_while_another_is_free() -> None:
    # a and b have just played each other; c is free; d plays e (busy).
    games = [game(1, "a", "b", 0), game(2, "d", "e", None, over=False)]
    step = ARENA.step(tournament(), entrants("a", "b", "c", "d", "e"), games, 1_000)
    # Standings a 2, then b, c, d, e with 0 (in the order they entered). Free: a, b, c. Not
    # a with b (a rematch); of a-c and b-c, b-c is the nearer (1 place apart, a-c 2): a waits.
    assert [set(p) for p in step.pairs] == [{"b", "c"}]
    # Only the two of them free: they meet again.
    step = ARENA.step(tournament(), entrants("a", "b", "c", "d", "e", away=("c",)), games, 1_000)
    assert [set(p) for p in step.pairs] == [{"a", "b"}]


def test_the_nearest_in_the_standings() -> None:
    # a 4, b 2, c 2, d 0 after these; all free, no last opponent in the way of (a, b), (c, d).
    games = [game(1, "a", "d", 0), game(2, "b", "e", 0), game(3, "c", "f", 0),
             game(4, "a", "f", 0)]
    step = ARENA.step(tournament(), entrants("a", "b", "c", "d", "e", "f", away=("e", "f")),
                      games, 1_000)
    assert sorted(tuple(sorted(p)) for p in step.pairs) == [("a", "b"), ("c", "d")]


def test_nothing_paired_once_the_time_is_up_and_the_end_waits_for_the_last_game() -> None:
    playing = [game(1, "a", "b", 0), game(2, "c", "d", None, over=False)]
    step = ARENA.step(tournament(10_000), entrants("a", "b", "c", "d"), playing, 10_000)
    assert (step.finish, list(step.pairs)) == (False, [])
    done = [game(1, "a", "b", 0), game(2, "c", "d", 1)]
    assert ARENA.step(tournament(10_000), entrants("a", "b", "c", "d"), done, 10_000).finish
    assert not ARENA.step(tournament(10_000), entrants("a", "b", "c", "d"), done, 9_999).finish
