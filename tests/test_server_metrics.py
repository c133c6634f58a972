"""Operators (contract section 14): ``/metrics`` read with Prometheus' own parser after real
games over real sockets against a real ``tablas serve``, its ``--metrics-allow``, and
``/readyz`` around a start (a cluster's node waiting for its Redis).

Every count is checked against what the test itself played: the moves of each game, the
bots' decisions by level, the one illegal move, the HTTP answers it asked for.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import websockets
from prometheus_client.parser import text_string_to_metric_families
from redis_support import RedisServer
from server_support import ROOT, Client, Subprocess, connected, create, http_exchange, running
from tablas.engine.games import GAME_IDS
from tablas.server.edge.networks import LOOPBACK, AddressAllow, parse_networks
from tablas.server.errors import ERROR_CODES

HUMAN = {"kind": "human"}
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    """Every sample of a ``/metrics`` body, by name and labels (Prometheus' own parser)."""
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


def series(samples: Samples, name: str) -> dict[frozenset[tuple[str, str]], float]:
    return {labels: v for (n, labels), v in samples.items() if n == name}


def get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def scrape(port: int) -> Samples:
    status, body = get(port, "/metrics")
    assert status == 200, body
    return parse(body)


def histogram_consistent(samples: Samples, name: str, **labels: str) -> int:
    """Checks one histogram's series hold together (cumulative buckets, ``+Inf`` = count,
    a sum that is no less than 0 and positive once observed); its count."""
    count = value(samples, f"{name}_count", **labels)
    buckets = sorted((float(dict(k)["le"]), v) for k, v in series(samples, f"{name}_bucket").items()
                     if {**labels}.items() <= dict(k).items())
    assert buckets and buckets[-1][0] == float("inf")
    counts = [v for _, v in buckets]
    assert counts == sorted(counts), f"{name}: buckets not cumulative: {buckets}"
    assert counts[-1] == count
    total = value(samples, f"{name}_sum", **labels)
    assert total >= 0 and (total > 0) == (count > 0)
    return int(count)


async def play_out(c: Client, room: str, view: dict[str, Any], seats: dict[int, Client]
                   ) -> tuple[int, int]:
    """Plays the people's seats of ``room`` (``seats``: who sits where) with their first
    legal move until the game ends; (moves the people played, plies in all)."""
    played = 0
    while view["status"] != "finished":
        seat = view["to_move"]
        if seat in seats:
            mover = seats[seat]
            seen = view if mover is c else await ply_seen(mover, view["ply"])
            await mover.send({"type": "move", "room_id": room, "ply": view["ply"],
                              "move": seen["legal_moves"][0]})
            played += 1
        view = await c.expect("update", timeout=60)
    return played, int(view["ply"])


async def ply_seen(c: Client, ply: int) -> dict[str, Any]:
    """``c``'s ``update`` of ``ply`` (the ones before it skipped)."""
    while True:
        m = await c.expect("update")
        if m["ply"] == ply:
            return m


@contextmanager
def serve(tmp_path: Path, *args: str, workers: int = 1) -> Iterator[Subprocess]:
    server = Subprocess(tmp_path / "t.db", tmp_path / "serve.log", workers=workers, args=args)
    server.start()
    try:
        yield server
    finally:
        server.terminate()


async def test_metrics_count_exactly_what_was_played(tmp_path: Path) -> None:
    with serve(tmp_path) as server:
        port = server.port
        before = scrape(port)
        assert {dict(k)["game"] for k in series(before, "tablas_moves_total")} == set(GAME_IDS)
        assert {dict(k)["code"] for k in series(before, "tablas_errors_total")} == set(
            ERROR_CODES)
        assert not any(series(before, "tablas_moves_total").values())

        ana, bo = await connected(server.url, "Ana", "Bo")
        # Two people: every move of both sides, and one illegal move (a taken cell).
        room, _ = await create(ana, "tictactoe", [HUMAN, HUMAN])
        await bo.request({"type": "join", "room_id": room, "seat": 1}, "room")
        view = await ana.expect("room")
        first = view["legal_moves"][0]
        await ana.send({"type": "move", "room_id": room, "ply": 0, "move": first})
        view = await ana.expect("update")
        bo_view = await bo.expect("update")
        refused = await bo.error({"type": "move", "room_id": room, "ply": 1, "move": first})
        assert refused["code"] == "illegal_move"
        bo_moves = bo_view["legal_moves"]
        await bo.send({"type": "move", "room_id": room, "ply": 1, "move": bo_moves[0]})
        view = await ana.expect("update")
        people, plies = await play_out(ana, room, view, {0: ana, 1: bo})
        people_moves, tictactoe_plies = people + 2, plies
        # Against a bot at two levels: the bot's moves are its decisions.
        bot_moves: dict[str, int] = {}
        for level in ("random", "easy"):
            room, view = await create(ana, "tictactoe",
                                      [HUMAN, {"kind": "bot", "level": level}])
            people, plies = await play_out(ana, room, view, {0: ana})
            people_moves += people
            tictactoe_plies += plies
            bot_moves[level] = plies - people
        # A room left waiting, for the gauge.
        await create(bo, "connect4", [HUMAN, HUMAN])
        assert get(port, "/no-such-file")[0] == 404
        await asyncio.sleep(0.5)  # a quiet moment: every game over, nothing in flight

        after = scrape(port)
        assert value(after, "tablas_moves_total", game="tictactoe") == tictactoe_plies
        assert all(v == 0 for k, v in series(after, "tablas_moves_total").items()
                   if dict(k)["game"] != "tictactoe")
        assert histogram_consistent(after, "tablas_move_seconds") == people_moves
        decided = {dict(k)["level"]: v for k, v in
                   series(after, "tablas_bot_decision_seconds_count").items()}
        assert decided == bot_moves and all(n > 0 for n in bot_moves.values())
        for level in bot_moves:
            histogram_consistent(after, "tablas_bot_decision_seconds", game="tictactoe",
                                 level=level)
        # Each move was acknowledged after its own transaction (one at a time here).
        commits = histogram_consistent(after, "tablas_store_commit_seconds")
        assert commits >= tictactoe_plies
        errors = {dict(k)["code"]: v for k, v in series(after, "tablas_errors_total").items()}
        assert errors == {code: (1 if code == "illegal_move" else 0) for code in ERROR_CODES}
        # The gauges, at rest: two connections, three games over and a room waiting.
        assert value(after, "tablas_connections") == 2
        assert {dict(k)["status"]: v for k, v in series(after, "tablas_rooms").items()} == {
            "waiting": 1, "playing": 0, "finished": 3, "adjourned": 0, "closed": 0}
        assert value(after, "tablas_bot_queue") == 0

        def answered(samples: Samples, code: str) -> float:
            return samples.get(("tablas_http_requests_total", frozenset({("code", code)})), 0)

        # Since the first scrape: itself (200), the two WebSockets (101), the 404.
        assert answered(after, "200") - answered(before, "200") == 1
        assert answered(after, "101") - answered(before, "101") == 2
        assert answered(after, "404") - answered(before, "404") == 1
        assert all("node" not in dict(labels) for _, labels in after)  # a single server
        for c in (ana, bo):
            await c.close()


def _request(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()


async def test_metrics_are_served_only_to_the_allowed_addresses(tmp_path: Path) -> None:
    """``--metrics-allow 127.0.0.2``: 403 from 127.0.0.1 (loopback, not in it), 200 from
    127.0.0.2 (the test binds its end of the connection to each)."""
    with serve(tmp_path, "--metrics-allow", "127.0.0.2") as server:
        head, body = await http_exchange(server.port, _request("/metrics"),
                                         source="127.0.0.1")
        assert head.startswith(b"HTTP/1.1 403 "), head
        assert b"tablas_" not in body
        head, body = await http_exchange(server.port, _request("/metrics"),
                                         source="127.0.0.2")
        assert head.startswith(b"HTTP/1.1 200 "), head
        samples = parse(body.decode())
        assert value(samples, "tablas_http_requests_total", code="403") == 1
        # /healthz and the page are everyone's still.
        head, _ = await http_exchange(server.port, _request("/healthz"), source="127.0.0.1")
        assert head.startswith(b"HTTP/1.1 200 ")


def test_a_bad_metrics_allow_is_one_line(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "tablas.server.cli", "serve", "--db",
                        str(tmp_path / "t.db"), "--port", "0", "--metrics-allow", "10.0.0.0/33"],
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 2 and "--metrics-allow" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


async def test_two_servers_in_one_process_count_apart(tmp_path: Path) -> None:
    """Each server has its registry: a move on one is not counted by the other."""
    async with running(tmp_path / "a.db", 1) as (a, url_a), \
            running(tmp_path / "b.db", 1) as (b, _):
        (ana,) = await connected(url_a, "Ana")
        room, view = await create(ana, "connect4", [HUMAN, {"kind": "bot", "level": "random"}])
        await ana.send({"type": "move", "room_id": room, "ply": 0,
                        "move": view["legal_moves"][0]})
        await ana.expect("update")
        moves = {}
        for srv in (a, b):
            status, body = await asyncio.to_thread(get, srv.port, "/metrics")
            assert status == 200
            moves[srv] = value(parse(body), "tablas_moves_total", game="connect4")
        assert moves[a] >= 1 and moves[b] == 0
        for srv in (a, b):
            assert await asyncio.to_thread(get, srv.port, "/readyz") == (
                200, json.dumps({"status": "ready", "node": srv.node,
                                 "checks": {"started": True, "store": True}}))
        await ana.close()


def _wait_for(port: int, path: str, status: int, seconds: float = 20) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        try:
            got, body = get(port, path)
        except OSError:  # not listening yet
            got, body = 0, ""
        if got == status:
            return json.loads(body) if body.startswith("{") else {}
        assert time.monotonic() < deadline, f"{path}: {got} {body!r}, not {status}"
        time.sleep(0.05)


async def test_readyz_says_503_until_the_node_reaches_redis(
        tmp_path: Path, pg_url: str, redis_server: RedisServer) -> None:
    """A cluster's node started before its Redis: alive (``/healthz``), not ready
    (``/readyz`` 503, the WebSocket and the API 503) until Redis answers; then ready. Redis
    killed: not ready within a look (``lease_s / 3``); back: ready again. Its ``/metrics``
    are labelled with its name meanwhile."""
    redis_server.kill9()
    node = Subprocess(pg_url, tmp_path / "node.log", workers=1,
                      args=["--redis", redis_server.url, "--node", "n1", "--lease-s", "1"])
    node.launch()
    try:
        port = node.port
        _wait_for(port, "/healthz", 200)
        waiting = _wait_for(port, "/readyz", 503)
        assert waiting == {"status": "not ready", "node": "n1",
                           "checks": {"started": False, "store": True, "redis": False}}
        assert get(port, "/api/rooms")[0] == 503
        with pytest.raises(websockets.InvalidStatus) as refused:
            await websockets.connect(node.url)
        assert refused.value.response.status_code == 503
        samples = scrape(port)
        assert value(samples, "tablas_connections", node="n1") == 0
        assert value(samples, "tablas_http_requests_total", code="503", node="n1") >= 3
        redis_server.start()
        ready = _wait_for(port, "/readyz", 200)
        assert ready["checks"] == {"started": True, "store": True, "redis": True}
        (ana,) = await connected(node.url, "Ana")  # it serves now
        redis_server.kill9()
        assert _wait_for(port, "/readyz", 503)["checks"]["redis"] is False
        assert get(port, "/healthz")[0] == 200  # alive all along
        redis_server.start()
        _wait_for(port, "/readyz", 200)
        await ana.close()
    finally:
        node.kill9()


async def test_the_dashboard_asks_for_figures_the_server_has(tmp_path: Path) -> None:
    """Every series docs/grafana-dashboard.json queries is one a server renders (after a
    move and a bot's decision, so that each histogram has its series)."""
    dashboard = json.loads((ROOT / "docs" / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    asked = {name for e in exprs for name in re.findall(r"\btablas_[a-z_]+", e)}
    async with running(tmp_path / "t.db", 1) as (srv, url):
        (ana,) = await connected(url, "Ana")
        room, view = await create(ana, "connect4", [HUMAN, {"kind": "bot", "level": "random"}])
        await ana.send({"type": "move", "room_id": room, "ply": 0,
                        "move": view["legal_moves"][0]})
        await ana.expect("update")
        await ana.expect("update")  # the bot's
        _, body = await asyncio.to_thread(get, srv.port, "/metrics")
        await ana.close()
    rendered = {name for name, _ in parse(body)}
    assert asked and asked <= rendered, asked - rendered


def test_metrics_allow_reads_addresses_and_networks() -> None:
    """The allow-list as the edge applies it to a peer's address: networks and single
    addresses, IPv6, an IPv4 client of a dual-stack socket (``::ffff:a.b.c.d``) as IPv4, and
    no address at all (a Unix socket) refused."""
    loopback = AddressAllow(parse_networks(LOOPBACK))
    assert loopback.allows("127.0.0.1") and loopback.allows("127.9.9.9")
    assert loopback.allows("::1") and loopback.allows("::ffff:127.0.0.1")
    assert not loopback.allows("10.0.0.1") and not loopback.allows("::ffff:10.0.0.1")
    assert not loopback.allows("") and not loopback.allows("2001:db8::1")
    chosen = AddressAllow(parse_networks(["10.1.0.0/16", "192.168.5.7", "2001:db8::/32"]))
    assert chosen.allows("10.1.200.3") and not chosen.allows("10.2.0.1")
    assert chosen.allows("192.168.5.7") and not chosen.allows("192.168.5.8")
    assert chosen.allows("2001:db8::1") and not chosen.allows("127.0.0.1")
    with pytest.raises(ValueError, match=re.escape("10.0.0.0/33")):
        parse_networks(["10.0.0.0/33"])


async def test_every_http_answer_is_counted_also_one_websockets_cannot_parse(
        tmp_path: Path) -> None:
    """A request that is not HTTP gets its 400 from the connection itself (before any
    handler): counted too, as is a refused WebSocket handshake (no ``Upgrade``: 426 or 400
    from websockets' own checks) and a method not allowed (405)."""
    async with running(tmp_path / "t.db", 1) as (srv, _):
        head, _ = await http_exchange(srv.port, b"NOT HTTP AT ALL\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 "), head
        head, _ = await http_exchange(srv.port, b"GET /ws HTTP/1.1\r\nHost: x\r\n\r\n")
        refused = int(head.split()[1])
        assert refused in (400, 426), head
        head, _ = await http_exchange(srv.port, b"POST / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 405 "), head
        _, body = await asyncio.to_thread(get, srv.port, "/metrics")
    codes = {dict(k)["code"]: v for k, v in series(parse(body), "tablas_http_requests_total")
             .items()}
    expected = {"400": 1, "405": 1}
    expected[str(refused)] = expected.get(str(refused), 0) + 1
    assert codes == expected, codes
