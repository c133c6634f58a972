"""``tablas match`` from its parsed arguments to its exit code: the options checked, each
engine started once to see that it answers ``ready`` (a command that cannot start is a bad
option: one line on stderr, exit code 2), the match played, the report card printed (text,
or one JSON object with ``--json``), every engine and whatever it started ended."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from tablas.server.bot_adapter import contain
from tablas.server.bot_adapter.engine import EngineFailed, check
from tablas.server.bot_adapter.options import BadOption
from tablas.server.loop import run as run_on_loop
from tablas.server.match.options import MatchOptions, read_options
from tablas.server.match.report import text
from tablas.server.match.runner import Match


class MatchError(Exception):
    """A bad option or an engine that cannot start: one line on stderr, exit code 2."""


def options(args: argparse.Namespace) -> MatchOptions:
    try:
        return read_options(args.game, args.engine or [], args.level or [], args.games,
                            args.openings, args.concurrency, args.move_ms, args.clock,
                            args.sprt, args.alpha, args.beta, args.seed, args.out, args.json)
    except BadOption as e:
        raise MatchError(str(e)) from None


async def checked(opts: MatchOptions) -> None:
    for p in opts.players:
        if p.argv is not None:
            try:
                await check(p.argv)
            except EngineFailed as e:
                raise MatchError(f"--engine {p.name}: the engine {e}") from None


def run(args: argparse.Namespace, stdout: TextIO = sys.stdout,
        stderr: TextIO = sys.stderr) -> int:
    opts = options(args)
    contain.take_charge()
    try:
        out = open(opts.out, "w", encoding="utf-8") if opts.out is not None else None
    except OSError as e:
        raise MatchError(f"--out {str(opts.out)!r}: {e.strerror or e}") from None
    try:
        card = run_on_loop(_play(opts, stderr, out))
    finally:
        if out is not None:
            out.close()
        contain.end_all()
    stdout.write(json.dumps(card) + "\n" if opts.json else text(card) + "\n")
    return 0


async def _play(opts: MatchOptions, progress: TextIO, out: TextIO | None) -> dict[str, Any]:
    await checked(opts)
    match = Match(opts, progress, out)
    card = await match.run()
    moves = sum(len(r["moves"]) for r in match.records)
    card["run"] = {"seconds": round(match.wall, 3), "cpu_seconds": round(match.cpu, 3),
                   "moves": moves,
                   "moves_per_second": round(moves / match.wall, 1) if match.wall else None,
                   "cpu_us_per_move": round(match.cpu / moves * 1e6, 1) if moves else None}
    return card
