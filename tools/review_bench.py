"""From a game's end to its review, measured (docs/benchmarks.md, docs/review.md).

A real ``tablas serve`` (``--bot-workers 2``, a server of its own for each game and code) on
loopback; for each game, ``--games`` people (each from an address of its own, 127.0.0.10 and
up; ``--at-once`` of them at a time, default one after the other) play one game each against
the ``medium`` bot at a person's pace: ``--think`` seconds before each of their moves, each a
seeded random legal move (backgammon: never doubling nor dropping, so that a money game is
played out). When a person's game ends (the update that finishes it), they ask for its
review (``GET /api/rooms/{id}/review``, asked again at once while it answers 202) and the
time from the end to the review is taken; so is each bot reply (a move sent to the bot's
update that answers it).

``--baseline REV`` measures another revision of this repository too (checked out into a
temporary worktree, run through :mod:`tools.checkout`), in the same run: the two servers take
turns, game by game, round by round::

    python -m tools.review_bench --baseline e5baf9e
    python -m tools.review_bench --only connect4,boom --rounds 2

Prints one JSON line per game, round and code, then a summary line per game and code
(medians over every game of every round, and each round's median).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tablas.engine.games import get_game
from tablas.engine.search import bots as search_bots

from tools.checkout import python_path, server_module
from tools.fair_bench import Conn, _free_port

ROOT = Path(__file__).resolve().parent.parent
GAMES: dict[str, dict[str, Any]] = {
    "tictactoe": {},
    "connect4": {},
    "boom": {},
    "grundy": {},
    "backgammon": {},  # a money game (the cube on)
}
SHY = ({"action": "double"}, {"action": "drop"})  # backgammon: played out, never cut short
# Where a person plays as the ``easy`` bot would (within PERSON_MS of search, inside their
# thinking time) rather than at random: random play loses a Connect-4 or BOOM game to
# ``medium`` in a dozen moves, far shorter than people's games.
SKILLED = {"connect4", "boom"}
PERSON_MS = 150.0


def _review(base: str, room: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"{base}/api/rooms/{room}/review", timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


async def person(port: int, address: str, game: str, think: float, seed: int,
                 level: str) -> dict[str, Any]:
    """One game against ``level`` at a person's pace; its bot replies and its review delay."""
    rng = random.Random(seed)
    c = await Conn.open(port, address, f"P{seed}")
    made = await c.request({"type": "create_room", "game": game, "options": GAMES[game],
                            "seats": [{"kind": "human"}, {"kind": "bot", "level": level}],
                            "join_seat": 0})
    room = made["room_id"]
    view = await c.other.get()
    while view.get("type") != "room" or view.get("room_id") != room:
        view = await c.other.get()
    replies: list[float] = []
    sent = 0.0
    rules = get_game(game)
    state = rules.initial(GAMES[game]) if game in SKILLED else None
    while view["status"] != "finished":
        if view.get("to_move") == 0 and view.get("legal_moves"):
            began = time.perf_counter()
            moves = [m for m in view["legal_moves"] if m not in SHY] or view["legal_moves"]
            move = rng.choice(moves)
            if state is not None:
                move = (await asyncio.to_thread(
                    search_bots.decide, game, state, "easy", PERSON_MS, rng.randrange(1 << 30)
                )).move
            await asyncio.sleep(max(0.0, think - (time.perf_counter() - began)))
            sent = time.perf_counter()
            c.send({"type": "move", "room_id": room, "ply": view["ply"], "move": move})
        m = await c.other.get()
        if m.get("type") != "update" or m.get("room_id") != room:
            continue
        if state is not None:
            state = rules.apply(state, rules.move_from_json(state, m["move"]))
        if sent and m.get("seat") == 1:  # the bot's answer to the person's move
            replies.append((time.perf_counter() - sent) * 1000)
            sent = 0.0
        view = m
    ended = time.perf_counter()
    base = f"http://127.0.0.1:{port}"
    while True:
        code, body = await asyncio.to_thread(_review, base, room)
        if code != 202:
            break
    delay = time.perf_counter() - ended
    await c.ws.close()
    assert code == 200, (code, body[:200])
    return {"plies": view["ply"], "review_s": round(delay, 3), "replies_ms": replies}


async def one_game(src: Path, game: str, games: int, think: float, seed: int, level: str,
                   extra: list[str], at_once: int) -> dict[str, Any]:
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=python_path(src))
        proc = subprocess.Popen(
            [sys.executable, "-m", f"{server_module(src)}.cli", "serve", "--port", str(port),
             "--db", str(Path(tmp) / "t.sqlite3"), "--bot-workers", "2",
             "--log-level", "warning", *extra],
            env=env, stdout=subprocess.PIPE, cwd=tmp)
        try:
            assert proc.stdout is not None
            proc.stdout.readline()  # the page's address: it serves
            rows = []
            for first in range(0, games, at_once):
                rows += await asyncio.gather(*(
                    person(port, f"127.0.0.{10 + i}", game, think, seed * 100 + i, level)
                    for i in range(first, min(games, first + at_once))))
        finally:
            proc.terminate()
            proc.wait(20)
    replies = [r for row in rows for r in row["replies_ms"]]
    return {"game": game, "review_s": [row["review_s"] for row in rows],
            "plies": [row["plies"] for row in rows],
            "reply_median_ms": round(statistics.median(replies), 1) if replies else None,
            "replies": len(replies)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default=",".join(GAMES), help="games, comma-separated")
    p.add_argument("--games", type=int, default=3, help="games of each game per round")
    p.add_argument("--at-once", type=int, default=1,
                   help="games played at the same time (each by its own address)")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--think", type=float, default=3.0, help="a person's seconds per move")
    p.add_argument("--level", default="medium", help="the bot's level")
    p.add_argument("--baseline", metavar="REV", help="also measure this revision, same run")
    p.add_argument("--serve", default="", help="more options for this checkout's server "
                   "(e.g. '--review-ahead off')")
    args = p.parse_args(argv)
    games = [g for g in args.only.split(",") if g]
    sources: list[tuple[str, Path, list[str]]] = [("this checkout", ROOT, args.serve.split())]
    worktree = None
    if args.baseline:
        worktree = Path(tempfile.mkdtemp()) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree),
                        args.baseline], check=True, capture_output=True)
        sources.append((args.baseline, worktree, []))
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    try:
        for r in range(args.rounds):
            for game in games:
                for name, src, extra in sources:
                    row = asyncio.run(one_game(src, game, args.games, args.think, r + 1,
                                               args.level, extra, args.at_once))
                    row.update(code=name, round=r + 1)
                    results.setdefault((game, name), []).append(row)
                    print(json.dumps(row), flush=True)
    finally:
        if worktree is not None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(worktree)], check=False, capture_output=True)
    for (game, name), rows in results.items():
        delays = [d for row in rows for d in row["review_s"]]
        print(json.dumps({
            "summary": game, "code": name,
            "review_median_s": round(statistics.median(delays), 3),
            "review_max_s": max(delays),
            "review_median_s_by_round": [round(statistics.median(row["review_s"]), 3)
                                         for row in rows],
            "reply_median_ms_by_round": [row["reply_median_ms"] for row in rows],
        }), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
