"""The cluster benchmark's smoke run (the real run is ``python -m tools.cluster_bench``; see
docs/benchmarks.md): one SQLite node, then two nodes on PostgreSQL and Redis, a few games on
connections kept for the run, a second each; the report's fields must be sane. No speed
target here. Skipped where PostgreSQL or Redis is not installed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pg_support import pg_bin

from tools.cluster_bench import run


def needs_postgresql_and_redis() -> None:
    if pg_bin() is None:
        pytest.skip("PostgreSQL is not installed")
    if shutil.which("redis-server") is None and not Path("/usr/bin/redis-server").exists():
        pytest.skip("Redis is not installed")


def test_cluster_bench_reports_every_configuration_with_its_ratio() -> None:
    needs_postgresql_and_redis()
    results = run(games=4, seconds=1.0, placement="together", persistent=True,
                  nodes_counts=(2,), rounds=2, separate=(2,))
    assert [r["config"] for r in results] == [
        "sqlite, 1 node", "sqlite, 2 separate servers", "postgresql + redis, 2 node(s)"]
    single, apart, cluster = results
    for r in results:
        assert r["moves"] > 0 and r["placement"] == "together" and r["rounds"] == 2
        assert r["connections"] == "persistent"
        assert 0 < r["p50_ms"] <= r["p99_ms"]
        assert r["servers_cpu_ms_per_move"] > 0
        # both players of a game on one node: none of the 4 games is split
        assert r["split_games"] == 0
    assert single["vs_single_node"] == 1.0
    assert [r["servers"] for r in results] == [1, 2, 2]
    assert [r["cluster"] for r in results] == [False, False, True]
    assert set(apart["cpu_ms_per_move"]) == {"servers"} and "vs_separate" not in apart
    assert set(cluster["cpu_ms_per_move"]) == {"nodes", "postgresql", "redis"}
    for r in (apart, cluster):
        assert r["vs_single_node"] == round(
            r["servers_cpu_ms_per_move"] / single["servers_cpu_ms_per_move"], 2)
    assert cluster["vs_separate"] == round(
        cluster["servers_cpu_ms_per_move"] / apart["servers_cpu_ms_per_move"], 2)


def test_separate_servers_keep_each_game_on_one_server_whatever_the_placement() -> None:
    """Servers that share nothing cannot serve a game whose players sit on two of them: their
    row seats both players on the creator's server even when the run places at random."""
    needs_postgresql_and_redis()
    results = run(games=6, seconds=0.5, placement="split", persistent=True,
                  nodes_counts=(), separate=(3,))
    apart = results[1]
    assert [r["config"] for r in results] == ["sqlite, 1 node", "sqlite, 3 separate servers"]
    assert apart["placement"] == "together" and apart["split_games"] == 0
    assert apart["moves"] > 0 and apart["moved_to_owner"] == 0


def test_players_told_where_their_room_lives_move_there() -> None:
    """``--placement split``: each game's players on two nodes; the joiner is told (``owner``)
    that the room lives on the creator's node and moves there, every game loop once."""
    needs_postgresql_and_redis()
    results = run(games=4, seconds=1.0, placement="split", persistent=True,
                  nodes_counts=(2,), follow=True)
    cluster = results[1]
    assert cluster["split_games"] == 4 and cluster["hints"] == "follow"
    assert cluster["moved_to_owner"] == 4 and cluster["moves"] > 0
