"""The ``tablas`` command line (contract section 1).

Bad input is reported as one line on stderr with exit code 2, never as a traceback: every
error the engine raises on purpose is a :class:`~tablas.engine.errors.TablasError`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from tablas.engine.core import JSON, Game
from tablas.engine.errors import InvalidInputError, TablasError
from tablas.engine.games import GAME_IDS, get_game
from tablas.engine.positions import position_state
from tablas.server.errors import StartupError
from tablas.server.loop import LOOPS, loop_in_use
from tablas.server.loop import run as run_on_loop

if TYPE_CHECKING:
    from tablas.server.store import Database


DB_HELP = ("the database: a SQLite file (default tablas.sqlite3), sqlite:///PATH, or "
           "postgresql://USER[:PASSWORD]@HOST[:PORT]/NAME (pip install 'tablas[cluster]')")


class CliError(Exception):
    """Bad command-line input outside the engine (a missing file, a bad option)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}\n")


def list_moves(game: Game[Any, Any], position: str, dice: str | None) -> JSON:
    """The contract's ``tablas moves --json`` object for one position, plus ``outcome``: the
    game's result once it is over (no moves then), else null."""
    state = position_state(game, position, dice)
    moves = [
        {
            "move": game.move_to_json(m),
            "move_text": game.move_text(state, m),
            "result": game.position_text(game.apply(state, m)),
        }
        for m in game.legal_moves(state)
    ]
    outcome = game.outcome(state)
    return {"game": game.id, "position": position, "moves": moves,
            "outcome": None if outcome is None else outcome.to_json()}


def outcome_text(outcome: JSON) -> str:
    """A finished game's result (an ``outcome`` of the JSON output) for a person."""
    if outcome["winner"] is None:
        return f"the game is over: a draw ({outcome['reason']})"
    points = outcome["points"]
    return (f"the game is over: seat {outcome['winner']} won ({outcome['reason']}, "
            f"{points} point{'' if points == 1 else 's'})")


def _print_moves_text(out: JSON, stream: TextIO) -> None:
    moves = out["moves"]
    over = "" if out["outcome"] is None else f"; {outcome_text(out['outcome'])}"
    print(f"{out['game']} {out['position']}: {len(moves)} legal move(s){over}", file=stream)
    width = max((len(m["move_text"]) for m in moves), default=0)
    for m in moves:
        print(f"  {m['move_text']:<{width}}  -> {m['result']}", file=stream)


def batch_lines(path: str) -> Iterator[str]:
    """The lines of ``path`` (``-`` is stdin), without their line ends."""
    if path == "-":
        yield from (line.rstrip("\r\n") for line in sys.stdin)
        return
    try:
        with open(path, encoding="utf-8") as f:
            yield from (line.rstrip("\r\n") for line in f)
    except OSError as e:
        raise CliError(f"cannot read batch file {path!r}: {e.strerror}") from None


def split_batch_line(game: Game[Any, Any], line: str) -> tuple[str, str | None]:
    """``POSITION [DICE]``: an empty line is the empty position (Connect-4's start)."""
    parts = line.split()
    limit = 2 if game.has_chance else 1
    if len(parts) > limit:
        want = "POSITION [DICE]" if game.has_chance else "POSITION"
        raise InvalidInputError(f"{game.id}: batch line {line!r} must be {want}")
    return (parts[0] if parts else "", parts[1] if len(parts) > 1 else None)


def run_batch(
    game: Game[Any, Any], lines: Iterable[str], one: Callable[[str, str | None], JSON]
) -> int:
    """One JSON line per input line, in order; a bad line gets an ``error`` line, exit 2."""
    status = 0
    for line in lines:
        try:
            position, dice = split_batch_line(game, line)
            out = one(position, dice)
        except TablasError as e:
            status = 2
            print(f"tablas: {e}", file=sys.stderr)
            out = {"game": game.id, "position": line.strip(), "error": str(e)}
        print(json.dumps(out), flush=False)
    sys.stdout.flush()
    return status


def cmd_moves(args: argparse.Namespace) -> int:
    game = get_game(args.game)
    if args.batch is not None:
        if args.position is not None or args.dice is not None:
            raise CliError("--batch reads positions and dice from the file, not the command line")
        return run_batch(game, batch_lines(args.batch), lambda p, d: list_moves(game, p, d))
    if args.position is None:
        raise CliError("give a POSITION or --batch FILE")
    out = list_moves(game, args.position, args.dice)
    if args.json:
        print(json.dumps(out))
    else:
        _print_moves_text(out, sys.stdout)
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    from tablas.engine.search.analysis import analyze

    game = get_game(args.game)

    def one(position: str, dice: str | None) -> JSON:
        state = position_state(game, position, dice)
        return analyze(game, state, position, args.depth, args.time_ms, args.level)

    if args.batch is not None:
        if args.position is not None or args.dice is not None:
            raise CliError("--batch reads positions and dice from the file, not the command line")
        return run_batch(game, batch_lines(args.batch), one)
    if args.position is None:
        raise CliError("give a POSITION or --batch FILE")
    out = one(args.position, args.dice)
    if args.json:
        print(json.dumps(out))
    elif out["outcome"] is not None:
        _print_game_over(out)
    else:
        proof = f" ({out['proven']} in {out['distance']})" if out["proven"] else ""
        print(f"best {out['best_move_text']}  score {out['score']}{proof}")
        print(f"pv   {' '.join(out['pv'])}")
        print(f"depth {out['depth']}  nodes {out['nodes']}  time {out['time_ms']} ms")
        for t in out["top"]:
            print(f"  {t['move_text']:<16} {t['score']}")
    return 0


def _print_game_over(out: JSON) -> None:
    """``tablas analyze`` on a finished position, in words: who won, and what that is for
    the side whose turn it would be."""
    outcome, proven = out["outcome"], out["proven"]
    print(f"{out['game']} {out['position']}: {outcome_text(outcome)}")
    if proven == "draw":
        side = "for both sides"
    else:  # the winner's seat, or the other one when the side to move has lost
        seat = outcome["winner"] if proven == "win" else 1 - outcome["winner"]
        side = f"for seat {seat}, whose turn it would be"
    print(f"no move: {proven} {side}  score {out['score']}  distance 0")
    print(f"depth {out['depth']}  nodes {out['nodes']}  time {out['time_ms']} ms")


def cmd_explain(args: argparse.Namespace) -> int:
    from tablas.engine.explain import explain, to_dot, to_json, to_text

    e = explain(args.game, args.position, args.dice, args.algorithm, args.depth, args.order,
                args.branching, args.seed, args.max_nodes)
    if args.json:
        print(json.dumps(to_json(e)))
    elif args.dot:
        sys.stdout.write(to_dot(e))
    else:
        print(to_text(e))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from tablas.engine.bench import run_benchmarks
    from tablas.server.server_bench import run_server_bench

    results = run_benchmarks(quick=args.quick, progress=None if args.json else sys.stderr)
    # The engine may not import the server, so the server's figures are added here.
    results += run_server_bench(args.quick)
    if args.json:
        print(json.dumps({"benchmarks": results}))
    else:
        for r in results:
            print(f"{r['name']:<48} {r['value']:>14,.1f} {r['unit']}  {r.get('note', '')}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import logging

    from tablas.server.app import run
    from tablas.server.edge.http import API_RATE
    from tablas.server.edge.websocket import MAX_CONNS_PER_ADDRESS, MAX_MSGS_PER_ADDRESS

    if args.bot_workers is not None and args.bot_workers < 1:
        raise CliError("--bot-workers must be at least 1")
    if not 0 <= args.port <= 65535:
        raise CliError("--port must be 0..65535")
    if args.arena_minute_s <= 0:
        raise CliError("--arena-minute-s must be more than 0")
    per_address = args.max_conns_per_address
    if per_address is None:
        per_address = MAX_CONNS_PER_ADDRESS
    elif per_address < 0:
        raise CliError("--max-conns-per-address must be 0 (no limit) or more")
    msgs = args.max_msgs_per_address
    if msgs is None:
        msgs = MAX_MSGS_PER_ADDRESS
    elif not 0 <= msgs < float("inf"):  # NaN fails this too
        raise CliError("--max-msgs-per-address must be 0 (no limit) or a positive number")
    api = args.max_api_per_address
    if api is None:
        api = API_RATE
    elif not 0 <= api < float("inf"):  # NaN fails this too
        raise CliError("--max-api-per-address must be 0 (no limit) or a positive number")
    if not 0 <= args.abandon_after < float("inf"):
        raise CliError("--abandon-after must be 0 (rooms never end) or more seconds")
    if not 0 <= args.claim_after < float("inf"):
        raise CliError("--claim-after must be 0 (at once) or more seconds")
    if args.max_rooms_per_address < 0:
        raise CliError("--max-rooms-per-address must be 0 (no limit) or more")
    if not 0 <= args.keep_adjourned < float("inf"):
        raise CliError("--keep-adjourned must be 0 (kept for ever) or more days")
    if not 0.3 <= args.lease_s < float("inf"):
        raise CliError("--lease-s must be at least 0.3 seconds")
    if args.node is not None and not re.fullmatch(r"[A-Za-z0-9_.:-]{1,64}", args.node):
        raise CliError("--node must be 1-64 letters, digits or _ . : -")
    if args.redis is not None and not args.redis.startswith(("redis://", "rediss://",
                                                              "unix://")):
        raise CliError(f"--redis {args.redis!r}: a URL redis://HOST:PORT/N")
    if args.public_url is not None:
        if args.redis is None:
            raise CliError("--public-url names a node of a cluster: give --redis too")
        if not re.fullmatch(r"wss?://[^\s/?#]+(/[^\s?#]*)?", args.public_url):
            raise CliError(f"--public-url {args.public_url!r}: a URL ws://HOST:PORT/ws or"
                           " wss://HOST/PATH")
    from tablas.server.edge.networks import LOOPBACK, parse_networks

    metrics_allow = args.metrics_allow if args.metrics_allow is not None else list(LOOPBACK)
    try:
        parse_networks(metrics_allow)
    except ValueError as e:
        raise CliError(f"--metrics-allow: {e}") from None
    try:
        parse_networks(args.shared_address_ok)
    except ValueError as e:
        raise CliError(f"--shared-address-ok: {e}") from None
    try:
        loop = loop_in_use(args.loop)
    except ImportError:
        raise CliError("--loop uvloop: uvloop is not installed (pip install uvloop)") from None
    from tablas.server import logs

    logs.configure(args.log_level, args.log_json)
    import sqlite3

    from tablas.server.store import BadDatabase

    database = _database(args.db)
    if args.redis is not None and database.kind != "postgresql":
        raise CliError("--redis runs a node of a cluster, whose nodes share a PostgreSQL "
                       "database: give --db postgresql://…")
    logging.getLogger("tablas.server").info("event loop: %s", loop)
    try:
        run_on_loop(run(args.host, args.port, database, args.bot_workers, args.allow_origin,
                        per_address or None, max_msgs_per_address=msgs or None,
                        max_api_per_address=api or None,
                        abandon_after=args.abandon_after or None,
                        keep_adjourned=args.keep_adjourned * 86400 or None,
                        node=args.node, redis=args.redis, lease_s=args.lease_s,
                        claim_after=args.claim_after,
                        max_rooms_per_address=args.max_rooms_per_address or None,
                        metrics_allow=metrics_allow, public_url=args.public_url,
                        shared_address_ok=args.shared_address_ok,
                        arena_minute_s=args.arena_minute_s,
                        review_ahead=args.review_ahead == "on"), loop)
    except sqlite3.Error as e:
        raise CliError(f"cannot use the database {args.db!r}: {e}") from None
    except (StartupError, BadDatabase) as e:
        raise CliError(str(e)) from None
    return 0


def _database(text: str) -> Database:
    """``--db``'s text as a database, or a :class:`CliError` naming the accepted forms (or
    why a SQLite file cannot be opened: said before anything starts)."""
    import sqlite3

    from tablas.server.store import BadDatabase, parse_database

    try:
        database = parse_database(text)
    except BadDatabase as e:
        raise CliError(str(e)) from None
    if database.kind == "sqlite":
        try:
            sqlite3.connect(database.target).close()
        except sqlite3.Error as e:
            raise CliError(f"cannot use the database {text!r}: {e}") from None
    return database


def cmd_migrate(args: argparse.Namespace) -> int:
    """Applies the migrations to the database and exits, printing its schema version."""
    import asyncio
    import sqlite3

    from tablas.server.store import BadDatabase, open_store

    database = _database(args.db)

    async def migrate() -> int:
        store = await open_store(database)
        try:
            return await store.schema_version()
        finally:
            await store.close()

    try:
        version = asyncio.run(migrate())
    except sqlite3.Error as e:
        raise CliError(f"cannot use the database {args.db!r}: {e}") from None
    except (StartupError, BadDatabase) as e:
        raise CliError(str(e)) from None
    print(f"schema version {version}")
    return 0


def cmd_bot(args: argparse.Namespace) -> int:
    """``tablas bot``: a bot account played by an engine program until stopped."""
    import asyncio
    import logging
    import signal

    from tablas.server.bot_adapter import contain
    from tablas.server.bot_adapter.engine import EngineFailed, check
    from tablas.server.bot_adapter.options import BadOption, read_options
    from tablas.server.bot_adapter.session import Fatal, Session

    contain.take_charge()  # what an engine starts stays ours to end (contract section 15)
    try:
        opts = read_options(args.server, args.name, args.password, args.engine, args.games,
                            args.accept, args.seek, args.clock, args.max_games,
                            args.challenge, args.tournament)
        asyncio.run(check(opts.engine))
    except BadOption as e:
        raise CliError(str(e)) from None
    except EngineFailed as e:
        raise CliError(f"--engine {args.engine!r}: the engine {e}") from None
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("tablas bot: %(message)s"))
    bot_log = logging.getLogger("tablas.bot")
    bot_log.addHandler(handler)
    bot_log.setLevel(logging.INFO)
    bot_log.propagate = False

    async def run() -> None:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        await Session(opts, sys.stdout).run()

    try:
        asyncio.run(run())
    except asyncio.CancelledError:
        return 0  # stopped (SIGTERM, Ctrl-C): the games' engines were let go
    except Fatal as e:
        raise CliError(str(e)) from None
    return 0


def cmd_match(args: argparse.Namespace) -> int:
    """``tablas match``: engines and house levels play each other (server/match/)."""
    from tablas.server.match.command import MatchError, run

    try:
        return run(args)
    except MatchError as e:
        raise CliError(str(e)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tablas", description="Tablas: classic board games, bots and a server.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("moves", help="list every legal move of a position")
    p.add_argument("game", help=f"one of {', '.join(GAME_IDS)}")
    p.add_argument("position", nargs="?", help="the position in the game's notation")
    p.add_argument("--dice", help="the roll, e.g. 31 (backgammon)")
    p.add_argument("--json", action="store_true", help="print JSON (docs/cli.md)")
    p.add_argument("--batch", metavar="FILE", help="one position per line ('-' for stdin)")
    p.set_defaults(run=cmd_moves)

    p = sub.add_parser("analyze", help="search a position and print the engine's verdict")
    p.add_argument("game", help=f"one of {', '.join(GAME_IDS)}")
    p.add_argument("position", nargs="?", help="the position in the game's notation")
    p.add_argument("--dice", help="the roll, e.g. 31 (backgammon)")
    p.add_argument("--depth", type=int, help="search depth in plies")
    p.add_argument("--time-ms", type=float, help="thinking time in milliseconds")
    p.add_argument("--level", help="search as this bot level does (random ... max)")
    p.add_argument("--json", action="store_true", help="print JSON (docs/cli.md)")
    p.add_argument("--batch", metavar="FILE", help="one position per line ('-' for stdin)")
    p.set_defaults(run=cmd_analyze)

    p = sub.add_parser("explain", help="draw the search tree of a position (or a random tree) "
                       "as minimax or alpha-beta walks it (docs/explain.md)")
    p.add_argument("game", help=f"random, or one of {', '.join(GAME_IDS)}")
    p.add_argument("position", nargs="?", help="the position in the game's notation "
                   "(default: the start)")
    p.add_argument("--dice", help="the roll, e.g. 31 (backgammon; without it, the tree starts "
                   "before the roll)")
    p.add_argument("--algorithm", choices=("minimax", "alphabeta"), default="alphabeta",
                   help="the search (default alphabeta)")
    p.add_argument("--depth", type=int, help="plies (default 3; 1 for backgammon)")
    p.add_argument("--order", choices=("left", "right", "best", "worst"), default="left",
                   help="the order children are tried in (default left)")
    p.add_argument("--max-nodes", type=int, default=5000, metavar="N",
                   help="refuse a larger tree (default 5000)")
    p.add_argument("--branching", type=int, help="random tree: children per node (default 3)")
    p.add_argument("--seed", type=int, help="random tree: the leaves' seed (default 0)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print JSON (docs/cli.md)")
    fmt.add_argument("--dot", action="store_true", help="print Graphviz DOT")
    p.set_defaults(run=cmd_explain)

    p = sub.add_parser("serve", help="run the game server (WebSocket and HTTP on one port)")
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    p.add_argument("--port", type=int, default=8765, help="the port to listen on")
    p.add_argument("--db", default="tablas.sqlite3", metavar="PATH|URL", help=DB_HELP)
    p.add_argument("--bot-workers", type=int, default=None, metavar="N",
                   help="bot worker processes (default: the number of CPUs)")
    p.add_argument("--allow-origin", action="append", default=None, metavar="ORIGIN",
                   help="a web page origin allowed to open /ws, e.g. https://games.example "
                        "(repeatable; default: any; pages of this server are always allowed)")
    # The default is the server's (64); server.app is not imported for every command.
    p.add_argument("--max-conns-per-address", type=int, default=None, metavar="N",
                   help="open WebSockets allowed per client address (default: 64; "
                        "0: no limit, e.g. behind a proxy that connects for everyone)")
    p.add_argument("--max-msgs-per-address", type=float, default=None, metavar="R",
                   help="WebSocket messages a second per client address, over all of its "
                        "connections, handshakes included (default: 100; 0: no limit)")
    p.add_argument("--max-api-per-address", type=float, default=None, metavar="R",
                   help="/api/ requests a second per client address, with bursts of 3 "
                        "seconds' worth (default: 20; 0: no limit)")
    p.add_argument("--abandon-after", type=float, default=120.0, metavar="S",
                   help="seconds without a connection after which a person is absent: their "
                        "game is won by the present player or adjourned, their waiting room "
                        "closed (default: 120; 0: rooms never end)")
    p.add_argument("--claim-after", type=float, default=30.0, metavar="S",
                   help="seconds an opponent must have been away before the present player "
                        "may claim the game (claim_win; default: 30; 0: at once)")
    p.add_argument("--max-rooms-per-address", type=int, default=40, metavar="N",
                   help="rooms waiting or in play that one client address may have opened, "
                        "over all of its players (default: 40; 0: no limit)")
    p.add_argument("--keep-adjourned", type=float, default=30.0, metavar="DAYS",
                   help="days an adjourned game waits to be resumed before it ends as "
                        "expired (default: 30; 0: for ever)")
    p.add_argument("--redis", default=None, metavar="URL",
                   help="redis://HOST:PORT/N: run as one node of a cluster (with --db "
                        "postgresql://…; docs/deploy.md)")
    p.add_argument("--public-url", default=None, metavar="URL",
                   help="where clients reach this very node (ws://HOST:PORT/ws, wss://…): a "
                        "client playing a room of this node through another is told so, to "
                        "connect here (default: nobody is told)")
    p.add_argument("--node", default=None, metavar="NAME",
                   help="this node's name, unique in the cluster (default: host name-pid)")
    p.add_argument("--lease-s", type=float, default=10.0, metavar="S",
                   help="seconds a node's lease on a room lasts unless renewed: a dead node's "
                        "rooms are taken over within S + 5 seconds (default: 10)")
    p.add_argument("--metrics-allow", action="append", default=None, metavar="NETWORK",
                   help="an address or network (10.0.0.0/8) whose clients may read /metrics "
                        "(repeatable; default: loopback, 127.0.0.0/8 and ::1; others get 403)")
    p.add_argument("--arena-minute-s", type=float, default=60.0, metavar="S",
                   help="seconds an arena tournament's minute lasts, for tests and "
                        "demonstrations (default: 60)")
    p.add_argument("--shared-address-ok", action="append", default=[], metavar="CIDR",
                   help="a network you vouch for (a school's NAT, 10.1.0.0/16) whose "
                        "connections the per-address rules count each as its own address "
                        "(repeatable; default: none; docs/security.md)")
    p.add_argument("--review-ahead", choices=("on", "off"), default="on",
                   help="judge each move in the background while games are played, on the bot "
                        "workers left idle by the bots, so a game's review is ready when it "
                        "ends (default: on; off: a review is computed whole when first asked "
                        "for; docs/review.md)")
    p.add_argument("--loop", choices=LOOPS, default="auto",
                   help="the event loop (default auto: uvloop when installed, else asyncio)")
    # server.logs is not imported for every command: its LEVELS, spelled out.
    p.add_argument("--log-level", choices=("debug", "info", "warning", "error"),
                   default="info", help="the least severe log lines written (default: info: "
                   "games and errors; debug adds every connection and HTTP answer)")
    p.add_argument("--log-json", action="store_true",
                   help="write the log as JSON lines (time, level, logger, message, room_id…)")
    p.set_defaults(run=cmd_serve)

    p = sub.add_parser("bot", help="play a bot account's games with an engine program "
                       "(docs/bots.md)")
    p.add_argument("--server", required=True, metavar="URL",
                   help="the server's WebSocket address, ws://HOST:PORT/ws")
    p.add_argument("--name", required=True, help="the bot account's name (registered as a "
                   "bot account on first use)")
    p.add_argument("--password", required=True, help="its password (8-128 characters)")
    p.add_argument("--engine", required=True, metavar="COMMAND",
                   help="the engine's command, run once per game, e.g. \"python3 engine.py\"")
    p.add_argument("--games", metavar="G1,G2", default=None,
                   help=f"the games it plays (default: all: {','.join(GAME_IDS)})")
    p.add_argument("--accept", default="any", metavar="any|registered|none",
                   help="whose challenges it accepts (default any)")
    p.add_argument("--seek", type=int, default=0, metavar="N",
                   help="rated seeks kept open for each of its games (default 0)")
    p.add_argument("--clock", default="60+1", metavar="BASE_S+INC_S",
                   help="the clock of its seeks and challenges (default 60+1)")
    p.add_argument("--max-games", type=int, default=8, metavar="K",
                   help="games played at once, 1-8 (default 8)")
    p.add_argument("--challenge", default=None, metavar="NAME",
                   help="challenges NAME (a registered player, or a house level: \"bot "
                   "(easy)\") to rated games of each of its games until it has played both "
                   "seats of each (additive)")
    p.add_argument("--tournament", action="append", metavar="ID",
                   help="enters the tournament ID while it waits (repeatable); every "
                   "tournament game of the account is played")
    p.set_defaults(run=cmd_bot)

    p = sub.add_parser("match", help="play engines and house levels against each other, "
                       "no server (docs/bots.md)")
    p.add_argument("--game", required=True, choices=GAME_IDS)
    p.add_argument("--engine", action="append", metavar="NAME=COMMAND",
                   help="an engine: its name and command (repeatable)")
    p.add_argument("--level", action="append", metavar="L",
                   help="a house level: random, easy, medium, hard, max (repeatable)")
    p.add_argument("--games", type=int, default=2, metavar="N",
                   help="games per pair of players, even (default 2)")
    p.add_argument("--openings", metavar="PLIES|FILE", default=None,
                   help="random opening plies drawn from --seed, or a file of positions, "
                   "one a line (default: 2 plies; 0 in backgammon)")
    p.add_argument("--concurrency", type=int, default=1, metavar="J",
                   help="games played at once (default 1)")
    p.add_argument("--move-ms", type=int, default=None, metavar="MS",
                   help="milliseconds per move (default 1000)")
    p.add_argument("--clock", default=None, metavar="BASE_S+INC_S",
                   help="a clock per side instead of --move-ms, e.g. 10+0.1")
    p.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"),
                   help="stop when the GSPRT accepts H0 (Elo ELO0) or H1 (ELO1)")
    p.add_argument("--alpha", type=float, default=0.05, help="the SPRT's alpha (0.05)")
    p.add_argument("--beta", type=float, default=0.05, help="the SPRT's beta (0.05)")
    p.add_argument("--seed", type=int, default=None, help="the openings' and dice's seed "
                   "(default: drawn, and printed)")
    p.add_argument("--out", metavar="FILE", help="write one JSON line per game")
    p.add_argument("--json", action="store_true", help="print the report card as JSON")
    p.set_defaults(run=cmd_match)

    p = sub.add_parser("migrate", help="apply the database's migrations and exit")
    p.add_argument("--db", default="tablas.sqlite3", metavar="PATH|URL", help=DB_HELP)
    p.set_defaults(run=cmd_migrate)

    p = sub.add_parser("bench", help="run the benchmarks")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--quick", action="store_true", help="a short run, for a smoke test")
    p.set_defaults(run=cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.run(args)
        return code
    except (TablasError, CliError) as e:
        print(f"tablas: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``tablas moves ... | head``): not an error of ours. Point
        # stdout at /dev/null so the interpreter's final flush does not complain again.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
