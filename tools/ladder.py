"""The bot ladder: does each level beat the one below it, and the hard level the baselines?

``python -m tools.ladder`` plays, in every game, each level against the one below it
(random < easy < medium < hard < max), plus ``hard`` against the textbook baseline
(:mod:`tools.baselines`) in backgammon and BOOM. Each pairing is ``N`` games with the
seats alternating, so neither side keeps the first move. Games follow the engine's rules
through the game protocol; backgammon's dice come from a seeded RNG. Grundy starts from a
heap drawn per pair of games (8..30): the default heap of 7 would replay one lost position.

``--no-cube`` plays backgammon without the doubling cube, to measure checker play alone: with
the cube, the levels' shared cube rule decides many games at the first double.

It prints a markdown table: wins, draws and losses of the upper side, its score rate (draws
count half) with a 95% Wilson interval, and in backgammon the points per game won (cube and
gammons included) with a normal 95% interval.

``--luck`` (backgammon) also gives each game's points with the luck of the dice taken out, the
variance reduction of gnubg's "luck-adjusted result": before each roll, every roll the dice
could show is valued by GNU Backgammon 0-ply (the roller's equity after its best play; with the
cube, cubeful by Janowski's model on gnubg's probabilities), and the difference between the
roll that came and the average over all of them is that roll's luck. The game's points minus
the upper side's luck (its own rolls' luck, minus its opponent's) keeps the same expectation,
whatever the evaluator (each roll's luck averages to nothing given the position before it), and
a much smaller spread, so that a small difference between two levels shows in far fewer games.
gnubg plays no part in the games.
``--json PATH`` writes every game's points (and luck-adjusted points); ``--pool FILE...``
plays nothing and prints the table of the games of such files together, pairing by pairing
(runs with other seeds, on several cores).

Seeds are deterministic, so depth-limited levels replay exactly; levels with a time budget may
differ between runs on a busy machine.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import random
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tablas.engine.core import Outcome
from tablas.engine.games import GAME_IDS, get_game
from tablas.engine.games.backgammon import Backgammon, BGState
from tablas.engine.search import cubeful
from tablas.engine.search.bots import LEVELS, Decision, decide

from tools.baselines import BASELINE, BASELINE_GAMES, decide_baseline

Z95 = 1.959963984540054


def choose(game_id: str, state: Any, agent: str, budget_ms: float, seed: int) -> Decision:
    """The decision of ``agent``: a level of :data:`LEVELS`, or :data:`BASELINE`."""
    if agent == BASELINE:
        return decide_baseline(game_id, state, budget_ms, seed)
    return decide(game_id, state, agent, budget_ms, seed)


def game_options(game_id: str, rng: random.Random, cube: bool = True) -> dict[str, Any] | None:
    if game_id == "grundy":
        return {"heap": rng.randint(8, 30)}
    if game_id == "backgammon" and not cube:
        return {"cube": False}
    return None


ChanceObserver = Callable[[Any, Sequence[tuple[Any, float]], Any], None]


def play_game(
    game_id: str,
    agents: Sequence[str],
    budget_ms: float,
    seed: int,
    options: dict[str, Any] | None = None,
    on_chance: ChanceObserver | None = None,
) -> tuple[Outcome, int]:
    """One game, ``agents[s]`` in seat ``s``: its outcome and the number of actions played.
    ``on_chance`` sees every chance event before it is applied: (state, its outcomes with
    their probabilities, the outcome drawn)."""
    game = get_game(game_id)
    rng = random.Random(seed)
    state = game.initial(options)
    actions = 0
    while True:
        out = game.outcome(state)
        if out is not None:
            return out, actions
        if game.is_chance(state):
            outcomes = game.chance_outcomes(state)
            roll = rng.choices([o for o, _ in outcomes], weights=[p for _, p in outcomes])[0]
            if on_chance is not None:
                on_chance(state, outcomes, roll)
            state = game.apply_chance(state, roll)
            continue
        seat = game.to_move(state)
        assert seat is not None
        d = choose(game_id, state, agents[seat], budget_ms, rng.randrange(2**31))
        # ``play`` checks legality: a bot answering an illegal move fails the run loudly.
        state = game.play(state, game.move_from_json(state, d.move))
        actions += 1


class BackgammonLuck:
    """The luck of a backgammon game's dice for seat 0, by gnubg 0-ply (see the module's
    docstring); a :data:`ChanceObserver`."""

    def __init__(self) -> None:
        from tools.bgnet_train import Teacher

        self.game = Backgammon()
        self.teacher = Teacher()
        self.seat0 = 0.0

    def value(self, state: BGState, roll: Any) -> float:
        """Seat 0's equity once ``roll`` is played as well as gnubg 0-ply can, in points."""
        rolled = self.game.apply_chance(state, roll)
        best = max(self.after(rolled, play) for play in self.game.legal_moves(rolled))
        return best if rolled.turn == 0 else -best

    def after(self, rolled: BGState, play: Any) -> float:
        """The mover's equity in points once ``play`` is made: the points, if it ends the
        game; else minus the opponent's before its roll, cubeless without the cube, and with
        it cubeful (Janowski's model on gnubg's probabilities, the opponent's cube action
        taken as the model says), so that a roll that makes a double a drop counts as one
        cube's worth, not as its cubeless equity."""
        nxt = self.game.apply(rolled, play)
        if nxt.result is not None:
            return float(nxt.result.points)  # only the mover can end the game
        opp = nxt.turn
        pos = (nxt.boards[opp], nxt.boards[1 - opp])
        if not nxt.cube_enabled:
            return -self.teacher.equity(pos)
        c = cubeful.Cubeless.from_probs(self.teacher.probabilities(pos))
        x = cubeful.efficiency(*pos)
        access = "centre" if nxt.owner is None else "own" if nxt.owner == opp else "theirs"
        v = cubeful.cubeful_equity(c, x, access)
        if nxt.phase == "roll":  # it may double
            v = max(v, min(2 * cubeful.cubeful_equity(c, x, "theirs"), 1.0))
        return -v * nxt.cube

    def __call__(self, state: BGState, outcomes: Sequence[tuple[Any, float]], roll: Any
                 ) -> None:
        values = {o: self.value(state, o) for o, _ in outcomes}
        self.seat0 += values[roll] - sum(p * values[o] for o, p in outcomes)


def wilson(score: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's interval for a rate ``score`` observed over ``n`` games."""
    if n == 0:
        return 0.0, 1.0
    denom = 1 + z * z / n
    centre = (score + z * z / (2 * n)) / denom
    half = z * math.sqrt(score * (1 - score) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """(mean, low, high): the normal interval of the mean (sample standard deviation)."""
    n = len(values)
    if n == 0:
        return 0.0, 0.0, 0.0
    mean = sum(values) / n
    if n == 1:
        return mean, mean, mean
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = z * sd / math.sqrt(n)
    return mean, mean - half, mean + half


@dataclass(slots=True)
class PairingResult:
    game: str
    upper: str
    lower: str
    budget_ms: float
    cube: bool = True
    wins: int = 0
    draws: int = 0
    losses: int = 0
    points: list[float] = field(default_factory=list)  # per game, from the upper side
    adjusted: list[float] = field(default_factory=list)  # the same, luck taken out (--luck)
    actions: int = 0
    seconds: float = 0.0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0

    def interval(self) -> tuple[float, float]:
        return wilson(self.score, self.games)

    def add(self, outcome: Outcome, upper_seat: int, actions: int,
            luck: float | None = None) -> None:
        """One game's result; ``luck``: seat 0's luck in it, in points (``--luck``)."""
        self.actions += actions
        if outcome.winner is None:
            self.draws += 1
            self.points.append(0.0)
        elif outcome.winner == upper_seat:
            self.wins += 1
            self.points.append(float(outcome.points))
        else:
            self.losses += 1
            self.points.append(-float(outcome.points))
        if luck is not None:
            self.adjusted.append(self.points[-1] - (luck if upper_seat == 0 else -luck))


def pairings(game_id: str) -> list[tuple[str, str]]:
    """(upper, lower) pairs: each level against the one below, then hard against a baseline."""
    out: list[tuple[str, str]] = [(LEVELS[i + 1], LEVELS[i]) for i in range(len(LEVELS) - 1)]
    if game_id in BASELINE_GAMES:
        out.append(("hard", BASELINE))
    return out


def run_pairing(
    game_id: str,
    upper: str,
    lower: str,
    games: int,
    budget_ms: float,
    seed: int,
    tick: Callable[[], None] = lambda: None,
    cube: bool = True,
    luck: bool = False,
) -> PairingResult:
    """``games`` games of ``upper`` against ``lower``, ``upper`` in seat 0 in the even ones.

    Games go in pairs with the same start (Grundy's heap) and the seats swapped, so a start
    that favours one seat favours both bots once. ``luck`` (backgammon): also each game's
    points with the dice's luck taken out."""
    result = PairingResult(game_id, upper, lower, budget_ms, cube)
    started = time.perf_counter()
    for i in range(games):
        upper_seat = i % 2
        agents = (upper, lower) if upper_seat == 0 else (lower, upper)
        options = game_options(game_id, random.Random(seed * 1_000_003 + i // 2), cube)
        meter = BackgammonLuck() if luck and game_id == "backgammon" else None
        outcome, actions = play_game(game_id, agents, budget_ms, seed * 1_000_003 + i, options,
                                     meter)
        result.add(outcome, upper_seat, actions, None if meter is None else meter.seat0)
        tick()
    result.seconds = time.perf_counter() - started
    return result


class _Progress:
    """A tqdm bar when tqdm is installed (the ``bench`` extra), else a line per pairing."""

    def __init__(self, total: int) -> None:
        self.bar: Any = None
        try:
            tqdm = importlib.import_module("tqdm").tqdm  # untyped: no stubs needed this way
        except ImportError:
            return
        self.bar = tqdm(total=total, unit="game", file=sys.stderr, dynamic_ncols=True)

    def describe(self, text: str) -> None:
        if self.bar is not None:
            self.bar.set_description(text)
        else:
            print(text, file=sys.stderr, flush=True)

    def tick(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run_ladder(
    plan: Iterable[tuple[str, int, float]],
    seed: int = 1,
    only: set[tuple[str, str]] | None = None,
    progress: bool = True,
    cube: bool = True,
    luck: bool = False,
) -> list[PairingResult]:
    """Every pairing of every ``(game, games per pairing, budget ms)`` in ``plan``; ``only``
    keeps just the listed (upper, lower) pairings; ``cube=False`` plays backgammon without
    the doubling cube (checker play alone)."""
    todo = [
        (game_id, upper, lower, n, budget)
        for game_id, n, budget in plan
        for upper, lower in pairings(game_id)
        if only is None or (upper, lower) in only
    ]
    bar = _Progress(sum(t[3] for t in todo)) if progress else None
    results = []
    try:
        for game_id, upper, lower, n, budget in todo:
            if bar is not None:
                bar.describe(f"{game_id} {upper}-{lower}")
            results.append(
                run_pairing(
                    game_id, upper, lower, n, budget, seed, bar.tick if bar else lambda: None,
                    cube, luck,
                )
            )
    finally:
        if bar is not None:
            bar.close()
    return results


def markdown_table(results: Sequence[PairingResult]) -> str:
    lines = [
        "| game | upper vs lower | budget | games | W-D-L (upper) | score | 95% CI "
        "| points/game (upper) | luck-adjusted points/game | time |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        lo, hi = r.interval()
        points = adjusted = "—"
        if r.game == "backgammon":
            mean, plo, phi = mean_interval(r.points)
            points = f"{mean:+.2f} [{plo:+.2f}, {phi:+.2f}]"
        if r.adjusted:
            mean, plo, phi = mean_interval(r.adjusted)
            adjusted = f"{mean:+.3f} [{plo:+.3f}, {phi:+.3f}]"
        game = r.game if r.cube or r.game != "backgammon" else f"{r.game} (no cube)"
        lines.append(
            f"| {game} | {r.upper} vs {r.lower} | {r.budget_ms:g} ms | {r.games} "
            f"| {r.wins}-{r.draws}-{r.losses} | {r.score:.1%} | {lo:.1%}–{hi:.1%} "
            f"| {points} | {adjusted} | {r.seconds:.0f} s |"
        )
    return "\n".join(lines)


def _game_numbers(items: Sequence[str], what: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name not in GAME_IDS:
            raise SystemExit(
                f"ladder: {what} {item!r} must be GAME=NUMBER, GAME one of {', '.join(GAME_IDS)}"
            )
        try:
            out[name] = float(value)
        except ValueError:
            raise SystemExit(f"ladder: {what} {item!r}: {value!r} is not a number") from None
    return out


def pooled(paths: Sequence[str]) -> list[PairingResult]:
    """The backgammon games of ``--json`` files, one result per pairing (and cube setting)."""
    out: dict[tuple[str, str, str, bool], PairingResult] = {}
    for path in paths:
        with open(path) as f:
            runs = json.load(f)
        for run in runs:
            key = (run["game"], run["upper"], run["lower"], run["cube"])
            r = out.setdefault(key, PairingResult(run["game"], run["upper"], run["lower"],
                                                  run["budget_ms"], run["cube"]))
            r.points += run["points"]
            r.adjusted += run["adjusted"]
            r.wins += sum(p > 0 for p in run["points"])
            r.draws += sum(p == 0 for p in run["points"])
            r.losses += sum(p < 0 for p in run["points"])
            r.seconds += run["seconds"]
    return list(out.values())


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m tools.ladder",
        description="Plays each bot level against the one below it (and hard against the "
        "baselines) and prints a markdown table of the results.",
    )
    p.add_argument(
        "--games",
        nargs="*",
        default=list(GAME_IDS),
        choices=GAME_IDS,
        help="the games to play (default: all)",
    )
    p.add_argument(
        "-n",
        "--per-pairing",
        type=int,
        default=20,
        help="games per pairing (default 20; see --n-for)",
    )
    p.add_argument(
        "--n-for",
        nargs="*",
        default=[],
        metavar="GAME=N",
        help="games per pairing for one game, e.g. tictactoe=40",
    )
    p.add_argument(
        "--budget-ms",
        type=float,
        default=100.0,
        help="thinking time cap per decision in ms (default 100)",
    )
    p.add_argument(
        "--budget-for",
        nargs="*",
        default=[],
        metavar="GAME=MS",
        help="the budget for one game, e.g. backgammon=200",
    )
    p.add_argument(
        "--only",
        nargs="*",
        default=None,
        metavar="UPPER-LOWER",
        help="only these pairings, e.g. hard-medium hard-baseline",
    )
    p.add_argument(
        "--no-cube",
        action="store_true",
        help="backgammon without the doubling cube: checker play alone",
    )
    p.add_argument(
        "--luck",
        action="store_true",
        help="backgammon: also the points per game with the dice's luck taken out, by gnubg "
        "0-ply (the test extra's gnubg)",
    )
    p.add_argument("--json", metavar="PATH", help="also write every game's points here")
    p.add_argument("--pool", nargs="+", metavar="JSON",
                   help="play nothing: the table of the games of these --json files together")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    args = p.parse_args(argv)
    if args.pool:
        results = pooled(args.pool)
        print(markdown_table(results))
        print(f"\n{sum(r.games for r in results)} games from {len(args.pool)} files.")
        return 0
    counts = _game_numbers(args.n_for, "--n-for")
    budgets = _game_numbers(args.budget_for, "--budget-for")
    only = None
    if args.only is not None:
        only = set()
        for item in args.only:
            upper, sep, lower = item.partition("-")
            if not sep or {upper, lower} - {*LEVELS, BASELINE}:
                p.error(
                    f"--only {item!r} must be UPPER-LOWER with levels {', '.join(LEVELS)} "
                    f"or {BASELINE}"
                )
            only.add((upper, lower))
    plan = [
        (g, int(counts.get(g, args.per_pairing)), budgets.get(g, args.budget_ms))
        for g in args.games
    ]
    t0 = time.perf_counter()
    results = run_ladder(
        plan, args.seed, only, progress=not args.no_progress, cube=not args.no_cube,
        luck=args.luck,
    )
    print(markdown_table(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"game": r.game, "upper": r.upper, "lower": r.lower, "seed": args.seed,
                        "budget_ms": r.budget_ms, "cube": r.cube, "points": r.points,
                        "adjusted": r.adjusted, "seconds": r.seconds} for r in results], f)
    print(
        f"\n{sum(r.games for r in results)} games in {time.perf_counter() - t0:.0f} s, "
        f"seed {args.seed}."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
