"""The load generator's command line: ``python -m tools.load load|burst|churn``, and the
child servers it starts (``serve-child``, ``echo-child``, ``frames-child``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tablas.server.loop import LOOPS

from tools.load.burst import run_burst
from tools.load.churn import CHURN_MODES, run_churn
from tools.load.compare import run_compare
from tools.load.load import run_load
from tools.load.process import serve
from tools.load.rush import PAGE_POLL_S, Burst
from tools.load.servers import echo_child, frames_child, serve_child


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.load")

    def add_loop(p: argparse.ArgumentParser, text: str | None = None) -> None:
        p.add_argument("--loop", choices=LOOPS, default="auto", help=text)

    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("load", help="the load generator (server in its own process)")
    p.add_argument("--games", type=int, default=500)
    p.add_argument("--spectators", type=int, default=1000)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--think", type=float, nargs=2, default=(1.0, 3.0), metavar=("MIN", "MAX"))
    p.add_argument("--sat-games", type=int, default=64)
    p.add_argument("--sat-spectators", type=int, default=0)
    p.add_argument("--sat-seconds", type=float, default=10.0)
    p.add_argument("--workers", type=int, default=2, help="client processes")
    p.add_argument("--search", type=float, default=0.0, metavar="SECONDS",
                   help="then search the largest human-pace load holding --target-ms")
    p.add_argument("--target-ms", type=float, default=100.0)
    p.add_argument("--max-games", type=int, default=4000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--baseline", type=Path, metavar="DIR",
                   help="another checkout: run each measurement against both, alternately")
    p.add_argument("--rounds", type=int, default=2, help="with --baseline")
    p.add_argument("--scrape", type=float, default=0.0, metavar="N",
                   help="with --baseline: GET /metrics N times a second during every run, as"
                   " Prometheus would (on both sides)")
    p.add_argument("--json", action="store_true")
    add_loop(p, "the event loop of the server, the echo and frames-only servers and the"
             " clients alike")
    p = sub.add_parser("burst", help="rushes of new connections and of spectators while"
                       " games play at a human pace")
    p.add_argument("--games", type=int, default=500)
    p.add_argument("--spectators", type=int, default=1000)
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--think", type=float, nargs=2, default=(1.0, 3.0), metavar=("MIN", "MAX"))
    p.add_argument("--connect", type=int, default=1000,
                   help="new visitors in the connection rush (0: none)")
    p.add_argument("--connect-at", type=float, default=8.0, metavar="SECONDS")
    p.add_argument("--spectate", type=int, default=1000,
                   help="people opening a game to watch in the spectator rush (0: none)")
    p.add_argument("--spectate-at", type=float, default=18.0, metavar="SECONDS")
    p.add_argument("--spectate-rooms", type=int, default=300,
                   help="the rooms they watch: those the games opened last")
    p.add_argument("--over", type=float, default=1.0, metavar="SECONDS",
                   help="each rush arrives evenly over this")
    p.add_argument("--poll", type=float, default=PAGE_POLL_S, metavar="SECONDS",
                   help="a rush's client asks for the lobby this often, as the page does"
                   " (0: never)")
    p.add_argument("--warmup", type=float, default=0.0, metavar="SECONDS",
                   help="the games play this long before the window opens")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--baseline", type=Path, metavar="DIR",
                   help="another checkout: each round runs its server too, alternately")
    p.add_argument("--workers", type=int, default=2, help="game client processes")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true")
    add_loop(p, "the event loop of the server and of every client process")
    p = sub.add_parser("churn", help="connections opened and ended at full speed: what the"
                       " server's memory keeps")
    p.add_argument("--seconds", type=float, default=20.0, help="per mode")
    p.add_argument("--modes", nargs="+", choices=CHURN_MODES, default=list(CHURN_MODES))
    p.add_argument("--threads", type=int, default=4)
    add_loop(p, "the event loop of the server child")
    p = sub.add_parser("serve-child")
    p.add_argument("--db", required=True)
    p.add_argument("--bot-workers", type=int, default=1)
    add_loop(p)
    add_loop(sub.add_parser("echo-child"))
    add_loop(sub.add_parser("frames-child"))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.cmd == "serve-child":
        serve(serve_child(args.db, args.bot_workers), args.loop)
        return 0
    if args.cmd in ("echo-child", "frames-child"):
        serve(echo_child() if args.cmd == "echo-child" else frames_child(), args.loop)
        return 0
    if args.cmd == "burst":
        rushes = [Burst("connect", args.connect, args.connect_at, args.over, poll=args.poll),
                  Burst("spectate", args.spectate, args.spectate_at, args.over,
                        args.spectate_rooms, args.poll)]
        report = run_burst(
            games=args.games, spectators=args.spectators, seconds=args.seconds,
            think=(args.think[0], args.think[1]), bursts=[b for b in rushes if b.n > 0],
            rounds=args.rounds, baseline=args.baseline, warmup=args.warmup,
            workers=args.workers, seed=args.seed,
            loop=args.loop, progress=sys.stderr)
        print(json.dumps(report, indent=None if args.json else 2))
        return 0
    if args.cmd == "churn":
        print(json.dumps(run_churn(args.seconds, tuple(args.modes), args.threads, args.loop),
                         indent=2))
        return 0
    if args.scrape and args.baseline is None:
        _parser().error("--scrape goes with --baseline")
    if args.baseline is not None:
        report = run_compare(
            args.baseline, rounds=args.rounds, games=args.games, spectators=args.spectators,
            seconds=args.seconds, think=(args.think[0], args.think[1]),
            sat_games=args.sat_games, sat_seconds=args.sat_seconds, workers=args.workers,
            seed=args.seed, loop=args.loop, progress=sys.stderr, scrape=args.scrape)
    else:
        report = run_load(
            games=args.games, spectators=args.spectators, seconds=args.seconds,
            think=(args.think[0], args.think[1]), sat_games=args.sat_games,
            sat_spectators=args.sat_spectators, sat_seconds=args.sat_seconds,
            workers=args.workers, search_s=args.search, target_ms=args.target_ms,
            max_games=args.max_games, seed=args.seed, loop=args.loop, progress=sys.stderr,
        )
    print(json.dumps(report, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
