"""``tablas match`` (contract section 17), as a real process playing real engine processes
(the Python example, examples/engines/random_engine.py, and the engine below) and house
levels: the report card agrees with the games' records; every recorded game replays legally;
paired openings swap seats and repeat with the same seed, and backgammon's pairs share their
dice; engines that answer an illegal move, let their time run out or die lose that game only;
the SPRT stops the match once it decides, its LLR the one computed here from the records; bad
arguments and engines that cannot start are one line on stderr, exit code 2.

The statistics themselves are checked against computations written here (and an exact GSPRT
solved by another method) and against published figures of cutechess-cli, fastchess and a
fishtest instance."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from server_support import ROOT
from tablas.engine.games import get_game
from tablas.server.match import stats

EXAMPLE = ROOT / "examples" / "engines" / "random_engine.py"

# The test's engine: MODE first (the first legal move), illegal (answers a move not
# listed), silent (never answers), die (exits at its first turn), late (dies at its third
# turn), slow (sleeps 0.5 s before each answer).
ENGINE = r'''
import sys, time
mode = sys.argv[1]
legal, turns = [], 0
for raw in iter(sys.stdin.readline, ""):
    line = raw.rstrip("\n")
    if line == "tablas 1":
        print("ready", flush=True)
    elif line.startswith("legal "):
        legal = [sys.stdin.readline().rstrip("\n") for _ in range(int(line.split()[1]))]
    elif line.startswith("go "):
        turns += 1
        if mode == "illegal":
            print("move no such move", flush=True)
        elif mode == "die" or (mode == "late" and turns == 3):
            sys.exit(4)
        elif mode == "silent":
            continue
        else:
            if mode == "slow":
                time.sleep(0.5)
            print("thinking", flush=True)
            print("move " + legal[0], flush=True)
    elif line == "quit":
        break
'''


@pytest.fixture
def engine(tmp_path: Path) -> Path:
    path = tmp_path / "engine.py"
    path.write_text(ENGINE, encoding="utf-8")
    return path


def cmd(engine: Path, mode: str) -> str:
    return f"{sys.executable} {engine} {mode}"


def match(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "tablas.server.cli", "match", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def score(r: dict[str, Any], seat: int) -> float:
    w = r["result"]["winner"]
    return 0.5 if w is None else float(w == seat)


def replay(r: dict[str, Any]) -> None:
    """The record's game, replayed with the engine package: each move legal where it was
    played, each roll where the game rolls; a game that ended by its rules ends there."""
    game = get_game(r["game"])
    state = game.parse_position(r["opening"])
    rolls = {x["ply"]: x["dice"] for x in r.get("rolls", [])}
    used = 0
    for ply in range(len(r["moves"]) + 1):
        while game.is_chance(state):
            assert ply in rolls, (ply, r)
            state = game.apply_chance(state, game.parse_chance(state, rolls.pop(ply)))
            used += 1
        if ply == len(r["moves"]):
            break
        texts = [game.move_text(state, m) for m in game.legal_moves(state)]
        assert r["moves"][ply] in texts, (ply, r["moves"][ply], texts)
        state = game.apply(state, game.legal_moves(state)[texts.index(r["moves"][ply])])
    outcome = game.outcome(state)
    if r["reason"] in ("illegal_move", "time_forfeit", "engine_died"):
        assert outcome is None
    else:
        assert outcome is not None and outcome.to_json() == {
            **r["result"], "reason": r["reason"]}, (outcome, r)


def card_from(recs: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    """The report card's rows, computed here from the records."""
    rows: dict[str, dict[str, list[tuple[float, int]]]] = {
        n: {"all": [], "first": [], "second": []} for n in names}
    for r in recs:
        for name, seat in r["seats"].items():
            got = (score(r, seat), len(r["moves"]))
            rows[name]["all"].append(got)
            rows[name][("first", "second")[seat]].append(got)
    out: dict[str, Any] = {}
    for n, by in rows.items():
        out[n] = {}
        for key, got in by.items():
            out[n][key] = {
                "games": len(got), "wins": sum(1 for s, _ in got if s == 1),
                "draws": sum(1 for s, _ in got if s == 0.5),
                "losses": sum(1 for s, _ in got if s == 0),
                "points": sum(s for s, _ in got),
                "mean_moves": round(sum(m for _, m in got) / len(got), 2) if got else None}
    return out


async def test_the_report_card_agrees_with_the_records_which_replay(
        engine: Path, tmp_path: Path) -> None:
    out = tmp_path / "games.jsonl"
    done = match("--game", "connect4", "--engine", f"example={sys.executable} {EXAMPLE}",
                 "--engine", f"first={cmd(engine, 'first')}", "--level", "random",
                 "--games", "4", "--concurrency", "2", "--move-ms", "500", "--seed", "11",
                 "--out", str(out), "--json")
    report = json.loads(done.stdout)
    recs = records(out)
    assert len(recs) == report["games"] == 12  # three pairs of players, four games each
    expected = card_from(recs, ["example", "first", "bot(random)"])
    for p in report["players"]:
        assert {k: p[k] for k in ("all", "first", "second")} == expected[p["name"]]
    for r in recs:
        replay(r)
        assert set(r) >= {"players", "seats", "opening", "moves", "result", "reason", "ms"}
        assert len(r["ms"]) == 2 and all(ms >= 0 for ms in r["ms"])
    assert report["elo"] is None  # three players: no one Elo difference
    # Progress: a line per game on stderr, the score so far.
    assert len([x for x in done.stderr.splitlines() if x.startswith("game ")]) == 12
    # The text card says the same.
    text = match("--game", "connect4", "--engine", f"first={cmd(engine, 'first')}",
                 "--level", "random", "--games", "2", "--seed", "1").stdout
    assert "first" in text and "bot(random)" in text and "Elo first - bot(random)" in text


async def test_paired_openings_swap_seats_and_repeat_with_the_same_seed(
        engine: Path, tmp_path: Path) -> None:
    runs = []
    for seed, name in (("7", "a"), ("7", "b"), ("8", "c")):
        out = tmp_path / f"{name}.jsonl"
        match("--game", "tictactoe", "--engine", f"first={cmd(engine, 'first')}",
              "--level", "random", "--games", "6", "--openings", "3", "--seed", seed,
              "--out", str(out))
        runs.append(records(out))
    a, b, c = runs
    strip = [{k: v for k, v in r.items() if k != "ms"} for r in a]
    assert strip == [{k: v for k, v in r.items() if k != "ms"} for r in b]
    assert [r["opening"] for r in a] != [r["opening"] for r in c]
    game = get_game("tictactoe")
    for recs in runs:
        pairs: dict[int, list[dict[str, Any]]] = {}
        for r in recs:
            pairs.setdefault(r["pair"], []).append(r)
        assert len(pairs) == 3
        for two in pairs.values():
            x, y = two
            assert x["opening"] == y["opening"]
            assert x["players"] == y["players"][::-1]
            state = game.parse_position(x["opening"])
            assert 9 - x["opening"].count(".") == 3 and game.outcome(state) is None


async def test_openings_from_a_file_are_played_in_turn(engine: Path, tmp_path: Path) -> None:
    openings = tmp_path / "openings.txt"
    openings.write_text("\n44\n4453\n", encoding="utf-8")  # the empty board first
    out = tmp_path / "games.jsonl"
    done = match("--game", "connect4", "--engine", f"first={cmd(engine, 'first')}",
                 "--level", "random", "--games", "8", "--openings", str(openings),
                 "--seed", "4", "--out", str(out), "--json")
    recs = records(out)
    assert [r["opening"] for r in recs] == ["", "", "44", "44", "4453", "4453", "", ""]
    for r in recs:
        replay(r)
    # The Elo difference and its interval, computed here from the records' pairs.
    elo = json.loads(done.stdout)["elo"]
    pairs: dict[int, float] = {}
    for r in recs:
        pairs[r["pair"]] = pairs.get(r["pair"], 0) + score(r, r["seats"]["first"])
    xs = [p / 2 for p in pairs.values()]
    mean = sum(xs) / len(xs)
    half = 1.959963984540054 * math.sqrt(sum((x - mean) ** 2 for x in xs) / len(xs) / len(xs))
    assert elo["player"] == "first" and elo["pairs"] == 4
    for key, p in (("elo", mean), ("low", mean - half), ("high", mean + half)):
        if 0 < p < 1:
            assert math.isclose(elo[key], round(elo_of(p), 2), abs_tol=0.006), (key, elo)
        else:
            assert elo[key] is None


async def test_backgammon_pairs_share_their_dice(engine: Path, tmp_path: Path) -> None:
    out = tmp_path / "bg.jsonl"
    # An engine that never doubles (the first legal move: roll, take), so games run long.
    match("--game", "backgammon", "--engine", f"first={cmd(engine, 'first')}",
          "--level", "easy", "--games", "4", "--seed", "3", "--out", str(out))
    recs = records(out)
    for pair in (0, 1):
        x, y = (r for r in recs if r["pair"] == pair)
        dx, dy = [d["dice"] for d in x["rolls"]], [d["dice"] for d in y["rolls"]]
        n = min(len(dx), len(dy))
        assert n >= 10 and dx[:n] == dy[:n]
        replay(x)
        replay(y)
    assert [d["dice"] for d in recs[0]["rolls"]] != [d["dice"] for d in recs[2]["rolls"]]


@pytest.mark.parametrize(("mode", "reason", "timing"), [
    ("illegal", "illegal_move", ("--move-ms", "1000")),
    ("silent", "time_forfeit", ("--move-ms", "200")),
    ("slow", "time_forfeit", ("--clock", "1+0")),
    ("die", "engine_died", ("--move-ms", "5000")),
    ("late", "engine_died", ("--move-ms", "5000")),
])
async def test_a_broken_engine_loses_its_games_and_the_match_goes_on(
        engine: Path, tmp_path: Path, mode: str, reason: str,
        timing: tuple[str, str]) -> None:
    out = tmp_path / "games.jsonl"
    done = match("--game", "connect4", "--engine", f"broken={cmd(engine, mode)}",
                 "--engine", f"good={cmd(engine, 'first')}", "--games", "4", *timing,
                 "--seed", "2", "--out", str(out), "--json")
    report = json.loads(done.stdout)
    recs = records(out)
    assert len(recs) == 4  # every game played: the match went on with fresh processes
    for r in recs:
        broken = r["seats"]["broken"]
        assert r["result"]["winner"] == 1 - broken and r["reason"] == reason, r
        assert "detail" in r
        replay(r)
    row = next(p for p in report["players"] if p["name"] == "broken")
    assert row["all"]["losses"] == 4 and row["forfeits"] == {reason: 4}
    if mode == "late":  # it played two moves of each game before it died
        assert all(len(r["moves"]) >= 4 for r in recs)


async def test_the_sprt_stops_the_match_once_it_decides(engine: Path, tmp_path: Path
                                                        ) -> None:
    out = tmp_path / "games.jsonl"
    done = match("--game", "tictactoe", "--level", "max",
                 "--engine", f"example={sys.executable} {EXAMPLE}", "--games", "400",
                 "--openings", "0", "--move-ms", "300", "--concurrency", "2",
                 "--sprt", "0", "100", "--seed", "5", "--out", str(out), "--json")
    report = json.loads(done.stdout)
    recs = records(out)
    assert report["games"] == len(recs) < 400
    t = report["sprt"]
    # The first player is the first engine: the example, much weaker than max.
    assert report["elo"]["player"] == "example"
    assert report["elo"]["elo"] is None or report["elo"]["elo"] < 0  # None: -inf
    assert t["decision"] == "H0" and t["llr"] <= t["lower"]
    assert math.isclose(t["lower"], math.log(0.05 / 0.95), abs_tol=1e-4)
    # The LLR, from the records' complete pairs, computed here.
    pairs: dict[int, list[float]] = {}
    for r in recs:
        pairs.setdefault(r["pair"], []).append(score(r, r["seats"]["example"]))
    penta = [0] * 5
    for two in pairs.values():
        if len(two) == 2:
            penta[round(2 * sum(two))] += 1
    assert report["pentanomial"] == penta
    assert math.isclose(t["llr"], gsprt_newton(penta, 0, 100), abs_tol=1e-3)
    assert "SPRT: H0 accepted" in done.stderr
    text = match("--game", "tictactoe", "--level", "max", "--level", "random",
                 "--games", "400", "--openings", "0", "--move-ms", "300",
                 "--sprt", "0", "100", "--seed", "5").stdout
    assert "LLR" in text and "H1 accepted" in text


async def test_bad_arguments_and_engines_that_cannot_start_are_one_line_exit_2(
        engine: Path, tmp_path: Path) -> None:
    good = f"good={cmd(engine, 'first')}"
    bad_file = tmp_path / "openings.txt"
    bad_file.write_text("XXXX\n", encoding="utf-8")
    cases = [
        ["--game", "connect4", "--engine", good],  # one player
        ["--game", "chess", "--engine", good, "--level", "easy"],
        ["--game", "connect4", "--engine", good, "--level", "easiest"],
        ["--game", "connect4", "--engine", "no name", "--level", "easy"],
        ["--game", "connect4", "--engine", good, "--engine", good],
        ["--game", "connect4", "--engine", good, "--level", "easy", "--games", "3"],
        ["--game", "connect4", "--engine", good, "--level", "easy", "--concurrency", "0"],
        ["--game", "connect4", "--engine", good, "--level", "easy", "--move-ms", "10",
         "--clock", "1+0"],
        ["--game", "connect4", "--engine", good, "--level", "easy", "--clock", "fast"],
        ["--game", "connect4", "--engine", good, "--level", "easy", "--level", "max",
         "--sprt", "0", "5"],
        ["--game", "connect4", "--engine", good, "--level", "easy", "--sprt", "5", "0"],
        ["--game", "connect4", "--engine", good, "--level", "easy", "--sprt", "0", "5",
         "--alpha", "0.7"],
        ["--game", "connect4", "--engine", good, "--level", "easy", "--openings",
         str(tmp_path / "missing.txt")],
        ["--game", "tictactoe", "--engine", good, "--level", "easy", "--openings",
         str(bad_file)],
        ["--game", "connect4", "--engine", "x=surely-no-such-program", "--level", "easy"],
        ["--game", "connect4", "--engine", f"x={sys.executable} -c pass", "--level", "easy"],
        ["--game", "connect4", "--engine", good, "--level", "easy", "--out",
         str(tmp_path / "no" / "such" / "dir.jsonl")],
    ]
    runs = await asyncio.gather(*(asyncio.to_thread(match, *args, check=False)
                                  for args in cases))
    for args, done in zip(cases, runs, strict=True):
        assert done.returncode == 2, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, (args, done.stderr)
        assert done.stdout == ""


async def test_an_engine_that_forks_leaves_nothing_running(tmp_path: Path) -> None:
    from test_bot_contained import FORKING_ENGINE, none_left

    script = tmp_path / "forking_engine.py"
    script.write_text(FORKING_ENGINE, encoding="utf-8")
    pids = tmp_path / "pids"
    pids.mkdir()
    forker = f"forker={sys.executable} {script} {pids}"
    done = await asyncio.to_thread(match, "--game", "tictactoe", "--engine", forker,
                                   "--level", "random", "--games", "2", "--json")
    assert json.loads(done.stdout)["games"] == 2
    assert len(list(pids.iterdir())) == 6  # the check and two games, a child and grandchild
    assert await none_left(pids, timeout=1.0) == []
    done = await asyncio.to_thread(match, "--game", "tictactoe", "--engine", forker,
                                   "--engine", f"{forker.replace('forker=', 'dier=')} die",
                                   "--games", "2", "--json")
    assert json.loads(done.stdout)["players"][1]["forfeits"] == {"engine_died": 2}
    assert await none_left(pids, timeout=1.0) == []


# --- the statistics ---------------------------------------------------------------------

def elo_of(p: float) -> float:
    return 400 * math.log10(p / (1 - p))


def gsprt_newton(penta: list[int], elo0: float, elo1: float) -> float:
    """The exact GSPRT, written again here: for each hypothesis the distribution of largest
    likelihood whose mean is its expected score, θ found by Newton's method on the
    stationarity condition (stats.py bisects), then the log-likelihood ratio."""
    counts = [c if c else 1e-3 for c in penta]
    n = sum(counts)
    q = [c / n for c in counts]
    a = [0, 0.25, 0.5, 0.75, 1]

    def fitted(s: float) -> list[float]:
        d = [x - s for x in a]
        theta = 0.0
        for _ in range(100):
            f = sum(qi * di / (1 + theta * di) for qi, di in zip(q, d))
            df = -sum(qi * di * di / (1 + theta * di) ** 2 for qi, di in zip(q, d))
            step = f / df
            # Stay inside the poles, where every probability is positive.
            while any(1 + (theta - step) * di <= 0 for di in d):
                step /= 2
            theta -= step
            if abs(step) < 1e-15:
                break
        return [qi / (1 + theta * di) for qi, di in zip(q, d)]

    s0, s1 = (1 / (1 + 10 ** (-e / 400)) for e in (elo0, elo1))
    p0, p1 = fitted(s0), fitted(s1)
    return n * sum(qi * math.log(x / y) for qi, x, y in zip(q, p1, p0))


def test_elo_and_its_interval_as_cutechess_and_fastchess_print_them() -> None:
    # cutechess-cli: "Score of midnight-dev vs midnight-latest: 449 - 276 - 275 [0.587]
    # 1000 ... Elo difference: 60.7 +/- 18.5" (W - L - D).
    est = stats.trinomial(449, 275, 276)
    assert est is not None
    assert round(est.elo, 1) == 60.7 and round(est.margin, 1) == 18.5
    # cutechess-cli: "1571 - 1448 - 1981 [0.512] 5000 ... Elo difference: 8.5 +/- 7.5".
    est = stats.trinomial(1571, 1981, 1448)
    assert est is not None and round(est.elo, 1) == 8.5 and round(est.margin, 1) == 7.5
    # fastchess: "Elo: 4.00 +/- 5.68 ... Ptnml(0-2): [5, 109, 748, 134, 4]".
    est = stats.pentanomial([5, 109, 748, 134, 4])
    assert est is not None and round(est.elo, 2) == 4.00 and round(est.margin, 2) == 5.68


def test_the_gsprt_as_a_fishtest_instance_publishes_it() -> None:
    # montytest (fishtest's software), test 69d3c8dc7c5b3724e29d2712: results [0-2]
    # [13, 37, 50, 25, 3], H1 at 2.716 logistic Elo (normalized 4.0), "Logistic (exact)"
    # LLR -0.53772, Elo -43.6578; bounds ±2.9444 for alpha = beta = 0.05.
    assert math.isclose(stats.llr([13, 37, 50, 25, 3], 0.0, 2.716), -0.53772, abs_tol=2e-4)
    est = stats.pentanomial([13, 37, 50, 25, 3])
    assert est is not None and math.isclose(est.elo, -43.6578, abs_tol=1e-4)
    lower, upper = stats.bounds(0.05, 0.05)
    assert round(lower, 4) == -2.9444 and round(upper, 4) == 2.9444


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 400), min_size=5, max_size=5).filter(lambda c: sum(c) > 0),
       st.floats(-200, 200), st.floats(0.5, 100))
def test_the_gsprt_agrees_with_an_independent_computation(penta: list[int], elo0: float,
                                                          width: float) -> None:
    elo1 = elo0 + width
    assert math.isclose(stats.llr(penta, elo0, elo1), gsprt_newton(penta, elo0, elo1),
                        rel_tol=1e-6, abs_tol=1e-6)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 300), st.integers(0, 300), st.integers(0, 300))
def test_elo_and_interval_agree_with_an_independent_computation(w: int, d: int, lost: int
                                                                ) -> None:
    n = w + d + lost
    est = stats.trinomial(w, d, lost)
    if n == 0:
        assert est is None
        return
    assert est is not None
    p = (w + d / 2) / n
    var = (w * (1 - p) ** 2 + d * (0.5 - p) ** 2 + lost * p ** 2) / n
    half = 1.959963984540054 * math.sqrt(var / n)
    if 0 < p - half and p + half < 1:
        assert math.isclose(est.elo, elo_of(p), abs_tol=1e-9)
        assert math.isclose(est.low, elo_of(p - half), abs_tol=1e-9)
        assert math.isclose(est.high, elo_of(p + half), abs_tol=1e-9)


async def test_the_benchmark_tool_runs() -> None:
    """tools/match_bench.py (docs/benchmarks.md), one tiny round: its figures are there."""
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "tools.match_bench", "--rounds", "1",
                         "--games", "4", "--round-trips", "200"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    row, median = (json.loads(line) for line in done.stdout.splitlines())
    assert row["moves_per_second"] > 0 and row["cpu_us_per_move"] > 0
    assert row["round_trip_us"] > 0 and median["median"]["ratio"] == row["ratio"]
