"""``tablas bot`` end to end (contract section 12): a real ``tablas serve``, the adapter as a
real process, engines as real processes (an engine written in the test, tests/bot_support.py).

A bot account driven by the adapter plays tic-tac-toe, Connect-4 and backgammon (cube actions
included) against a person to the end, its engine told exactly the room's positions, states
and legal moves (replayed here with the engine package); engines that answer an illegal move,
say nothing or die lose their games and the adapter plays on; two bot accounts with ``--seek``
play each other; the adapter comes back after the server is killed (-9) and restarted; the
ninth challenge waits for a free place. Bad arguments are one line on stderr, exit code 2."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from bot_support import (
    Adapter,
    engine_command,
    engine_turns,
    expected_turns,
    until_online,
    write_engine,
)
from server_support import ROOT, Client, Subprocess
from test_server_ratings import get

GAME_CLOCK = {"base_ms": 10_000, "increment_ms": 0}  # the shortest clock there is
# A bot account plays clocked games only, at most 2 at once against one address (contract
# section 15): people challenge with this clock, from addresses of their own.
LONG = {"base_ms": 600_000, "increment_ms": 0}


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Subprocess]:
    srv = Subprocess(tmp_path / "t.db", tmp_path / "server.log")
    await asyncio.to_thread(srv.start)
    try:
        yield srv
    finally:
        srv.terminate()


def person_move(view: dict[str, Any]) -> dict[str, Any]:
    """The person's move: the first listed, but in backgammon it doubles while the cube is
    in the middle and drops any double (so the bot's engine takes, then redoubles)."""
    moves = view["legal_moves"]
    actions = [m.get("action") for m in moves]
    if "double" in actions and view["state"]["cube"]["owner"] is None:
        return {"action": "double"}
    if "drop" in actions:
        return {"action": "drop"}
    return moves[0]


async def play_rooms(person: Client, seats: dict[str, int], timeout: float = 120
                     ) -> dict[str, dict[str, Any]]:
    """``person`` plays its seat in every room of ``seats`` (room -> seat) with
    :func:`person_move` until each game is over; the last view of each."""
    views: dict[str, dict[str, Any]] = {}
    sent: dict[str, int] = {}

    def seen(m: dict[str, Any]) -> None:
        room = m.get("room_id")
        if m.get("type") in ("room", "update") and room in seats and (
                room not in views or m["ply"] >= views[room]["ply"]):
            views[room] = m

    async def play(room: str) -> None:
        m = views[room]
        if m["status"] == "playing" and m["to_move"] == seats[room] and m["legal_moves"] \
                and sent.get(room) != m["ply"]:
            sent[room] = m["ply"]
            await person.send({"type": "move", "room_id": room, "ply": m["ply"],
                               "move": person_move(m)})

    for m in list(person.inbox):  # what arrived while the test waited for other messages
        seen(m)
    for room in list(views):
        await play(room)
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while len([v for v in views.values() if v["status"] == "finished"]) < len(seats):
        m = await person.recv(max(0.1, end - loop.time()))
        seen(m)
        if m.get("room_id") in views:
            await play(m["room_id"])
    return views


async def challenges(person: Client, bot: str, terms: list[dict[str, Any]]
                     ) -> dict[str, tuple[str, int]]:
    """``person`` challenges ``bot`` once per item of ``terms``: game -> (room, its seat)."""
    games: dict[str, tuple[str, int]] = {}
    ids = {}
    for t in terms:
        sent = await person.request({"type": "challenge", "to": bot, "clock": LONG, **t},
                                    "challenge_sent")
        ids[sent["challenge_id"]] = t["game"]
    while len(games) < len(terms):
        p = await person.expect("paired")
        games[ids[p["challenge_id"]]] = (p["room_id"], p["seat"])
    return games


def the_log(logs: Path, game: str) -> Path:
    found = sorted(logs.glob(f"{game}-*.log"))
    assert len(found) == 1, found
    return found[0]


async def test_bad_arguments_are_one_line_on_stderr_and_exit_2(tmp_path: Path) -> None:
    ok = ["--server", "ws://127.0.0.1:1/ws", "--name", "Robo", "--password", "long enough",
          "--engine", f"{sys.executable} x.py"]

    def with_(**changes: str) -> list[str]:
        args = list(ok)
        for key, value in changes.items():
            flag = "--" + key.replace("_", "-")
            if flag in args:
                args[args.index(flag) + 1] = value
            else:
                args += [flag, value]
        return args

    cases = [
        ok[:-2],  # no --engine
        with_(server="http://127.0.0.1:8765/"),
        with_(server="ws://127.0.0.1:99999/ws"),
        with_(password="short"),
        with_(name=""),
        with_(engine="surely-no-such-engine-here --fast"),
        with_(engine=""),
        with_(engine="'unclosed"),
        with_(engine=f"{sys.executable} -c pass"),  # runs, but never says ready
        with_(engine=f"{sys.executable} -c 'print(\"hello\")'"),
        with_(games="tictactoe,chess"),
        with_(games="tictactoe,tictactoe"),
        with_(accept="friends"),
        with_(seek="1"),  # five games, one seek each: more than 3
        with_(games="tictactoe", seek="-1"),
        with_(clock="5+0"),
        with_(clock="sixty"),
        with_(max_games="9"),
        with_(max_games="0"),
        with_(max_games="many"),
    ]
    runs = await asyncio.gather(*(asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "tablas.server.cli", "bot", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120) for args in cases))
    for args, done in zip(cases, runs, strict=True):
        assert done.returncode == 2, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, (args, done.stderr)
        assert done.stdout == ""


async def test_a_wrong_password_or_a_persons_account_stops_it(server: Subprocess,
                                                              tmp_path: Path) -> None:
    from test_server_ratings import member

    engine, logs = write_engine(tmp_path)
    ana, _ = await member(server.url, "Ana")  # a person's account
    first = await Adapter(server.url, "Robo", engine_command(engine, logs),
                          stderr=tmp_path / "robo.err").start()
    await until_online(ana, "Robo", clock=LONG)  # registered as a bot account, and online
    assert await first.stop() == 0
    for name, password in (("Robo", "not the password"), ("Ana", None)):
        adapter = Adapter(server.url, name, engine_command(engine, logs))
        if password is not None:
            adapter.argv[adapter.argv.index("--password") + 1] = password
        else:  # Ana's own password: her account is a person's
            from test_server_ratings import PASSWORD

            adapter.argv[adapter.argv.index("--password") + 1] = PASSWORD
        done = await asyncio.to_thread(subprocess.run, adapter.argv, cwd=ROOT,
                                       capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done
        assert done.stderr.strip().splitlines()[-1].startswith("tablas: "), done.stderr
    await ana.close()


async def test_a_bot_account_plays_three_games_against_a_person_to_the_end(
        server: Subprocess, tmp_path: Path) -> None:
    engine, logs = write_engine(tmp_path)
    bot = await Adapter(server.url, "Robo", engine_command(engine, logs),
                        "--games", "tictactoe,connect4,backgammon",
                        stderr=tmp_path / "robo.err").start()
    ana = Client(server.url, source="127.0.0.2")
    await ana.connect("Ana")
    first = await until_online(ana, "Robo", clock=LONG)  # tic-tac-toe, played out too
    rooms = await challenges(ana, "Robo", [{"game": "connect4"}])
    rooms["tictactoe"] = (first["room_id"], first["seat"])
    bea = Client(server.url, source="127.0.0.3")  # a third game: from another address
    await bea.connect("Bea")
    rooms |= await challenges(bea, "Robo", [{"game": "backgammon"}])
    person = {game: ana if game != "backgammon" else bea for game in rooms}
    ana_ends, bea_ends = await asyncio.gather(
        play_rooms(ana, {r: s for g, (r, s) in rooms.items() if person[g] is ana}),
        play_rooms(bea, {r: s for g, (r, s) in rooms.items() if person[g] is bea}))
    ends = ana_ends | bea_ends
    for game, (room, seat) in rooms.items():
        record = await get(server.url, f"/api/rooms/{room}")
        bot_seat = 1 - seat
        assert record["status"] == "finished" and record["seats"][bot_seat]["bot"] is True
        assert record["seats"][seat]["bot"] is False
        # The engine was told exactly the room's positions, states and legal moves.
        game_line, told, _ = engine_turns(the_log(logs, game))
        options = json.dumps(record["options"], separators=(",", ":"))
        assert game_line == f"game {game} {bot_seat} {options}"
        expected = expected_turns(record, bot_seat)
        assert [(t.position, t.state, t.legal) for t in told] == \
            [(t.position, t.state, t.legal) for t in expected], game
        assert all(t.go is not None and 0 < t.go <= LONG["base_ms"] for t in told)
        assert len(expected) >= 3
        # It printed the game's end as the room ended it.
        words = await bot.finished(room)
        result = ends[room]["result"]
        word = "DRAW" if result["winner"] is None else \
            "WIN" if result["winner"] == bot_seat else "LOSS"
        name = "Bea" if person[game] is bea else "Ana"
        assert words == ["finished", game, room, word, result["reason"], "against", name]
        assert f"started {game} {room} seat {bot_seat} against {name}" in bot.lines
    # Backgammon's cube: the person doubled, the engine took, redoubled, the person dropped.
    room, seat = rooms["backgammon"]
    record = await get(server.url, f"/api/rooms/{room}")
    actions = [m.get("action") for m in record["history"] if "action" in m]
    assert [a for a in actions if a != "roll"] == ["double", "take", "double", "drop"]
    assert record["result"] == {"winner": 1 - seat, "points": 2, "reason": "drop"}
    _, told, _ = engine_turns(the_log(logs, "backgammon"))
    assert ["take", "drop"] in [t.legal for t in told]
    assert ["roll", "double"] in [t.legal for t in told]
    assert await bot.stop() == 0
    for c in (ana, bea):
        await c.close()


async def test_bad_silent_and_dying_engines_lose_and_the_adapter_plays_on(
        server: Subprocess, tmp_path: Path) -> None:
    engine, logs = write_engine(tmp_path)
    modes = json.dumps({"tictactoe": "illegal", "connect4": "silent", "grundy": "die"})
    bot = await Adapter(server.url, "Robo", engine_command(engine, logs, modes),
                        "--games", "tictactoe,connect4,grundy,boom",
                        stderr=tmp_path / "robo.err").start()
    ana = Client(server.url, source="127.0.0.2")
    await ana.connect("Ana")
    first = await until_online(ana, "Robo", game="grundy", options={"heap": 9}, clock=LONG)
    rooms = await challenges(ana, "Robo", [{"game": "tictactoe"}])
    rooms["grundy"] = (first["room_id"], first["seat"])
    bea = Client(server.url, source="127.0.0.3")  # a third game: from another address
    await bea.connect("Bea")
    silent = await challenges(bea, "Robo", [{"game": "connect4", "clock": GAME_CLOCK}])
    ana_ends, bea_ends = await asyncio.gather(
        play_rooms(ana, {room: seat for room, seat in rooms.values()}),
        play_rooms(bea, {room: seat for room, seat in silent.values()}))
    ends = ana_ends | bea_ends
    rooms |= silent
    for game, (room, seat) in rooms.items():
        assert ends[room]["result"] == {"winner": seat, "points": 1, "reason": "resign"}, game
        assert (await bot.finished(room))[3:5] == ["LOSS", "resign"]
    err = bot.err_text()
    assert "not one of the" in err and "said no move in time" in err and "died" in err
    # It plays on: a game with a good engine goes to its end.
    again = await challenges(ana, "Robo", [{"game": "boom"}])
    room, seat = again["boom"]
    end = (await play_rooms(ana, {room: seat}))[room]
    assert end["result"]["reason"] != "resign"
    assert (await bot.finished(room))[4] == end["result"]["reason"]
    await asyncio.sleep(2.5)  # every engine is let go (2 s after quit at the latest)
    assert not _running(engine)
    assert await bot.stop() == 0
    for c in (ana, bea):
        await c.close()


async def test_two_bot_accounts_seeking_play_each_other(tmp_path: Path) -> None:
    # Both adapters connect from 127.0.0.1: a server that vouches for it lets them rate each
    # other (contract section 16; docs/ratings.md).
    server = Subprocess(tmp_path / "t.db", tmp_path / "server.log",
                        args=["--shared-address-ok", "127.0.0.1/32"])
    await asyncio.to_thread(server.start)
    try:
        await _two_bot_accounts_seeking(server, tmp_path)
    finally:
        server.terminate()


async def _two_bot_accounts_seeking(server: Subprocess, tmp_path: Path) -> None:
    engine, logs = write_engine(tmp_path)
    args = ("--games", "tictactoe", "--seek", "1", "--clock", "10+0", "--accept", "none")
    one = await Adapter(server.url, "Robo", engine_command(engine, logs), *args,
                        stderr=tmp_path / "one.err").start()
    two = await Adapter(server.url, "Iris", engine_command(engine, logs), *args,
                        stderr=tmp_path / "two.err").start()
    line = await one.line(lambda w: w[:1] == ["finished"] and w[-2:] == ["against", "Iris"])
    room = line.split()[2]
    words = await two.finished(room)
    assert words[-2:] == ["against", "Robo"]
    assert {line.split()[3], words[3]} in ({"WIN", "LOSS"}, {"DRAW"})
    record = await get(server.url, f"/api/rooms/{room}")
    assert record["rated"] is True and record["room_options"]["clock"] == GAME_CLOCK
    assert [s["bot"] for s in record["seats"]] == [True, True]
    for a in (one, two):
        assert await a.stop() == 0


async def test_the_adapter_comes_back_after_the_server_is_killed_and_restarted(
        server: Subprocess, tmp_path: Path) -> None:
    engine, logs = write_engine(tmp_path)
    bot = await Adapter(server.url, "Robo", engine_command(engine, logs),
                        "--games", "connect4,tictactoe", stderr=tmp_path / "robo.err").start()
    ana = Client(server.url)
    welcome = await ana.connect("Ana")
    p = await until_online(ana, "Robo", game="connect4", clock=LONG)
    room, seat = p["room_id"], p["seat"]
    view = await ana.expect("room")
    while view["ply"] < 4:  # a few moves each, then the server dies
        if view["to_move"] == seat:
            view = await ana.request({"type": "move", "room_id": room, "ply": view["ply"],
                                      "move": view["legal_moves"][0]}, "update")
        else:
            view = await ana.expect("update")
    await ana.close()
    server.kill9()
    await asyncio.sleep(1.0)
    await asyncio.to_thread(server.start)
    ana = Client(server.url)
    await ana.connect("Ana", token=welcome["token"])
    await ana.send({"type": "join", "room_id": room})
    end = (await play_rooms(ana, {room: seat}))[room]
    assert end["result"]["reason"] != "resign" and end["ply"] > 4
    assert (await bot.finished(room))[4] == end["result"]["reason"]
    # One engine played the whole game, across the restart.
    _, told, _ = engine_turns(the_log(logs, "connect4"))
    assert len(told) == len(expected_turns(await get(server.url, f"/api/rooms/{room}"),
                                           1 - seat))
    # And it takes new games.
    p = await until_online(ana, "Robo", clock=LONG)
    await bot.line(lambda w: w[:1] == ["started"] and w[2:3] == [p["room_id"]])
    assert "reconnecting" in bot.err_text()
    assert await bot.stop() == 0
    await ana.close()


async def test_the_ninth_challenge_waits_for_a_free_place(server: Subprocess,
                                                          tmp_path: Path) -> None:
    engine, logs = write_engine(tmp_path)
    bot = await Adapter(server.url, "Robo", engine_command(engine, logs),
                        "--games", "tictactoe", stderr=tmp_path / "robo.err").start()
    # Five people of five addresses: a bot account plays at most 2 games at once against
    # one address, and at most 5 challenges wait for its answer (contract section 15).
    people = [Client(server.url, source=f"127.0.0.{i + 2}") for i in range(5)]
    for i, c in enumerate(people):
        await c.connect(f"Person{i}")
    first = await until_online(people[0], "Robo", clock=LONG)
    games = [(people[0], first)]
    sent = []
    for c in [people[0]] + [c for c in people[1:4] for _ in range(2)]:  # its eight places
        s = await c.request({"type": "challenge", "to": "Robo", "game": "tictactoe",
                             "clock": LONG}, "challenge_sent")
        sent.append((c, s))
        games.append((c, await c.expect("paired")))
    assert len(games) == 8
    await bot.line(lambda w: w[:1] == ["started"], start=7)  # the eighth started line
    ninth = await people[4].request({"type": "challenge", "to": "Robo", "game": "tictactoe",
                                     "clock": LONG}, "challenge_sent")
    assert await _paired_within(people[4], 1.5) is None  # it waits
    assert "waits" in bot.err_text()
    assert sum(1 for line in bot.lines if line.startswith("started")) == 8
    # A game ends: its place goes to the waiting challenge.
    by, p = games[0]
    await by.send({"type": "resign", "room_id": p["room_id"]})
    await bot.finished(p["room_id"])
    paired = await people[4].expect("paired")
    assert paired["challenge_id"] == ninth["challenge_id"]
    await bot.line(lambda w: w[:1] == ["started"] and w[2:3] == [paired["room_id"]])
    assert await bot.stop() == 0
    for c in people:
        await c.close()


async def _paired_within(c: Client, timeout: float) -> dict[str, Any] | None:
    try:
        return await c.expect("paired", timeout=timeout)
    except TimeoutError:
        return None


def _running(engine: Path) -> list[str]:
    """The processes that run ``engine`` (not the adapter, whose options name it)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if cmd.startswith(f"{sys.executable} {engine} "):
                found.append(cmd)
    return found


EXAMPLES = ROOT / "examples" / "engines"


async def test_the_python_example_plays_the_house_easy_bot_in_both_seats(
        server: Subprocess, tmp_path: Path) -> None:
    """docs/bots.md's walk-through: the example engine, challenging ``bot (easy)``."""
    engine = f"{sys.executable} {EXAMPLES / 'random_engine.py'}"
    bot = await Adapter(server.url, "Student", engine, "--games", "tictactoe",
                        "--challenge", "bot (easy)", "--clock", "10+0",
                        stderr=tmp_path / "student.err").start()
    seats: set[str] = set()
    while seats != {"0", "1"}:  # a new game after each one, seats drawn at random
        line = await bot.line(lambda w: w[:1] == ["started"] and w[4] not in seats)
        seats.add(line.split()[4])
    # Every game it started is played to its end; then, both seats played, it stops.
    rooms = [line.split()[2] for line in bot.lines if line.startswith("started")]
    for room in rooms:
        words = await bot.finished(room)
        assert words[-3:] == ["against", "bot", "(easy)"] and words[4] != "resign", words
        record = await get(server.url, f"/api/rooms/{room}")
        assert record["rated"] is True and record["status"] == "finished"
        kinds = {(s["kind"], s["level"], s["bot"]) for s in record["seats"]}
        assert kinds == {("bot", "easy", False), ("human", None, True)}
    await asyncio.sleep(1.5)
    assert [line.split()[2] for line in bot.lines if line.startswith("started")] == rooms
    assert "both seats" in bot.err_text()
    assert await bot.stop() == 0


async def test_the_c_example_plays_a_person_to_the_end(server: Subprocess,
                                                       tmp_path: Path) -> None:
    binary = tmp_path / "random_engine"
    built = await asyncio.to_thread(
        subprocess.run, ["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(binary),
                         str(EXAMPLES / "random_engine.c")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    bot = await Adapter(server.url, "Cbot", str(binary), "--games", "tictactoe,connect4",
                        stderr=tmp_path / "cbot.err").start()
    ana = Client(server.url)
    await ana.connect("Ana")
    first = await until_online(ana, "Cbot", game="connect4", clock=LONG)
    rooms = await challenges(ana, "Cbot", [{"game": "tictactoe"}])
    rooms["connect4"] = (first["room_id"], first["seat"])
    ends = await play_rooms(ana, {room: seat for room, seat in rooms.values()})
    for game, (room, _) in rooms.items():
        assert ends[room]["result"]["reason"] != "resign", game
        assert (await bot.finished(room))[4] == ends[room]["result"]["reason"]
    assert await bot.stop() == 0
    await ana.close()


async def test_the_adapter_declines_a_draw_and_a_takeback_at_once(server: Subprocess,
                                                                 tmp_path: Path) -> None:
    """Contract section 7: an engine plays its games out; the person asking is not left
    waiting."""
    engine, logs = write_engine(tmp_path)
    bot = await Adapter(server.url, "Robo", engine_command(engine, logs), "--games", "connect4",
                        stderr=tmp_path / "robo.err").start()
    ana = Client(server.url)
    await ana.connect("Ana")
    paired = await until_online(ana, "Robo", "connect4", clock=LONG)
    room, seat = paired["room_id"], paired["seat"]
    view = await ana.expect("room")
    while view["to_move"] != seat:
        view = await ana.expect("update")
    # Asked on Ana's turns, so that no move of the engine's answers them first.
    await ana.request({"type": "offer_draw", "room_id": room}, "draw_offer")
    assert (await ana.expect("draw_declined"))["seat"] == seat
    moved = await ana.request({"type": "move", "room_id": room, "ply": view["ply"],
                               "move": view["legal_moves"][0]}, "update")
    reply = await ana.expect("update")  # the engine's move
    assert reply["ply"] == moved["ply"] + 1
    await ana.request({"type": "takeback", "room_id": room}, "takeback_offer")
    assert (await ana.expect("takeback_declined"))["seat"] == seat
    record = await get(server.url, f"/api/rooms/{room}")
    assert record["ply"] == reply["ply"] and record["status"] == "playing"
    await ana.request({"type": "resign", "room_id": room}, "room")
    await bot.finished(room)
    assert await bot.stop() == 0
    await ana.close()
