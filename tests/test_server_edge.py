"""The network edge over real sockets (docs/security.md, Limits and Malformed requests):
malformed HTTP gets a 4xx and never a 5xx or a traceback, the message budget is one per
client address (handshakes included), and the lobby is built at most once a second."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from server_support import (
    Client,
    Subprocess,
    connect_from,
    create,
    http_exchange,
    running,
)
from tablas.server.cli import build_parser, main
from tablas.server.edge.websocket import TOO_MANY_MSGS
from websockets.exceptions import InvalidStatus

HUMAN = {"kind": "human"}
ALLOWED = "https://games.example"
KEY = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
HANDSHAKE = f"Upgrade: websocket\r\nConnection: Upgrade\r\n{KEY}Sec-WebSocket-Version: 13\r\n"
HOST = "Host: 127.0.0.1\r\n"


def _ws(extra: str = "", *, host: str = HOST, method: str = "GET", target: str = "/ws") -> bytes:
    return f"{method} {target} HTTP/1.1\r\n{host}{HANDSHAKE}{extra}\r\n".encode()


def _get(target: str, extra: str = "", *, host: str = HOST, method: str = "GET") -> bytes:
    return f"{method} {target} HTTP/1.1\r\n{host}{extra}\r\n".encode()


def _port(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


def _status(head: bytes) -> int | None:
    parts = head.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[0].startswith(b"HTTP/") else None


ANY_4XX = 0  # websockets' own answer: its exact code is its business, a 4xx is ours
# (what is sent, the status it must get). The first rows are well formed: they show the
# probe reads answers right.
REQUESTS: list[tuple[str, bytes, int]] = [
    ("a WebSocket handshake", _ws(), 101),
    ("a handshake from an allowed page", _ws(f"Origin: {ALLOWED}\r\n"), 101),
    ("GET /", _get("/"), 200),
    ("a query on a static file", _get("/index.html?v=2"), 200),
    ("an absolute-form target", _get("http://127.0.0.1/healthz"), 200),
    ("HTTP/1.0 without Host", b"GET /healthz HTTP/1.0\r\n\r\n", 200),
    ("a handshake from another page", _ws("Origin: https://evil.example\r\n"), 403),
    # the handshake's headers
    ("two Origin headers on /ws", _ws(f"Origin: {ALLOWED}\r\nOrigin: https://x.example\r\n"),
     400),
    ("two Host headers on /ws", _ws("Host: other\r\n"), 400),
    ("two Host headers and an Origin on /ws", _ws(f"Host: other\r\nOrigin: {ALLOWED}\r\n"),
     400),
    ("no Host on /ws", _ws(f"Origin: {ALLOWED}\r\n", host=""), 400),
    ("two Upgrade headers", _ws("Upgrade: websocket\r\n"), ANY_4XX),
    ("two Sec-WebSocket-Key headers", _ws(KEY), ANY_4XX),
    ("two Sec-WebSocket-Version headers", _ws("Sec-WebSocket-Version: 13\r\n"), ANY_4XX),
    ("Sec-WebSocket-Version 8",
     f"GET /ws HTTP/1.1\r\n{HOST}Upgrade: websocket\r\nConnection: Upgrade\r\n{KEY}"
     "Sec-WebSocket-Version: 8\r\n\r\n".encode(), ANY_4XX),
    ("a bad Sec-WebSocket-Key",
     f"GET /ws HTTP/1.1\r\n{HOST}Upgrade: websocket\r\nConnection: Upgrade\r\n"
     "Sec-WebSocket-Key: xx\r\nSec-WebSocket-Version: 13\r\n\r\n".encode(), ANY_4XX),
    ("GET /ws without Upgrade", _get("/ws"), ANY_4XX),
    ("POST /ws", _ws(method="POST"), 405),
    ("HEAD /ws", _ws(method="HEAD"), 405),
    # requests websockets cannot parse
    ("a junk request line", b"GARBAGE\r\n\r\n", 400),
    ("a request line without a version", b"GET /\r\n\r\n", 400),
    ("HTTP/2.0", b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", 400),
    ("a target that is not ASCII", b"GET /\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    ("a header without a colon", _get("/", "Broken\r\n"), 400),
    ("a header name with a space", _get("/", "Bad Name: x\r\n"), 400),
    ("lines ended by LF alone", b"GET / HTTP/1.1\nHost: x\n\n", 400),
    ("a request with a body", _get("/", "Content-Length: 5\r\n") + b"hello", 400),
    ("a chunked request", _get("/", "Transfer-Encoding: chunked\r\n"), 400),
    ("nothing but blank lines", b"\r\n\r\n", 400),
    ("a header of 10 kB", _get("/", "X-A: " + "a" * 10_000 + "\r\n"), ANY_4XX),
    ("200 headers", _get("/", "".join(f"X-{i}: a\r\n" for i in range(200))), ANY_4XX),
    ("a target of 9 kB", _get("/" + "a" * 9_000), ANY_4XX),
    # the target and the method
    ("a target without a slash", _get("index.html"), 400),
    ("an asterisk target", _get("*", method="OPTIONS"), 400),
    ("an absolute target of another scheme", _get("ftp://127.0.0.1/"), 400),
    ("a broken absolute target", _get("http://[::1/"), 400),
    ("two Host headers on /", _get("/", "Host: other\r\n"), 400),
    ("two Origin headers on /", _get("/", "Origin: a\r\nOrigin: b\r\n"), 400),
    ("no Host on /", _get("/", host=""), 400),
    ("POST /", _get("/", "Content-Length: 0\r\n", method="POST"), 405),
    ("PUT /api/rooms", _get("/api/rooms", method="PUT"), 405),
    ("DELETE /healthz", _get("/healthz", method="DELETE"), 405),
    # paths: never outside the web folder
    ("a % without two hex digits", _get("/%zz"), 400),
    ("a % at the end", _get("/index.html%"), 400),
    ("escapes that are not UTF-8", _get("/%ff%fe.html"), 400),
    ("%00", _get("/%00"), 404),
    ("%00 before a suffix", _get("/index.html%00.png"), 404),
    ("..", _get("/../pyproject.toml"), 404),
    ("escaped ..", _get("/%2e%2e/pyproject.toml"), 404),
    ("bad escapes in a query", _get("/api/explain?game=%ff%fe&depth=%zz"), 400),
]


async def test_malformed_requests_get_a_4xx_and_log_no_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every request of the table, sent as raw bytes, gets its status (a 4xx for every
    malformed one: never a 5xx, never a close without an answer, never a hang), nothing is
    logged at ERROR nor with a traceback, and the server answers ``/healthz`` after. The
    server checks origins (``--allow-origin``), so that check sees these requests too."""
    caplog.set_level(logging.INFO)
    async with running(tmp_path / "t.db", allow_origins=[ALLOWED]) as (_srv, url):
        port = _port(url)
        wrong = []
        for name, raw, want in REQUESTS:
            head, _ = await http_exchange(port, raw)
            status = _status(head)
            ok = (status is not None and 400 <= status < 500) if want == ANY_4XX \
                else status == want
            if not ok:
                wrong.append((name, head.split(b"\r\n", 1)[0] or b"closed, no answer"))
        assert not wrong, wrong
        head, body = await http_exchange(port, _get("/healthz"))
        assert _status(head) == 200 and json.loads(body)["status"] == "ok"
    noisy = [(r.levelname, r.name, r.getMessage()) for r in caplog.records
             if r.levelno >= logging.ERROR or r.exc_info]
    assert not noisy, noisy


async def test_head_answers_as_get_without_the_body(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        port = _port(url)
        for target in ("/", "/healthz", "/api/rooms", "/nope.js"):
            get_head, get_body = await http_exchange(port, _get(target))
            head, rest = await http_exchange(port, _get(target, method="HEAD"))
            assert _status(head) == _status(get_head) and rest == b"", (target, head, rest)
            assert f"Content-Length: {len(get_body)}\r\n".encode() in head, (target, head)


# --- the message budget per address ---------------------------------------------------------


async def _hello(ws: Any, name: str) -> None:
    await ws.send(json.dumps({"type": "hello", "name": name, "token": None}))
    assert json.loads(await ws.recv())["type"] == "welcome"


async def _answers(ws: Any, n: int) -> list[dict[str, Any]]:
    return [json.loads(await asyncio.wait_for(ws.recv(), 10)) for _ in range(n)]


async def test_connections_of_one_address_share_one_budget(tmp_path: Path) -> None:
    """With 10 messages a second per address, 30 messages sent at once over 3 sockets get
    10 answers (11 if a token comes back meanwhile) and ``rate_limited`` for the rest, each
    carrying its frame's ``id``; a refused message does nothing (a ``create_room`` sent
    right after them creates no room) and every socket stays open and usable once tokens
    come back."""
    async with running(tmp_path / "t.db", max_msgs_per_address=10) as (srv, url):
        sockets = [await connect_from(url, "127.0.0.1") for _ in range(3)]
        for i, ws in enumerate(sockets):
            await _hello(ws, f"P{i}")
        await asyncio.sleep(1.1)  # the 6 tokens of the handshakes and hellos come back
        for i, ws in enumerate(sockets):
            for n in range(10):
                await ws.send(json.dumps({"type": "list_rooms", "id": f"{i}-{n}"}))
        await sockets[0].send(json.dumps({"type": "create_room", "id": 99, "game": "tictactoe",
                                          "options": {}, "seats": [HUMAN, HUMAN]}))
        got = [m for i, ws in enumerate(sockets) for m in await _answers(ws, 11 - min(i, 1))]
        created = got.pop(10)
        assert created["code"] == "rate_limited" and created["re"] == 99, created
        assert not srv.hub.rooms
        served = [m for m in got if m["type"] == "rooms"]
        limited = [m for m in got if m.get("code") == "rate_limited"]
        assert 10 <= len(served) <= 11 and len(served) + len(limited) == 30, got
        assert {m["re"] for m in got} == {f"{i}-{n}" for i in range(3) for n in range(10)}
        await asyncio.sleep(1.1)
        for ws in sockets:
            await ws.send(json.dumps({"type": "list_rooms", "id": "again"}))
            assert json.loads(await ws.recv())["type"] == "rooms"
            await ws.close()


async def test_handshakes_take_from_the_budget_and_addresses_have_their_own(
    tmp_path: Path,
) -> None:
    """With 2 messages a second, of 8 handshakes at once from one address at most 2 (3 if a
    token comes back meanwhile) open and the others get HTTP 429 with ``Retry-After``; then
    that address's next message is ``rate_limited``, while another address connects and
    talks, plain HTTP from the first address is still answered, and once a token is back
    the first address connects again."""
    async with running(tmp_path / "t.db", max_msgs_per_address=2) as (_srv, url):
        results = await asyncio.gather(*(connect_from(url, "127.0.0.1") for _ in range(8)),
                                       return_exceptions=True)
        opened = [r for r in results if not isinstance(r, BaseException)]
        refused = [r for r in results if isinstance(r, BaseException)]
        assert 2 <= len(opened) <= 3, results
        for r in refused:
            assert isinstance(r, InvalidStatus) and r.response.status_code == 429, r
            assert r.response.headers["Retry-After"] == "1"
            assert r.response.body == TOO_MANY_MSGS.encode() + b"\n"
        await opened[0].send(json.dumps({"type": "hello", "id": 1, "name": "A", "token": None}))
        assert json.loads(await opened[0].recv())["code"] == "rate_limited"
        other = await connect_from(url, "127.0.0.2")
        await _hello(other, "Other")
        head, _ = await http_exchange(_port(url), _get("/healthz"))
        assert _status(head) == 200
        await asyncio.sleep(1.1)
        again = await connect_from(url, "127.0.0.1")
        await _hello(again, "Again")
        for ws in [*opened, other, again]:
            await ws.close()


@pytest.mark.parametrize("off", [None, 0])
async def test_no_message_budget(tmp_path: Path, off: float | None) -> None:
    """``max_msgs_per_address`` None or 0 (``--max-msgs-per-address 0``): 20 handshakes and
    150 messages at once from one address are all served."""
    async with running(tmp_path / "t.db", max_msgs_per_address=off) as (srv, url):
        assert srv.edge.budget is None
        sockets = await asyncio.gather(*(connect_from(url, "127.0.0.1") for _ in range(20)))
        for ws in sockets[:3]:
            for n in range(50):
                await ws.send(json.dumps({"type": "list_rooms", "id": n}))
        for ws in sockets[:3]:
            codes = [m.get("code") for m in await _answers(ws, 50)]
            assert codes == ["not_authenticated"] * 50  # answered, not rate_limited
        for ws in sockets:
            await ws.close()


async def test_the_budget_table_forgets_addresses_whose_bucket_is_full(tmp_path: Path) -> None:
    """A scan from many addresses does not grow the table of buckets: an address is
    forgotten once its bucket has had time to fill up again (2 s at half a message a
    second), connected or not; a connected one gets a bucket again at its next message."""
    async with running(tmp_path / "t.db", max_msgs_per_address=0.5) as (srv, url):
        budget = srv.edge.budget
        assert budget is not None
        held = await connect_from(url, "127.0.1.1")
        for i in range(2, 42):
            ws = await connect_from(url, f"127.0.1.{i}")
            await ws.close()
        assert len(budget.buckets) >= 40 and budget.refill == 2
        await asyncio.sleep(budget.refill + 0.1)
        last = await connect_from(url, "127.0.2.1")
        assert list(budget.buckets) == ["127.0.2.1"]
        await _hello(held, "Held")  # forgotten was full: the held socket is served
        assert list(budget.buckets) == ["127.0.2.1", "127.0.1.1"]
        for ws in (held, last):
            await ws.close()


def test_max_msgs_per_address_option(capsys: pytest.CaptureFixture[str]) -> None:
    parse = build_parser().parse_args
    assert parse(["serve"]).max_msgs_per_address is None  # the server's default, 100
    assert parse(["serve", "--max-msgs-per-address", "0"]).max_msgs_per_address == 0
    assert parse(["serve", "--max-msgs-per-address", "2.5"]).max_msgs_per_address == 2.5
    for bad in ("-1", "nan", "inf"):
        assert main(["serve", "--max-msgs-per-address", bad]) == 2
        assert "--max-msgs-per-address" in capsys.readouterr().err


async def test_tablas_serve_takes_the_budget_and_logs_no_traceback(tmp_path: Path) -> None:
    """``tablas serve --max-msgs-per-address 3`` as a process: of 5 handshakes at once, at
    most 3 (4 if a token comes back meanwhile) open and the rest get 429; malformed
    requests get a 4xx, and its log holds no ERROR and no traceback."""
    srv = Subprocess(tmp_path / "t.db", tmp_path / "server.log",
                     args=["--max-msgs-per-address", "3"])
    srv.start()
    code = None
    try:
        for raw in (_get("/", "Origin: a\r\nOrigin: b\r\n"), _ws("Host: other\r\n"),
                    b"GARBAGE\r\n\r\n", _get("/", method="POST"), _get("/%ff")):
            head, _ = await http_exchange(srv.port, raw)
            status = _status(head)
            assert status is not None and 400 <= status < 500, (raw, head)
        results = await asyncio.gather(*(connect_from(srv.url, "127.0.0.1") for _ in range(5)),
                                       return_exceptions=True)
        opened = [r for r in results if not isinstance(r, BaseException)]
        assert 3 <= len(opened) <= 4, results
        assert all(isinstance(r, InvalidStatus) and r.response.status_code == 429
                   for r in results if isinstance(r, BaseException)), results
        for ws in opened:
            await ws.close()
    finally:
        code = srv.terminate()
    log = srv.log.read_text()
    assert code == 0, log
    assert "Traceback" not in log and " ERROR " not in log, log


# --- the lobby, built at most once a second -------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


async def test_lobby_answers_are_built_at_most_once_a_second(tmp_path: Path) -> None:
    """``GET /api/rooms`` and ``list_rooms`` within a second of the lobby's last build get
    the same answer, byte for byte, even after a room is created; once the second is over
    the room is listed."""
    async with running(tmp_path / "t.db") as (srv, url):
        clock = _Clock()
        srv.lobby.clock = clock
        port = _port(url)
        a = Client(url)
        await a.connect("Ana")
        first = await http_exchange(port, _get("/api/rooms"))
        assert json.loads(first[1]) == {"rooms": [], "recent": []}
        assert (await a.request({"type": "list_rooms"}, "rooms"))["rooms"] == []
        room, _ = await create(a, "tictactoe", [HUMAN, HUMAN])
        clock.t += 0.999
        assert (await http_exchange(port, _get("/api/rooms")))[1] == first[1]
        assert (await a.request({"type": "list_rooms"}, "rooms"))["rooms"] == []
        clock.t += 0.001
        rooms = json.loads((await http_exchange(port, _get("/api/rooms")))[1])["rooms"]
        assert [r["room_id"] for r in rooms] == [room]
        listed = await a.request({"type": "list_rooms"}, "rooms")
        assert listed["rooms"] == rooms and listed["re"] == a.n
        await a.close()
