"""HTTP limits and headers over real sockets (contract section 10, "HTTP limits" and "Pages
are framed by nobody"; docs/security.md "HTTP limits" and "Pages"): every /api/* endpoint is
limited per client address (429, Retry-After, a JSON error), explain trees run at most 2 at a
time per address, numeric query parameters are checked before conversion (400, never a 5xx),
an answer after which the server closes says so, and every answer carries the CSP and
nosniff."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from server_support import Subprocess, http_exchange, running
from tablas.server.cli import main
from tablas.server.edge import http
from tablas.server.edge.http import EXPLAIN_PER_ADDRESS, EXPLAIN_TOTAL

HANDSHAKE = ("Upgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n")
# One of each /api/* endpoint (the ones about a room or a player answer 404 for these ids:
# the limit comes first all the same).
ENDPOINTS = [
    "/api/rooms",
    "/api/games",
    "/api/explain?game=random&depth=1",
    "/api/leaderboard",
    "/api/players/nobody",
    "/api/rooms/0000000000000000",
    "/api/rooms/0000000000000000/export",
    "/api/rooms/0000000000000000/review",
    "/api/nothing-here",
]
PAGES = ["/", "/index.html", "/explain", "/explain?game=random", "/leaderboard",
         "/players/p-123", "/review/0000000000000000", "/explain.html", "/player.html",
         "/review.html", "/leaderboard.html"]


@pytest.fixture(autouse=True)
def short_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refusals are not held here (the in-process servers'), so that the tests need not
    wait; test_a_refusal_is_held_before_it_is_sent checks the hold."""
    monkeypatch.setattr(http, "HOLD_S", 0.0)


class Answer:
    def __init__(self, head: bytes, body: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split(" ")[1])
        self.headers: dict[str, list[str]] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                self.headers.setdefault(name.strip().lower(), []).append(value.strip())
        self.body = body

    def header(self, name: str) -> str | None:
        values = self.headers.get(name.lower())
        assert values is None or len(values) == 1, (name, values)
        return values[0] if values else None

    def json(self) -> Any:
        assert self.header("Content-Type") == "application/json", self.headers
        return json.loads(self.body)


async def get(port: int, target: str, source: str = "127.0.0.1", *, method: str = "GET",
              extra: str = "") -> Answer:
    raw = f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n".encode()
    head, body = await http_exchange(port, raw, source=source)
    return Answer(head, body)


def _port(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


def assert_refused_429(a: Answer) -> None:
    assert a.status == 429, (a.status, a.body)
    retry = a.header("Retry-After")
    assert retry is not None and retry.isdigit() and int(retry) >= 1, a.headers
    assert isinstance(a.json()["error"], str) and a.json()["error"]


async def test_each_api_endpoint_is_limited_per_address(tmp_path: Path) -> None:
    # 2 a second, so a bucket of 6 (3 seconds' worth).
    async with running(tmp_path / "t.db", max_api_per_address=2) as (_, url):
        port = _port(url)
        for i, target in enumerate(ENDPOINTS):
            me, other = f"127.0.0.{10 + i}", f"127.0.0.{100 + i}"
            answers = [await get(port, target, me) for _ in range(8)]
            statuses = [a.status for a in answers]
            assert 429 not in statuses[:6], (target, statuses)
            assert statuses[6:] == [429, 429], (target, statuses)
            assert_refused_429(answers[-1])
            # another address is not concerned, nor are this address's pages
            assert (await get(port, target, other)).status == statuses[0], target
            assert (await get(port, "/healthz", me)).status == 200
            assert (await get(port, "/", me)).status == 200
        # HEAD is charged too, and refused alike
        head = await get(port, "/api/rooms", "127.0.0.10", method="HEAD")
        assert head.status == 429 and head.header("Retry-After") and head.body == b""


async def test_retry_after_says_when_a_request_passes_again(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", max_api_per_address=2) as (_, url):
        port = _port(url)
        while (last := await get(port, "/api/games", "127.0.0.7")).status == 200:
            pass
        assert_refused_429(last)
        retry = int(last.header("Retry-After") or 0)
        assert retry == 1  # a token comes back within half a second at 2 a second
        await asyncio.sleep(retry)
        assert (await get(port, "/api/games", "127.0.0.7")).status == 200


async def test_a_refusal_is_held_before_it_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A script that asks again at once is answered no faster than once a second per
    connection (a refusal costs a sleeping coroutine, not a connection's work each time);
    past HELD_PER_ADDRESS held at once, the rest are answered at once."""
    monkeypatch.setattr(http, "HOLD_S", 2.0)
    monkeypatch.setattr(http, "HELD_PER_ADDRESS", 3)
    # a token every 5 s, a bucket of 1: the first request passes, the next ones are refused
    async with running(tmp_path / "t.db", max_api_per_address=0.2) as (_, url):
        port = _port(url)
        assert (await get(port, "/api/games", "127.0.0.9")).status == 200
        t0 = time.perf_counter()
        held = asyncio.create_task(get(port, "/api/games", "127.0.0.9"))
        # another address is answered while that refusal is still held
        assert (await get(port, "/api/games", "127.0.0.19")).status == 200
        assert not held.done()
        assert_refused_429(await held)
        assert time.perf_counter() - t0 >= 1.9
        # five at once from the exhausted address: three held, two answered while the three
        # are still held (the order they end in, not how fast: no bound of this machine's)
        tasks = [asyncio.create_task(get(port, "/api/games", "127.0.0.9")) for _ in range(5)]
        started = time.perf_counter()
        done_first: set[asyncio.Task[Any]] = set()
        while len(done_first) < 2:
            finished, _ = await asyncio.wait(set(tasks) - done_first,
                                             return_when=asyncio.FIRST_COMPLETED)
            done_first |= finished
        assert len(done_first) == 2, "three are held"
        rest = await asyncio.gather(*(t for t in tasks if t not in done_first))
        assert time.perf_counter() - started >= 1.9
        assert all(a.status == 429 for a in [*rest, *(t.result() for t in done_first)])


async def test_no_api_limit(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", max_api_per_address=None) as (_, url):
        port = _port(url)
        statuses = {(await get(port, "/api/games", "127.0.0.8")).status for _ in range(80)}
        assert statuses == {200}


def _tree_size(body: bytes) -> int:
    def count(n: dict[str, Any]) -> int:
        return 1 + sum(count(c) for c in n["children"])

    return count(json.loads(body)["root"])


async def test_explain_runs_at_most_two_at_a_time_per_address(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (srv, url):
        port = _port(url)
        # The one explain worker is kept busy, so the trees asked for below wait their turn
        # (each holding its slot) until it is free.
        busy = asyncio.ensure_future(srv.explainer.compute(time.sleep, 2.0))
        await asyncio.sleep(0.5)
        tree = "/api/explain?game=random&branching=3&depth=3&seed=5"

        def ask(source: str) -> asyncio.Future[Answer]:
            return asyncio.ensure_future(get(port, tree, source))

        waiting = [ask("127.0.0.3") for _ in range(EXPLAIN_PER_ADDRESS)]
        await asyncio.sleep(0.3)
        third = await get(port, tree, "127.0.0.3")
        assert_refused_429(third)
        assert "at a time" in third.json()["error"]
        # other addresses still get theirs, up to the total the server builds at once
        others = [ask(f"127.0.0.{20 + i}") for i in range(EXPLAIN_TOTAL - EXPLAIN_PER_ADDRESS)]
        await asyncio.sleep(0.3)
        full = await get(port, tree, "127.0.0.40")
        assert full.status == 503 and full.header("Retry-After") == "1", full.status
        assert "error" in full.json()
        assert not any(f.done() for f in waiting + others)
        await busy
        for a in await asyncio.gather(*waiting, *others):
            assert a.status == 200 and _tree_size(a.body) == 1 + 3 + 9 + 27
        # the slots are given back: the address may ask again
        assert (await get(port, tree, "127.0.0.3")).status == 200


# (query, what the error names): each is a 400 with {"error"}, never a 5xx.
BAD_NUMBERS = [
    ("game=random&seed=" + "7" * 5000, "seed"),
    ("game=random&depth=" + "1" * 5000, "depth"),
    ("game=random&branching=" + "9" * 4301, "branching"),
    ("game=random&seed=1234567890123", "seed"),  # 13 digits
    ("game=random&seed=-1234567890123", "seed"),
    ("game=random&seed=999999999999", "seed"),  # 12 digits but past 2^32 - 1
    ("game=random&seed=-1", "seed"),
    ("game=random&depth=0", "depth"),
    ("game=random&depth=31", "depth"),
    ("game=random&branching=101", "branching"),
    ("game=random&branching=0", "branching"),
    ("game=tictactoe&depth=999999999999", "depth"),
    ("game=random&seed=1e3", "seed"),
    ("game=random&seed=%D9%A3", "seed"),  # an Arabic-Indic 3: a digit, not an ASCII one
    ("game=random&depth=%2B2", "depth"),  # a literal + (a bare + in a query is a space)
]


@pytest.mark.parametrize(("query", "name"), BAD_NUMBERS, ids=[q[:40] for q, _ in BAD_NUMBERS])
async def test_numeric_parameters_are_checked_before_conversion(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, query: str, name: str
) -> None:
    caplog.set_level(logging.INFO)
    async with running(tmp_path / "t.db", max_api_per_address=None) as (_, url):
        a = await get(_port(url), f"/api/explain?{query}")
    assert a.status == 400, (a.status, a.body[:300])
    error = a.json()["error"]
    assert name in error and len(error) < 300, error
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_numbers_at_their_limits_are_accepted(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        port = _port(url)
        a = await get(port, "/api/explain?game=random&branching=2&depth=2&seed=000000000007")
        assert a.status == 200 and a.json()["root"]["kind"] == "max"
        b = await get(port, "/api/explain?game=random&branching=2&depth=2&seed=4294967295")
        assert b.status == 200
        # the largest random tree accepted: branching 70, depth 2 (4971 nodes)
        c = await get(port, "/api/explain?game=random&branching=70&depth=2")
        assert c.status == 200 and _tree_size(c.body) == 1 + 70 + 70 * 70


async def test_an_answer_after_which_the_server_closes_says_so(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", max_api_per_address=1) as (_, url):
        port = _port(url)
        keep = "Connection: keep-alive\r\n"
        for target in ["/healthz", "/", "/api/games", "/no-such-file", "/api/explain?game=x"]:
            a = await get(port, target, extra=keep)
            # http_exchange read until the server closed: it did, and the answer said it would
            assert a.header("Connection") == "close", (target, a.status, a.headers)
        while (refused := await get(port, "/api/games", extra=keep)).status != 429:
            pass
        assert refused.header("Connection") == "close"
        bad = await get(port, "/ws", method="POST", extra=keep)
        assert bad.status == 405 and bad.header("Connection") == "close"
        # a handshake keeps its connection: no "close" there
        up = await get(port, "/ws", extra=HANDSHAKE)
        assert up.status == 101 and up.header("Connection") == "Upgrade"


def _assert_csp(a: Answer, where: str) -> None:
    csp = a.header("Content-Security-Policy")
    assert csp is not None, (where, a.headers)
    directives = {d.split()[0]: d.split()[1:] for d in csp.split(";") if d.strip()}
    assert directives["default-src"] == ["'self'"], (where, csp)
    assert directives["frame-ancestors"] == ["'none'"], (where, csp)
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp, (where, csp)
    for scripts in ("script-src", "script-src-elem", "style-src"):
        assert directives.get(scripts, ["'self'"]) == ["'self'"], (where, csp)


async def test_every_page_has_the_csp_and_every_answer_nosniff(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", max_api_per_address=None) as (_, url):
        port = _port(url)
        for target in PAGES:
            a = await get(port, target)
            assert a.status == 200, target
            assert a.header("Content-Type") == "text/html; charset=utf-8", target
            _assert_csp(a, target)
            assert a.header("X-Content-Type-Options") == "nosniff", target
            # nothing inline that the policy would block: scripts and styles are files
            html = a.body.decode()
            assert not re.search(r"<script(?![^>]*\bsrc=)", html), target
            assert not re.search(r"<style\b|\sstyle=|\son[a-z]+=", html), target
        for target in ["/healthz", "/api/rooms", "/api/games", "/style.css", "/js/app.js",
                       "/favicon.svg", "/no-such-file", "/api/explain?game=random",
                       "/api/explain?seed=1", "/api/players/x", "/review/..%2F"]:
            a = await get(port, target)
            assert a.header("X-Content-Type-Options") == "nosniff", (target, a.headers)
            _assert_csp(a, target)


def test_max_api_per_address_option(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("-1", "nan", "inf"):
        assert main(["serve", "--max-api-per-address", bad]) == 2
        assert "--max-api-per-address" in capsys.readouterr().err


def test_tablas_serve_limits_api_and_logs_no_traceback(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    srv = Subprocess(tmp_path / "t.db", log, args=["--max-api-per-address", "1"])
    srv.start()
    try:
        base = f"http://127.0.0.1:{srv.port}"
        statuses = []
        for _ in range(5):
            try:
                with urllib.request.urlopen(f"{base}/api/games", timeout=10) as r:
                    statuses.append(r.status)
            except urllib.error.HTTPError as e:
                statuses.append(e.code)
                if e.code == 429:
                    assert e.headers["Retry-After"] == "1"
                    assert "error" in json.loads(e.read())
        assert statuses[:3] == [200, 200, 200] and 429 in statuses[3:], statuses
        time.sleep(1.1)
        try:
            urllib.request.urlopen(f"{base}/api/explain?game=random&seed={'7' * 5000}",
                                   timeout=10)
            raise AssertionError("a 5000-digit seed was answered 200")
        except urllib.error.HTTPError as e:
            assert e.code == 400 and "seed" in json.loads(e.read())["error"]
    finally:
        srv.terminate()
    text = log.read_text()
    assert "Traceback" not in text and "ERROR" not in text, text[-3000:]
