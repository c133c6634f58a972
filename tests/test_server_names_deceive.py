"""Names that deceive (contract section 10), over a real socket, on SQLite and PostgreSQL:
``hello`` and ``register`` refuse, with ``bad_request`` and a sentence saying why, a name
whose TR39 skeleton is a registered player's and any name that reads as a house bot's
(``bot (LEVEL)``, any case or look-alike); nothing changes. Players registered before the
skeletons were stored keep their names (docs/security.md "Names that deceive")."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from typing import Any

import pytest
from pg_support import Backend
from server_support import Client, http_base, running
from tablas.server.accounts import name_key
from tablas.server.names import reads_as_house_bot, skeleton_key

PASSWORD = "correct horse battery"

# The hostile tester's look-alikes of "victim": Cyrillic і, Cyrillic с, dotless ı, and the
# Hangul filler U+3164 after the name.
LOOK_ALIKES = ["v\u0456ctim", "vi\u0441tim", "v\u0131ctim", "victim\u3164"]
BOT_NAMES = ["bot (max)", "BOT (Max)", "b\u043et (max)", "bot  (max)", "B0T (MAX)",
             "bot(random)", "\uff42\uff4f\uff54 (medium)", "bot (anything at all)"]


async def _player(url: str, player_id: str) -> dict[str, Any]:
    """``GET /api/players/{player_id}`` (in a thread: the server runs on this loop)."""
    base = http_base(url)

    def get() -> dict[str, Any]:
        with urllib.request.urlopen(f"{base}/api/players/{player_id}", timeout=30) as r:
            answer: dict[str, Any] = json.loads(r.read())
            return answer

    return await asyncio.to_thread(get)


def test_the_skeleton_key_meets_every_look_alike_and_nothing_else() -> None:
    assert {skeleton_key(n) for n in LOOK_ALIKES} == {skeleton_key("victim")}
    assert skeleton_key("VICTIM") == skeleton_key("victim")
    for other in ("victor", "vict", "Ana", "victim 2"):
        assert skeleton_key(other) != skeleton_key("victim")
    # TR39's own examples of its skeleton (UTS #39, section 4): "paypal" with a Cyrillic а,
    # and the m → rn confusable.
    assert skeleton_key("p\u0430ypal") == skeleton_key("paypal")
    assert skeleton_key("rn") == skeleton_key("m")
    for name in BOT_NAMES:
        assert reads_as_house_bot(name), name
    # Contract section 15: read as letters alone, "bot" next to a level's name.
    for name in ("b\u0336ot (max)", "bot [max]", "house bot max", "maxbot", "robot (max)",
                 "bot (max", "my bot (max) fan", "EASY-BOT", "b.o.t m.e.d.i.u.m"):
        assert reads_as_house_bot(name), name
    for name in ("bot", "robot", "Bo (max)", "maximum", "hard worker", "abbot", "max the bat"):
        assert not reads_as_house_bot(name), name
    # Marks are dropped before comparing: an accent or an overlay makes no new name.
    for marked in ("vi\u0107tim", "v\u0336ictim", "victi\u0301m"):
        assert skeleton_key(marked) == skeleton_key("victim"), marked
    # The key of a look-alike differs from the name key: name_taken is for the same name,
    # bad_request for one that only looks the same.
    assert all(name_key(n) != name_key("victim") for n in LOOK_ALIKES)


async def _refused(c: Client, msg: dict[str, Any], why: str) -> None:
    e = await c.error(msg)
    assert e["code"] == "bad_request", (msg, e)
    assert why in e["message"] and e["message"].endswith("."), e
    assert "Please choose another name." in e["message"], e


async def test_look_alikes_of_a_registered_name_are_refused_and_change_nothing(
        backend: Backend) -> None:
    async with running(backend.where) as (_, url):
        owner = Client(url)
        w0 = await owner.connect("victim")
        await owner.request({"type": "register", "password": PASSWORD}, "registered")
        guest = Client(url)
        before = await guest.connect("Player 6751")
        for name in LOOK_ALIKES:
            # A new guest: refused, and still nobody (the connection may hello again).
            c = Client(url)
            await c.open()
            await _refused(c, {"type": "hello", "name": name}, "looks like the name of a"
                           " registered player")
            assert (await c.error({"type": "list_rooms"}))["code"] == "not_authenticated"
            # A returning guest (by token) under that name: refused, the guest unchanged.
            await _refused(c, {"type": "hello", "name": name, "token": before["token"]},
                           "looks like")
            # A guest registering that name: refused, still a guest under its own name.
            await _refused(guest, {"type": "register", "password": PASSWORD, "name": name},
                           "looks like")
            await c.close()
        info = await _player(url, before["player_id"])
        assert info["name"] == "Player 6751" and info["registered"] is False
        again = Client(url)
        w = await again.connect("Player 6751", token=before["token"])
        assert w["player_id"] == before["player_id"] and w["registered"] is False
        # The owner comes back as before; their own name is theirs.
        back = Client(url)
        w1 = await back.connect("victim", token=w0["token"])
        assert w1["player_id"] == w0["player_id"] and w1["name"] == "victim"
        # A name that only shares letters is fine, and registers.
        done = await guest.request({"type": "register", "password": PASSWORD,
                                    "name": "victor"}, "registered")
        assert done["name"] == "victor" and done["player_id"] == before["player_id"]
        for x in (owner, guest, again, back):
            await x.close()


async def test_the_original_name_registers_where_no_look_alike_is_registered(
        backend: Backend) -> None:
    async with running(backend.where) as (_, url):
        # Guests may go by look-alikes of each other; the first to register holds the
        # skeleton, and the others can no longer register theirs.
        a, b = Client(url), Client(url)
        await a.connect("v\u0456ctim")
        wb = await b.connect("Someone")
        done = await b.request({"type": "register", "password": PASSWORD, "name": "victim"},
                               "registered")
        assert done == {"type": "registered", "re": done["re"], "player_id": wb["player_id"],
                        "name": "victim"}
        await _refused(a, {"type": "register", "password": PASSWORD}, "looks like")
        assert (await _player(url, wb["player_id"]))["name"] == "victim"
        for x in (a, b):
            await x.close()


@pytest.mark.parametrize("name", BOT_NAMES)
async def test_names_that_read_as_a_house_bot_are_refused(backend: Backend, name: str) -> None:
    async with running(backend.where) as (_, url):
        c = Client(url)
        await c.open()
        await _refused(c, {"type": "hello", "name": name}, "reads as a house bot's name")
        w = await c.request({"type": "hello", "name": "Ana"}, "welcome")
        await _refused(c, {"type": "register", "password": PASSWORD, "name": name},
                       "house bot")
        r = Client(url)
        await r.open()
        await _refused(r, {"type": "hello", "name": name, "token": w["token"]}, "house bot")
        info = await _player(url, w["player_id"])
        assert info["name"] == "Ana" and info["registered"] is False
        for x in (c, r):
            await x.close()


async def test_look_alikes_registered_before_are_kept_and_the_first_holds_the_skeleton(
        backend: Backend) -> None:
    """A database at version 9 with two registered look-alikes: at start the server writes
    their skeletons (the earlier one holds it, the later shares it); both still log in; a
    third look-alike is refused."""
    store = await backend.open(upto=9)
    for pid, name, when in (("p1", "victim", 1.0), ("p2", "v\u0456ctim", 2.0),
                            ("p3", "Ana", 3.0)):
        await store.create_player(pid, name, f"token-{pid}")
        from tablas.server.accounts import hash_password

        assert await store.register_player(pid, name, name_key(name),
                                           await hash_password(PASSWORD), when) == "registered"
    await store.close()
    async with running(backend.where) as (_, url):
        rows = await backend.rows("SELECT id, name_skeleton, name_skeleton_shared FROM players"
                                  " ORDER BY id")
        assert rows == [("p1", skeleton_key("victim"), 0), ("p2", skeleton_key("victim"), 1),
                        ("p3", "ana", 0)]
        for name, pid in (("victim", "p1"), ("v\u0456ctim", "p2")):
            c = Client(url)
            await c.open()
            w = await c.request({"type": "hello", "name": name, "password": PASSWORD},
                                "welcome")
            assert w["player_id"] == pid and w["name"] == name
            await c.close()
        c = Client(url)
        await c.open()
        await _refused(c, {"type": "hello", "name": "vi\u0441tim"}, "looks like")
        await c.close()
    # A second start finds nothing left to write.
    async with running(backend.where):
        assert await backend.rows("SELECT count(*) FROM players WHERE name_key IS NOT NULL"
                                  " AND name_skeleton IS NULL") == [(0,)]


async def test_the_unique_index_decides_between_look_alikes_registered_at_once(
        backend: Backend) -> None:
    store = await backend.open()
    try:
        for pid, name in (("a", "victim"), ("b", "v\u0456ctim")):
            await store.create_player(pid, name, f"t-{pid}")
        sk = skeleton_key("victim")
        assert await store.register_player("a", "victim", "victim", "scrypt$x", 1.0, sk) == \
            "registered"
        assert await store.register_player("b", "v\u0456ctim", name_key("v\u0456ctim"),
                                           "scrypt$y", 2.0, sk) == "look_alike"
        by_key, found = await store.name_holders(name_key("v\u0456ctim"), sk)
        assert by_key is None and found is not None and found.player_id == "a"
        by_key, found = await store.name_holders("victim", sk)
        assert by_key is not None and found is not None
        assert by_key.player_id == found.player_id == "a"
        assert await store.name_holders("nobody", "nobody") == (None, None)
        assert await store.player_info("b") == ("v\u0456ctim", False)
    finally:
        await store.close()
