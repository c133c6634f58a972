"""Fit :mod:`engine.search.bgnet` to GNU Backgammon's evaluations, and measure the result.

    python -m tools.bgnet_train              # writes bgnet.npz (the shipped one's flags)
    python -m tools.bgnet_train --report-only                 # measures the shipped net
    python -m tools.bgnet_train --judge 120                   # the levels' plays, judged

Positions come from games played by this engine's own move generator, each play chosen by
gnubg's 0-ply equity with some exploration (a random play with probability ``eps``, drawn per
game), so that the network sees both the positions good players reach and the odd ones weak
players leave. From every decision the chosen result and a few of the other candidates are
kept: those are the positions a 1-ply search asks the evaluation about. Every position is
labelled with gnubg's 0-ply probabilities (win, gammon, backgammon, for each side), the
network's five outputs are fitted to them by cross-entropy (Adam, minibatches), and a held-out
tenth measures the fit.

The report compares the network and the hand-written evaluation of
:mod:`engine.search.backgammon_eval` against gnubg on the held-out games: the mean absolute
equity error, and the equity (by gnubg's judgement) a 1-ply player using each evaluation gives
up per decision compared to gnubg's own choice.

``--judge N`` measures the bot levels' checker play the way backgammon players rate each
other: in N contact decisions, each level's play (and gnubg's own 0-ply choice, for scale) is
judged by gnubg at 2 plies, and a level's loss is the equity its play gives up against the
best of the plays compared. Paired on the same decisions, it tells levels apart with far fewer
samples than games do.

This needs the ``gnubg`` package (in the ``test`` extra); the server and the bots never import
it. Randomness comes only from ``--seed``.
"""

from __future__ import annotations

import argparse
import functools
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.games.backgammon import START, Board, generate_plays
from engine.search import backgammon_eval, bgnet

Position = tuple[Board, Board]  # (the side about to roll, the other), each from its own side
F32 = npt.NDArray[np.float32]


def _gnubg() -> Any:
    try:
        import gnubg  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:  # pragma: no cover - the test extra installs it
        sys.exit("bgnet_train needs gnubg: pip install -e '.[test]'")
    return gnubg


class Teacher:
    """gnubg's cubeless evaluation of a position, for the side about to roll: 0-ply, or
    the ``context`` given."""

    def __init__(self) -> None:
        self.g = _gnubg()
        self.cube = self.g.cube_info()
        self.context = self.g.eval_context(0, 0, 1, 0, 0.0)

    def evaluate(self, pos: Position, context: Any = None) -> tuple[float, ...]:
        """gnubg's six numbers: the five probabilities, then the equity."""
        on_roll, other = pos
        # gnubg's board lists the side NOT on roll first, each as points 1..24 then the bar.
        return tuple(self.g.evaluate((tuple(other[1:26]), tuple(on_roll[1:26])), self.cube,
                                     context or self.context))

    def probabilities(self, pos: Position) -> tuple[float, ...]:
        return self.evaluate(pos)[:5]

    def equity(self, pos: Position, context: Any = None) -> float:
        return float(self.evaluate(pos, context)[5])


def _finished(pos: Position) -> bool:
    return pos[0][0] == 15 or pos[1][0] == 15


def play_game(
    teacher: Teacher, rng: random.Random, eps: float, keep_others: int, keep_top: int = 1
) -> list[list[Position]]:
    """One game; for every decision with a choice, the candidate results kept.

    Candidates are the positions after each play, seen from the side about to roll next.
    Kept: the chosen, gnubg's best ``keep_top``, and ``keep_others`` random others; enough to
    keep the data varied without flooding it with one decision's siblings."""
    me, opp = START, START
    first = True
    decisions: list[list[Position]] = []
    while True:
        d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
        while first and d1 == d2:
            d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
        first = False
        plays = generate_plays(me, opp, d1, d2)
        results: list[Position] = [(o2, m2) for _, m2, o2 in plays]
        if len(results) > 1:
            scores = [1.0 if _finished(r) else -teacher.equity(r) for r in results]
            # The plays that compete with the best are where a ranking goes wrong: keep them
            # all, and a few others for variety.
            top = sorted(range(len(results)), key=scores.__getitem__, reverse=True)[:keep_top]
            chosen = rng.randrange(len(results)) if rng.random() < eps else top[0]
            others = [i for i in range(len(results)) if i not in (chosen, *top)]
            keep = {chosen, *top, *rng.sample(others, min(keep_others, len(others)))}
            decisions.append([results[i] for i in sorted(keep)])
        else:
            chosen = 0
        nxt = results[chosen]
        if _finished(nxt):
            return decisions
        me, opp = nxt


def generate(
    teacher: Teacher, n_games: int, seed: int, keep_others: int = 3,
    eps_choices: Sequence[float] = (0.02, 0.1, 0.3), keep_top: int = 1,
) -> tuple[list[list[Position]], list[list[list[Position]]]]:
    """Positions per game (to split by game), and each game's decisions (for the report)."""
    rng = random.Random(seed)
    games_positions: list[list[Position]] = []
    games_decisions: list[list[list[Position]]] = []
    for _ in range(n_games):
        decisions = play_game(teacher, rng, rng.choice(eps_choices), keep_others, keep_top)
        seen: dict[Position, None] = {}
        for cands in decisions:
            for c in cands:
                if not _finished(c):
                    seen[c] = None
        games_positions.append(list(seen))
        games_decisions.append([d for d in decisions if len(d) > 1])
    return games_positions, games_decisions


def arrays(teacher: Teacher, positions: Sequence[Position]) -> tuple[F32, F32]:
    """Encoded inputs and gnubg's five probabilities."""
    boards = np.array([[me, opp] for me, opp in positions], dtype=np.int64)
    contact = np.array([bgnet.in_contact(me, opp) for me, opp in positions], dtype=bool)
    x = bgnet.encode_batch(boards, contact)
    y = np.array([teacher.probabilities(p) for p in positions], dtype=np.float32)
    return x, y


def train(
    x: F32, y: F32, hidden: int, epochs: int, seed: int, batch: int = 512,
    lr: float = 3e-3, log: Callable[[str], None] = print,
    valid: tuple[F32, F32] | None = None,
) -> bgnet.BGNet:
    """Adam on the summed cross-entropy of the five outputs; the rate decays linearly."""
    rng = np.random.default_rng(seed)
    n_in = x.shape[1]
    params = {
        "w1": (rng.standard_normal((n_in, hidden)) / np.sqrt(n_in)).astype(np.float32),
        "b1": np.zeros(hidden, np.float32),
        "w2": (rng.standard_normal((hidden, bgnet.N_OUTPUTS)) / np.sqrt(hidden)).astype(
            np.float32),
        "b2": np.zeros(bgnet.N_OUTPUTS, np.float32),
    }
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    b1_, b2_, t = 0.9, 0.999, 0
    n = x.shape[0]
    for epoch in range(epochs):
        rate = lr * (1 - epoch / epochs) + lr * 0.02
        order = rng.permutation(n)
        for start in range(0, n, batch):
            idx = order[start : start + batch]
            xb, yb = x[idx], y[idx]
            h = bgnet.sigmoid(xb @ params["w1"] + params["b1"])
            out = bgnet.sigmoid(h @ params["w2"] + params["b2"])
            d_out = (out - yb) / len(idx)  # cross-entropy through a sigmoid
            d_h = (d_out @ params["w2"].T) * h * (1 - h)
            grads = {
                "w2": h.T @ d_out, "b2": d_out.sum(0),
                "w1": xb.T @ d_h, "b1": d_h.sum(0),
            }
            t += 1
            for k, g in grads.items():
                m[k] = b1_ * m[k] + (1 - b1_) * g
                v[k] = b2_ * v[k] + (1 - b2_) * g * g
                mh = m[k] / (1 - b1_**t)
                vh = v[k] / (1 - b2_**t)
                params[k] -= (rate * mh / (np.sqrt(vh) + 1e-8)).astype(np.float32)
        if valid is not None:
            net = bgnet.BGNet(params["w1"], params["b1"], params["w2"], params["b2"])
            err = np.abs(bgnet.equity_of(net.forward(valid[0])) - bgnet.equity_of(valid[1]))
            log(f"epoch {epoch + 1}/{epochs}: held-out mean |equity error| {err.mean():.4f}")
    return bgnet.BGNet(params["w1"], params["b1"], params["w2"], params["b2"])


Evaluator = Callable[[Board, Board], float]


def report(
    teacher: Teacher,
    positions: Sequence[Position],
    decisions: Sequence[list[Position]],
    evaluators: dict[str, Evaluator],
) -> dict[str, dict[str, float]]:
    """Per evaluator: mean |equity - gnubg's| over the positions (overall and by stage), and
    the mean equity a 1-ply player gives up per decision, judged by gnubg."""
    truth = {p: teacher.equity(p) for p in positions}
    out: dict[str, dict[str, float]] = {}
    for name, ev in evaluators.items():
        errors: dict[str, list[float]] = {"all": [], "contact": [], "race": [], "bearoff": []}
        for p in positions:
            e = abs(ev(*p) - truth[p])
            errors["all"].append(e)
            errors[backgammon_eval.stage(*p)].append(e)
        lost = []
        for cands in decisions:
            # A candidate is the position after the play, seen by the opponent: lower is better.
            judged = [-teacher.equity(c) if not _finished(c) else 1.0 for c in cands]
            mine = [-ev(*c) if not _finished(c) else 1.0 for c in cands]
            pick = max(range(len(cands)), key=mine.__getitem__)
            lost.append(max(judged) - judged[pick])
        row = {f"mae_{k}": float(np.mean(v)) for k, v in errors.items() if v}
        row.update({f"n_{k}": float(len(v)) for k, v in errors.items()})
        row["lost_per_decision"] = float(np.mean(lost))
        row["decisions"] = float(len(lost))
        out[name] = row
    return out


def judge(
    teacher: Teacher, decisions: int, seed: int, levels: Sequence[str] = ("medium", "hard", "max"),
    plies: int = 2,
) -> dict[str, tuple[float, int]]:
    """Per level (and ``gnubg-0ply``): the mean equity given up per decision against the best
    of the compared plays, judged by gnubg at ``plies``, and how many decisions it missed."""
    from engine.games.backgammon import Backgammon
    from engine.search.backgammon_bot import rank_plays

    game = Backgammon()
    referee = teacher.g.eval_context(0, plies, 1, 1, 0.0)

    def after(state: Any) -> Position:
        return state.boards[state.turn], state.boards[1 - state.turn]

    def judged(state: Any, play: Any) -> float:
        nxt = game.apply(state, play)
        if nxt.result is not None:
            return float(nxt.result.points)
        return -teacher.equity(after(nxt), referee)

    def teacher_pick(state: Any) -> Any:
        return max(game.successors(state),
                   key=lambda mc: 1.0 if mc[1].result is not None
                   else -teacher.equity(after(mc[1])))[0]

    rng = random.Random(seed)
    names = [*levels, "gnubg-0ply"]
    losses: dict[str, list[float]] = {n: [] for n in names}
    state = game.initial({"cube": False})
    while len(losses[names[0]]) < decisions:
        if game.outcome(state) is not None:
            state = game.initial({"cube": False})
            continue
        if game.is_chance(state):
            outs = game.chance_outcomes(state)
            state = game.apply_chance(state, rng.choices([o for o, _ in outs],
                                                         [p for _, p in outs])[0])
            continue
        moves = game.legal_moves(state)
        me, opp = state.boards[state.turn], state.boards[1 - state.turn]
        if len(moves) > 3 and backgammon_eval.stage(me, opp) == "contact" and rng.random() < 0.25:
            picks = {n: rank_plays(game, state, n, None, random.Random(0))[0][0][0]
                     for n in levels}
            picks["gnubg-0ply"] = teacher_pick(state)
            value = {m: judged(state, m) for m in set(picks.values())}
            best = max(value.values())
            for n in names:
                losses[n].append(best - value[picks[n]])
        # The games go on by the medium level with some random plays: varied positions.
        state = game.apply(state, rng.choice(moves) if rng.random() < 0.3 else
                           rank_plays(game, state, "medium", None, random.Random(0))[0][0][0])
    return {n: (float(np.mean(v)), sum(1 for x in v if x > 1e-9)) for n, v in losses.items()}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.bgnet_train", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=8000, help="self-play games for the data")
    ap.add_argument("--hidden", type=int, default=160)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep-top", type=int, default=4,
                    help="per decision, keep gnubg's best N plays' positions (and 3 others)")
    ap.add_argument("--out", default=str(bgnet.WEIGHTS))
    ap.add_argument("--report-only", action="store_true",
                    help="measure the shipped network on fresh games instead of training")
    ap.add_argument("--report-games", type=int, default=100)
    ap.add_argument("--judge", type=int, metavar="N",
                    help="judge the levels' plays in N contact decisions instead of training")
    args = ap.parse_args(argv)
    teacher = Teacher()
    t0 = time.perf_counter()
    if args.judge:
        for name, (loss, missed) in judge(teacher, args.judge, args.seed + 2000).items():
            print(f"{name}: {loss:.4f} equity given up per decision, not the best play in "
                  f"{missed} of {args.judge}")
        print(f"{time.perf_counter() - t0:.0f} s")
        return 0
    if args.report_only:
        pos, dec = generate(teacher, args.report_games, args.seed + 1000, keep_others=99)
        flat = [p for g in pos for p in g]
        res = report(teacher, flat, [d for g in dec for d in g], evaluators(
            bgnet.BGNet.load(args.out)))
        _print_report(res)
        return 0
    games_pos, games_dec = generate(teacher, args.games, args.seed, keep_top=args.keep_top)
    print(f"{args.games} games, {sum(map(len, games_pos))} positions in "
          f"{time.perf_counter() - t0:.0f} s", flush=True)
    cut = max(1, args.games // 10)
    train_pos = list(dict.fromkeys(p for g in games_pos[cut:] for p in g))
    valid_pos = [p for g in games_pos[:cut] for p in g]
    x, y = arrays(teacher, train_pos)
    valid = arrays(teacher, valid_pos)
    print(f"train {len(train_pos)}, held out {len(valid_pos)} (from {cut} games)", flush=True)
    net = train(x, y, args.hidden, args.epochs, args.seed, valid=valid,
                log=lambda s: print(s, flush=True))
    np.savez(args.out, w1=net.w1, b1=net.b1, w2=net.w2, b2=net.b2)
    print(f"wrote {args.out} after {time.perf_counter() - t0:.0f} s", flush=True)
    res = report(teacher, valid_pos, [d for g in games_dec[:cut] for d in g],
                 evaluators(net))
    _print_report(res)
    return 0


def evaluators(net: bgnet.BGNet) -> dict[str, Evaluator]:
    """The hand-written evaluation and ``net``, each as the bots use them."""
    return {"hand": backgammon_eval.equity,
            "net": functools.partial(backgammon_eval.net_equity, net=net)}


def _print_report(res: dict[str, dict[str, float]]) -> None:
    for name, row in res.items():
        print(f"{name}: " + ", ".join(
            f"{k} {v:.4f}" if k.startswith(("mae", "lost")) else f"{k} {v:.0f}"
            for k, v in row.items()))


if __name__ == "__main__":
    raise SystemExit(main())
