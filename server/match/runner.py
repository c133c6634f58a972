"""The match itself (contract section 17): every pair of players meets ``--games`` times, in
pairs of games from one opening with the seats swapped; ``--concurrency`` games at once, each
with fresh players (an engine process per game); a line on stderr per game finished, with the
score so far; each record written to ``--out`` as it comes; with ``--sprt`` the test looked
at after each complete pair, the games in play cut short once it decides."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from collections.abc import Iterator
from typing import Any, TextIO

from tablas.engine.games import get_game
from tablas.server.match import report, stats
from tablas.server.match.options import MatchOptions
from tablas.server.match.play import Deal, draw, play
from tablas.server.match.players import make

OPENING_TRIES = 100  # random openings drawn before giving up on one still in play


def opening(opts: MatchOptions, pair: int) -> str:
    """Pair ``pair``'s opening: the file's positions in turn, or ``--openings`` random
    plies drawn from the seed (an opening that ends the game is drawn again)."""
    game = get_game(opts.game)
    if opts.positions:
        return opts.positions[pair % len(opts.positions)]
    rng = random.Random(f"{opts.seed}/opening/{pair}")
    for _ in range(OPENING_TRIES):
        state = game.initial({})
        for _ in range(opts.plies):
            if game.outcome(state) is not None:
                break
            if game.is_chance(state):
                state = game.apply_chance(state, draw(game, state, rng))
                continue
            state = game.apply(state, rng.choice(game.legal_moves(state)))
        if game.outcome(state) is None:
            return game.position_text(state)
    return game.position_text(game.initial({}))


def deals(opts: MatchOptions) -> Iterator[Deal]:
    """Every game of the match, in order: for each pair of players, ``games / 2`` openings,
    each played twice, the seats swapped."""
    names = [p.name for p in opts.players]
    index = 0
    pair = 0
    for a, b in itertools.combinations(names, 2):
        for _ in range(opts.games // 2):
            start = opening(opts, pair)
            for seats in ((a, b), (b, a)):
                yield Deal(index, pair, seats, start, f"{opts.seed}/dice/{pair}")
                index += 1
            pair += 1


class Match:
    def __init__(self, opts: MatchOptions, progress: TextIO, out: TextIO | None) -> None:
        self.opts = opts
        self.progress = progress
        self.out = out
        self.records: list[dict[str, Any]] = []
        self.total = len(opts.players) * (len(opts.players) - 1) // 2 * opts.games
        self.decided = False
        self.specs = {p.name: p for p in opts.players}
        self.points = {p.name: 0.0 for p in opts.players}
        self.workers: list[asyncio.Task[None]] = []
        self.pairs: dict[int, list[float]] = {}  # the first player's scores, by opening pair
        self.pentanomial = [0] * 5
        self.cpu = 0.0  # this process's CPU time over the match, seconds
        self.wall = 0.0

    async def run(self) -> dict[str, Any]:
        """Plays the match; the report card."""
        todo = deals(self.opts)
        cpu, wall = time.process_time(), time.perf_counter()
        self.workers = [asyncio.create_task(self._worker(todo))
                        for _ in range(self.opts.concurrency)]
        try:
            ends = await asyncio.gather(*self.workers, return_exceptions=True)
        finally:
            for w in self.workers:
                w.cancel()
        for end in ends:
            if isinstance(end, Exception):
                raise end
        self.cpu, self.wall = time.process_time() - cpu, time.perf_counter() - wall
        self.records.sort(key=lambda r: r["index"])
        return report.card(self.opts, self.records)

    async def _worker(self, todo: Iterator[Deal]) -> None:
        opts = self.opts
        for deal in todo:
            if self.decided:
                return
            seats = (make(self.specs[deal.players[0]]), make(self.specs[deal.players[1]]))
            record = await play(opts.game, deal, seats, opts.move_ms, opts.clock)
            if self.decided:
                return
            self._finished(record)

    def _finished(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        if self.out is not None:
            self.out.write(json.dumps(record, separators=(",", ":")) + "\n")
            self.out.flush()
        players = record["players"]
        for seat, name in enumerate(players):
            self.points[name] += report.score(record, seat)
        winner = record["result"]["winner"]
        said = "draw" if winner is None else f"{players[winner]} wins"
        score = ", ".join(f"{n} {p:g}" for n, p in self.points.items())
        self.progress.write(f"game {len(self.records)}/{self.total}: {players[0]} - "
                            f"{players[1]}: {said} ({record['reason']}, "
                            f"{len(record['moves'])} moves); score {score}\n")
        self.progress.flush()
        if self.opts.sprt is not None:
            self._test(record)

    def _test(self, record: dict[str, Any]) -> None:
        """The SPRT after a pair is complete; once it decides, the games in play stop."""
        t = self.opts.sprt
        assert t is not None
        first = self.opts.players[0].name
        scores = self.pairs.setdefault(record["pair"], [])
        scores.append(report.score(record, record["seats"][first]))
        if len(scores) < 2:
            return
        self.pentanomial[round(2 * sum(scores))] += 1
        llr = stats.llr(self.pentanomial, t.elo0, t.elo1)
        lower, upper = stats.bounds(t.alpha, t.beta)
        said = report.decision(llr, lower, upper)
        if said is None:
            return
        self.decided = True
        self.progress.write(f"SPRT: {said} accepted, LLR {llr:.2f} (bounds {lower:.2f}, "
                            f"{upper:.2f}): stopping\n")
        self.progress.flush()
        me = asyncio.current_task()
        for w in self.workers:
            if w is not me:
                w.cancel()
