"""The load generator's smoke run (the real run is ``python -m tools.load load``; see
docs/benchmarks.md): a few games and spectators over real sockets to a server process, a
few seconds, then the report's fields must be sane. No speed target here."""

from __future__ import annotations

import math
from pathlib import Path

from tools.load import CHURN_MODES, Burst, run_burst, run_churn, run_compare, run_load

ROOT = Path(__file__).resolve().parents[2]


def test_load_smoke_report_is_sane() -> None:
    report = run_load(games=5, spectators=5, seconds=3.0, think=(0.1, 0.3), sat_games=4,
                      sat_seconds=2.0, workers=1)
    human, sat, echo = report["human"], report["saturation"], report["echo"]
    frames = report["frames_only"]
    assert human["sockets"] == 5 * 2 + 5
    assert human["errors"] == 0 and sat["errors"] == 0 and echo["errors"] == 0
    assert frames["errors"] == 0 and frames["sockets"] == 4 * 2
    assert human["moves"] > 10 and human["moves_per_s"] > 0
    for key in ("own_update", "opponent_update", "spectator_update"):
        lat = human[key]
        assert lat["n"] > 0 and 0 < lat["p50_ms"] <= lat["p99_ms"] < 10_000, (key, lat)
    server = human["server"]
    assert server["lag_samples"] > 0 and server["lag_p99_ms"] >= 0
    assert 10 < server["VmRSS"] <= server["VmHWM"] < 4096  # MiB, read from /proc
    assert sat["moves_per_s"] > human["moves_per_s"]
    # thousands of moves allocate enough for young collections; each is timed
    pauses = sat["server"]["gc_pauses"]
    assert pauses["gen0"]["n"] > 0, pauses
    for gen in pauses.values():
        assert 0 <= gen["max_ms"] <= gen["total_ms"], pauses
    assert sat["server"]["gc_objects"] > 1000
    assert isinstance(sat["server"]["full_collection_freed"], int)
    # every move is a write of the window's group commits (rooms and seats are writes too)
    commits = sat["server"]["commits"]
    assert commits["transactions"] * commits["writes_per_transaction"] >= 0.9 * sat["moves"]
    assert commits["transaction_ms"] > 0
    assert echo["round_trips_per_s"] > 0
    ratio = report["saturation_vs_echo"]
    assert math.isclose(ratio, sat["moves_per_s"] / echo["round_trips_per_s"], rel_tol=0.01)
    # the frames-only server answered every move with its two updates, the moves counted
    assert frames["moves"] > 100 and frames["own_update"]["n"] >= frames["moves"]
    ceiling = report["frames_only_vs_echo"]
    assert math.isclose(ceiling, frames["moves_per_s"] / echo["round_trips_per_s"],
                        rel_tol=0.01)


def test_churn_smoke_report_is_sane() -> None:
    """``python -m tools.load churn`` for a second per kind: every kind of connection got
    through, and the report says what the server kept (no memory target here)."""
    report = run_churn(seconds=1.0, threads=2)
    for mode in CHURN_MODES:
        r = report[mode]
        assert r["connections"] > 10 and r["per_s"] > 0, (mode, r)
        assert 10 < r["rss_before_MiB"] and 10 < r["rss_after_MiB"] < 4096, (mode, r)
        assert r["gc_objects"] > 1000 and r["full_collection_ms"] >= 0, (mode, r)


def test_compare_runs_both_servers_in_turn() -> None:
    """``python -m tools.load load --baseline DIR --scrape 10``: each round measures this
    checkout's server and the baseline's (here the same checkout), human pace and saturation,
    both answered, ``/metrics`` scraped 10 times a second through each window."""
    report = run_compare(ROOT, rounds=2, games=3, spectators=3, seconds=2.0,
                         think=(0.1, 0.3), sat_games=3, sat_seconds=1.5, workers=1, scrape=10)
    assert len(report["rounds"]) == 2
    first, second = (list(r) for r in report["rounds"])
    assert first[0].startswith("this") and second[0].startswith("baseline")  # order alternates
    for row in report["rounds"]:
        assert set(row) == {f"{side} {kind}" for side in ("this", "baseline")
                            for kind in ("human", "saturation")}
        for run in row.values():
            assert run["errors"] == 0 and run["moves_per_s"] > 0, run
            assert run["own_update"]["n"] > 0 and run["commits"]["transactions"] > 0, run
            scrapes = run["scrapes"]
            assert set(scrapes["statuses"]) == {200} and 8 <= scrapes["per_s"] <= 11, scrapes
            assert scrapes["bytes_each"] > 1000 and scrapes["scrape"]["n"] > 0, scrapes


def test_burst_smoke_report_is_sane() -> None:
    """``python -m tools.load burst`` in small: both rushes served while the games play, and
    the run's figures are there for every one-second window."""
    report = run_burst(games=4, spectators=4, seconds=4.0, think=(0.1, 0.3),
                       bursts=[Burst("connect", 20, 1.0, 0.5, poll=1.0),
                               Burst("spectate", 20, 2.0, 0.5, rooms=3, poll=1.0)],
                       rounds=1, workers=1)
    run = report["rounds"][0]["this"]
    assert run["errors"] == 0 and run["own_update"]["n"] > 0, run
    connect, spectate = run["bursts"]
    for rush in (connect, spectate):
        assert rush["served"] == 20 and rush["errors"] == 0, rush
        assert 0 < rush["span_s"] < 5 and rush["polls"]["n"] > 0, rush
    assert set(connect["steps"]) == {"handshake", "hello", "list_rooms"}
    assert 1 <= spectate["rooms"] <= 3
    assert [w["second"] for w in run["windows"]] == [0, 1, 2, 3]
    worst = run["worst_window"]
    assert worst is not None and worst["own_p99_ms"] <= run["own_update"]["max_ms"]
    assert run["lag_max_ms"] is not None and run["listen_overflows"] >= 0
