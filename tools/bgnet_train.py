"""Fit :mod:`tablas.engine.search.bgnet` to GNU Backgammon's evaluations, and measure the result.

    # the shipped bgnet.npz: the defaults (data and checkpoints stay out of git)
    python -m tools.bgnet_train --checkpoint bgdata/ck.npz
    # one data file alone, e.g. games played by the hand-written evaluation
    python -m tools.bgnet_train --make-data bgdata/h.npz --policy hand --eps 0.1,0.3,0.5
    python -m tools.bgnet_train --data bgdata/a.npz --data bgdata/b.npz --out other.npz
    python -m tools.bgnet_train --report-only                 # measures the shipped net

With no ``--data``, the network is fitted to the two files of :data:`DEFAULT_DATA`, each made
first when missing (16,000 games each), so that one command goes from nothing to the shipped
weights; ``--data`` names other files, ``--make-data`` makes one file alone.
``--checkpoint`` saves the training's state after every epoch; the same command run again
after a stop goes on from the last epoch and ends with the same weights. Progress bars go to
stderr. Run it on one core (``nice -n 19 taskset -c 1 ...``): a file of 16,000 games takes
8 to 13 minutes to make, an epoch of both about 125 s at 256 hidden units.

Positions come from games played by this engine's own move generator, each play chosen by
gnubg's 0-ply equity or by the hand-written evaluation (``--policy``), with some exploration
(a random play with probability ``eps``, drawn per game), so that the network sees both the
positions good players reach and the odd ones weak players leave. From every decision the
chosen result and a few of the other candidates are kept: those are the positions a search
asks the evaluation about; so is the result of a roll with one play or none (after a dance,
the side to roll faces checkers on the bar, which a search meets all the time and which no
choice ever leads to). Every position is labelled with gnubg's 0-ply probabilities (win,
gammon, backgammon, for each side), the network's five outputs are fitted to them by
cross-entropy (Adam, minibatches), and a held-out tenth of each file's games measures the fit.

The report compares the network and the hand-written evaluation of
:mod:`tablas.engine.search.backgammon_eval` against gnubg on the held-out games: the mean absolute
equity error, and the equity (by gnubg's judgement) a 1-ply player using each evaluation gives
up per decision compared to gnubg's own choice.

The levels' play, judged by gnubg at 2 plies on positions never trained on, is measured by
``python -m tools.bg_judge``.

This needs the ``gnubg`` package (in the ``test`` extra); the server and the bots never import
it. Randomness comes only from ``--seed``.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from tablas.engine.games.backgammon import START, Board, generate_plays
from tablas.engine.search import backgammon_eval, bgfeatures, bgnet

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


POLICIES = ("gnubg", "hand")


def play_game(
    teacher: Teacher, rng: random.Random, eps: float, keep_others: int, keep_top: int = 1,
    policy: str = "gnubg",
) -> list[list[Position]]:
    """One game; for every decision, the candidate results kept.

    Candidates are the positions after each play, seen from the side about to roll next.
    Kept: the chosen, gnubg's best ``keep_top``, and ``keep_others`` random others; enough to
    keep the data varied without flooding it with one decision's siblings. A roll with one
    play (or none: a dance) keeps its result too, as a decision of one: a search meets those
    positions as often as any.

    The play is gnubg 0-ply's best (``policy="gnubg"``) or the hand-written evaluation's
    (``"hand"``, as the ``medium`` bot plays, reaching the odd positions a weaker player
    leaves: three checkers on the bar, a crunched board), a random one with probability
    ``eps``."""
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
            if rng.random() < eps:
                chosen = rng.randrange(len(results))
            elif policy == "hand":
                chosen = max(range(len(results)), key=lambda i: 1.0 if _finished(results[i])
                             else -backgammon_eval.equity(*results[i]))
            else:
                chosen = top[0]
            others = [i for i in range(len(results)) if i not in (chosen, *top)]
            keep = {chosen, *top, *rng.sample(others, min(keep_others, len(others)))}
            decisions.append([results[i] for i in sorted(keep)])
        else:
            chosen = 0
            decisions.append(results)
        nxt = results[chosen]
        if _finished(nxt):
            return decisions
        me, opp = nxt


def generate(
    teacher: Teacher, n_games: int, seed: int, keep_others: int = 3,
    eps_choices: Sequence[float] = (0.02, 0.1, 0.3), keep_top: int = 1,
    policy: str = "gnubg",
) -> tuple[list[list[Position]], list[list[list[Position]]]]:
    """Positions per game (to split by game), and each game's decisions (for the report)."""
    rng = random.Random(seed)
    games_positions: list[list[Position]] = []
    games_decisions: list[list[list[Position]]] = []
    t0 = time.perf_counter()
    for k in range(n_games):
        if k % 50 == 0:
            progress("games", k, n_games, t0)
        decisions = play_game(teacher, rng, rng.choice(eps_choices), keep_others, keep_top,
                              policy)
        seen: dict[Position, None] = {}
        for cands in decisions:
            for c in cands:
                if not _finished(c):
                    seen[c] = None
        games_positions.append(list(seen))
        games_decisions.append([d for d in decisions if len(d) > 1])
    progress("games", n_games, n_games, t0)
    return games_positions, games_decisions


def progress(label: str, done: int, total: int, t0: float) -> None:
    """A one-line progress bar on stderr (rewritten in place), with the time left."""
    frac = done / max(total, 1)
    spent = time.perf_counter() - t0
    left = spent / frac - spent if frac > 0 else 0.0
    bar = "#" * int(30 * frac)
    sys.stderr.write(f"\r{label} [{bar:<30}] {done}/{total} {spent:.0f} s, {left:.0f} s left")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def boards_array(positions: Sequence[Position]) -> npt.NDArray[np.int8]:
    """``(n, 2, 26)`` counts, side 0 about to roll: how positions are stored on disk."""
    return np.array([[me, opp] for me, opp in positions], dtype=np.int8)


def encode(boards: npt.NDArray[np.int8], expert: F32 | None = None) -> F32:
    """The network's inputs for stored boards; ``expert``, the boards' expert inputs if they
    were computed already (:func:`expert_inputs`)."""
    b = boards.astype(np.int64)
    x = bgnet.encode_batch(b, bgnet.contact_batch(b), expert=expert is None)
    return x if expert is None else np.concatenate([x, expert], axis=1)


def expert_inputs(boards: npt.NDArray[np.int8], chunk: int = 20000) -> F32:
    """:func:`tablas.engine.search.bgfeatures.features` of many stored boards, with a progress bar:
    computed once before training rather than for every minibatch of every epoch."""
    out = np.empty((len(boards), bgfeatures.N_FEATURES), dtype=np.float32)
    t0 = time.perf_counter()
    for start in range(0, len(boards), chunk):
        out[start:start + chunk] = bgfeatures.features(boards[start:start + chunk])
        progress("expert inputs", min(start + chunk, len(boards)), len(boards), t0)
    return out


def label(teacher: Teacher, positions: Sequence[Position], context: Any = None) -> F32:
    """gnubg's five probabilities of every position, with a progress bar."""
    out = np.empty((len(positions), bgnet.N_OUTPUTS), dtype=np.float32)
    t0 = time.perf_counter()
    for i, p in enumerate(positions):
        out[i] = teacher.evaluate(p, context)[:5]
        if i % 2000 == 0 or i + 1 == len(positions):
            progress("label", i + 1, len(positions), t0)
    return out


def make_data(teacher: Teacher, path: str, games: int, seed: int, keep_top: int,
              plies: int = 0, policy: str = "gnubg",
              eps_choices: Sequence[float] = (0.02, 0.1, 0.3)) -> None:
    """Games, their positions and gnubg's labels, saved to ``path`` (an ``.npz``): boards,
    labels and each position's game (the first tenth of the games is the held-out part)."""
    t0 = time.perf_counter()
    games_pos, _ = generate(teacher, games, seed, keep_top=keep_top, policy=policy,
                            eps_choices=eps_choices)
    print(f"{games} games, {sum(map(len, games_pos))} positions in "
          f"{time.perf_counter() - t0:.0f} s", flush=True)
    positions = [p for g in games_pos for p in g]
    game_of = np.array([i for i, g in enumerate(games_pos) for _ in g], dtype=np.int32)
    context = teacher.g.eval_context(0, plies, 1, 1, 0.0) if plies else None
    y = label(teacher, positions, context)
    cut = max(1, games // 10)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, boards=boards_array(positions), y=y, game=game_of,
                        cut=np.int32(cut), seed=np.int32(seed), plies=np.int32(plies),
                        policy=np.array(policy), eps=np.array(eps_choices, dtype=np.float32))
    print(f"wrote {path} after {time.perf_counter() - t0:.0f} s", flush=True)


def arrays(teacher: Teacher, positions: Sequence[Position]) -> tuple[F32, F32]:
    """Encoded inputs and gnubg's five probabilities."""
    boards = np.array([[me, opp] for me, opp in positions], dtype=np.int64)
    contact = np.array([bgnet.in_contact(me, opp) for me, opp in positions], dtype=bool)
    x = bgnet.encode_batch(boards, contact)
    y = np.array([teacher.probabilities(p) for p in positions], dtype=np.float32)
    return x, y


def _inputs(x: npt.NDArray[Any], expert: F32 | None = None) -> F32:
    """Encoded inputs as they are, or stored boards (``(n, 2, 26)``) encoded now."""
    return encode(x, expert) if x.ndim == 3 else x


def train(
    x: npt.NDArray[Any], y: F32, hidden: int, epochs: int, seed: int, batch: int = 512,
    lr: float = 3e-3, log: Callable[[str], None] = print,
    valid: tuple[npt.NDArray[Any], F32] | None = None, checkpoint: str | None = None,
    show_progress: bool = False, expert: F32 | None = None,
) -> bgnet.BGNet:
    """Adam on the summed cross-entropy of the five outputs; the rate decays linearly.

    ``x`` is encoded inputs or stored boards (encoded a minibatch at a time, so that millions
    of positions fit in memory), with ``expert`` the boards' expert inputs if computed
    already (one row per row of ``x``). With ``checkpoint`` (a path), the weights and the
    optimiser's state are saved after every epoch, and a run finding the file goes on from
    there: the result is the same as an uninterrupted run's (the random generator's state is
    saved too)."""
    rng = np.random.default_rng(seed)
    n_in = bgnet.N_INPUTS
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
    first = 0
    if checkpoint and Path(checkpoint).exists():
        with np.load(checkpoint) as ck:
            if ck["w1"].shape != params["w1"].shape:
                raise SystemExit(f"{checkpoint}: a checkpoint of another network's shape")
            params = {k: ck[k] for k in params}
            m = {k: ck["m_" + k] for k in params}
            v = {k: ck["v_" + k] for k in params}
            t, first = int(ck["t"]), int(ck["epoch"])
            rng.bit_generator.state = json.loads(str(ck["rng"]))
        log(f"resumed from {checkpoint} after epoch {first}")
    vx = _inputs(valid[0]) if valid is not None else None
    n = x.shape[0]
    for epoch in range(first, epochs):
        rate = lr * (1 - epoch / epochs) + lr * 0.02
        order = rng.permutation(n)
        t0 = time.perf_counter()
        for start in range(0, n, batch):
            idx = order[start : start + batch]
            xb, yb = _inputs(x[idx], None if expert is None else expert[idx]), y[idx]
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
            if show_progress and (start // batch) % 200 == 0:
                progress(f"epoch {epoch + 1}/{epochs}", min(start + batch, n), n, t0)
        if show_progress:
            progress(f"epoch {epoch + 1}/{epochs}", n, n, t0)
        if checkpoint:
            tmp = checkpoint + ".tmp.npz"
            np.savez(tmp, **params, **{"m_" + k: a for k, a in m.items()},
                     **{"v_" + k: a for k, a in v.items()}, t=np.int64(t),
                     epoch=np.int64(epoch + 1),
                     rng=np.array(json.dumps(rng.bit_generator.state)))
            Path(tmp).replace(checkpoint)
        if valid is not None and vx is not None:
            net = bgnet.BGNet(params["w1"], params["b1"], params["w2"], params["b2"])
            err = np.abs(bgnet.equity_of(net.forward(vx)) - bgnet.equity_of(valid[1]))
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


# The shipped network's data when no --data is given: games played by gnubg and games played
# by the hand-written evaluation, each made first if missing (path, policy, seed, eps).
DEFAULT_DATA = (
    ("bgdata/bgnet-gnubg.npz", "gnubg", 11, (0.02, 0.1, 0.3)),
    ("bgdata/bgnet-hand.npz", "hand", 12, (0.1, 0.3, 0.5)),
)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.bgnet_train", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=16000,
                    help="games per data file made (default data: each file)")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=16)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--keep-top", type=int, default=4,
                    help="per decision, keep gnubg's best N plays' positions (and 3 others)")
    ap.add_argument("--out", default=str(bgnet.WEIGHTS))
    ap.add_argument("--report-only", action="store_true",
                    help="measure the shipped network on fresh games instead of training")
    ap.add_argument("--report-games", type=int, default=100)
    ap.add_argument("--data", metavar="NPZ", action="append",
                    help="labelled positions to train on, again for several files (a single "
                    "one is made first if missing, from the flags); default: the files of "
                    "DEFAULT_DATA under bgdata/ (ignored by git), each made if missing")
    ap.add_argument("--checkpoint", metavar="NPZ", default=None,
                    help="save the training's state here every epoch, and resume from it")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--make-data", metavar="NPZ",
                    help="play --games games, label their positions, save them, and stop")
    ap.add_argument("--label-plies", type=int, default=0,
                    help="gnubg's plies for the labels of --make-data (0: its network alone)")
    ap.add_argument("--policy", choices=POLICIES, default="gnubg",
                    help="who plays the data's games: gnubg 0-ply, or the hand-written "
                    "evaluation (medium's play)")
    ap.add_argument("--eps", default="0.02,0.1,0.3",
                    help="the chances of a random play, one drawn per game")
    args = ap.parse_args(argv)
    eps = tuple(float(e) for e in args.eps.split(","))
    teacher = Teacher()
    made = functools.partial(make_data, teacher=teacher, games=args.games,
                             keep_top=args.keep_top, plies=args.label_plies)
    t0 = time.perf_counter()
    if args.make_data:
        made(path=args.make_data, seed=args.seed, policy=args.policy, eps_choices=eps)
        return 0
    if args.report_only:
        _report_fresh(teacher, args.report_games, args.seed, bgnet.BGNet.load(args.out))
        return 0
    if args.data:
        data_files = args.data
        missing = [d for d in data_files if not Path(d).exists()]
        if missing and len(data_files) > 1:
            ap.error(f"{', '.join(missing)} missing: make each with --make-data first")
        for path in missing:
            made(path=path, seed=args.seed, policy=args.policy, eps_choices=eps)
    else:
        data_files = [path for path, _, _, _ in DEFAULT_DATA]
        for path, policy, seed, spec_eps in DEFAULT_DATA:
            if not Path(path).exists():
                made(path=path, seed=seed, policy=policy, eps_choices=spec_eps)
    parts = []
    for path in data_files:
        with np.load(path) as data:
            # The first tenth of each file's games is held out.
            parts.append((data["boards"], data["y"], data["game"] < int(data["cut"])))
    boards = np.concatenate([b for b, _, _ in parts])
    y = np.concatenate([t for _, t, _ in parts])
    held = np.concatenate([h for _, _, h in parts])
    # One row per distinct training position: a position many games reach weighs once.
    rows = np.flatnonzero(~held)
    first = np.unique(boards[rows].reshape(len(rows), -1), axis=0, return_index=True)[1]
    train_idx = rows[np.sort(first)]
    print(f"train {len(train_idx)}, held out {int(held.sum())}", flush=True)
    net = train(boards[train_idx], y[train_idx], args.hidden, args.epochs, args.seed,
                valid=(boards[held], y[held]), log=lambda s: print(s, flush=True),
                checkpoint=args.checkpoint, show_progress=True, lr=args.lr,
                expert=expert_inputs(boards[train_idx]))
    np.savez(args.out, w1=net.w1, b1=net.b1, w2=net.w2, b2=net.b2)
    print(f"wrote {args.out} after {time.perf_counter() - t0:.0f} s", flush=True)
    _report_fresh(teacher, args.report_games, args.seed, net)
    return 0


def _report_fresh(teacher: Teacher, games: int, seed: int, net: bgnet.BGNet) -> None:
    """The report on fresh games (another seed): every candidate of every decision kept."""
    pos, dec = generate(teacher, games, seed + 1000, keep_others=99)
    flat = [p for g in pos for p in g]
    _print_report(report(teacher, flat, [d for g in dec for d in g], evaluators(net)))


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
