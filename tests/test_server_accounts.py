"""Accounts over a real socket (contract section 8): ``register``, ``hello`` with a name and a
password from another device, names kept by their key (NFKC and case folding), the limits
on login attempts, and secrets (tokens, password hashes, passwords) sent to nobody."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from server_support import Client, FakeClock, connect_from, create, http_base, running
from tablas.server.accounts import FAILURES_PER_ADDRESS, FAILURES_PER_NAME, WINDOW, name_key

PASSWORD = "correct horse battery"
HUMAN = {"kind": "human"}


async def member(url: str, name: str, password: str = PASSWORD) -> tuple[Client, dict[str, Any]]:
    """A new player who registers their name; the client and its welcome."""
    c = Client(url)
    welcome = await c.connect(name)
    assert welcome["registered"] is False
    done = await c.request({"type": "register", "password": password}, "registered")
    assert done == {"type": "registered", "re": done["re"], "player_id": welcome["player_id"],
                    "name": welcome["name"]}
    return c, welcome


async def login(url: str, name: str, password: str, client: Client | None = None
                ) -> tuple[Client, dict[str, Any]]:
    """``hello`` with a name and a password on a new connection: the client and the answer
    (``welcome`` or ``error``)."""
    c = client or Client(url)
    await c.open()
    answer = await c.request({"type": "hello", "name": name, "password": password},
                             "welcome", "error")
    return c, answer


def _get(url: str, path: str) -> tuple[int, bytes]:
    base = http_base(url)
    try:
        with urllib.request.urlopen(base + path, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


async def test_register_then_log_in_from_another_device(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        a, first = await member(url, "Ana")
        room, _ = await create(a, "tictactoe", [HUMAN, HUMAN])
        # Another device: the name in any case, the password; the same player, a new token.
        b, second = await login(url, "aNA", PASSWORD)
        assert second["type"] == "welcome"
        assert second["player_id"] == first["player_id"] and second["name"] == "Ana"
        assert second["registered"] is True and second["token"] != first["token"]
        assert second["seats"] == [{"room_id": room, "seat": 0, "status": "waiting"}]
        # Both devices' tokens work; a token hello of a registered player keeps their name.
        for token in (first["token"], second["token"]):
            c = Client(url)
            w = await c.connect("Someone Else", token)
            assert (w["player_id"], w["name"], w["registered"]) == (first["player_id"], "Ana",
                                                                     True)
            await c.close()
        # The second device plays the seat it holds.
        snap = await b.request({"type": "join", "room_id": room}, "room")
        assert snap["your_seats"] == [0] and snap["seats"][0]["name"] == "Ana"
        for c in (a, b):
            await c.close()


async def test_wrong_password_and_unknown_name_are_the_same_refusal(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        a, _ = await member(url, "Ana")
        _, wrong = await login(url, "Ana", PASSWORD + "!")
        _, unknown = await login(url, "Nobody", PASSWORD)
        assert wrong["type"] == unknown["type"] == "error"
        assert wrong["code"] == unknown["code"] == "not_authenticated"
        assert wrong["message"] == unknown["message"]
        # A refused login made nobody: the connection may still say hello.
        c, ok = await login(url, "ana", PASSWORD)
        assert ok["type"] == "welcome"
        for x in (a, c):
            await x.close()


async def test_register_refusals(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        a = Client(url)
        await a.open()
        # Before hello: who would register?
        assert (await a.error({"type": "register", "password": PASSWORD}))["code"] == \
            "not_authenticated"
        await a.request({"type": "hello", "name": "Ana"}, "welcome")
        for bad in ("short", "x" * 129, 12345678):
            assert (await a.error({"type": "register", "password": bad}))["code"] == \
                "bad_request"
        await a.request({"type": "register", "password": PASSWORD}, "registered")
        again = await a.error({"type": "register", "password": PASSWORD})
        assert again["code"] == "bad_request" and "already" in again["message"]
        # A password and a token together: one or the other.
        b = Client(url)
        await b.open()
        both = await b.error({"type": "hello", "name": "Ana", "password": PASSWORD,
                              "token": "abc"})
        assert both["code"] == "bad_request"
        for c in (a, b):
            await c.close()


@pytest.mark.parametrize("look_alike", [
    "ANA", "ana", "Ａｎａ",  # case; fullwidth (NFKC)
    "  Ana ",  # spaces around
])
async def test_look_alikes_of_a_registered_name_are_refused(tmp_path: Path,
                                                            look_alike: str) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        a, _ = await member(url, "Ana")
        c = Client(url)
        await c.open()
        refused = await c.error({"type": "hello", "name": look_alike})
        assert refused["code"] == "name_taken"
        # The same name with a password is a login, not a squat.
        _, w = await login(url, look_alike, PASSWORD, c)
        assert w["type"] == "welcome" and w["name"] == "Ana"
        for x in (a, c):
            await x.close()


async def test_compatibility_forms_and_case_folding_at_register(tmp_path: Path) -> None:
    """Two guests whose names differ only by compatibility forms (ligature, roman numeral,
    ß/SS) may share them while guests; the first to register keeps it, the other's register
    is ``name_taken``, and the name is refused to new guests in every form."""
    pairs = [("ﬁnn Ⅸ", "FINN IX"), ("Straße", "STRASSE"), ("Ｋａｉ", "kai")]
    for first, second in pairs:
        assert name_key(first) == name_key(second)
    async with running(tmp_path / "t.db") as (_, url):
        for first, second in pairs:
            x, y = Client(url), Client(url)
            await x.connect(first)
            await y.connect(second)
            await x.request({"type": "register", "password": PASSWORD}, "registered")
            taken = await y.error({"type": "register", "password": PASSWORD})
            assert taken["code"] == "name_taken"
            z = Client(url)
            await z.open()
            for form in (first, second):
                assert (await z.error({"type": "hello", "name": form}))["code"] == "name_taken"
            # A returning guest with that name (by token) is refused it too.
            token = y.inbox[0]["token"]
            w = Client(url)
            await w.open()
            assert (await w.error({"type": "hello", "name": second, "token": token}))[
                "code"] == "name_taken"
            for c in (x, y, z, w):
                await c.close()


async def test_logins_are_limited_per_name_and_per_address(tmp_path: Path) -> None:
    clock = FakeClock()
    async with running(tmp_path / "t.db", clock=clock) as (_, url):
        a, _ = await member(url, "Ana")
        b, _ = await member(url, "Bob")
        c = Client(url)
        for _ in range(FAILURES_PER_NAME):
            _, e = await login(url, "Ana", "wrong password", c)
            assert e["code"] == "not_authenticated"
        # Limited for this name, the right password too; another name is not.
        _, e = await login(url, "ANA", PASSWORD, c)
        assert e["code"] == "rate_limited"
        _, ok = await login(url, "Bob", PASSWORD)
        assert ok["type"] == "welcome"
        clock.t += WINDOW + 1
        _, ok = await login(url, "Ana", PASSWORD)
        assert ok["type"] == "welcome"

        # Per address: failures on any names, then even Bob's right password is refused
        # from that address, and not from another one.
        for i in range(FAILURES_PER_ADDRESS):
            _, e = await login(url, f"nobody{i}", "wrong password", c)
            assert e["code"] == "not_authenticated"
        _, e = await login(url, "Bob", PASSWORD, c)
        assert e["code"] == "rate_limited"
        other = Client(url)
        other.ws = await connect_from(url, "127.0.0.2")
        answer = await other.request({"type": "hello", "name": "Bob", "password": PASSWORD},
                                     "welcome", "error")
        assert answer["type"] == "welcome"
        clock.t += WINDOW + 1
        _, ok = await login(url, "Bob", PASSWORD, c)
        assert ok["type"] == "welcome"
        for x in (a, b, c, other):
            await x.close()


async def _login_from(url: str, address: str, name: str, password: str) -> dict[str, Any]:
    c = Client(url)
    c.ws = await connect_from(url, address)
    answer = await c.request({"type": "hello", "name": name, "password": password},
                             "welcome", "error")
    await c.close()
    return answer


async def test_a_stranger_guessing_cannot_lock_the_owner_out(tmp_path: Path) -> None:
    """docs/security.md "Login limits": an attacker's wrong guesses from one address refuse
    that address (the right password too) and never the owner's from another address, nor
    the owner's device that holds a token; many addresses guessing only slow the name."""
    from tablas.server.accounts import SLOW_AFTER, SLOW_BASE

    clock = FakeClock()
    async with running(tmp_path / "t.db", clock=clock) as (_, url):
        owner, welcome = await member(url, "Ana")
        for _ in range(FAILURES_PER_NAME):
            e = await _login_from(url, "127.0.0.2", "Ana", "wrong password")
            assert e["code"] == "not_authenticated"
        e = await _login_from(url, "127.0.0.2", "ana", PASSWORD)
        assert e["code"] == "rate_limited" and e["message"].endswith(".")
        assert "Ana" not in e["message"]  # says nothing of the account
        # The owner, from another address: in at once.
        ok = await _login_from(url, "127.0.0.1", "Ana", PASSWORD)
        assert ok["type"] == "welcome" and ok["player_id"] == welcome["player_id"]
        # More addresses guess, past the name's ceiling: each is refused on its own...
        addresses = [f"127.0.0.{i}" for i in range(3, 6)]
        for address in addresses:
            for _ in range(FAILURES_PER_NAME):
                e = await _login_from(url, address, "Ana", "wrong password")
                assert e["code"] == "not_authenticated"
            assert (await _login_from(url, address, "Ana", PASSWORD))["code"] == \
                "rate_limited"
        assert 3 * FAILURES_PER_NAME + FAILURES_PER_NAME > SLOW_AFTER
        # ...the owner from a new address is slowed, never refused...
        loop = asyncio.get_running_loop()
        start = loop.time()
        ok = await _login_from(url, "127.0.0.9", "Ana", PASSWORD)
        assert ok["type"] == "welcome" and loop.time() - start >= SLOW_BASE
        # ...and the owner's device that holds a token is never even slowed.
        start = loop.time()
        back = Client(url)
        w = await back.connect("Ana", token=welcome["token"])
        assert w["player_id"] == welcome["player_id"] and loop.time() - start < SLOW_BASE
        for x in (owner, back):
            await x.close()


async def test_registrations_are_limited_per_address(tmp_path: Path) -> None:
    from tablas.server.accounts import REGISTRATIONS_PER_ADDRESS

    clock = FakeClock()
    async with running(tmp_path / "t.db", clock=clock) as (_, url):
        clients = []
        for i in range(REGISTRATIONS_PER_ADDRESS):
            c, _ = await member(url, f"player{i}")
            clients.append(c)
        late = Client(url)
        await late.connect("late")
        assert (await late.error({"type": "register", "password": PASSWORD}))["code"] == \
            "rate_limited"
        clock.t += WINDOW + 1
        await late.request({"type": "register", "password": PASSWORD}, "registered")
        for c in [*clients, late]:
            await c.close()


async def test_no_token_hash_or_password_is_sent_or_logged(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    db = tmp_path / "t.db"
    async with running(db) as (srv, url):
        a, wa = await member(url, "Ana")
        b, wb = await member(url, "Bob", "another secret")
        _, wa2 = await login(url, "Ana", PASSWORD)
        room, _ = await create(a, "tictactoe", [HUMAN, HUMAN])
        a.inbox.clear()
        await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
        await a.expect("room")
        await b.request({"type": "chat", "room_id": room, "text": "hello"}, "chat")
        await a.request({"type": "list_rooms"}, "rooms")
        # An unexpected failure logs the frame that caused it (a password hello here).
        real = srv.store.account_by_key

        async def broken(key: str) -> Any:
            raise RuntimeError("boom")

        srv.store.account_by_key = broken  # type: ignore[method-assign]
        try:
            _, e = await login(url, "Ana", PASSWORD)
            assert e["code"] == "internal"
        finally:
            srv.store.account_by_key = real  # type: ignore[method-assign]
        bodies = [(await asyncio.to_thread(_get, url, p))[1].decode() for p in (
            f"/api/players/{wa['player_id']}", f"/api/players/{wb['player_id']}",
            "/api/leaderboard?game=tictactoe", f"/api/rooms/{room}", "/api/rooms")]
        with sqlite3.connect(db) as con:
            hashes = [h for (h,) in con.execute(
                "SELECT password_hash FROM players WHERE password_hash IS NOT NULL")]
            token_hashes = [h for (h,) in con.execute(
                "SELECT token_hash FROM players UNION SELECT token_hash FROM player_tokens")]
        assert len(hashes) == 2 and all(h.startswith("scrypt$16384$8$1$") for h in hashes)
        secrets = [*hashes, *token_hashes, PASSWORD, "another secret"]
        # Each hash's salt and digest are secrets too, wherever they might show.
        secrets += [part for h in hashes for part in h.split("$")[4:]]
        others = {id(a): [wb["token"]], id(b): [wa["token"], wa2["token"]]}
        for c in (a, b):
            frames = [json.dumps(m) for m in c.inbox]
            for s in [*secrets, *others[id(c)]]:
                assert not any(s in f for f in frames), s
        for body in bodies:
            for s in [*secrets, wa["token"], wa2["token"], wb["token"]]:
                assert s not in body
        # aiosqlite writes every statement with its parameters at DEBUG, websockets every
        # frame; tablas serve never lets those through, whatever --log-level says (checked
        # below), so what it would log is the rest.
        logged = "\n".join(r.getMessage() for r in caplog.records
                            if r.name.split(".")[0] not in ("aiosqlite", "websockets")
                            or (r.levelno >= logging.INFO and r.name.startswith("websockets")))
        assert "internal error" in logged
        for s in [*secrets, wa["token"], wa2["token"], wb["token"]]:
            assert s not in logged
        for c in (a, b):
            await c.close()


def test_serve_never_logs_the_databases_statements() -> None:
    from tablas.server.logs import configure

    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        configure("debug")
        assert not logging.getLogger("aiosqlite").isEnabledFor(logging.INFO)
        assert not logging.getLogger("websockets.server").isEnabledFor(logging.DEBUG)
        assert logging.getLogger("websockets.server").isEnabledFor(logging.INFO)
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        for name in ("aiosqlite", "websockets"):
            logging.getLogger(name).setLevel(logging.NOTSET)


async def test_password_hash_is_salted_scrypt(tmp_path: Path) -> None:
    """Two players with one password get different hashes (a salt each), and the stored
    parameters are what verify reads back."""
    from tablas.server.accounts import hash_password, verify_password

    one, two = await asyncio.gather(hash_password(PASSWORD), hash_password(PASSWORD))
    assert one != two and one.split("$")[:4] == ["scrypt", "16384", "8", "1"]
    assert len(bytes.fromhex(one.split("$")[4])) == 16
    assert await verify_password(PASSWORD, one) and await verify_password(PASSWORD, two)
    assert not await verify_password(PASSWORD + "x", one)
    assert not await verify_password(PASSWORD, None)
    # Other parameters, stored with the hash, still verify.
    import hashlib

    salt = b"s" * 16
    digest = hashlib.scrypt(PASSWORD.encode(), salt=salt, n=2**10, r=4, p=2, dklen=24)
    stored = f"scrypt$1024$4$2${salt.hex()}${digest.hex()}"
    assert await verify_password(PASSWORD, stored)


def test_name_key_is_stable_for_every_code_point() -> None:
    """Exhaustive over Unicode: a key is its own key (so the unique index compares like with
    like), and a character's key is its NFKC form's; ASCII letters of either case share one."""
    import string
    import unicodedata

    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        k = name_key(c)
        assert name_key(k) == k, hex(cp)
        assert name_key(unicodedata.normalize("NFKC", c)) == k, hex(cp)
    for a, b in zip(string.ascii_lowercase, string.ascii_uppercase, strict=True):
        assert name_key(a) == name_key(b) == a
