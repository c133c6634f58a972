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
                  nodes_counts=(2,))
    assert [r["config"] for r in results] == ["sqlite, 1 node", "postgresql + redis, 2 node(s)"]
    single, cluster = results
    for r in results:
        assert r["moves"] > 0 and r["placement"] == "together"
        assert r["connections"] == "persistent"
        assert 0 < r["p50_ms"] <= r["p99_ms"]
        assert r["servers_cpu_ms_per_move"] > 0
        # both players of a game on one node: none of the 4 games is split
        assert r["split_games"] == 0
    assert single["vs_single_node"] == 1.0
    assert set(cluster["cpu_ms_per_move"]) == {"nodes", "postgresql", "redis"}
    assert cluster["vs_single_node"] == round(
        cluster["servers_cpu_ms_per_move"] / single["servers_cpu_ms_per_move"], 2)


def test_players_told_where_their_room_lives_move_there() -> None:
    """``--placement split``: each game's players on two nodes; the joiner is told (``owner``)
    that the room lives on the creator's node and moves there, every game loop once."""
    needs_postgresql_and_redis()
    results = run(games=4, seconds=1.0, placement="split", persistent=True,
                  nodes_counts=(2,), follow=True)
    cluster = results[1]
    assert cluster["split_games"] == 4 and cluster["hints"] == "follow"
    assert cluster["moved_to_owner"] == 4 and cluster["moves"] > 0
