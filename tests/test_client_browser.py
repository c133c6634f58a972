"""The web client in a real browser (Debian's Chromium, driven by Playwright) against a real
``tablas serve`` on an ephemeral port: games played by clicks and keys, a spectator, a hostile
player name, a server killed and restarted mid-game, and a screenshot of every board
(``artifacts/screenshots/``)."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from browser_support import (
    build_backgammon_play,
    create_room,
    new_page,
    play_backgammon_turn,
    ply,
    screenshot,
    wait_my_turn_or_end,
    wait_online,
    wait_ply_above,
)
from server_support import Subprocess

MOVES_SHOWN = "document.querySelectorAll('#movelist li.mv').length"


def hot_columns(page: Any) -> list[int]:
    cols: list[int] = page.eval_on_selector_all(
        "svg.board g.col.hot", "els => els.map(e => Number(e.dataset.col))")
    return cols


def drop_piece(page: Any, i: int, by_key: bool) -> None:
    """Drops into a legal column (a click, or its number key) and waits for the update."""
    cols = hot_columns(page)
    assert cols, "no legal column shown"
    col = cols[i % len(cols)]
    n = ply(page)
    if by_key:
        page.keyboard.press(str(col + 1))
    else:
        page.click(f"svg.board g.col[data-col='{col}']")
    wait_ply_above(page, n)


def test_connect4_against_a_bot_to_the_end_with_a_spectator(browser: Any, base: str) -> None:
    ctx, page = new_page(browser, base, "Ana")
    room = create_room(page, "connect4", "random")
    sctx, spec = new_page(browser, base, "Watcher", path=f"/#/watch/{room}")
    spec.wait_for_selector("svg.board")
    assert spec.locator("#room-spectators").text_content() == "1 watching"
    assert spec.locator(".tag.watch").count() == 1
    moves = 0
    while wait_my_turn_or_end(page):
        drop_piece(page, 0, by_key=moves % 2 == 1)  # always the leftmost open column
        moves += 1
        assert moves < 30
    page.wait_for_selector("#banner:not([hidden]) #result-text")
    text = page.locator("#result-text").text_content() or ""
    assert "four in a row" in text or "Draw" in text, text
    page.wait_for_function("document.getElementById('room-spectators').textContent"
                           " === '1 watching'")
    final = ply(page)
    assert page.evaluate(MOVES_SHOWN) == final == len(page.evaluate("window.tablas.room.history"))
    # The spectator saw every move and the end.
    spec.wait_for_function(f"{MOVES_SHOWN} === {final}")
    spec.wait_for_selector("#banner:not([hidden]) #result-text")
    history = "window.tablas.room.history"
    assert spec.evaluate(history) == page.evaluate(history)
    assert page.errors == [] and spec.errors == []
    ctx.close()
    sctx.close()


def test_backgammon_turn_by_clicks_then_verify_dice(browser: Any, base: str) -> None:
    ctx, page = new_page(browser, base, "Bea")
    create_room(page, "backgammon", "random", cube=True, seed="random")
    # The form's random seed went with the room's creation: it is seat 0's in every roll.
    seeds = page.evaluate("window.tablas.room.seeds")
    assert seeds[1] == "" and len(seeds[0]) == 16 and seeds[0].isalnum(), seeds
    assert seeds[0] in (page.locator("#dice-seeds").text_content() or "")
    before = play_backgammon_turn(page)
    # The update arrived: the play is in the history and in the move list.
    played = page.evaluate(f"window.tablas.room.history[{before}]")
    assert "play" in played, played
    # One line an action, but a "roll" (no double): its dice head the play that follows.
    page.wait_for_function(f"{MOVES_SHOWN} === window.tablas.room.history.filter("
                           "(m) => m.action !== 'roll').length")
    assert page.locator(f"#movelist li[data-ply='{before + 1}']").count() == 1
    pips = page.evaluate("window.tablas.room.state.pips")
    assert all(isinstance(x, int) for x in pips)
    assert page.locator("#dice-commitment").text_content() == page.evaluate(
        "window.tablas.room.dice_commitment")
    # Resign (two clicks). A redraw between the clicks, as an update arriving then makes,
    # keeps the confirmation: the second click resigns. Then the seed is revealed and every
    # roll checks out.
    page.wait_for_function("window.tablas.room.state.turn === 0")
    page.click("#resign-game summary")  # a money game: giving up now is one of its choices
    page.click("#resign-btn")
    page.evaluate("""async () => {
        const m = await import('/js/room.js'); m.renderRoom(window.tablas, false); }""")
    assert page.locator("#resign-btn").text_content() == "Really resign?"
    page.click("#resign-btn")
    page.wait_for_selector("#banner:not([hidden]) #result-text")
    assert "resign" in (page.locator("#result-text").text_content() or "")
    page.click("#verify-dice")
    page.wait_for_selector("#dice-verdict")
    verdict = page.locator("#dice-verdict").text_content() or ""
    assert verdict.startswith("✔"), verdict
    rows = page.locator(".dice-table tbody tr.ok").count()
    assert rows == len(page.evaluate("window.tablas.room.rolls")) >= 1
    # The same check through the JavaScript SHA-256 (used where WebCrypto is unavailable).
    fallback = page.evaluate("""async () => {
        const m = await import('/js/dice.js'); const r = window.tablas.room;
        const res = await m.verifyDice(r.room_id, r.dice_seed, r.dice_commitment, r.rolls,
                                       true, r.seeds);
        return res.ok; }""")
    assert fallback is True
    assert page.errors == []
    ctx.close()


def test_both_seats_seeds_from_the_page_and_the_dice_verify(browser: Any, base: str) -> None:
    """Ana types a dice seed when creating a backgammon room; Bo opens its link, and the page
    joins with a random seed of its own. Both seeds are in every roll: after Ana resigns,
    Bo's "Verify dice" checks every roll."""
    actx, ana = new_page(browser, base, "Ana")
    room = create_room(ana, "backgammon", "human", seed="Ana1")
    bctx, bo = new_page(browser, base, "Bo", path=f"/#/room/{room}")
    for p in (ana, bo):
        p.wait_for_function("window.tablas.room && window.tablas.room.status === 'playing'")
    seeds = bo.evaluate("window.tablas.room.seeds")
    assert seeds[0] == "Ana1" and len(seeds[1]) == 16 and seeds[1].isalnum(), seeds
    ana.click("#resign-game summary")
    ana.click("#resign-btn")
    ana.click("#resign-btn")
    bo.wait_for_selector("#banner:not([hidden]) #result-text")
    bo.click("#verify-dice")
    bo.wait_for_selector("#dice-verdict")
    verdict = bo.locator("#dice-verdict").text_content() or ""
    assert verdict.startswith("✔"), verdict
    assert ana.errors == [] and bo.errors == []
    actx.close()
    bctx.close()


def test_hostile_name_is_shown_as_text(browser: Any, base: str) -> None:
    evil = "<svg onload=alert(1)>"  # markup that runs if parsed, within the 24 characters
    ctx, page = new_page(browser, base, evil)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    room = create_room(page, "tictactoe", "random")
    assert page.locator("#card-bottom .name").text_content() == evil
    page.fill("#chat-input", evil + " <img src=x onerror=alert(2)>")
    page.press("#chat-input", "Enter")
    page.wait_for_selector("#chatlog .chat-line")
    assert page.locator("#chatlog .chat-name").first.text_content() == evil
    assert page.locator("#chatlog .chat-text").first.text_content() == (
        evil + " <img src=x onerror=alert(2)>")
    # Another player sees it as text in the room and in the lobby.
    octx, other = new_page(browser, base, "Other", path=f"/#/watch/{room}")
    other.wait_for_selector("svg.board")
    names = other.eval_on_selector_all(".seat-card .name", "els => els.map(e => e.textContent)")
    assert evil in names
    other.goto(f"{base}/#/")
    other.wait_for_selector(f"li[data-room='{room}']")
    assert evil in other.eval_on_selector_all(
        f"li[data-room='{room}'] .pname", "els => els.map(e => e.textContent)")
    for p in (page, other):
        scripts = p.evaluate("[...document.scripts].map(s => s.src || s.textContent)")
        assert len(scripts) == 1 and scripts[0].endswith("/js/app.js"), scripts
        assert p.locator("img").count() == 0
    assert dialogs == []
    ctx.close()
    octx.close()


def test_reconnects_after_a_server_restart(browser: Any, tmp_path: Path) -> None:
    srv = Subprocess(tmp_path / "r.db", tmp_path / "server.log", workers=1)
    srv.start()
    base = f"http://127.0.0.1:{srv.port}"
    try:
        ctx, page = new_page(browser, base, "Cid")
        create_room(page, "connect4", "random")
        assert wait_my_turn_or_end(page)
        drop_piece(page, 3, by_key=False)
        assert wait_my_turn_or_end(page)  # the bot answered
        n = ply(page)
        page.evaluate("window.__same_page = 42")
        srv.kill9()
        page.wait_for_selector("#conn[data-status=offline]")
        srv.start()
        wait_online(page, timeout=30_000)
        # The room was resumed without a reload; the game goes on.
        assert page.evaluate("window.__same_page") == 42
        assert wait_my_turn_or_end(page)
        assert ply(page) == n
        drop_piece(page, 3, by_key=True)
        wait_ply_above(page, n + 1)  # the bot (restarted with the server) answered too
        page.wait_for_function(f"{MOVES_SHOWN} === window.tablas.room.ply")
        assert page.errors == []
        ctx.close()
    finally:
        srv.kill9()


def _moves_for_screenshot(page: Any, game: str) -> None:
    if game == "tictactoe":
        for _ in range(2):
            if not wait_my_turn_or_end(page):
                return
            n = ply(page)
            page.locator("svg.board g.ttt-cell.hot").nth(2).click()
            wait_ply_above(page, n)
    elif game == "grundy":
        for _ in range(2):
            if not wait_my_turn_or_end(page):
                return
            n = ply(page)
            page.locator("svg.board g.heap.hot").first.click()
            page.locator("button.split").last.click()
            wait_ply_above(page, n)
        if wait_my_turn_or_end(page):
            page.locator("svg.board g.heap.hot").first.click()  # a heap chosen: its splits
    elif game == "connect4":
        for i in range(5):
            if not wait_my_turn_or_end(page):
                return
            drop_piece(page, i * 3 + 1, by_key=False)
        wait_my_turn_or_end(page)
    elif game == "boom":
        for i in range(16):
            if not wait_my_turn_or_end(page):
                return
            if page.locator("#boom-btn").count():  # our bomb is on the board: explode it
                n = ply(page)
                page.click("#boom-btn")
                wait_ply_above(page, n)
                assert page.locator("polygon.blast").count() > 0
                page.wait_for_timeout(120)
                screenshot(page, "boom_explosion", still=False)
                break
            drop_piece(page, i * 3 + 1, by_key=False)
        wait_my_turn_or_end(page)
    elif game == "backgammon":
        play_backgammon_turn(page)
        if not wait_my_turn_or_end(page):
            return
        for _ in range(3):
            if page.locator("#take-btn").count() or page.locator("#roll-btn").count():
                n = ply(page)
                page.click("#take-btn" if page.locator("#take-btn").count() else "#roll-btn")
                wait_ply_above(page, n)
                wait_my_turn_or_end(page)
        if page.locator("rect.hit.src").count():
            page.locator("rect.hit.src").first.click()  # a checker chosen: its destinations


@pytest.mark.parametrize("game", ["tictactoe", "grundy", "connect4", "boom", "backgammon"])
def test_board_screenshot(browser: Any, base: str, game: str) -> None:
    ctx, page = new_page(browser, base, "Dee", width=1280, height=900)
    create_room(page, game, "random", heap=13 if game == "grundy" else None)
    _moves_for_screenshot(page, game)
    page.wait_for_timeout(700)  # let the drop/explosion animations settle
    path = screenshot(page, game)
    assert path.stat().st_size > 10_000
    if game == "backgammon":
        # Phone width: the same room stacks vertically and still fits.
        mctx, phone = new_page(browser, base, "Phone", width=390, height=844,
                               path=f"/#/watch/{page.evaluate('window.tablas.room.room_id')}")
        phone.wait_for_selector("svg.board")
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, width
        screenshot(phone, "backgammon_phone", full_page=True)
        mctx.close()
    if game == "connect4":
        page.goto(page.url.split("#")[0] + "#/")
        page.wait_for_selector(".room-item")
        screenshot(page, "lobby")
    assert page.errors == []
    ctx.close()


def test_keyboard_only_tictactoe(browser: Any, base: str) -> None:
    """Tab to a square and press Enter; the digit keys play too."""
    ctx, page = new_page(browser, base, "Kay")
    create_room(page, "tictactoe", "random")
    assert wait_my_turn_or_end(page)
    page.focus("svg.board g.ttt-cell.hot")
    n = ply(page)
    page.keyboard.press("Enter")
    wait_ply_above(page, n)
    if wait_my_turn_or_end(page):
        free = page.eval_on_selector_all("svg.board g.ttt-cell.hot",
                                         "els => els.map(e => Number(e.dataset.cell))")
        n = ply(page)
        page.keyboard.press(str(free[0] + 1))
        wait_ply_above(page, n)
    assert page.evaluate(MOVES_SHOWN) >= 2
    ctx.close()


def test_build_backgammon_play_undo(browser: Any, base: str) -> None:
    """A partial play can be undone before it is sent."""
    ctx, page = new_page(browser, base, "Uma")
    create_room(page, "backgammon", "random", cube=False)
    while True:
        assert wait_my_turn_or_end(page)
        if page.locator("rect.hit.src").count():
            break
        n = ply(page)  # no legal move: pass and wait for the next turn
        page.click("#play-btn")
        wait_ply_above(page, n)
    page.locator("rect.hit.src").first.click()
    page.locator("rect.hit.dest").first.click()
    steps = "window.tablas.ui[window.tablas.room.room_id].builder.steps.length"
    n_steps = page.evaluate(steps)
    assert n_steps >= 1
    # A destination reached with both dice is two steps: each undo takes back exactly one.
    for left in range(n_steps - 1, -1, -1):
        page.click("#undo-btn")
        assert page.evaluate(steps) == left
    build_backgammon_play(page)
    n = ply(page)
    page.keyboard.press("Enter")
    wait_ply_above(page, n)
    ctx.close()


def test_clocks_analysis_and_chat_render(browser: Any, base: str) -> None:
    """Additive fields the server is growing: clocks, live analysis; a chat line with
    newlines, shown as text."""
    ctx, page = new_page(browser, base, "Eve")
    room = create_room(page, "connect4", "random")
    assert wait_my_turn_or_end(page)
    page.evaluate("""() => { const a = window.tablas;
        a.onSnapshot({...a.room, clocks: [65000, 30000], clock_running: a.room.to_move}); }""")
    clock = page.locator("#card-bottom [data-clock]")
    assert clock.text_content() in ("1:05", "1:04")
    page.wait_for_function("document.querySelector('#card-bottom [data-clock]').textContent"
                           " <= '1:03'")
    assert page.locator("#card-top [data-clock]").text_content() == "0:30"
    p = ply(page)
    # The page reads a proof from proven/distance, and a score by its unit and scale: the
    # number itself (the engine's scale) means nothing to it.
    page.evaluate(f"""() => window.tablas.onMessage({{type: 'analysis', room_id: '{room}',
        ply: {p}, seat: 1, depth: 9, score: 12, pv: ['4', '4', '3'], nodes: 12345,
        final: true, proven: 'win', distance: 9, score_unit: 'points', score_typical: 150}})""")
    page.wait_for_selector("#analysis-panel:not([hidden]) .evalbar")
    assert "loses in 9" not in (page.locator("#analysis-panel").text_content() or "")
    assert "wins in 9 plies" in (page.locator("#analysis-panel").text_content() or "")
    width = page.evaluate("document.querySelector('.evalfill').style.width")
    assert width in ("0%", "0.0%"), width  # seat 1 proven to win: the bar is all seat 1's
    assert "4  4  3" in (page.locator("#analysis-panel .pv").text_content() or "")
    page.evaluate(f"""() => window.tablas.onMessage({{type: 'analysis', room_id: '{room}',
        ply: {p}, seat: 0, depth: 2, score: 0.25, pv: ['4'], nodes: 10, final: true,
        proven: null, distance: null, score_unit: 'equity', score_typical: 0.5}})""")
    page.wait_for_function("document.querySelector('.evalscore').textContent.includes('+0.250')")
    width = page.evaluate("document.querySelector('.evalfill').style.width")
    assert width == "73.1%", width  # ½ + ½·tanh(0.25 / 0.5) for seat 0
    page.evaluate(f"""() => window.tablas.onMessage({{type: 'chat', room_id: '{room}',
        player_id: 'x', name: 'Bo', text: 'one\\n<b>two</b>', time: 0}})""")
    line = page.locator("#chatlog .chat-text").last
    assert line.inner_text() == "one\n<b>two</b>"  # the newline drawn, the markup as text
    assert page.locator("#chatlog b").count() == 0
    ctx.close()


def test_two_people_by_share_link_then_rematch(browser: Any, base: str) -> None:
    """A person creates a room, a second person opens its link and takes the open seat;
    they play tic-tac-toe to the end. A chat line that reads like a rematch offer stays
    text; the server's rematch offer shows the other player a Join button."""
    actx, ana = new_page(browser, base, "Ana")
    room = create_room(ana, "tictactoe", "human")
    assert "Waiting for an opponent" in (ana.locator("#turn").text_content() or "")
    link = ana.locator("#share-url").input_value()
    assert link.endswith(f"#/room/{room}")
    bctx, bo = new_page(browser, base, "Bo", path=link.split(base, 1)[1])
    bo.wait_for_selector("svg.board")
    bo.wait_for_function("window.tablas.room.your_seats.length === 1")
    ana.wait_for_function("window.tablas.room.status === 'playing'")
    players = {0: ana, 1: bo}
    for cell in (0, 3, 1, 4, 2):  # X wins on the top row
        page = players[ply(ana) % 2]
        assert wait_my_turn_or_end(page)
        n = ply(page)
        page.click(f"svg.board g.ttt-cell[data-cell='{cell}']")
        wait_ply_above(ana, n)
        wait_ply_above(bo, n)
    for page, text in ((ana, "You win!"), (bo, "You lose")):
        page.wait_for_selector("#banner:not([hidden]) #result-text")
        assert (page.locator("#result-text").text_content() or "").startswith(text)
    fake = f"rematch: {room}"
    bo.fill("#chat-input", fake)
    bo.press("#chat-input", "Enter")
    ana.wait_for_function(f"[...document.querySelectorAll('#chatlog .chat-text')]"
                         f".some(e => e.textContent === {json.dumps(fake)})")
    assert ana.locator("#chatlog a, #chatlog button").count() == 0
    assert ana.locator("#rematch-join").count() == 0 and ana.locator("#rematch-btn").count() == 1
    ana.click("#rematch-btn")
    ana.wait_for_function(f"window.tablas.room && window.tablas.room.room_id !== '{room}'")
    new_room = ana.evaluate("window.tablas.room.room_id")
    offer = bo.locator("#rematch-join")
    offer.wait_for()
    assert offer.get_attribute("href") == f"#/room/{new_room}"
    assert bo.locator("#rematch-btn").count() == 0
    offer.click()
    bo.wait_for_function(f"window.tablas.room && window.tablas.room.room_id === '{new_room}'"
                         " && window.tablas.room.status === 'playing'")
    assert bo.evaluate("window.tablas.room.your_seats") == [0]  # seats swapped: Bo is X now
    actx.close()
    bctx.close()


def test_giving_up_a_seat_in_a_waiting_room(browser: Any, base: str) -> None:
    """A person waiting for an opponent at a table they opened gives the seat up: one click,
    back in the lobby, and the empty table is closed (out of the server's lobby, no longer
    counting against their waiting rooms); opened again, the page says so."""
    ctx, ana = new_page(browser, base, "Wanda")
    room = create_room(ana, "connect4", "human")
    ana.wait_for_function("window.tablas.room && window.tablas.room.your_seats.length === 1")
    ana.click("#leave-seat-btn")
    ana.wait_for_function("location.hash === '#/' && !document.getElementById('room-view')")
    time.sleep(1.1)  # the lobby's answers may be a second old (docs/server.md)
    with urllib.request.urlopen(f"{base}/api/rooms", timeout=10) as r:
        rooms = {x["room_id"]: x for x in json.load(r)["rooms"]}
    assert room not in rooms
    ana.goto(f"{base}/#/room/{room}")
    ana.wait_for_function(f"window.tablas.room && window.tablas.room.room_id === '{room}'"
                          " && window.tablas.room.status === 'closed'")
    assert "Closed" in ana.inner_text("#room-view")
    ctx.close()


def test_spectator_sees_the_bots_live_analysis(browser: Any, base: str) -> None:
    """A real ``hard`` bot thinks on the server; its analysis stream reaches the spectator's
    evaluation bar, depth and PV, and the player (no ``show_analysis``) is not shown it."""
    ctx, page = new_page(browser, base, "Ida")
    room = create_room(page, "connect4", "hard")
    sctx, spec = new_page(browser, base, "Watcher", path=f"/#/watch/{room}")
    spec.wait_for_selector("svg.board")
    assert wait_my_turn_or_end(page)
    drop_piece(page, 3, by_key=False)
    # The server's own message, as the client received it: from the bot's seat, for the ply
    # it was thinking on, with a searched depth and the nodes it counted.
    spec.wait_for_function(
        "() => { const a = window.tablas.analysis; return a && a.final && a.seat === 1; }")
    analysis = spec.evaluate("window.tablas.analysis")
    assert analysis["room_id"] == room and analysis["depth"] >= 1 and analysis["nodes"] > 0
    assert analysis["pv"], analysis
    spec.wait_for_selector("#analysis-panel:not([hidden]) .evalbar .evalfill")
    panel = spec.locator("#analysis-panel").text_content() or ""
    assert f"depth {analysis['depth']}" in panel and "PV:" in panel, panel
    width = spec.evaluate("document.querySelector('#analysis-panel .evalfill').style.width")
    assert width.endswith("%") and 0.0 <= float(width[:-1]) <= 100.0, width
    screenshot(spec, "connect4-analysis")
    assert page.locator("#analysis-panel").is_hidden()
    assert page.errors == [] and spec.errors == []
    ctx.close()
    sctx.close()
