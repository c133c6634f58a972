"""The ``.mat`` export against GNU Backgammon itself (Debian's ``gnubg``, run without a GUI).

Backgammon games are played on a real server (bots against bots, and a person against a
bot), exported with ``GET /api/rooms/{id}/export?format=mat``, and given to ``gnubg -t``:
``import mat`` must read every entry without a warning, and gnubg's own account of the game
must be the server's: its re-export (``export match mat``) holds the same entries (each play's
steps, every cube action, the result), its final position is the server's, and its score is
the server's result. The same is checked for seeded random games written by the engine alone,
and a broken export (a seat's points mirrored, a double left out, a wrong result) is caught.

Skipped when gnubg is not installed; the README's test command installs it.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from server_support import connected, create, running
from tablas.engine.core import GameRecord, Outcome
from tablas.engine.games import get_game
from tablas.engine.games.backgammon import BGState, encode_position_id
from tablas.engine.games.backgammon_mat import write_mat
from tablas.engine.records import replay
from test_server_records import get, get_json

GNUBG = shutil.which("gnubg") or next(
    (p for p in ("/usr/games/gnubg",) if os.access(p, os.X_OK)), None)
pytestmark = pytest.mark.skipif(
    GNUBG is None, reason="GNU Backgammon is not installed (apt-get install gnubg: the "
    "README's test command installs it)")

G = get_game("backgammon")
# One entry of a .mat line: a roll and its play, a cube action, or the result.
ENTRY = re.compile(r"(\d\d:(?: \d+/\d+\*?)*|Doubles => \d+|Takes|Drops|Wins \d+ points?)")
COMPLAINTS = re.compile(r"warning|unrecognised|not a valid|error|illegal|invalid", re.I)


def entries(mat: str) -> list[tuple[int, str]]:
    """Each entry of a .mat file's one game with its column (0: left, seat 0): a play as its
    dice and its steps in a fixed order (gnubg writes a play's steps in an order of its
    own), hit marks left out (which step of several landing on a blot hits is the writer's
    choice); read independently of gnubg's reader and of the writer under test."""
    lines = mat.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "Game 1") + 2
    out: list[tuple[int, str]] = []
    for line in lines[start:]:
        if not line.strip():
            continue
        found = list(ENTRY.finditer(line[5:]))
        assert found, f"no entry in .mat line {line!r}"
        assert len(found) <= 2, f"more than two entries in .mat line {line!r}"
        for i, m in enumerate(found):
            column = i if len(found) == 2 else int(m.start() >= 27)
            text = m.group(1)
            if text[2:3] == ":":
                steps = sorted(s.rstrip("*") for s in text[3:].split())
                text = " ".join([text[:3], *steps])
            out.append((column, text))
    return out


@dataclass
class GnubgView:
    """What gnubg made of a .mat file."""

    output: str
    reexport: str
    position_id: str
    score: tuple[tuple[str, int], tuple[str, int]]


def gnubg_reads(mat: str, work: Path) -> GnubgView:
    """``mat`` imported by gnubg (no GUI, commands from a file, nothing on its input: a
    question it asks is answered "no"), its score, board and own export of the match."""
    assert GNUBG is not None
    work.mkdir(parents=True, exist_ok=True)
    source, again, commands = work / "game.mat", work / "again.mat", work / "commands"
    source.write_text(mat, encoding="utf-8")
    again.unlink(missing_ok=True)
    commands.write_text(f"set jacoby off\nimport mat {source}\nshow score\nshow board\n"
                        f"export match mat {again}\n")
    run = subprocess.run([GNUBG, "-t", "-q", "-c", str(commands)], stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=120, cwd=work)
    output = run.stdout + run.stderr
    ids = re.findall(r"Position ID: (\S+)", output)
    score = re.search(r"The score \(after \d+ games?\) is: (.*) (\d+), (.*) (\d+) \(", output)
    assert ids and score and again.exists(), f"gnubg did not read the game:\n{output}"
    return GnubgView(output, again.read_text(encoding="utf-8"), ids[-1],
                     ((score[1], int(score[2])), (score[3], int(score[4]))))


def expected_entries(opening_rolls: Any, actions: list[tuple[dict[str, Any], Any]],
                     result: Outcome | None) -> list[tuple[int, str]]:
    """The entries a .mat file of this game must hold, in :func:`entries`' form, worked out
    from the game itself: each play with the dice it was played with, each cube action, the
    winner's ``Wins``."""
    state = replay(G, {}, opening_rolls, [])
    out: list[tuple[int, str]] = []
    for move_json, rolls in actions:
        seat = G.to_move(state)
        assert seat is not None
        if "play" in move_json:
            dice = "".join(map(str, sorted(state.dice, reverse=True)))
            out.append((seat, " ".join([f"{dice}:", *sorted(
                f"{f}/{t}" for f, t in move_json["play"])])))
        elif move_json["action"] != "roll":
            cube = {"double": f"Doubles => {2 * state.cube}", "take": "Takes", "drop": "Drops"}
            out.append((seat, cube[move_json["action"]]))
        state = G.apply(state, G.move_from_json(state, move_json))
        for roll in rolls:
            state = G.apply_chance(state, tuple(roll))
    if result is not None and result.winner is not None:
        out.append((result.winner, f"Wins {result.points} point{'s' * (result.points != 1)}"))
    return out


def problems(mat: str, expected: list[tuple[int, str]], names: tuple[str, str],
             final: BGState, result: Outcome | None, work: Path) -> list[str]:
    """Where the export, or gnubg's account of it, differs from the game (none: the same)."""
    out = []
    if entries(mat) != expected:
        out.append(f"the export is not the game:\n{mat}\nvs\n{expected}")
    view = gnubg_reads(mat, work)
    out += [f"gnubg complains: {line}" for line in view.output.splitlines()
            if COMPLAINTS.search(line)]
    if entries(view.reexport) != entries(mat):
        out.append(f"gnubg's game is not the export's:\n{view.reexport}\nvs\n{mat}")
    me, opp = final.boards[final.turn], final.boards[1 - final.turn]
    if view.position_id not in (encode_position_id(me, opp), encode_position_id(opp, me)):
        out.append(f"final position {view.position_id}, the server's {G.position_text(final)}")
    points = [0, 0]
    if result is not None and result.winner is not None:
        points[result.winner] = result.points
    if view.score != ((names[0], points[0]), (names[1], points[1])):
        out.append(f"score {view.score}, the server's {names} {points}")
    return out


def check_record(record: dict[str, Any], mat: str, names: tuple[str, str], work: Path
                 ) -> list[str]:
    """:func:`problems` for a server's game, from its JSON record."""
    result = outcome(record["result"])
    actions = [(a["move"], a["dice"]) for a in record["actions"]]
    final: BGState = replay(G, record["options"], record["opening_rolls"], actions)
    return problems(mat, expected_entries(record["opening_rolls"], actions, result), names,
                    final, result, work)


def outcome(result: dict[str, Any] | None) -> Outcome | None:
    return None if result is None else Outcome.from_json(result)


# --- games played on a server ---------------------------------------------------------------


async def _finished(url: str, room: str, timeout: float = 120) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while (await get_json(url, f"/api/rooms/{room}"))["status"] != "finished":
        assert loop.time() < end, f"room {room} did not finish"
        await asyncio.sleep(0.2)


async def _exported(url: str, room: str) -> tuple[dict[str, Any], str]:
    record = await get_json(url, f"/api/rooms/{room}/export?format=json")
    code, headers, body = await get(url, f"/api/rooms/{room}/export?format=mat")
    assert code == 200 and headers["Content-Type"] == "text/plain; charset=utf-8"
    assert headers["Content-Disposition"] == f'attachment; filename="tablas-{room}.mat"'
    return record, body.decode()


def _seen(mat: str) -> set[str]:
    """The cases a game's export shows."""
    found = set()
    for _, text in entries(mat):
        if text.startswith(("Doubles", "Takes", "Drops")):
            found.add(text.split()[0])
        elif text[2:3] == ":":
            found |= {"bar entry"} if " 25/" in text else set()
            found |= {"no play"} if text.endswith(":") else set()
            found |= {"bear-off"} if "/0" in text else set()
    return found


CASES = {"Doubles", "Takes", "Drops", "bar entry", "no play", "bear-off"}


async def test_bot_games_replay_in_gnubg(tmp_path: Path) -> None:
    """Bots against bots until every case has appeared (a bot at ``easy`` doubles when ahead,
    ``random`` takes or drops at random and leaves blots): doubles, takes, drops, checkers
    entering from the bar, rolls with no play, bearing off; every game gnubg replays."""
    seen: set[str] = set()
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        (watcher,) = await connected(url, "Watcher")
        for batch in range(6):
            rooms = []
            for _ in range(3):
                room, _snap = await create(watcher, "backgammon", [
                    {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "random"}],
                    join_seat=None)
                rooms.append(room)
            await asyncio.gather(*(_finished(url, r) for r in rooms))
            for i, room in enumerate(rooms):
                record, mat = await _exported(url, room)
                names = ("bot (easy)", "bot (random)")
                assert [s["name"] for s in record["seats"]] == list(names)
                found = check_record(record, mat, names, tmp_path / f"g{batch}-{i}")
                assert not found, "\n".join(found)
                seen |= _seen(mat)
            if seen >= CASES:
                break
    assert seen >= CASES, f"never seen: {CASES - seen}"


async def test_a_game_exported_unfinished_then_resigned(tmp_path: Path) -> None:
    """A game exported while it is played is the game so far (no result: gnubg's score is
    0 to 0); a resignation is written as the winner's ``Wins``, which gnubg reads as the
    loser resigning, for the cube's value. One person holds both seats: they double, take,
    and play the first legal play."""
    async with running(tmp_path / "t.db") as (_srv, url):
        (a,) = await connected(url, "Ana Bo")
        room, _ = await create(a, "backgammon", [{"kind": "human"}, {"kind": "human"}])
        view = await a.request({"type": "join", "room_id": room, "seat": 1}, "room")
        cube: list[str] = []
        while view["ply"] < 16:
            legal = view["legal_moves"]
            move = next((m for m in ({"action": "double"}, {"action": "take"}) if m in legal
                         and m["action"] not in cube), legal[0])
            cube += [move["action"]] if move in ({"action": "double"}, {"action": "take"}) \
                else []
            view = await a.request({"type": "move", "room_id": room, "ply": view["ply"],
                                    "move": move}, "update")
        assert cube == ["double", "take"]
        for step in ("playing", "resigned"):
            if step == "resigned":
                await a.request({"type": "resign", "room_id": room}, "room")
            record, mat = await _exported(url, room)
            assert record["result"] == (None if step == "playing" else {
                "winner": 1 - view["to_move"], "points": 2, "reason": "resign"})
            found = check_record(record, mat, ("Ana Bo", "Ana Bo"), tmp_path / step)
            assert not found, "\n".join(found)


# --- games written by the engine alone ------------------------------------------------------


def random_game(seed: int) -> tuple[GameRecord, BGState]:
    """A seeded game of random actions, the cube doubled, taken and dropped at random; seeds
    3 and 5 stop half way (unfinished), 4 and 7 end there by a resignation."""
    rng = random.Random(seed)
    state = G.initial({})
    opening = []
    while G.is_chance(state):
        opening.append(rng.choice([o for o, _ in G.chance_outcomes(state)]))
        state = G.apply_chance(state, opening[-1])
    actions: list[tuple[dict[str, Any], tuple[tuple[int, int], ...]]] = []
    stop = 60 if seed in (3, 4, 5, 7) else None
    while G.outcome(state) is None and len(actions) != stop:
        legal = G.legal_moves(state)
        move = rng.choice(legal)
        # Few doubles, most of them taken: many games go on to the end.
        if move == "double" and rng.random() < 0.9:
            move = "roll"
        if move == "drop" and rng.random() < 0.8:
            move = "take"
        state = G.apply(state, move)
        rolls = []
        while G.is_chance(state):
            rolls.append(rng.choice([o for o, _ in G.chance_outcomes(state)]))
            state = G.apply_chance(state, rolls[-1])
        actions.append((G.move_to_json(move), tuple(rolls)))
    result = G.outcome(state)
    if seed in (4, 7) and result is None:
        loser = G.to_move(state)
        assert loser is not None
        result = Outcome(1 - loser, state.cube, "resign")
    record = GameRecord("backgammon", {}, tuple(opening), tuple(actions), ("Ana", "Bo"),
                        result, 1_700_000_000.0)
    return record, state


def _expected(record: GameRecord) -> list[tuple[int, str]]:
    return expected_entries(record.opening_rolls, list(record.actions), record.result)


@pytest.mark.parametrize("seed", range(10))
def test_random_games_replay_in_gnubg(tmp_path: Path, seed: int) -> None:
    record, final = random_game(seed)
    found = problems(write_mat(G, record), _expected(record), record.names, final, record.result,
                     tmp_path)
    assert not found, "\n".join(found)


def _mirror_seat_1(mat: str) -> str:
    """Seat 1's points as seen from seat 0's side: a writer that forgot whose move it was."""
    out = []
    for line in mat.splitlines():
        head, right = line[:33], line[33:]
        if re.match(r"\s*\d+\) ", line) and re.match(r" ?\d\d:", right):
            right = re.sub(r"\b(\d+)/(\d+)", lambda m: "/".join(
                p if p in ("0", "25") else str(25 - int(p)) for p in m.groups()), right)
        out.append(head + right)
    return "\n".join(out) + "\n"


BREAKAGES: dict[str, Callable[[str], str]] = {
    "seat 1 mirrored": _mirror_seat_1,
    "no doubles": lambda mat: mat.replace(" Doubles => ", " Dbl "),
    "a wrong result": lambda mat: re.sub(r"Wins (\d+)", lambda m: f"Wins {int(m[1]) + 1}",
                                         mat),
    "a roll's dice swapped for another": lambda mat: mat.replace(" 31:", " 42:", 1),
    # One space between a cube action and the other column's: gnubg's reader splits a line
    # without a second roll at the first two spaces, and reads one entry where there are two.
    "columns run together": lambda mat: re.sub(r"(Doubles => \d+) +", r"\1 ", mat),
}


@pytest.mark.parametrize("breakage", BREAKAGES)
def test_a_broken_export_is_caught(tmp_path: Path, breakage: str) -> None:
    """The check above fails for a .mat file that is wrong in any of these ways: gnubg does
    not simply accept whatever it is given."""
    for seed in range(20):
        record, final = random_game(seed)
        good = write_mat(G, record)
        bad = BREAKAGES[breakage](good)
        if bad != good and record.result is not None:
            break
    else:
        raise AssertionError(f"no game to break with {breakage}")
    expected = _expected(record)
    assert not problems(good, expected, record.names, final, record.result, tmp_path / "good")
    assert problems(bad, expected, record.names, final, record.result, tmp_path / "bad")
