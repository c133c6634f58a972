"""Names, chat lines and rematch offers (contract section 6, "Names and chat"): what a name may
be, what a chat line may hold, and that only the server announces a rematch. The rules are
checked as properties of ``clean_name``/``clean_chat``, then over a real socket."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from server_support import Client, connected, create, running
from tablas.server.protocol import INVISIBLE_FILLERS, MAX_NAME, clean_chat, clean_name

HUMAN = {"kind": "human"}
NAME_REFUSED = ("Cc", "Cf", "Cn", "Co", "Cs", "Zl", "Zp")
CHAT_REFUSED = ("Cc", "Cf", "Cs", "Zl", "Zp")

# Characters where NFKC, whitespace and visibility meet: fullwidth and compatibility forms,
# ligatures that grow under NFKC, decomposed accents, Hangul jamo, the blanks, other spaces.
TRICKY = ("\uff21\uff42\uff43\u3000\u00a0\u2003\u1680\u202f\ufb01\ufdfa\u2460\u00b4\u0301"
          "\u0308\ufe0f\u20dd\u1100\u1161\u11a8\uac00" + "".join(sorted(INVISIBLE_FILLERS)))
name_chars = st.one_of(st.sampled_from(TRICKY), st.characters(), st.sampled_from("ab Z9-"))
any_char = st.characters(codec=None, categories=None, exclude_categories=())


def refused_in(category_list: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.characters(categories=list(category_list), exclude_characters="\n\r")


def assert_names_a_refused_character(e: ValueError, text: str,
                                     category_list: tuple[str, ...]) -> None:
    """The refusal names, as U+XXXX, a character of ``text`` in ``category_list``."""
    code = str(e).rsplit("U+", 1)[1]
    assert chr(int(code, 16)) in text and unicodedata.category(chr(int(code, 16))) in category_list


# --- the rules, as properties -------------------------------------------------------------


@given(st.text(name_chars, max_size=40))
def test_an_accepted_name_is_nfkc_short_visible_and_clean(raw: str) -> None:
    try:
        name = clean_name(raw)
    except ValueError:
        return
    assert unicodedata.is_normalized("NFKC", name)
    assert 1 <= len(name) <= MAX_NAME
    assert not any(unicodedata.category(c) in NAME_REFUSED for c in name)
    assert name == name.strip() and "  " not in name
    assert any(unicodedata.category(c) not in ("Zs", "Mn", "Me") and c not in INVISIBLE_FILLERS
               for c in name)
    assert clean_name(name) == name  # the stored form is accepted as itself


@given(st.text(name_chars, max_size=20), refused_in(NAME_REFUSED), st.text(name_chars,
                                                                              max_size=20))
def test_a_name_with_a_refused_character_is_refused(before: str, bad: str, after: str) -> None:
    with pytest.raises(ValueError, match="name must not contain") as e:
        clean_name(before + bad + after)
    assert_names_a_refused_character(e.value, before + bad + after, NAME_REFUSED)


@given(st.text(st.sampled_from(sorted(INVISIBLE_FILLERS | {" ", "\u3000", "\u00a0", "\u0301",
                                                            "\ufe0f"})), min_size=1,
               max_size=12))
def test_a_name_of_blanks_only_is_refused(raw: str) -> None:
    with pytest.raises(ValueError, match=r"empty|visible|format character"):  # U+180E is Cf
        clean_name(raw)


@pytest.mark.parametrize(("raw", "stored"), [
    ("  Ana  ", "Ana"),
    ("\uff21\uff4e\uff41\u3000\uff22\uff4f", "Ana Bo"),  # fullwidth letters and space
    ("Ana \u00a0\u2003  Bo", "Ana Bo"),  # a run of spaces is one space
    ("e\u0301", "\u00e9"),  # NFKC composes
    ("\ufb01\u2460", "fi1"),  # ligature and circled digit: their compatibility forms
    ("\u3164A", "\u1160A"),  # a filler next to a visible character is allowed
    ("x" * MAX_NAME, "x" * MAX_NAME),
])
def test_names_as_stored(raw: str, stored: str) -> None:
    assert clean_name(raw) == stored


@pytest.mark.parametrize(("raw", "why"), [
    ("", "empty"), ("   ", "empty"),
    ("x" * (MAX_NAME + 1), "at most 24"),
    ("\ufdfa\ufdfa", "36 characters"),  # each ligature is 18 characters under NFKC
    ("\u202eevil", "format character"), ("a\u200bb", "format character"),
    ("\u2066x\u2069", "format character"), ("\ufeffZ", "format character"),
    ("tab\there", "control character"), ("A\x00", "control character"),
    ("\ue000x", "private-use"), ("\u0378x", "unassigned"), ("a\u2028b", "line separator"),
    ("\u3164", "visible"), ("\u3164 \u2800\u115f", "visible"), ("\u0301", "visible"),
])
def test_names_refused(raw: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        clean_name(raw)


@given(st.text(st.one_of(any_char, st.sampled_from("\n\r")), max_size=60))
def test_an_accepted_chat_line_keeps_newlines_and_nothing_else_of_control(raw: str) -> None:
    try:
        text = clean_chat(raw)
    except ValueError:
        assert any(unicodedata.category(c) in CHAT_REFUSED for c in raw if c not in "\r\n")
        return
    assert "\r" not in text
    assert text.count("\n") == raw.count("\n") + raw.count("\r") - raw.count("\r\n")
    assert not any(unicodedata.category(c) in CHAT_REFUSED for c in text if c != "\n")


@given(st.text(max_size=20), refused_in(CHAT_REFUSED), st.text(max_size=20))
def test_a_chat_line_with_a_refused_character_is_refused(before: str, bad: str,
                                                        after: str) -> None:
    with pytest.raises(ValueError, match="chat text must not contain") as e:
        clean_chat(before + bad + after)
    assert_names_a_refused_character(e.value, before + bad + after, CHAT_REFUSED)


# --- over the socket ----------------------------------------------------------------------


async def test_hello_stores_and_echoes_the_nfkc_name(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        a, b = Client(url), Client(url)
        w = await a.connect("\uff21\uff4e\uff41\u3000 \ufb01")
        assert w["name"] == "Ana fi"
        _room, snap = await create(a, "tictactoe", [HUMAN, HUMAN])
        assert snap["seats"][0]["name"] == "Ana fi"
        # the token brings the player back under the name of the new hello, cleaned alike
        back = await b.connect("  Ana\u00a0\u00a0fi  ", token=w["token"])
        assert back["player_id"] == w["player_id"] and back["name"] == "Ana fi"
        await a.close()
        await b.close()


async def test_a_refused_name_is_a_bad_request_saying_why_and_changes_nothing(
        tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (srv, url):
        c = Client(url)
        await c.open()
        cases = {"\u202eevil": "U+202E", "a\u200db": "U+200D", "\u3164": "visible",
                 "\u3164\u2800 \u115f": "visible", "x" * 25: "at most 24", "\ue000": "U+E000",
                 "\u0378": "unassigned", "  ": "empty"}
        for name, why in cases.items():
            e = await c.error({"type": "hello", "name": name, "token": None})
            assert e["code"] == "bad_request" and why in e["message"], (name, e)
            assert "name" in e["message"]
            e = await c.error({"type": "list_rooms"})  # still nobody
            assert e["code"] == "not_authenticated"
        w = await c.request({"type": "hello", "name": "Fine", "token": None}, "welcome")
        assert w["name"] == "Fine"
        await c.close()
        async with srv.store.db.execute("SELECT name FROM players") as cur:
            assert [r[0] for r in await cur.fetchall()] == ["Fine"]


async def _room_with_followers(url: str) -> tuple[str, list[Client]]:
    """A tic-tac-toe room with Ana and Bo seated and Spec watching."""
    a, b, s = await connected(url, "Ana", "Bo", "Spec")
    room, _ = await create(a, "tictactoe", [HUMAN, HUMAN])
    await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
    await a.expect("room")
    await s.request({"type": "spectate", "room_id": room}, "room")
    return room, [a, b, s]


async def next_of(c: Client) -> dict[str, Any]:
    """The next message of ``c`` other than a snapshot or an update (those of the room's
    earlier changes may still be on their way)."""
    while True:
        m = await c.recv(10)
        if m["type"] not in ("room", "update"):
            return m


async def test_multi_line_chat_reaches_every_follower_with_its_newlines(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        room, clients = await _room_with_followers(url)
        a = clients[0]
        await a.send({"type": "chat", "room_id": room, "text": "one\ntwo\r\nthree\rfour"})
        for c in clients:
            line = await next_of(c)
            assert line["type"] == "chat" and line["name"] == "Ana"
            assert line["text"] == "one\ntwo\nthree\nfour"


async def test_chat_with_a_control_or_format_character_is_refused_and_sent_to_nobody(
        tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (srv, url):
        room, clients = await _room_with_followers(url)
        a, b, _s = clients
        for text, code in (("gl \u202ehf", "U+202E"), ("ding\u0007", "U+0007"),
                           ("zero\u200bwidth", "U+200B"), ("tab\there", "U+0009")):
            e = await b.error({"type": "chat", "room_id": room, "text": text})
            assert e["code"] == "bad_request" and code in e["message"], e
        await a.send({"type": "chat", "room_id": room, "text": "after"})
        for c in clients:  # the first chat anyone receives is the one after the refusals
            line = await next_of(c)
            assert (line["type"], line["text"]) == ("chat", "after"), line
        async with srv.store.db.execute("SELECT text FROM chat") as cur:
            assert [r[0] for r in await cur.fetchall()] == ["after"]


async def _finish(room: str, a: Client, b: Client) -> None:
    """Ana (X, seat 0) wins on the top row."""
    players = (a, b)
    for ply, cell in enumerate((0, 3, 1, 4, 2)):
        await players[ply % 2].send({"type": "move", "room_id": room, "ply": ply,
                                     "move": {"cell": cell}})
        await a.expect("update")
        await b.expect("update")
    for c in (a, b):
        assert (await c.expect("room"))["status"] == "finished"


async def test_a_rematch_is_offered_by_the_server_to_the_old_rooms_followers(
        tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        room, (a, b, s) = await _room_with_followers(url)
        await _finish(room, a, b)
        assert (await s.expect("room"))["status"] == "finished"
        created = await a.request({"type": "rematch", "room_id": room}, "room_created")
        new_room = created["room_id"]
        assert new_room != room
        for c in (a, b, s):
            offer = await c.expect("rematch_offer")
            assert offer == {"type": "rematch_offer", "room_id": room, "new_room_id": new_room,
                             "player_id": a.inbox[0]["player_id"], "name": "Ana"}
        snap = await b.request({"type": "join", "room_id": new_room}, "room")
        assert snap["status"] == "playing" and snap["your_seats"] == [0]  # seats swapped
        assert [x["name"] for x in snap["seats"]] == ["Bo", "Ana"]
        watched = await s.request({"type": "spectate", "room_id": new_room}, "room")
        assert watched["room_id"] == new_room and watched["your_seats"] == []


async def test_a_chat_line_that_reads_like_a_rematch_is_only_chat(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        room, (a, b, s) = await _room_with_followers(url)
        await _finish(room, a, b)
        fake = f"rematch: {room}"
        await b.send({"type": "chat", "room_id": room, "text": fake})
        for c in (a, b, s):
            line = await next_of(c)
            assert (line["type"], line["text"]) == ("chat", fake)
        # nothing else came: the next message each receives answers its own list_rooms
        for c in (a, b, s):
            rid = await c.send({"type": "list_rooms"})
            m = await next_of(c)
            assert m["type"] == "rooms" and m["re"] == rid, m
            assert [r["room_id"] for r in m["rooms"] if r["status"] != "finished"] == []
