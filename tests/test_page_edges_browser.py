"""The page as players see it (issue 38's rough edges), in Debian's Chromium against a real
``tablas serve``, at 1366×768 and at 390×844 (a phone): one name per game on every page;
a player's games listed on one line each with the result in words and the day; nothing wider
than the screen on any page; exports that download; the invite link from the address the
browser used, with a word when that address only works on this computer; backgammon's seat
choice that does not claim the first move; a roll that is no line of its own; "Let a bot
finish" at a pace one can follow, the person's name kept; /explain's labels, legend, first
step and phone fit; one name box in the lobby."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from browser_support import create_room, new_page
from server_support import Client
from tablas.engine.games import GAME_IDS, get_game

SERVE_ARGS = ["--max-msgs-per-address", "0"]  # the module's server (browser_support.base)


SIZES = {"desktop": (1366, 768), "phone": (390, 844)}
HUMANS = [{"kind": "human"}, {"kind": "human"}]
# What sticks out past the right edge of the screen (each element, its right edge).
WIDE = """() => { const w = document.documentElement.clientWidth; const out = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > w + 1 && !el.closest('#ex-view'))
      out.push(`${el.tagName.toLowerCase()}#${el.id} ${Math.round(r.right)}`);
  }
  return [document.documentElement.scrollWidth, out.slice(0, 8)]; }"""


def run(coro: Any) -> Any:
    """``coro`` on an event loop of its own (Playwright's sync API holds this thread's)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def ws(base: str) -> str:
    return base.replace("http://", "ws://") + "/ws"


def finished_tictactoe(base: str, name: str = "Erika Mustermann") -> tuple[str, str]:
    """A tic-tac-toe game ``name`` wins three in a row holding both seats: (room, player)."""
    async def play() -> tuple[str, str]:
        c = Client(ws(base))
        me = await c.connect(name)
        created = await c.request({"type": "create_room", "game": "tictactoe", "options": {},
                                   "seats": HUMANS, "join_seat": 0}, "room_created")
        room = str(created["room_id"])
        await c.expect("room")
        view = await c.request({"type": "join", "room_id": room, "seat": 1}, "room")
        for cell in (0, 3, 1, 4, 2):
            view = await c.request({"type": "move", "room_id": room, "ply": view["ply"],
                                    "move": {"cell": cell}}, "update")
        await c.close()
        return room, str(me["player_id"])
    result: tuple[str, str] = run(play())
    return result


def backgammon_match(base: str) -> str:
    """A backgammon match to 3 with the cube, both seats one person's: a few plays (each
    turn a roll), then the whole match resigned; its room."""
    async def play() -> str:
        c = Client(ws(base))
        await c.connect("Ana")
        created = await c.request({"type": "create_room", "game": "backgammon",
                                   "options": {"match_to": 3}, "seats": HUMANS,
                                   "join_seat": 0}, "room_created")
        room = str(created["room_id"])
        await c.expect("room")
        view = await c.request({"type": "join", "room_id": room, "seat": 1}, "room")
        for _ in range(8):
            legal = view["legal_moves"]
            move = {"action": "roll"} if {"action": "roll"} in legal else legal[0]
            view = await c.request({"type": "move", "room_id": room, "ply": view["ply"],
                                    "move": move}, "update")
        await c.request({"type": "resign", "room_id": room}, "room")
        await c.close()
        return room
    result: str = run(play())
    return result


def fits(page: Any, width: int) -> None:
    wide, what = page.evaluate(WIDE)
    assert wide <= width, (page.url, wide, what)


# --- one name per game ------------------------------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
def test_one_name_per_game_on_every_page(browser: Any, base: str, size: str) -> None:
    w, h = SIZES[size]
    titles = {g: get_game(g).title for g in GAME_IDS}
    with urllib.request.urlopen(f"{base}/api/games") as r:
        served_titles = {g["game"]: g["title"] for g in json.load(r)["games"]}
    assert served_titles == titles
    ctx, page = new_page(browser, base, "Ana", width=w, height=h)
    cards = page.eval_on_selector_all(
        "label.game-card", "els => els.map(e => [e.htmlFor.slice(2), e.innerText.trim()])")
    assert {g: t for g, t in cards} == titles
    page.goto(f"{base}/explain")
    options = page.eval_on_selector_all(
        "#ex-game option", "els => els.map(e => [e.value, e.textContent.trim()])")
    assert {g: t for g, t in options if g != "random"} == titles
    page.goto(f"{base}/leaderboard")
    page.wait_for_selector("#lb-game option", state="attached")
    picked = page.eval_on_selector_all(
        "#lb-game option", "els => els.map(e => [e.value, e.textContent.trim()])")
    assert {g: t for g, t in picked} == titles
    page.goto(f"{base}/")
    for game in ("connect4", "boom"):
        create_room(page, game, "random")
        assert page.inner_text("#room-game") == titles[game]
    assert page.errors == []
    ctx.close()


# --- a player's games, and nothing wider than the screen ---------------------------------------

@pytest.mark.parametrize("size", SIZES)
def test_a_players_games_read_on_one_line_each(browser: Any, base: str, size: str) -> None:
    w, h = SIZES[size]
    _room, player = finished_tictactoe(base)
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    page.goto(f"{base}/players/{player}")
    page.wait_for_selector("#pl-games li")
    item = page.locator("#pl-games li").first
    game = item.locator(".room-game")
    # "Tic-tac-toe" on one line: its box is one line high.
    line = float(page.evaluate(
        "parseFloat(getComputedStyle(document.querySelector('#pl-games .room-game')).lineHeight)"))
    assert game.bounding_box()["height"] < 1.5 * line
    text = item.inner_text()
    assert "Tic-tac-toe" in text and "three in a row" in text and "three_in_a_row" not in text
    assert "Erika Mustermann vs Erika Mustermann" in text  # the names whole
    assert re.search(r"20\d\d", text), text  # the day it was played
    fits(page, w)
    ctx.close()


@pytest.mark.parametrize("size", SIZES)
def test_nothing_is_wider_than_the_screen(browser: Any, base: str, size: str) -> None:
    w, h = SIZES[size]
    _room, player = finished_tictactoe(base, "Ana")
    match = backgammon_match(base)
    ctx, page = new_page(browser, base, "Ana", width=w, height=h)
    fits(page, w)
    page.goto(f"{base}/leaderboard")
    page.wait_for_selector("#lb-rows tr", state="attached")
    fits(page, w)
    page.goto(f"{base}/players/{player}")
    page.wait_for_selector("#pl-games li")
    fits(page, w)
    page.goto(f"{base}/explain?game=tictactoe&position=X.O.X....&depth=2")
    page.wait_for_selector("#ex-view [data-node-id]")
    fits(page, w)
    page.goto(f"{base}/review/{match}")
    page.wait_for_selector("#rv-moves li.rv-move", timeout=60_000)
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    fits(page, w)
    # The step buttons stay on one line, "»" with the others.
    tops = page.eval_on_selector_all(
        ".rv-nav button", "els => els.map(e => Math.round(e.getBoundingClientRect().top))")
    assert len(set(tops)) == 1, tops
    page.goto(f"{base}/#/watch/{match}")
    page.wait_for_selector("#room-view svg.board")
    fits(page, w)
    ctx.close()


# --- downloads, the invite link, the README -----------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
def test_exports_download(browser: Any, base: str, size: str) -> None:
    w, h = SIZES[size]
    room, _ = finished_tictactoe(base, "Ana")
    ctx = browser.new_context(viewport={"width": w, "height": h}, accept_downloads=True)
    page = ctx.new_page()
    page.goto(f"{base}/review/{room}")
    page.wait_for_selector("a.rv-export[data-format='moves']")
    for fmt, ext in (("json", "json"), ("moves", "txt")):
        with page.expect_download() as info:
            page.click(f"a.rv-export[data-format='{fmt}']")
        download = info.value
        assert download.suggested_filename == f"tablas-{room}.{ext}"
        assert open(download.path(), encoding="utf-8").read().strip()
    ctx.close()


@pytest.mark.parametrize("size", SIZES)
def test_the_invite_link_is_the_address_the_browser_used(browser: Any, base: str,
                                                        size: str) -> None:
    w, h = SIZES[size]
    other = base.replace("127.0.0.1", "localhost")
    ctx, page = new_page(browser, other, "Ana", width=w, height=h)
    room = create_room(page, "tictactoe", "human")
    link = page.input_value("#share-url")
    assert link == f"{other}/#/room/{room}"
    # An address only this computer reaches: the page says how to invite someone else.
    hint = page.inner_text("#share")
    assert "--host" in hint and "only on this computer" in hint
    ctx.close()


def test_the_readme_says_how_others_reach_the_server_and_where_the_database_is() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert "--host 0.0.0.0" in readme
    assert "tablas.sqlite3" in readme and "--db" in readme


# --- backgammon's seat, the roll's line ----------------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
def test_backgammon_seats_are_colours_not_first_moves(browser: Any, base: str,
                                                      size: str) -> None:
    w, h = SIZES[size]
    ctx, page = new_page(browser, base, "Ana", width=w, height=h)
    page.click("label[for=g-backgammon]")
    seats = page.eval_on_selector_all("#seat option", "els => els.map(e => e.textContent)")
    assert seats == ["White", "Black", "Random"]
    assert "opening roll" in (page.get_attribute("#seat", "title") or "")
    page.click("label[for=g-connect4]")
    assert page.eval_on_selector_all("#seat option", "els => els.map(e => e.textContent)") \
        == ["I move first", "I move second", "Random"]
    fits(page, w)
    ctx.close()


@pytest.mark.parametrize("size", SIZES)
def test_a_roll_is_no_line_of_its_own(browser: Any, base: str, size: str) -> None:
    """With the cube, each turn starts with a "roll" (no double): the room's move list heads
    the play with its dice instead of giving the roll a numbered line, and the review calls
    it "no double", graded only when it was wrong."""
    w, h = SIZES[size]
    match = backgammon_match(base)
    with urllib.request.urlopen(f"{base}/api/rooms/{match}") as r:
        history = json.load(r)["history"]
    rolls = [i for i, m in enumerate(history) if m == {"action": "roll"}]
    assert rolls  # the script rolled
    ctx, page = new_page(browser, base, "Eve", width=w, height=h, path=f"/#/watch/{match}")
    page.wait_for_selector("#movelist li.mv")
    texts = page.locator("#movelist li.mv .mv-text").all_inner_texts()
    assert len(texts) == len(history) - len(rolls)
    assert "roll" not in texts
    nums = page.locator("#movelist li.mv .num").all_inner_texts()
    assert nums == [f"{k}." for k in range(1, len(nums) + 1)]
    page.goto(f"{base}/review/{match}")
    page.wait_for_selector("#rv-moves li.rv-move", timeout=60_000)
    with urllib.request.urlopen(f"{base}/api/rooms/{match}/review") as r:
        moves = json.load(r)["moves"]
    for i in rolls:
        item = page.locator(f"#rv-moves li[data-ply='{i}']")
        assert item.locator(".rv-move-btn").inner_text() == "no double"
        graded = item.locator(".verdict-tag").count() == 1
        assert graded == (moves[i]["verdict"] not in ("best", "good"))
    ctx.close()


# --- "Let a bot finish" -------------------------------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
def test_let_a_bot_finish_keeps_the_name_and_a_pace_to_follow(browser: Any, base: str,
                                                              size: str) -> None:
    w, h = SIZES[size]
    ctx, page = new_page(browser, base, "Ana", width=w, height=h)
    create_room(page, "connect4", "random")
    me = page.evaluate("window.tablas.room.your_seats[0]")
    page.evaluate("window.plies = []; setInterval(() => { const r = window.tablas.room;"
                  " if (r && !window.plies.some((p) => p[0] === r.ply))"
                  " window.plies.push([r.ply, performance.now()]); }, 20);")
    page.click("#hand-to-bot-btn")
    page.click("#hand-to-bot-btn")  # confirm
    page.wait_for_function("window.tablas.room.seats.every((s) => s.kind === 'bot')")
    name = page.locator(f".seat-card[data-seat='{me}'] .name").inner_text()
    assert name == "bot (medium) for Ana"
    page.wait_for_function("window.plies.length >= 5", timeout=30_000)
    plies = page.evaluate("window.plies")[1:]  # from the first move the bots played
    gaps = [b[1] - a[1] for a, b in itertools.pairwise(plies)]
    assert min(gaps) > 600, gaps  # ms: a pace one can follow
    ctx.close()


# --- /explain, and one name box ------------------------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
def test_explain_speaks_the_games_notation_and_opens_at_the_root(browser: Any, base: str,
                                                                 size: str) -> None:
    w, h = SIZES[size]
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    page.goto(f"{base}/explain?game=tictactoe&position=.........&depth=2")
    page.wait_for_selector("#ex-view [data-node-id='0']")
    page.wait_for_function("document.body.dataset.state === 'ready'")
    # The moves are the board's squares, as the room and the review write them.
    labels = set(page.eval_on_selector_all("#ex-view .ex-move",
                                           "els => els.map(e => e.textContent)"))
    assert {"a3", "b2", "c1"} <= labels, labels
    assert not labels & {str(i) for i in range(9)}
    # W3 / L3 are explained on the page.
    legend = page.inner_text(".ex-legend")
    assert "W3" in legend and "win" in legend and "plies" in legend
    # It opens at the start of the search, the root in view (no "Fit" needed on a phone).
    assert page.get_attribute("#ex-step", "data-step") == "0"
    root = page.locator("#ex-view [data-node-id='0']").bounding_box()
    box = page.locator("#ex-view").bounding_box()
    assert box["x"] <= root["x"] and root["x"] + root["width"] <= box["x"] + box["width"]
    assert box["y"] <= root["y"] and root["y"] + root["height"] <= box["y"] + box["height"]
    fits(page, w)
    ctx.close()


@pytest.mark.parametrize("size", SIZES)
def test_the_lobby_has_one_name_box(browser: Any, base: str, size: str) -> None:
    w, h = SIZES[size]
    ctx, page = new_page(browser, base, "Ana", width=w, height=h)
    visible = page.eval_on_selector_all(
        "input:not([type=password]):not([type=checkbox]):not([type=number])",
        "els => els.filter(e => e.offsetParent !== null && /name/i.test("
        "(e.id || '') + (e.getAttribute('aria-label') || '') + (e.autocomplete || '')))"
        ".map(e => e.id)")
    assert visible == ["login-name"], visible
    # It renames the guest too.
    page.fill("#login-name", "Ana Lima")
    page.click("#rename-btn")
    page.wait_for_function("window.tablas.me && window.tablas.me.name === 'Ana Lima'")
    # In a room the header's box is back (the account panel is the lobby's).
    create_room(page, "tictactoe", "random")
    assert page.locator("#name-input").is_visible()
    assert page.errors == []
    ctx.close()
