"""A whole backgammon match in the ``.mat`` export, against GNU Backgammon itself.

Matches are played by the engine alone (seeded random actions, few doubles so that games go
on to a Crawford game and past it) and by bots on a real server (a match to 5 through
``GET /api/rooms/{id}/export?format=mat``). gnubg imports each without a complaint, and its
account is the engine's: the same games, each with the same entries (read from gnubg's own
re-export) and the same score before it, the same final position, the same final match
score. The expected entries are worked out from the engine's states, not from the writer.
"""

from __future__ import annotations

import asyncio
import random
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from server_support import connected, create, running
from tablas.engine.core import GameRecord, Outcome
from tablas.engine.games import get_game
from tablas.engine.games.backgammon import BGState, encode_position_id
from tablas.engine.games.backgammon_mat import write_mat
from test_export_gnubg import COMPLAINTS, ENTRY, GNUBG, gnubg_reads
from test_server_records import get, get_json

pytestmark = pytest.mark.skipif(GNUBG is None, reason="GNU Backgammon is not installed")

G = get_game("backgammon")
Entries = list[tuple[int, str]]


def games_of(mat: str) -> list[tuple[tuple[int, int], Entries]]:
    """Each ``Game k`` block of a .mat file: the score on its players' line, its entries
    (each with its column; plays with their steps sorted, hit marks left out)."""
    lines = mat.splitlines()
    out: list[tuple[tuple[int, int], Entries]] = []
    i = 0
    while i < len(lines):
        if re.fullmatch(r" Game \d+", lines[i]):
            scores = re.findall(r" : (\d+)", lines[i + 1])
            out.append(((int(scores[0]), int(scores[1])), []))
            i += 2
            continue
        line = lines[i]
        i += 1
        if not out or not line.strip():
            continue
        found = list(ENTRY.finditer(line[5:]))
        if not found or len(found) > 2:  # not a line of entries: kept, so that it differs
            out[-1][1].append((-1, line))
            continue
        for k, m in enumerate(found):
            column = k if len(found) == 2 else int(m.start() >= 27)
            text = m.group(1)
            if text[2:3] == ":":
                text = " ".join([text[:3], *sorted(s.rstrip("*") for s in text[3:].split())])
            out[-1][1].append((column, text))
    return out


def expected_games(options: dict[str, Any], opening: Any, actions: Any,
                   result: Outcome | None) -> list[tuple[tuple[int, int], Entries]]:
    """The games a match's .mat must hold, from the engine's states: a new game wherever
    the match's game number moves on, its ``Wins`` the engine's result of that game."""
    state: BGState = G.initial(options)
    for roll in opening:
        state = G.apply_chance(state, tuple(roll))
    assert state.match is not None
    out: list[tuple[tuple[int, int], Entries]] = [(state.match.score, [])]
    for move_json, rolls in actions:
        seat = G.to_move(state)
        assert seat is not None and state.match is not None
        if "play" in move_json:
            assert state.dice is not None
            dice = "".join(map(str, sorted(state.dice, reverse=True)))
            out[-1][1].append((seat, " ".join([f"{dice}:", *sorted(
                f"{f}/{t}" for f, t in move_json["play"])])))
        elif move_json["action"] != "roll":
            cube = {"double": f"Doubles => {2 * state.cube}", "take": "Takes", "drop": "Drops"}
            out[-1][1].append((seat, cube[move_json["action"]]))
        before = state.match
        state = G.apply(state, G.move_from_json(state, move_json))
        for roll in rolls:
            state = G.apply_chance(state, tuple(roll))
        m = state.match
        assert m is not None
        if m.game != before.game or G.outcome(state) is not None:
            last = m.last_game
            assert last is not None and last.winner is not None
            out[-1][1].append((last.winner, f"Wins {last.points} point{'s' * (last.points > 1)}"))
            if G.outcome(state) is None:
                out.append((m.score, []))
    return out


def match_problems(mat: str, options: dict[str, Any], opening: Any, actions: Any,
                   final: BGState, work: Path) -> list[str]:
    out = []
    expected = expected_games(options, opening, actions, G.outcome(final))
    if games_of(mat) != expected:
        out.append(f"the export is not the match:\n{mat}\nvs\n{expected}")
    if f" {options['match_to']} point match" not in mat.splitlines():
        out.append("no match header")
    view = gnubg_reads(mat, work)
    out += [f"gnubg complains: {line}" for line in view.output.splitlines()
            if COMPLAINTS.search(line)]
    if games_of(view.reexport) != games_of(mat):
        out.append(f"gnubg's match is not the export's:\n{view.reexport}\nvs\n{mat}")
    me, opp = final.boards[final.turn], final.boards[1 - final.turn]
    if view.position_id not in (encode_position_id(me, opp), encode_position_id(opp, me)):
        out.append(f"final position {view.position_id}, the engine's {G.position_text(final)}")
    assert final.match is not None
    if (view.score[0][1], view.score[1][1]) != final.match.score:
        out.append(f"gnubg's score {view.score}, the engine's {final.match.score}")
    return out


def random_match(seed: int, n: int) -> tuple[GameRecord, BGState]:
    """A seeded match to ``n`` of random actions: a double one time in 25, taken four times
    in five, so that most games are played out and scores climb slowly."""
    rng = random.Random(seed)
    state = G.initial({"match_to": n})

    def roll() -> list[Any]:
        nonlocal state
        rolls = []
        while G.is_chance(state):
            outcomes = [o for o, _ in G.chance_outcomes(state)]
            o = rng.choice(outcomes)
            if state.phase == "opening" and o[0] == o[1]:
                continue
            state = G.apply_chance(state, o)
            rolls.append(o)
        return rolls

    opening = roll()
    actions: list[tuple[dict[str, Any], tuple[Any, ...]]] = []
    while G.outcome(state) is None:
        move = rng.choice(G.legal_moves(state))
        if move == "double" and rng.random() < 0.96:
            move = "roll"
        if move == "drop" and rng.random() < 0.8:
            move = "take"
        state = G.apply(state, move)
        actions.append((G.move_to_json(move), tuple(roll())))
    record = GameRecord("backgammon", {"match_to": n}, tuple(opening), tuple(actions),
                        ("Ana", "Bo"), G.outcome(state), 1_700_000_000.0)
    return record, state


def crawford_seeds(n: int, count: int) -> list[int]:
    """Seeds whose match to ``n`` has a Crawford game and a game after it."""
    out = []
    for seed in range(500):
        record, _ = random_match(seed, n)
        games = expected_games(dict(record.options), record.opening_rolls, record.actions,
                               record.result)
        scores = [s for s, _ in games]
        crawford = [i for i, s in enumerate(scores) if n - 1 in s]
        if crawford and crawford[0] < len(scores) - 1:
            out.append(seed)
        if len(out) == count:
            return out
    raise AssertionError("no seed reaches a game after the Crawford game")


@pytest.mark.parametrize("n,seed", [(3, s) for s in crawford_seeds(3, 2)]
                         + [(5, s) for s in crawford_seeds(5, 2)] + [(1, 0), (7, 1)])
def test_random_matches_replay_in_gnubg(tmp_path: Path, n: int, seed: int) -> None:
    record, final = random_match(seed, n)
    found = match_problems(write_mat(G, record), dict(record.options), record.opening_rolls,
                           record.actions, final, tmp_path)
    assert not found, "\n".join(found)


def test_a_broken_match_export_is_caught(tmp_path: Path) -> None:
    """A game's score line off by one, or two games run together, is caught."""
    seed = crawford_seeds(5, 1)[0]
    record, final = random_match(seed, 5)
    good = write_mat(G, record)
    args = (dict(record.options), record.opening_rolls, record.actions, final)
    assert not match_problems(good, *args, tmp_path / "good")
    bad_score = re.sub(r"( Game 2\n \S+ : )(\d+)", lambda m: m[1] + str(int(m[2]) + 1), good)
    assert bad_score != good and match_problems(bad_score, *args, tmp_path / "score")
    merged = re.sub(r"\n Game 2\n[^\n]*\n", "\n", good)
    assert merged != good and match_problems(merged, *args, tmp_path / "merged")


def test_a_match_given_away_is_the_last_games_resignation(tmp_path: Path) -> None:
    """A match resigned in its second game, after its first action: the room's result
    gives the winner the match; gnubg reads the last game's resignation, for what the winner
    needs (within what a resignation can give), and replays every game before it."""
    record, _ = random_match(crawford_seeds(5, 1)[0], 5)
    state = G.initial({"match_to": 5})
    for roll in record.opening_rolls:
        state = G.apply_chance(state, tuple(roll))
    cut = 0
    for i, (move_json, rolls) in enumerate(record.actions):
        in_game_2 = state.match is not None and state.match.game == 2
        state = G.apply(state, G.move_from_json(state, move_json))
        for roll in rolls:
            state = G.apply_chance(state, tuple(roll))
        assert state.match is not None
        # Resigned after game 2's first action (gnubg reads no game without one).
        if in_game_2 and G.to_move(state) is not None:
            cut = i + 1
            break
    assert cut and state.match is not None
    loser = G.to_move(state)
    assert loser is not None
    winner = 1 - loser
    result = Outcome(winner, G.stake(state), "resign")
    assert result.points == 5
    resigned = GameRecord("backgammon", {"match_to": 5}, record.opening_rolls,
                          record.actions[:cut], record.names, result, record.created_at)
    mat = write_mat(G, resigned)
    need = state.match.away(winner)
    wins = min(3, -(-need // state.cube)) * state.cube
    assert games_of(mat)[-1][1][-1] == (winner, f"Wins {wins} point{'s' * (wins > 1)}")
    view = gnubg_reads(mat, tmp_path)
    assert not [line for line in view.output.splitlines() if COMPLAINTS.search(line)]
    score = list(state.match.score)
    score[winner] += wins
    assert (view.score[0][1], view.score[1][1]) == tuple(score)


async def _finished(url: str, room: str, timeout: float = 300) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while (await get_json(url, f"/api/rooms/{room}"))["status"] != "finished":
        assert loop.time() < end, f"room {room} did not finish"
        await asyncio.sleep(0.3)


MATCHES = 5  # matches played at most until one has two games or more


async def test_a_bot_match_to_5_on_a_server_replays_in_gnubg(tmp_path: Path) -> None:
    """Two bots play a match to 5 on a real server; the room's ``.mat`` export is the whole
    match, and gnubg replays it to the room's final score and position."""
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        (watcher,) = await connected(url, "Watcher")
        # A match of several games is what this is about; the dice are random, and now and
        # then one game is worth the 5 points (a gammon on a doubled cube): play another.
        for _ in range(MATCHES):
            room, _ = await create(watcher, "backgammon", [
                {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "medium"}],
                join_seat=None, options={"match_to": 5})
            await _finished(url, room)
            code, _headers, body = await get(url, f"/api/rooms/{room}/export?format=mat")
            assert code == 200
            mat = body.decode()
            if len(games_of(mat)) >= 2:
                break
        record = await get_json(url, f"/api/rooms/{room}/export?format=json")
        snap = await get_json(url, f"/api/rooms/{room}")
    result = record["result"]
    assert result["reason"] == "match" and result["points"] >= 5
    assert snap["state"]["score"][result["winner"]] == result["points"]
    actions = [(a["move"], a["dice"]) for a in record["actions"]]
    final = G.initial(record["options"])
    for roll in record["opening_rolls"]:
        final = G.apply_chance(final, tuple(roll))
    for move_json, rolls in actions:
        final = G.apply(final, G.move_from_json(final, move_json))
        for roll in rolls:
            final = G.apply_chance(final, tuple(roll))
    assert len(games_of(mat)) >= 2
    found = match_problems(mat, record["options"], record["opening_rolls"], actions, final,
                           tmp_path / "gnubg")
    assert not found, "\n".join(found)


def match_starts(record: GameRecord) -> list[tuple[tuple[int, int], bool, bool]]:
    """Each game's (score before it, Crawford game, after the Crawford game), by the
    engine."""
    state = G.initial(dict(record.options))
    for roll in record.opening_rolls:
        state = G.apply_chance(state, tuple(roll))
    assert state.match is not None
    out = [(state.match.score, state.match.crawford, state.match.post_crawford)]
    for move_json, rolls in record.actions:
        before = state.match
        state = G.apply(state, G.move_from_json(state, move_json))
        for roll in rolls:
            state = G.apply_chance(state, tuple(roll))
        m = state.match
        assert m is not None and before is not None
        if m.game != before.game:
            out.append((m.score, m.crawford, m.post_crawford))
    return out


@pytest.mark.parametrize("seed", crawford_seeds(5, 3))
def test_gnubg_agrees_which_game_is_crawford(tmp_path: Path, seed: int) -> None:
    """gnubg walks the imported match game by game; at each game's start its score and its
    Crawford status (the Crawford game, post-Crawford play, or neither) are the engine's: an
    independent account of the Crawford rule."""
    assert GNUBG is not None
    record, _ = random_match(seed, 5)
    starts = match_starts(record)
    (tmp_path / "m.mat").write_text(write_mat(G, record), encoding="utf-8")
    walk = "".join("next game\nshow score\n" for _ in starts[1:])
    (tmp_path / "cmd").write_text(f"set jacoby off\nimport mat {tmp_path / 'm.mat'}\n"
                                  f"first game\nshow score\n{walk}")
    run = subprocess.run([GNUBG, "-t", "-q", "-c", str(tmp_path / "cmd")],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    seen: dict[int, str] = {}
    for m in re.finditer(r"The score \(after (\d+) games?\) is: (.*?\))", run.stdout):
        seen.setdefault(int(m[1]), m[2])
    assert sorted(seen) == list(range(len(starts))), run.stdout
    for k, (score, crawford, post) in enumerate(starts):
        text = seen[k]
        assert re.search(rf"Ana {score[0]}, Bo {score[1]} \(match to 5 points", text), text
        assert ("Crawford game" in text) == crawford, (k, text)
        assert ("post-Crawford" in text) == post, (k, text)
