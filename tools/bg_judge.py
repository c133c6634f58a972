"""Judge the backgammon levels' checker play with GNU Backgammon, by stage, with their time.

    python -m tools.bg_judge --positions 400               # every level, 100 a stage
    python -m tools.bg_judge --levels hard,max --weights other.npz --exclude data.npz
    python -m tools.bg_judge --stages middle --levels hard,hard@new.npz   # two networks

Positions: games from the start, played by ``medium`` with a random play 30% of the time
(so that they reach both sensible and odd positions), with dice from ``--seed``; or played by
gnubg 0-ply (``--games-by gnubg``, nearer to the games of good players), with random plays
``--random-plays`` of the time. Decisions with more than one legal play are sorted into four
stages, and taken at random until each stage has its share:

- **opening**: one of the first six plays of the game (the opening roll's is the book's);
- **middle**: the rest of the positions with contact;
- **race**: no contact, some checker still outside its home board;
- **bearoff**: no contact, every checker home.

``--stages`` keeps some of the stages (the positions are then shared among those).

``--exclude NPZ`` (a file of ``tools.bgnet_train --make-data``; again for several) drops every
decision whose position or any of whose plays' results is in that training data, and says
how many it dropped: the positions judged are never trained on.

Each level decides as the server's bot does (``tablas.engine.search.bots.decide``, opening book
included, within the level's own cap on its thinking time, ``THINK_MS``, or ``--budget-ms``
if shorter), timed on this process's clock. The judge is
gnubg at 2 plies (cubeless): gnubg's 0-ply picks its 8 best candidate plays, each level's
play joins them, and gnubg rates each candidate at 2 plies; a play's error is what it gives up
against the best candidate. The figure per level is the mean error per decision (gnubg's
"error per decision" for unforced checker plays: world class < 0.005, expert < 0.008,
advanced < 0.012 on its normalized scale) overall and per stage, how often the level's play
was not the best, and the median and largest time per decision. gnubg's own 0-ply pick is
judged too, for scale. Levels next to each other in ``--levels`` are compared on the same
decisions: the mean difference of their errors with its 95% interval. A level written
``LEVEL@WEIGHTS.npz`` plays with that network instead of the shipped one (``--weights`` changes
the network of every level), so that networks are compared on the same decisions in one run.

Needs the ``gnubg`` package (the test extra). Randomness comes only from ``--seed``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tablas.engine.games.backgammon import Backgammon, BGState
from tablas.engine.search import backgammon_bot, backgammon_eval, bgnet
from tablas.engine.search.bots import decide

from tools.bgnet_train import Teacher, progress

STAGES = ("opening", "middle", "race", "bearoff")
OPENING_PLAYS = 6
CANDIDATES = 8
Position = tuple[tuple[int, ...], tuple[int, ...]]


def after(state: BGState) -> Position:
    """The position a play leads to, from the side to roll next."""
    return state.boards[state.turn], state.boards[1 - state.turn]


def stage_of(state: BGState, plays_made: int) -> str:
    me, opp = state.boards[state.turn], state.boards[1 - state.turn]
    s = backgammon_eval.stage(me, opp)
    if s == "contact":
        return "opening" if plays_made < OPENING_PLAYS else "middle"
    return s


def decisions(game: Backgammon, n: int, seed: int, excluded: set[bytes],
              stages: Sequence[str] = STAGES, player: Callable[[BGState], Any] | None = None,
              random_plays: float = 0.3) -> tuple[list[tuple[str, BGState]], int]:
    """``n`` decisions (shared equally among ``stages``), each with its stage, and how many
    positions were dropped as seen in training. The games are played by ``medium``, or by
    ``player`` (a state to its play) if given, with a random play ``random_plays`` of the
    time."""
    rng = random.Random(seed)
    share = {s: n // len(stages) + (1 if i < n % len(stages) else 0)
             for i, s in enumerate(stages)}
    quota = {s: share.get(s, 0) for s in STAGES}
    taken: dict[str, list[BGState]] = {s: [] for s in STAGES}
    # How often a decision of a stage is taken: the stages come in very different numbers
    # per game, so each is sampled at its own rate to spread its share over many games.
    rate = {"opening": 0.3, "middle": 0.12, "race": 0.2, "bearoff": 0.25}
    dropped = 0
    state = game.initial({"cube": False})
    plays_made = 0
    while any(len(taken[s]) < quota[s] for s in STAGES):
        if game.outcome(state) is not None:
            state, plays_made = game.initial({"cube": False}), 0
            continue
        if game.is_chance(state):
            outs = game.chance_outcomes(state)
            state = game.apply_chance(state, rng.choices([o for o, _ in outs],
                                                         [p for _, p in outs])[0])
            continue
        if state.phase != "move":
            state = game.apply(state, "roll")
            continue
        moves = game.legal_moves(state)
        if len(moves) > 1:
            s = stage_of(state, plays_made)
            # Drawn for every decision, so that the games do not depend on what was taken.
            draw = rng.random()
            if len(taken[s]) < quota[s] and draw < rate[s]:
                keys = [_key(after(c)) for _, c in game.successors(state)]
                if excluded and (_key((state.boards[state.turn], state.boards[1 - state.turn]))
                                 in excluded or any(k in excluded for k in keys)):
                    dropped += 1
                else:
                    taken[s].append(state)
        if rng.random() < random_plays:
            move = rng.choice(moves)
        elif player is not None:
            move = player(state)
        else:
            d = decide("backgammon", state, "medium", None, rng.randrange(1 << 30))
            move = game.move_from_json(state, d.move)
        state = game.apply(state, move)
        plays_made += 1
    return [(s, st) for s in STAGES for st in taken[s]], dropped


def _key(pos: Position) -> bytes:
    return np.array(pos, dtype=np.int8).tobytes()


def excluded_keys(paths: str | Sequence[str] | None) -> set[bytes]:
    """Every position of the training data files, as :func:`_key` makes them."""
    keys: set[bytes] = set()
    for path in [paths] if isinstance(paths, str) else paths or ():
        with np.load(path) as data:
            keys.update(b.tobytes() for b in data["boards"].astype(np.int8))
    return keys


class Judge:
    """gnubg's 2-ply rating of the plays of one decision."""

    def __init__(self, teacher: Teacher, game: Backgammon, plies: int = 2) -> None:
        self.teacher, self.game = teacher, game
        self.referee = teacher.g.eval_context(0, plies, 1, 1, 0.0)

    def value(self, state: BGState, play: Any, context: Any) -> float:
        """The mover's cubeless equity after ``play`` (the points, if it ends the game)."""
        nxt = self.game.apply(state, play)
        if nxt.result is not None:
            return float(nxt.result.points)
        return -self.teacher.equity(after(nxt), context)

    def candidates(self, state: BGState) -> list[Any]:
        """gnubg 0-ply's best plays, best first."""
        moves = self.game.legal_moves(state)
        zero = {m: self.value(state, m, None) for m in moves}
        return sorted(moves, key=lambda m: -zero[m])[:CANDIDATES]

    def rate(self, state: BGState, plays: Sequence[Any]) -> tuple[dict[Any, float], float]:
        """Each play's 2-ply equity and the best of them and of gnubg's candidates."""
        pool = set(self.candidates(state)) | set(plays)
        rated = {m: self.value(state, m, self.referee) for m in pool}
        return rated, max(rated.values())


def _player(name: str) -> tuple[str, bgnet.BGNet | None]:
    """A ``--levels`` entry: the level, and the network it plays with if it names one."""
    level, _, weights = name.partition("@")
    return level, bgnet.BGNet.load(Path(weights)) if weights else None


def run(levels: Sequence[str], n: int, seed: int, budget_ms: float | None,
        exclude: str | Sequence[str] | None, show_progress: bool = True, plies: int = 2,
        stages: Sequence[str] = STAGES, games_by: str = "medium", random_plays: float = 0.3,
        ) -> dict[str, Any]:
    """The judged decisions' errors (per name, per stage), each level's time per decision,
    how many decisions were dropped as seen in training, and how many were judged."""
    game = Backgammon()
    teacher = Teacher()
    judge = Judge(teacher, game, plies)
    player = (lambda s: judge.candidates(s)[0]) if games_by == "gnubg" else None
    picked, dropped = decisions(game, n, seed, excluded_keys(exclude), stages, player,
                                random_plays)
    players = {name: _player(name) for name in levels}
    shipped = bgnet.default_net

    def decide_as(name: str, state: BGState) -> Any:
        level, net = players[name]
        # Every user of the network asks the module for it at call time.
        bgnet.default_net = shipped if net is None else (lambda: net)  # type: ignore[assignment]
        return decide("backgammon", state, level, budget_ms, 0)

    names = [*levels, "gnubg-0ply"]
    errors: dict[str, dict[str, list[float]]] = {x: {s: [] for s in STAGES} for x in names}
    times: dict[str, list[float]] = {x: [] for x in levels}
    try:
        for level in levels:  # loads the networks and the bear-off tables outside the timing
            decide_as(level, picked[0][1])
        t0 = time.perf_counter()
        for i, (stage, state) in enumerate(picked):
            picks: dict[str, Any] = {}
            for level in levels:
                t = time.perf_counter()
                d = decide_as(level, state)
                times[level].append(time.perf_counter() - t)
                picks[level] = game.move_from_json(state, d.move)
            picks["gnubg-0ply"] = judge.candidates(state)[0]
            rated, best = judge.rate(state, list(picks.values()))
            for x in names:
                errors[x][stage].append(best - rated[picks[x]])
            if show_progress:
                progress("judge", i + 1, len(picked), t0)
    finally:
        bgnet.default_net = shipped
    return {"errors": errors, "times": times, "dropped": dropped, "n": len(picked)}


def paired(upper: dict[str, list[float]], lower: dict[str, list[float]]) -> tuple[float, float]:
    """The mean of ``upper``'s error minus ``lower``'s over the same decisions, and its 95%
    normal interval's half-width: negative means the upper level errs less."""
    d = np.array([u - w for s in STAGES for u, w in zip(upper[s], lower[s])])
    half = 1.96 * float(d.std(ddof=1)) / np.sqrt(len(d)) if len(d) > 1 else float("inf")
    return float(d.mean()), half


def report(res: dict[str, Any]) -> str:
    """A markdown table: error per decision overall and by stage, misses, time."""
    errors, times = res["errors"], res["times"]
    head = ("| level | all | " + " | ".join(STAGES) +
            " | not gnubg 2-ply's best | time per decision, median (max) |")
    lines = [head, "|" + " --- |" * (len(STAGES) + 4)]
    for name, by_stage in errors.items():
        every = [e for s in STAGES for e in by_stage[s]]
        cells = [f"{np.mean(by_stage[s]):.4f}" if by_stage[s] else "-" for s in STAGES]
        missed = sum(1 for e in every if e > 1e-9)
        t = times.get(name)
        when = (f"{statistics.median(t) * 1000:.0f} ms ({max(t) * 1000:.0f})" if t else "-")
        lines.append(f"| {name} | {np.mean(every):.4f} | " + " | ".join(cells) +
                     f" | {missed} of {len(every)} | {when} |")
    names = list(errors)
    pairs = [(hi, lo) for lo, hi in itertools.pairwise(names) if hi != "gnubg-0ply"]
    if pairs:
        lines.append("\n| upper - lower, same decisions | mean difference of error, 95% interval |"
                     "\n| --- | --- |")
    for hi, lo in pairs:
        mean, half = paired(errors[hi], errors[lo])
        lines.append(f"| {hi} - {lo} | {mean:+.4f} ± {half:.4f} |")
    counts = ", ".join(f"{s} {len(next(iter(errors.values()))[s])}" for s in STAGES)
    lines.append(f"\n{res['n']} decisions ({counts}); {res['dropped']} dropped as seen in "
                 "training.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.bg_judge", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--positions", type=int, default=400, help="decisions judged, all stages")
    ap.add_argument("--levels", default="easy,medium,hard,max")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--budget-ms", type=float, default=None,
                    help="each level's time budget per decision (default: none)")
    ap.add_argument("--weights", default=None,
                    help="the network the levels use (default: the shipped bgnet.npz)")
    ap.add_argument("--exclude", action="append",
                    help="training data (.npz of tools.bgnet_train --make-data) to keep out")
    ap.add_argument("--passes", metavar="LEVEL=W,P,B;...", action="append", default=[],
                    help="try other root passes for a level (engine.search.backgammon_bot."
                    "PASSES): width, plies, beam ('-': none) per pass, e.g. "
                    "'max=8,2,-;3,3,3'")
    ap.add_argument("--games-by", choices=("medium", "gnubg"), default="medium",
                    help="who plays the games the positions come from (default: medium)")
    ap.add_argument("--random-plays", type=float, default=0.3,
                    help="the share of random plays in those games (default: 0.3)")
    ap.add_argument("--stages", default=",".join(STAGES),
                    help="the stages judged, comma-separated (default: all four)")
    ap.add_argument("--json", metavar="PATH", help="also write every error and time here")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if args.weights:
        net = bgnet.BGNet.load(args.weights)
        # Every user of the network asks the module for it at call time.
        bgnet.default_net = lambda: net  # type: ignore[assignment]
    for item in args.passes:
        level, _, spec = item.partition("=")
        backgammon_bot.PASSES[level] = tuple(
            (int(w), int(p), None if b == "-" else int(b))
            for w, p, b in (part.split(",") for part in spec.split(";")))
    t0 = time.perf_counter()
    stages = args.stages.split(",")
    if not set(stages) <= set(STAGES):
        ap.error(f"--stages: choose among {', '.join(STAGES)}")
    res = run(args.levels.split(","), args.positions, args.seed, args.budget_ms, args.exclude,
              not args.no_progress, stages=stages, games_by=args.games_by,
              random_plays=args.random_plays)
    print(report(res))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f)
    print(f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
