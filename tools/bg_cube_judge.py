"""Judge the backgammon bots' money cube with GNU Backgammon's cubeful cube analysis.

    python -m tools.bg_cube_judge --positions 300                 # medium, hard and max
    python -m tools.bg_cube_judge --levels max --games-by medium --plies 2

Positions: before a roll, from the games ``tools.bg_judge`` takes its decisions from (the
same ``--seed``, ``--games-by``, ``--random-plays``, by stage), the cube centred, a money game
without the Jacoby rule or beavers, as the server plays it. Each position gives two
decisions: the side on roll's (no double or double) and, doubled, the other side's (take or
drop). Each level decides as the server's bot does (``tablas.engine.search.bots.decide``).

The judge is gnubg's own cube analysis (Debian's ``/usr/games/gnubg``, run once for all the
positions), at ``--plies`` (2): its cubeful equities of no double (ND), double/take (DT) and
double/pass (DP) for the side on roll. An action's error is what it gives up against the
best one by those equities: the doubler's best is max(ND, min(DT, DP)), the taker's
max(-DT, -DP). gnubg's 0-ply cube action is judged too, for scale. Reported per level: the
mean error per decision (doubler's and taker's together, then each), how many actions were
not gnubg's, and the same over the close decisions (gnubg's two answers within
``--close`` of each other), where a cube model is really tested: most positions of a game
are clear no doubles and clear takes.

Needs Debian's ``gnubg`` (the test script installs it). Randomness comes only from ``--seed``.
"""

from __future__ import annotations

import argparse
import base64
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tablas.engine.games.backgammon import Backgammon, BGState, encode_position_id
from tablas.engine.search.bots import decide

from tools.bg_judge import STAGES, Judge, decisions, progress
from tools.bgnet_train import Teacher

GNUBG = "/usr/games/gnubg"
ACTIONS = {"No double": "nd", "Double, take": "dt", "Double, pass": "dp"}
_ID = re.compile(r"^Setting GNUbg ID (\S+):(\S+)")
_EQ = re.compile(r"^\s*\d\.\s+(No double|Double, take|Double, pass)\s+([+-]?\d+\.\d+)")
_P = r"(-?\d\.\d+)"  # gnubg prints a rounded 0 as -0.000 at times
_PROBS = re.compile(rf"^\s+{_P} {_P} {_P} - {_P} {_P} {_P}$")


def match_id(cube: int = 1, doubled: bool = False) -> str:
    """gnubg's Match ID of a money game before the roll of player 0, the cube centred at
    ``cube`` (offered if ``doubled``): the bit fields of gnubg's format, lowest first."""
    fields = [(4, cube.bit_length() - 1), (2, 3), (1, 0), (1, 0), (3, 1), (1, 0),
              (1, int(doubled)), (2, 0), (3, 0), (3, 0), (15, 0), (15, 0), (15, 0)]
    value, pos = 0, 0
    for width, v in fields:
        value |= v << pos
        pos += width
    return base64.b64encode(value.to_bytes(9, "little")).decode()


def gnubg_cube(position_ids: Sequence[str], plies: int) -> list[dict[str, Any]]:
    """gnubg's cube analysis of each position (a Position ID with the player on roll as
    gnubg's player 0) at ``plies``: its cubeful equities ``nd``, ``dt`` and ``dp``, and
    ``probs``, the five cubeless probabilities they come from (3 decimals, as it prints
    them)."""
    mid = match_id()
    lines = ["set display off", "set beavers 0",
             "set player 0 human", "set player 1 human", "new session",
             f"set evaluation cubedecision evaluation plies {plies}"]
    for pid in position_ids:
        # The Jacoby rule is the session's, and setting an ID may bring gnubg's default back.
        lines += [f"set gnubgid {pid}:{mid}", "set jacoby off", "hint"]
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as script:
        script.write("\n".join(lines) + "\n")
        script.flush()
        with open(script.name) as stdin:
            out = subprocess.run([GNUBG, "-t", "-q"], stdin=stdin, capture_output=True,
                                 text=True, check=True).stdout
    found: dict[str, dict[str, Any]] = {}
    current: str | None = None
    for line in out.splitlines():
        m = _ID.match(line)
        if m:
            current = m.group(1)
            found[current] = {}
            continue
        m = _EQ.match(line)
        if m and current is not None:
            found[current][ACTIONS[m.group(1)]] = float(m.group(2))
        m = _PROBS.match(line)
        if m and current is not None and "probs" not in found[current]:
            win, wg, wbg, _lose, lg, lbg = (abs(float(x)) for x in m.groups())
            found[current]["probs"] = [win, wg, wbg, lg, lbg]
    missing = [p for p in position_ids if len(found.get(p, {})) != 4]
    if missing:
        raise RuntimeError(f"gnubg gave no cube analysis for {missing[:3]}")
    return [found[p] for p in position_ids]


def errors_of(g: dict[str, Any], double: bool, take: bool) -> tuple[float, float]:
    """The doubler's and the taker's errors, by gnubg's equities ``g``, of a double (or not)
    and a take (or drop)."""
    answer = min(g["dt"], g["dp"])
    doubler = max(g["nd"], answer) - (answer if double else g["nd"])
    taker = max(-g["dt"], -g["dp"]) - (-g["dt"] if take else -g["dp"])
    return doubler, taker


def run(levels: Sequence[str], n: int, seed: int, plies: int, games_by: str,
        random_plays: float, show_progress: bool = True) -> dict[str, Any]:
    game = Backgammon()
    player = None
    if games_by == "gnubg":
        judge = Judge(Teacher(), game, plies)
        player = lambda s: judge.candidates(s)[0]  # noqa: E731
    picked, _ = decisions(game, n, seed, set(), STAGES, player, random_plays)
    rolls = [(stage, BGState(s.boards, s.turn, "roll", None, 1, None, True))
             for stage, s in picked]
    ids = [encode_position_id(s.boards[s.turn], s.boards[1 - s.turn]) for _, s in rolls]
    t0 = time.perf_counter()
    truth = gnubg_cube(ids, plies)
    zero = gnubg_cube(ids, 0)
    print(f"gnubg: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    names = [*levels, "gnubg-0ply"]
    rows: dict[str, list[dict[str, Any]]] = {x: [] for x in names}
    t0 = time.perf_counter()
    for i, ((stage, s), g, z) in enumerate(zip(rolls, truth, zero)):
        picks: dict[str, tuple[bool, bool]] = {}
        for level in levels:
            double = decide("backgammon", s, level, None, 0).move["action"] == "double"
            taken = decide("backgammon", game.apply(s, "double"), level, None, 0)
            picks[level] = (double, taken.move["action"] == "take")
        picks["gnubg-0ply"] = (min(z["dt"], z["dp"]) > z["nd"], z["dt"] <= z["dp"])
        close_d = abs(g["nd"] - min(g["dt"], g["dp"]))
        close_t = abs(g["dt"] - g["dp"])
        for x, (double, take) in picks.items():
            ed, et = errors_of(g, double, take)
            rows[x].append({"stage": stage, "doubler": ed, "taker": et,
                            "close_doubler": close_d, "close_taker": close_t})
        if show_progress:
            progress("cube", i + 1, len(rolls), t0)
    return {"rows": rows, "n": len(rolls), "plies": plies}


def _mean(xs: Sequence[float]) -> float:
    return statistics.fmean(xs) if xs else float("nan")


def report(res: dict[str, Any], close: float) -> str:
    out = [f"{res['n']} positions before the roll (two decisions each), judged by gnubg "
           f"{res['plies']}-ply cubeful; close: gnubg's two answers within {close}", "",
           "| level | error per decision | doubler | taker | not gnubg's | close decisions "
           "| error per close decision | not gnubg's (close) |",
           "|---|---|---|---|---|---|---|---|"]
    for name, rows in res["rows"].items():
        d = [r["doubler"] for r in rows]
        t = [r["taker"] for r in rows]
        cd = [r["doubler"] for r in rows if r["close_doubler"] < close]
        ct = [r["taker"] for r in rows if r["close_taker"] < close]
        miss = sum(e > 0 for e in d + t)
        miss_close = sum(e > 0 for e in cd + ct)
        out.append(f"| {name} | {_mean(d + t):.4f} | {_mean(d):.4f} | {_mean(t):.4f} | "
                   f"{miss} of {len(d + t)} | {len(cd + ct)} | {_mean(cd + ct):.4f} | "
                   f"{miss_close} |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.bg_cube_judge", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--positions", type=int, default=300)
    ap.add_argument("--levels", default="medium,hard,max")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--plies", type=int, default=2, help="gnubg's plies (default 2)")
    ap.add_argument("--games-by", choices=("medium", "gnubg"), default="gnubg")
    ap.add_argument("--random-plays", type=float, default=0.1)
    ap.add_argument("--close", type=float, default=0.2,
                    help="a decision is close when gnubg's two answers are nearer (default 0.2)")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if not Path(GNUBG).exists():
        ap.error(f"needs GNU Backgammon at {GNUBG}: apt-get install gnubg")
    res = run(args.levels.split(","), args.positions, args.seed, args.plies, args.games_by,
              args.random_plays, not args.no_progress)
    print(report(res, args.close))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
