"""The cluster's benchmark (not shipped): moves/s, p99 and CPU per move, one SQLite node beside
1, 2 and 3 cluster nodes (PostgreSQL and Redis), in the same run on the same machine.

    python -m tools.cluster_bench [--games 40 --seconds 10 --rounds 5 --separate 3]

Each configuration has servers of its own, all started before the first is measured: a
``tablas serve`` on a SQLite file; with ``--separate N``, N more that share nothing, each
game on the server its creator drew (what N servers cost on this machine with no cluster,
which the cluster's figure is also compared with); for each cluster size, a PostgreSQL
cluster (``initdb`` in a temporary folder, as the tests make it: ``tests/pg_support.py``) and
a ``redis-server`` (``tests/redis_support.py``), PostgreSQL with ``fsync`` on (unlike the
tests' cluster), with 1, 2 or 3 ``tablas serve --redis`` nodes. After a second's warm-up
each, the configurations play in turn, ``--rounds`` windows each of ``--seconds / --rounds``
(the order reversed every other round): this machine's speed drifts over a minute, and a
ratio between two configurations measured one after the other drifts with it; windows in
turn share the drift.
``--games`` game loops play Connect-4 and tic-tac-toe person against person (random legal
moves, as fast as answers come) for ``--seconds``. Where the players sit (``--placement``):
``random`` (the default), each connection on a node drawn at random, as a load balancer
without stickiness places them (a third of the games on one node when there are three);
``split``, each game's two players on different nodes (player 0 on node i, who creates the
room and so owns it, player 1 on node i + 1): every other move is forwarded and every update
fanned out across nodes, the worst case; ``together``, both players of a game on one node
drawn at random, no move forwarded: what sending players to their room's node would reach.
``--connections persistent`` (the default): each
player keeps one connection for the whole run, as a person at the page does; ``per-game``:
two new connections (``hello`` included) for every game. ``--hints follow`` (the default):
the nodes have their ``--public-url``, and a player told that its room lives on another node
(``owner``, docs/protocol.md) connects there before its next move, as a program following
the hint does; ``ignore``: no public URLs, every command for a room of another node is
forwarded (how a node's server ran before the hint; the page still does).

Per configuration: moves/s, the acknowledged move's p50/p99 (``move`` sent → the mover's own
``update``), and the CPU seconds per move of every server process, read from /proc (user +
system, with their reaped children): the nodes, PostgreSQL's (the postmaster and its
backends), Redis; the load generator's own is shown apart; and the ratio of the servers' CPU
per move to the single SQLite node's of the same run (and a cluster's to as many separate
servers'). docs/benchmarks.md has figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the tests' PostgreSQL and Redis (not shipped)

from pg_support import Cluster, pg_bin  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402
from redis_support import RedisServer  # noqa: E402
from server_support import Subprocess, http_base  # noqa: E402
from tablas.server.client import ProtocolClient, Refused  # noqa: E402
from tablas.server.loop import run as run_loop  # noqa: E402
from tablas.server.server_bench import percentile, pvp_game  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid`` and of its reaped children (/proc/PID/stat)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICKS


def descendants(pid: int) -> list[int]:
    """``pid`` and every process under it."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_of(pids: list[int]) -> float:
    return sum(cpu_seconds(p) for root in pids for p in descendants(root))


class Player:
    """A player of a game loop on the connection it keeps, and where the server said its
    rooms live (``owner``, docs/protocol.md "Several nodes")."""

    def __init__(self, name: str, follow: bool) -> None:
        self.name = name
        self.follow = follow
        self.url = ""
        self.conn: ProtocolClient | None = None
        self.owners: dict[str, str] = {}  # room -> the URL of its node, as told
        self.moved = 0  # times it connected to a room's node, as told

    async def open(self, url: str, token: str | None = None) -> ProtocolClient:
        self.url = url
        self.conn = await ProtocolClient.open(url, self.name, token, on_message=self._heard)
        return self.conn

    def _heard(self, m: dict[str, Any], _t: float) -> None:
        if m.get("type") == "owner":
            self.owners[m["room_id"]] = m["url"]

    async def to_owner(self, room: str) -> dict[str, Any] | None:
        """Connected to ``room``'s node if told of it (and following hints): a new
        connection with the player's token, the seat joined again; the room's snapshot."""
        url = self.owners.pop(room, None)
        if not self.follow or url is None or url == self.url or self.conn is None:
            return None
        old = self.conn
        assert old.welcome is not None
        new = await self.open(url, old.welcome["token"])
        snap = await new.request({"type": "join", "room_id": room})
        await old.close()
        self.moved += 1
        return snap

    async def close(self) -> None:
        if self.conn is not None:
            await self.conn.close()


async def kept_game(players: tuple[Player, Player], game: str, rng: random.Random,
                    rtts: list[float]) -> int:
    """One game between two players on connections they keep (``pvp_game`` opens its own):
    each message is picked by its room, since the connections saw the games before; a
    player told that the room lives on another node moves there before its turn; the moves
    played (a refused move ends the game early: the room may move between nodes)."""
    a, b = (p.conn for p in players)
    assert a is not None and b is not None
    created = await a.request({"type": "create_room", "game": game, "options": {},
                               "seats": [{"kind": "human"}, {"kind": "human"}],
                               "join_seat": 0})
    room = created["room_id"]
    await b.request({"type": "join", "room_id": room, "seat": 1})
    view = await a.next_of(lambda m: m.get("type") == "room" and m.get("room_id") == room
                           and m.get("status") == "playing")
    views, moves = {0: view}, 0
    while view["status"] == "playing":
        seat = view["to_move"]
        snap = await players[seat].to_owner(room)
        if snap is not None:
            views[seat] = snap
        mover, other = players[seat].conn, players[1 - seat].conn
        assert mover is not None and other is not None
        t0 = time.perf_counter()
        try:
            answer = await mover.request({
                "type": "move", "room_id": room, "ply": view["ply"],
                "move": rng.choice(views[seat]["legal_moves"])})
        except Refused:
            return moves
        rtts.append((time.perf_counter() - t0) * 1000)
        moves += 1
        heard = await other.next_of(
            lambda m, ply=answer["ply"]: m.get("type") == "update"
            and m.get("room_id") == room and m.get("ply") == ply)
        views, view = {seat: answer, 1 - seat: heard}, answer
    return moves


class Table:
    """The game loops of one configuration, kept from one measured window to the next (the
    players' connections too, with ``persistent``): where each player sits (``placement``),
    and whether a player told ``owner`` moves (``follow``)."""

    def __init__(self, urls: list[str], games: int, placement: str, persistent: bool,
                 follow: bool, seed: int = 1) -> None:
        self.urls, self.games, self.placement = urls, games, placement
        self.persistent, self.follow = persistent, follow
        self._place = random.Random(seed)
        # game loops (connections kept) or games (connections per game) whose two players
        # are on different nodes
        self.split = 0
        self.players: list[tuple[Player, Player]] = []
        self.rngs = [random.Random(i) for i in range(games)]

    def _seats(self, i: int) -> tuple[str, str]:
        """Where game loop ``i``'s two players connect (the creator first)."""
        urls = self.urls
        if self.placement == "split":
            seats = urls[i % len(urls)], urls[(i + 1) % len(urls)]
        elif self.placement == "together":  # both players on one node drawn at random
            seats = (self._place.choice(urls),) * 2
        else:
            seats = self._place.choice(urls), self._place.choice(urls)
        self.split += seats[0] != seats[1]
        return seats

    @property
    def moved(self) -> int:
        """Times a player moved to its room's node, as told (``owner``)."""
        return sum(p.moved for pair in self.players for p in pair)

    async def open(self) -> None:
        if not self.persistent:
            return
        for i in range(self.games):
            url_a, url_b = self._seats(i)
            a, b = Player(f"bench-a{i}", self.follow), Player(f"bench-b{i}", self.follow)
            await a.open(url_a)
            await b.open(url_b)
            self.players.append((a, b))

    async def play(self, seconds: float) -> tuple[int, list[float]]:
        """Every game loop plays games for ``seconds`` (a game under way is played to its
        end): the moves and their round trips."""
        rtts: list[float] = []
        end = time.perf_counter() + seconds

        async def loop(i: int) -> int:
            rng, n = self.rngs[i], 0
            kind = ("connect4", "tictactoe")[i % 2]
            while time.perf_counter() < end:
                if self.persistent:
                    n += await kept_game(self.players[i], kind, rng, rtts)
                else:
                    url_a, url_b = self._seats(i)
                    n += await pvp_game(url_a, kind, rng, rtts, other_url=url_b,
                                        refused_ends_game=True)
            return n

        return sum(await asyncio.gather(*(loop(i) for i in range(self.games)))), rtts

    async def close(self) -> None:
        for a, b in self.players:
            await a.close()
            await b.close()


def commits(urls: list[str]) -> int:
    """The group commits the nodes at ``urls`` made so far (their ``/metrics``)."""
    total = 0.0
    for url in urls:
        page = urllib.request.urlopen(http_base(url) + "/metrics", timeout=10).read().decode()
        total += sum(sample.value for family in text_string_to_metric_families(page)
                     for sample in family.samples
                     if sample.name == "tablas_store_commit_seconds_count")
    return int(total)


def own_cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


@dataclass
class Config:
    """One configuration measured: its nodes' URLs and its server processes by part."""

    name: str
    urls: list[str]
    servers: dict[str, list[int]]
    # where the players sit, when not as the run says: separate servers share no room, so
    # both players of a game sit on the server its creator drew
    placement: str | None = None
    moves: int = 0
    wall: float = 0.0
    commits: int = 0
    load_cpu: float = 0.0
    rtts: list[float] = field(default_factory=list)
    cpu: dict[str, float] = field(default_factory=dict)

    async def window(self, table: Table, seconds: float) -> None:
        """One measured window: its moves, round trips, time and CPU added to the totals."""
        commits_before = commits(self.urls)
        before = {k: cpu_of(v) for k, v in self.servers.items()}
        mine = own_cpu()
        t0 = time.perf_counter()
        moves, rtts = await table.play(seconds)
        self.wall += time.perf_counter() - t0
        self.load_cpu += own_cpu() - mine
        for k, v in self.servers.items():
            self.cpu[k] = self.cpu.get(k, 0.0) + cpu_of(v) - before[k]
        self.commits += commits(self.urls) - commits_before
        self.moves += moves
        self.rtts += rtts

    def report(self, table: Table, rounds: int) -> dict[str, Any]:
        moves = max(self.moves, 1)
        return {
            "config": self.name, "servers": len(self.urls),
            "cluster": "postgresql" in self.servers, "placement": table.placement,
            "hints": "follow" if table.follow else "ignore",
            "connections": "persistent" if table.persistent else "per-game",
            "rounds": rounds, "split_games": table.split, "moved_to_owner": table.moved,
            "moves": self.moves, "moves_per_s": round(self.moves / max(self.wall, 1e-9), 1),
            "moves_per_commit": round(self.moves / max(self.commits, 1), 2),
            "p50_ms": round(percentile(self.rtts, 50), 2),
            "p99_ms": round(percentile(self.rtts, 99), 2),
            "cpu_ms_per_move": {k: round(v / moves * 1000, 3) for k, v in self.cpu.items()},
            "servers_cpu_ms_per_move": round(sum(self.cpu.values()) / moves * 1000, 3),
            "load_generator_cpu_ms_per_move": round(self.load_cpu / moves * 1000, 3),
        }


async def measure(configs: list[Config], games: int, seconds: float, rounds: int,
                  placement: str, persistent: bool, follow: bool) -> list[dict[str, Any]]:
    """Every configuration's tables warmed up, then ``rounds`` rounds in which each
    configuration plays a window of ``seconds / rounds`` in turn (the order reversed every
    other round), so that a slow spell of the machine falls on all of them alike."""
    tables = [Table(c.urls, games, c.placement or placement, persistent, follow)
              for c in configs]
    try:
        for t in tables:
            await t.open()
            await t.play(1.0)
            if not t.persistent:  # the measured games only
                t.split = 0
        for r in range(rounds):
            order = list(zip(configs, tables, strict=True))
            for config, table in order if r % 2 == 0 else order[::-1]:
                await config.window(table, seconds / rounds)
    finally:
        for t in tables:
            await t.close()
    return [c.report(t, rounds) for c, t in zip(configs, tables, strict=True)]


@contextmanager
def started(procs: list[Subprocess]) -> Iterator[None]:
    try:
        for p in procs:
            p.start()
        yield
    finally:
        for p in procs:
            p.terminate()


def run(games: int, seconds: float, placement: str = "random", persistent: bool = True,
        nodes_counts: tuple[int, ...] = (1, 2, 3), follow: bool = True, rounds: int = 1,
        separate: tuple[int, ...] = ()) -> list[dict[str, Any]]:
    """Every configuration started at once, each on servers of its own, then measured in
    turn (:func:`measure`); a row per configuration, the single SQLite node's first, then
    ``separate``'s: that many SQLite servers that know nothing of each other, each game on
    one of them (what running that many servers on this machine costs, with no cluster),
    then the clusters'."""
    # Every player connects from 127.0.0.1: the limits per address are lifted.
    args = ["--max-msgs-per-address", "0", "--max-conns-per-address", "0",
            "--max-rooms-per-address", "0", "--abandon-after", "0"]
    with tempfile.TemporaryDirectory(prefix="tablas-cluster-bench-") as tmp_text, \
            ExitStack() as stack:
        tmp = Path(tmp_text)
        single = Subprocess(tmp / "single.db", tmp / "single.log", args=args)
        stack.enter_context(started([single]))
        assert single.proc is not None
        configs = [Config("sqlite, 1 node", [single.url], {"node": [single.proc.pid]})]
        for n in separate:
            servers = [Subprocess(tmp / f"separate{n}-{i}.db", tmp / f"separate{n}-{i}.log",
                                  args=args) for i in range(n)]
            stack.enter_context(started(servers))
            configs.append(Config(f"sqlite, {n} separate servers", [p.url for p in servers],
                                  {"servers": [p.proc.pid for p in servers
                                               if p.proc is not None]},
                                  placement="together"))
        bin_dir = pg_bin()
        if bin_dir is None:
            print("PostgreSQL is not installed: the cluster's rows are left out",
                  file=sys.stderr)
            nodes_counts = ()
        for n in nodes_counts:
            assert bin_dir is not None
            pg = Cluster(bin_dir, fsync=True)  # durable, as SQLite's synchronous=FULL
            pg.start()
            stack.callback(pg.stop)
            folder = tmp / f"redis{n}"
            folder.mkdir()
            redis = RedisServer("/usr/bin/redis-server", folder)
            redis.start()
            stack.callback(redis.stop)
            url = pg.new_database()
            nodes = [Subprocess(url, tmp / f"node{n}-{i}.log",
                                args=[*args, "--redis", redis.url, "--node", f"n{i}"])
                     for i in range(n)]
            for p in nodes if follow else ():  # where clients reach it (``owner``)
                p.args += ["--public-url", p.url]
            stack.enter_context(started(nodes))
            postmaster = int((pg.data / "postmaster.pid").read_text().split()[0])
            assert redis.proc is not None
            configs.append(Config(
                f"postgresql + redis, {n} node(s)", [p.url for p in nodes],
                {"nodes": [p.proc.pid for p in nodes if p.proc is not None],
                 "postgresql": [postmaster], "redis": [redis.proc.pid]}))
        results = run_loop(measure(configs, games, seconds, rounds, placement, persistent,
                                   follow))
    single_cpu = results[0]["servers_cpu_ms_per_move"]
    apart = {r["servers"]: r["servers_cpu_ms_per_move"] for r in results[1:]
             if not r["cluster"]}
    for r in results:
        r["vs_single_node"] = round(r["servers_cpu_ms_per_move"] / max(single_cpu, 1e-9), 2)
        if r["cluster"] and r["servers"] in apart:  # what the cluster adds to its servers
            r["vs_separate"] = round(r["servers_cpu_ms_per_move"]
                                     / max(apart[r["servers"]], 1e-9), 2)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=40, help="game loops at once")
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="each configuration's measured time, over all rounds")
    parser.add_argument("--rounds", type=int, default=5,
                        help="windows per configuration, the configurations in turn")
    parser.add_argument("--placement", choices=("random", "split", "together"),
                        default="random",
                        help="each connection on a node drawn at random, each game's players"
                        " on different nodes, or both on one node drawn at random")
    parser.add_argument("--connections", choices=("persistent", "per-game"),
                        default="persistent", help="one connection per player for the run,"
                        " or two new ones for every game")
    parser.add_argument("--hints", choices=("follow", "ignore"), default="follow",
                        help="a player told that its room lives on another node (owner)"
                        " connects there before its next move, or stays where it is")
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 3],
                        help="the cluster's sizes measured")
    parser.add_argument("--separate", type=int, nargs="*", default=[],
                        help="also this many SQLite servers that share nothing, each game"
                        " on one of them: what so many servers cost here without a cluster")
    parser.add_argument("--json", action="store_true", help="print JSON lines")
    args = parser.parse_args()
    for r in run(args.games, args.seconds, args.placement, args.connections == "persistent",
                 tuple(args.nodes), args.hints == "follow", max(1, args.rounds),
                 tuple(args.separate)):
        if args.json:
            print(json.dumps(r), flush=True)
        else:
            print(f"{r['config']:28} {r['moves_per_s']:8.1f} moves/s  p50 {r['p50_ms']:6.2f}"
                  f" ms  p99 {r['p99_ms']:7.2f} ms  servers' CPU"
                  f" {r['servers_cpu_ms_per_move']:6.3f} ms/move {r['cpu_ms_per_move']}"
                  f" = {r['vs_single_node']}x the single node"
                  + (f" ({r['vs_separate']}x as many separate servers)"
                     if "vs_separate" in r else "") + "; split games"
                  f" {r['split_games']}, moved to the room's node {r['moved_to_owner']};"
                  f" {r['moves_per_commit']} moves a commit (load generator"
                  f" {r['load_generator_cpu_ms_per_move']} ms/move)",
                  flush=True)


if __name__ == "__main__":
    main()
