"""The server's part of ``tablas bench``: a real server, real sockets, scripted clients.

:func:`run_server_bench` starts a :class:`~tablas.server.app.TablasServer` in this process on an
ephemeral port with a temporary SQLite file (``synchronous=FULL``, as served), then:

1. plays ``N`` concurrent person-against-person games (tic-tac-toe and Connect-4, random
   legal moves) and times each move's round trip: ``move`` sent → the mover's own ``update``
   (``re``) received, which includes the fsynced commit;
2. does it again while bot-against-bot Connect-4 rooms at level ``hard`` are thinking, and
   meanwhile measures the event loop's lag: a task that sleeps 10 ms and records how late it
   wakes up.

The rate limit is lifted for the scripted clients (they move as fast as answers come), and
so is the cap on connections per address (they all come from 127.0.0.1). The load generator,
for thousands of sockets and a server in a process of its own, is ``tools/load/`` (not
shipped; docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from tablas.server.app import TablasServer
from tablas.server.client import ProtocolClient, Refused
from tablas.server.store import Store

Figure = dict[str, Any]
PROBE_S = 0.010


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile of ``values`` (nearest rank); NaN for none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


async def pvp_game(url: str, game: str, rng: random.Random, rtts: list[float], *,
                   other_url: str | None = None, refused_ends_game: bool = False,
                   think_s: float = 0.0) -> int:
    """One person-against-person game to the end, its creator on ``url`` and the other
    player on ``other_url`` (default: the same server); each move's round trip into
    ``rtts``; the moves played. ``refused_ends_game``: a refused move ends the game early
    (a cluster's room may move between nodes) instead of raising
    :class:`~tablas.server.client.Refused`. ``think_s``: a pause before each move (a person's pace;
    0: as fast as the server answers)."""
    a = await ProtocolClient.open(url, "bench-a")
    b = await ProtocolClient.open(other_url or url, "bench-b")
    try:
        created = await a.request({"type": "create_room", "game": game, "options": {},
                                   "seats": [{"kind": "human"}, {"kind": "human"}],
                                   "join_seat": 0})
        room = created["room_id"]
        await a.next_type("room")
        await b.request({"type": "join", "room_id": room, "seat": 1})
        view = await a.next_type("room")  # the game started: seat 0 has its legal moves
        players = {0: a, 1: b}
        views = {0: view}
        moves = 0
        while view["status"] == "playing":
            seat = view["to_move"]
            mover = players[seat]
            legal = views[seat]["legal_moves"]
            if think_s:
                await asyncio.sleep(think_s)
            t0 = time.perf_counter()
            try:
                answer = await mover.request({"type": "move", "room_id": room,
                                              "ply": view["ply"], "move": rng.choice(legal)})
            except Refused:
                if refused_ends_game:
                    return moves
                raise
            rtts.append((time.perf_counter() - t0) * 1000)
            moves += 1
            other = await players[1 - seat].next_type("update")
            views = {seat: answer, 1 - seat: other}
            view = answer
        return moves
    finally:
        await a.close()
        await b.close()


async def _pvp_load(url: str, games: int, seconds: float, seed: int,
                    rtts: list[float]) -> int:
    """``games`` concurrent game loops, each playing games until ``seconds`` have passed."""
    end = time.perf_counter() + seconds
    rng = random.Random(seed)

    async def loop(i: int) -> int:
        n = 0
        kinds = ("tictactoe", "connect4")
        while True:
            n += await pvp_game(url, kinds[i % 2], random.Random(rng.random()), rtts)
            if time.perf_counter() >= end:
                return n

    return sum(await asyncio.gather(*(loop(i) for i in range(games))))


async def lag_probe(stop: asyncio.Event, lags: list[float]) -> None:
    """Until ``stop``: how late (ms) a 10 ms sleep wakes up, into ``lags`` (event-loop lag)."""
    while not stop.is_set():
        t0 = time.perf_counter()
        await asyncio.sleep(PROBE_S)
        lags.append(max(0.0, (time.perf_counter() - t0 - PROBE_S) * 1000))


async def _bench(quick: bool) -> list[Figure]:
    games = 4 if quick else 16
    seconds = 0.8 if quick else 8.0
    bot_rooms = 2 if quick else 4
    with tempfile.TemporaryDirectory(prefix="tablas-bench-") as tmp:
        store = await Store.open(Path(tmp) / "bench.db")
        srv = TablasServer(store, 2, max_msgs_per_address=None, max_conns_per_address=None)
        port = await srv.start("127.0.0.1", 0)
        url = f"ws://127.0.0.1:{port}/ws"
        try:
            await srv.bots.warm_up()
            # 1. people only
            idle_rtts: list[float] = []
            idle_lags: list[float] = []
            stop = asyncio.Event()
            probe = asyncio.create_task(lag_probe(stop, idle_lags))
            t0 = time.perf_counter()
            idle_moves = await _pvp_load(url, games, seconds, 1, idle_rtts)
            idle_elapsed = time.perf_counter() - t0
            stop.set()
            await probe
            # 2. the same while bot-against-bot rooms think (a spectator watches each)
            watched = [0]

            def count(_m: dict[str, Any], _t: float) -> None:
                watched[0] += 1

            watcher = await ProtocolClient.open(url, "bench-watcher", on_message=count,
                                                keep=False)
            hard = {"kind": "bot", "level": "hard"}
            for _ in range(bot_rooms):
                await watcher.request({"type": "create_room", "game": "connect4", "options": {},
                                       "seats": [hard, hard]})

            bot_rtts: list[float] = []
            bot_lags: list[float] = []
            stop = asyncio.Event()
            probe = asyncio.create_task(lag_probe(stop, bot_lags))
            bot_moves = await _pvp_load(url, games, seconds, 2, bot_rtts)
            stop.set()
            await probe
            bot_plies = sum(r.room.ply for r in srv.hub.rooms.values()
                            if r.room.seats[0].kind == "bot")
            await watcher.close()
        finally:
            await srv.close()

    def ms(name: str, value: float, note: str) -> Figure:
        return {"name": f"server: {name}", "value": round(value, 3), "unit": "ms", "note": note}

    people = f"{games} concurrent person-vs-person games (tic-tac-toe, Connect-4)"
    busy = f"{people}, while {bot_rooms} bot-vs-bot Connect-4 rooms (hard) think"
    return [
        {"name": "server: moves, people only", "value": round(idle_moves / idle_elapsed, 1),
         "unit": "moves/s", "note": f"{people}; each move fsynced before its update"},
        ms("move round trip p50", statistics.median(idle_rtts), f"{people}; move → own update"),
        ms("move round trip p99", percentile(idle_rtts, 99), f"{people}; move → own update"),
        ms("event-loop lag p99", percentile(idle_lags, 99), f"{people}; 10 ms sleep overshoot"),
        ms("move round trip p50, bots thinking", statistics.median(bot_rtts), busy),
        ms("move round trip p99, bots thinking", percentile(bot_rtts, 99), busy),
        ms("event-loop lag p50, bots thinking", percentile(bot_lags, 50),
           f"{busy}; 10 ms sleep overshoot"),
        ms("event-loop lag p99, bots thinking", percentile(bot_lags, 99),
           f"{busy}; 10 ms sleep overshoot"),
        ms("event-loop lag max, bots thinking", max(bot_lags, default=float("nan")),
           f"{busy}; 10 ms sleep overshoot"),
        {"name": "server: bot plies during the run", "value": bot_plies, "unit": "plies",
         "note": f"{bot_rooms} hard Connect-4 rooms, 2 bot workers, {bot_moves} people's moves,"
                 f" {watched[0]} messages to their spectator"},
    ]


def run_server_bench(quick: bool = False) -> list[Figure]:
    """The server's figures as ``{name, value, unit, note}`` (quick: under 5 s)."""
    return asyncio.run(_bench(quick))


def main(argv: list[str] | None = None) -> int:
    """``python -m server.server_bench [--quick]``: the server's figures alone (``tablas bench``
    runs the engine's too)."""
    import sys

    quick = "--quick" in (sys.argv[1:] if argv is None else argv)
    for fig in run_server_bench(quick=quick):
        print(f"{fig['name']:<45} {fig['value']:>10} {fig['unit']:<8} {fig['note']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
