"""The room page's layout and what it tells the player, in Debian's Chromium against a real
``tablas serve``: games played against bots (and between two pages) by clicks, then the page
measured the way a person sees it: inside the viewport, not covered, clickable."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import (
    build_backgammon_play,
    create_room,
    new_page,
    play_backgammon_turn,
    ply,
    served,
    wait_my_turn_or_end,
    wait_ply_above,
)

# Where an element is, how opaque it is with its ancestors, and whether a click at its centre
# reaches it (elementFromPoint: nothing drawn over it, pointer events on).
SEEN = """(el) => {
  const r = el.getBoundingClientRect();
  let opacity = 1;
  for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
    opacity *= Number(getComputedStyle(e).opacity);
  }
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  const hit = document.elementFromPoint(x, y);
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width,
          height: r.height, vw: innerWidth, vh: innerHeight, opacity,
          reached: !!hit && (hit === el || el.contains(hit)),
          under: hit ? (hit.id || hit.getAttribute('class') || hit.tagName) : null};
}"""


# Whether the element has come to rest: no animation that ends (a fade-in, a slide) still
# running on it or on what holds it; endless ones (a glow, a pulse) do not count.
SETTLED = """(el) => document.getAnimations().every(a => a.playState !== 'running'
  || !(a.effect && a.effect.target && a.effect.target.contains(el))
  || a.effect.getComputedTiming().iterations === Infinity)"""


def seen(page: Any, selector: str) -> dict[str, Any]:
    info: dict[str, Any] = page.locator(selector).first.evaluate(SEEN)
    return info


def assert_usable(page: Any, selector: str, *, scroll: bool = True) -> dict[str, Any]:
    """The element is inside the viewport, visible (opaque enough to see) and a click at its
    centre reaches it. ``scroll``: brought into view first (False: the page as it is)."""
    if scroll:
        page.locator(selector).first.evaluate("el => el.scrollIntoView({block: 'nearest'})")
    page.wait_for_function(SETTLED, arg=page.locator(selector).first.element_handle())
    info = seen(page, selector)
    assert info["width"] > 0 and info["height"] > 0, (selector, info)
    assert info["left"] >= 0 and info["top"] >= 0, (selector, info)
    assert info["right"] <= info["vw"] and info["bottom"] <= info["vh"], (selector, info)
    assert info["opacity"] >= 0.5, (selector, info)
    assert info["reached"], (selector, info)
    return info


def cell_owner(page: Any, cell: int) -> str:
    """What a click at the centre of tic-tac-toe cell ``cell`` lands on: 'board' when it is
    the board itself (the cell, its mark or the winning line), else what covers it."""
    out: str = page.evaluate("""(cell) => {
        const sq = document.querySelector(`svg.board g.ttt-cell[data-cell='${cell}'] .ttt-sq`);
        sq.scrollIntoView({block: 'nearest'});
        const r = sq.getBoundingClientRect();
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        if (hit && hit.closest('svg.board')) return 'board';
        return hit ? (hit.id || hit.className || hit.tagName) : 'nothing';
    }""", cell)
    return out


def play_tictactoe_to_the_end(page: Any) -> None:
    while wait_my_turn_or_end(page):
        n = ply(page)
        page.locator("svg.board g.ttt-cell.hot").first.click()
        wait_ply_above(page, n)
    page.wait_for_selector("#banner:not([hidden]) #result-text")


def test_result_box_leaves_the_final_board_visible_and_hides(browser: Any, base: str) -> None:
    """After the last move the result box is beside the board, not over it: every cell, the
    last move and the winning line included, still takes a click; its buttons can be seen and
    clicked, and Hide leaves the whole board."""
    ctx, page = new_page(browser, base, "Rosa")
    create_room(page, "tictactoe", "random")
    play_tictactoe_to_the_end(page)
    room = page.evaluate("window.tablas.room")
    line = room["state"].get("winning_line") or []
    last = room["history"][-1]["cell"]
    for cell in [*line, last, *range(9)]:
        assert cell_owner(page, cell) == "board", (cell, cell_owner(page, cell))
    text = page.locator("#result-text").text_content() or ""
    assert "point" not in text, text  # one point is what every such game is worth
    for label in ("Lobby", "Hide"):
        assert_usable(page, f"#banner >> text={label}")
    assert_usable(page, "#banner button.primary")  # Rematch
    page.click("#banner >> text=Hide", timeout=3000)
    assert page.locator("#banner").is_hidden()
    # A redraw, as a message arriving for the room makes, keeps it put away.
    page.evaluate("""async () => {
        const m = await import('/js/room.js'); m.renderRoom(window.tablas, false); }""")
    assert page.locator("#banner").is_hidden()
    for cell in range(9):
        assert cell_owner(page, cell) == "board"
    assert page.errors == []
    ctx.close()


def test_grundy_cancel_is_seen_and_clears_the_choice(browser: Any, base: str) -> None:
    ctx, page = new_page(browser, base, "Gus")
    create_room(page, "grundy", "random", heap=9)
    assert wait_my_turn_or_end(page)
    page.locator("svg.board g.heap.hot").first.click()
    page.wait_for_selector("svg.board g.heap.selected")
    assert_usable(page, "#controls button:has-text('Cancel')")
    page.click("#controls button:has-text('Cancel')", timeout=3000)
    assert page.locator("svg.board g.heap.selected").count() == 0
    assert page.errors == []
    ctx.close()



SIZES = [(1366, 768), (1280, 900)]
MOVES_SHOWN = "document.querySelectorAll('#movelist li.mv').length"


def fits_unscrolled(page: Any, selector: str) -> None:
    """At both laptop sizes, with the page scrolled to the top, the element is in sight and
    takes a click: no scrolling needed to find it."""
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.evaluate("window.scrollTo(0, 0)")
        page.wait_for_function("window.scrollY === 0")
        assert_usable(page, selector, scroll=False)


def test_backgammon_roll_double_and_play_need_no_scrolling(browser: Any, base: str) -> None:
    ctx, page = new_page(browser, base, "Lia", width=1366, height=768)
    create_room(page, "backgammon", "random", cube=True)
    seen_roll = seen_play = False
    fits_unscrolled(page, "#rules")
    for _ in range(12):
        assert wait_my_turn_or_end(page)
        n = ply(page)
        if page.locator("#roll-btn").count():
            if page.locator("#double-btn").count():
                fits_unscrolled(page, "#roll-btn")
                fits_unscrolled(page, "#double-btn")
                seen_roll = True
            page.click("#roll-btn")
        elif page.locator("#take-btn").count():
            page.click("#take-btn")
        else:
            page.wait_for_selector("#play-btn")
            if page.locator("rect.hit.src").count():
                build_backgammon_play(page)
                fits_unscrolled(page, "#undo-btn")
                fits_unscrolled(page, "#play-btn")
                seen_play = True
            page.click("#play-btn")
        wait_ply_above(page, n)
        if seen_roll and seen_play:
            break
    assert seen_roll and seen_play
    assert page.errors == []
    ctx.close()


def safe_boom_column(page: Any) -> int:
    """A legal column where this page's piece makes no four of its own in a line (which
    would lose BOOM), the columns taken in turn."""
    room = page.evaluate("window.tablas.room")
    board = [row[:] for row in room["state"]["board"]]
    me = room["to_move"]
    legal = [m["column"] for m in room["legal_moves"] if "column" in m]
    rows, cols = len(board), len(board[0])

    def four(b: list[list[int]]) -> bool:
        for r in range(rows):
            for c in range(cols):
                for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                    cells = [(r + k * dr, c + k * dc) for k in range(4)]
                    if all(0 <= y < rows and 0 <= x < cols and b[y][x] == me for y, x in cells):
                        return True
        return False

    start = room["ply"] % cols
    for c in sorted(legal, key=lambda c: (c - start) % cols):
        r = max(y for y in range(rows) if board[y][c] < 0)
        board[r][c] = me
        lost = four(board)
        board[r][c] = -1
        if not lost:
            return c
    return legal[0]


def test_boom_button_and_rules_need_no_scrolling(browser: Any, base: str) -> None:
    ctx, page = new_page(browser, base, "Bo", width=1366, height=768)
    for _attempt in range(3):  # the bot may lose (four of its own) before our bomb is down
        create_room(page, "boom", "random")
        fits_unscrolled(page, "#rules")
        assert "LOSES" in (page.locator("#rules").text_content() or "")
        while wait_my_turn_or_end(page) and not page.locator("#boom-btn").count():
            n = ply(page)
            page.click(f"svg.board g.col[data-col='{safe_boom_column(page)}']")
            wait_ply_above(page, n)
        if page.locator("#boom-btn").count():
            break
    fits_unscrolled(page, "#boom-btn")
    fits_unscrolled(page, "#rules")
    n = ply(page)
    page.click("#boom-btn")
    wait_ply_above(page, n)
    assert page.errors == []
    ctx.close()


RULES = {
    "tictactoe": ["three", "wins"],
    "grundy": ["two unequal heaps", "cannot move loses"],
    "connect4": ["four", "wins"],
    "boom": ["four of your own in a line LOSES", "5th piece is a bomb", "BOOM!"],
    "backgammon": ["bear", "double"],
}


def test_each_game_states_its_rules(browser: Any, base: str) -> None:
    ctx, page = new_page(browser, base, "Ria")
    for game, phrases in RULES.items():
        create_room(page, game, "random")
        page.wait_for_selector("#rules:not([hidden])")
        text = page.locator("#rules").text_content() or ""
        for phrase in phrases:
            assert phrase in text, (game, phrase, text)
        assert_usable(page, "#rules")
    assert page.errors == []
    ctx.close()


# --- backgammon -------------------------------------------------------------------------------

def play_dice(room: dict[str, Any], index: int) -> list[int]:
    """The roll history entry ``index`` (a play) was made with: the latest roll before it."""
    dice = [r["dice"] for r in room["rolls"] if r["ply"] <= index]
    assert dice, room["rolls"]
    out: list[int] = dice[-1]
    return out


def shown_dice(page: Any, selector: str) -> list[int]:
    values: list[int] = page.eval_on_selector_all(
        selector, "els => els.map(e => Number(e.dataset.die))")
    return sorted(values)


def as_drawn(dice: list[int]) -> list[int]:
    return sorted(dice * 2 if dice[0] == dice[1] else dice)


# Notes, from the moment it is installed, every animation of a checker on the board and where
# it starts from (its first keyframe).
WATCH_MOVES = """() => {
  window.__moves = [];
  const seen = new Set();
  const look = () => {
    for (const a of document.getAnimations()) {
      const el = a.effect && a.effect.target;
      if (!el || !el.closest || !el.closest('svg.board .checker') || seen.has(a)) continue;
      seen.add(a);
      window.__moves.push(String(a.effect.getKeyframes()[0].transform));
    }
    requestAnimationFrame(look);
  };
  look();
}"""


def take_or_roll(page: Any) -> bool:
    """On this page's turn, answers a double or rolls; True when it is then to play."""
    assert wait_my_turn_or_end(page)
    for sel in ("#take-btn", "#roll-btn"):
        if page.locator(sel).count():
            n = ply(page)
            page.click(sel)
            wait_ply_above(page, n)
            assert wait_my_turn_or_end(page)
    page.wait_for_selector("#play-btn")
    return True


def test_backgammon_shows_the_bots_roll_and_moves_its_checkers(browser: Any, base: str) -> None:
    """The bot rolls and plays within milliseconds: its dice stay on its half of the board
    until it rolls again, and its checkers slide from where they were."""
    ctx, page = new_page(browser, base, "Ines")
    create_room(page, "backgammon", "random", cube=True)
    me = page.evaluate("window.tablas.room.your_seats[0]")
    bot = 1 - me
    animated = 0
    for _turn in range(6):
        take_or_roll(page)
        build_backgammon_play(page)
        page.evaluate(WATCH_MOVES)
        n = ply(page)
        page.click("#play-btn")
        # The bot's play arrives (after its roll, and a cube action maybe).
        page.wait_for_function(
            f"window.tablas.room.history.slice({n + 1}).some(m => m.play) ||"
            " window.tablas.room.status === 'finished'")
        if not wait_my_turn_or_end(page):
            break
        room = page.evaluate("window.tablas.room")
        index = max(i for i, m in enumerate(room["history"]) if "play" in m)
        dice = play_dice(room, index)
        assert shown_dice(page, f"svg.board g.die.last-roll.d{bot}") == as_drawn(dice), dice
        if room["history"][index]["play"]:
            page.wait_for_function("window.__moves.length > 0", timeout=5000)
            starts = page.evaluate("window.__moves")
            assert any(t not in ("none", "translate(0px, 0px)") for t in starts), starts
            animated += 1
        if animated >= 2:
            break
    assert animated >= 1
    assert page.errors == []
    ctx.close()


def test_backgammon_move_list_writes_each_play_after_its_dice(browser: Any, base: str) -> None:
    """Without the cube a play brings the next roll: that roll belongs to the next line."""
    ctx, page = new_page(browser, base, "Theo")
    create_room(page, "backgammon", "random", cube=False)
    me = page.evaluate("window.tablas.room.your_seats[0]")
    for _turn in range(3):
        take_or_roll(page)
        # The roll the bot last played with stays in sight next to this page's own.
        room = page.evaluate("window.tablas.room")
        plays = [i for i, m in enumerate(room["history"]) if "play" in m]
        if plays:
            assert shown_dice(page, f"svg.board g.die.last-roll.d{1 - me}") == \
                as_drawn(play_dice(room, plays[-1]))
        assert shown_dice(page, f"svg.board g.die.d{me}:not(.last-roll)") == \
            as_drawn(room["state"]["dice"])
        build_backgammon_play(page)
        n = ply(page)
        page.click("#play-btn")
        wait_ply_above(page, n)
    page.wait_for_function(f"{MOVES_SHOWN} === window.tablas.room.ply")
    room = page.evaluate("window.tablas.room")
    for i, mv in enumerate(room["history"]):
        if "play" not in mv:
            continue
        text = page.locator(f"#movelist li[data-ply='{i + 1}'] .mv-dice").text_content() or ""
        assert text.startswith("-".join(map(str, play_dice(room, i)))), (i, text, room["rolls"])
    assert page.errors == []
    ctx.close()


def test_backgammon_double_offer_take_and_last_play(browser: Any, base: str) -> None:
    """Two people: the second to play doubles at once. While the offer waits, the cube still
    shows the stake as it is and the offer shows the stake asked for, on the board and in the
    moves; after the take the cube moves, and the last play stays marked."""
    actx, ana = new_page(browser, base, "Ana")
    room = create_room(ana, "backgammon", "human", cube=True)
    bctx, bob = new_page(browser, base, "Bob", path=f"/#/room/{room}")
    for p in (ana, bob):
        p.wait_for_function("window.tablas.room && window.tablas.room.status === 'playing'")
    first, second = (ana, bob) if ana.evaluate(
        "window.tablas.room.your_seats.includes(window.tablas.room.to_move)") else (bob, ana)
    play_backgammon_turn(first)
    for p in (ana, bob):
        p.wait_for_selector("svg.board polygon.point.last-to")
    assert wait_my_turn_or_end(second)
    n = ply(second)
    second.click("#double-btn")
    for p in (ana, bob):
        wait_ply_above(p, n)
        assert p.locator("svg.board .cube .cube-text").text_content() == "64"  # still 1
        assert p.locator("svg.board .cube-offer").get_attribute("data-value") == "2"
        assert "2" in (p.locator("svg.board .cube-offer").text_content() or "")
        assert p.locator("svg.board polygon.point.last-to").count() > 0
        assert "double to 2" in (p.locator(f"#movelist li[data-ply='{n + 1}']").text_content()
                                 or "")
    first.wait_for_selector("#take-btn")
    assert "2" in (first.locator("#controls").text_content() or "")
    n = ply(first)
    first.click("#take-btn")
    for p in (ana, bob):
        wait_ply_above(p, n)
        assert p.locator("svg.board .cube .cube-text").text_content() == "2"
        assert p.locator("svg.board .cube-offer").count() == 0
        assert p.locator("svg.board polygon.point.last-to").count() > 0
        assert "cube at 2" in (p.locator(f"#movelist li[data-ply='{n + 1}']").text_content()
                               or "")
    assert ana.errors == [] and bob.errors == []
    actx.close()
    bctx.close()


def test_backgammon_points_are_finger_sized_on_a_phone(browser: Any, base: str) -> None:
    ctx, page = new_page(browser, base, "Pia", width=390, height=844)
    create_room(page, "backgammon", "random", cube=False)
    for _turn in range(4):
        take_or_roll(page)
        if page.locator("rect.hit.src").count():
            break
        n = ply(page)
        page.click("#play-btn")  # no legal move: pass
        wait_ply_above(page, n)
    boxes = page.eval_on_selector_all(
        "rect.hit.src", "els => els.map(e => { const r = e.getBoundingClientRect();"
        " return [r.width, r.height]; })")
    assert boxes and all(w >= 44 and hh >= 44 for w, hh in boxes), boxes
    page.locator("rect.hit.src").first.click()
    boxes = page.eval_on_selector_all(
        "rect.hit.dest", "els => els.map(e => { const r = e.getBoundingClientRect();"
        " return [r.width, r.height]; })")
    assert boxes and all(w >= 44 and hh >= 44 for w, hh in boxes), boxes
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    build_backgammon_play(page)
    n = ply(page)
    page.click("#play-btn")
    wait_ply_above(page, n)
    assert page.errors == []
    ctx.close()


# --- analysis, Grundy, tic-tac-toe, names -----------------------------------------------------

def test_analysis_says_its_units_and_leaves_at_the_end(browser: Any, base: str) -> None:
    """The bot's analysis, shown to the players (show_analysis), says how to read its score
    from the message's unit and scale; once the game is over it is gone."""
    ctx, page = new_page(browser, base, "Ava")
    create_room(page, "backgammon", "medium", cube=False, show_analysis=True)
    take_or_roll(page)
    build_backgammon_play(page)
    n = ply(page)
    page.click("#play-btn")
    page.wait_for_function(f"window.tablas.analysis && window.tablas.analysis.ply > {n}"
                           " && !window.tablas.analysis.proven", timeout=30_000)
    page.wait_for_selector("#analysis-panel:not([hidden]) .score-unit")
    unit = page.locator("#analysis-panel .score-unit").text_content() or ""
    assert "equity" in unit and "points per game" in unit, unit
    page.click("#resign-game summary")  # a money game: giving up now is one of its choices
    page.click("#resign-btn")
    page.click("#resign-btn")
    page.wait_for_selector("#banner:not([hidden]) #result-text")
    assert page.locator("#analysis-panel").is_hidden()

    create_room(page, "connect4", "hard", show_analysis=True)
    while True:  # until the bot has given a score (not a proof) for one of its moves
        assert wait_my_turn_or_end(page)
        if page.evaluate("!!(window.tablas.analysis && !window.tablas.analysis.proven)"):
            break
        n = ply(page)
        page.locator("svg.board g.col.hot").first.click()
        wait_ply_above(page, n)
    a = page.evaluate("window.tablas.analysis")
    page.wait_for_selector("#analysis-panel:not([hidden]) .score-unit")
    unit = page.locator("#analysis-panel .score-unit").text_content() or ""
    assert "engine points" in unit and f"±{a['score_typical']:g}" in unit, (unit, a)
    while wait_my_turn_or_end(page):  # the hard bot wins soon against the leftmost column
        n = ply(page)
        page.locator("svg.board g.col.hot").first.click()
        wait_ply_above(page, n)
    page.wait_for_selector("#banner:not([hidden]) #result-text")
    assert page.locator("#analysis-panel").is_hidden()
    assert page.errors == []
    ctx.close()


def test_grundy_heap_is_one_stack(browser: Any, base: str) -> None:
    """A heap of 13 is one pile of 13 coins, not a pile of 12 beside a pile of 1."""
    ctx, page = new_page(browser, base, "Gia")
    create_room(page, "grundy", "random", heap=13)
    page.wait_for_selector("svg.board g.heap[data-heap='0']")
    xs = page.eval_on_selector_all("svg.board g.heap[data-heap='0'] ellipse.coin-top",
                                   "els => els.map(e => e.getAttribute('cx'))")
    assert len(xs) == 13 and len(set(xs)) == 1, xs
    assert page.locator("svg.board g.heap[data-heap='0'] .heap-label").text_content() == "13"
    ctx.close()


def test_tictactoe_coordinates_match_the_move_list(browser: Any, base: str) -> None:
    """Columns a–c and rows 3–1 are written round the board; a move at a cell is listed
    under the column and row written beside that cell."""
    ctx, page = new_page(browser, base, "Tia")
    create_room(page, "tictactoe", "random")
    labels = page.eval_on_selector_all("svg.board text.coord", """els => els.map(e => {
        const r = e.getBoundingClientRect();
        return {text: e.textContent, axis: e.dataset.axis, x: r.left + r.width / 2,
                y: r.top + r.height / 2}; })""")
    cols = sorted((lab for lab in labels if lab["axis"] == "col"), key=lambda lab: lab["x"])
    rows = sorted((lab for lab in labels if lab["axis"] == "row"), key=lambda lab: lab["y"])
    assert [lab["text"] for lab in cols] == ["a", "b", "c"], labels
    assert [lab["text"] for lab in rows] == ["3", "2", "1"], labels

    def name_of(cell: int) -> str:
        """The file written under the cell's column and the rank beside its row, read in
        one go from the board on screen (a bot's answer may redraw it any time)."""
        name: str = page.evaluate("""(cell) => {
            const box = document.querySelector(
                `svg.board g.ttt-cell[data-cell='${cell}'] .ttt-sq`).getBoundingClientRect();
            const mid = (e) => { const r = e.getBoundingClientRect();
                                 return [r.left + r.width / 2, r.top + r.height / 2]; };
            const coords = [...document.querySelectorAll('svg.board text.coord')];
            const col = coords.find(e => e.dataset.axis === 'col' &&
                box.left <= mid(e)[0] && mid(e)[0] <= box.right);
            const row = coords.find(e => e.dataset.axis === 'row' &&
                box.top <= mid(e)[1] && mid(e)[1] <= box.bottom);
            return `${col.textContent}${row.textContent}`; }""", cell)
        return name

    assert wait_my_turn_or_end(page)
    for cell in (4, 0):  # the centre, then the top left corner (or the first free square)
        if not wait_my_turn_or_end(page):
            break
        free = page.eval_on_selector_all("svg.board g.ttt-cell.hot",
                                         "els => els.map(e => Number(e.dataset.cell))")
        target = cell if cell in free else free[0]
        n = ply(page)
        page.click(f"svg.board g.ttt-cell[data-cell='{target}']")
        wait_ply_above(page, n)
        text = page.locator(f"#movelist li[data-ply='{n + 1}'] .mv-text").text_content()
        assert text == name_of(target), (target, text)
    ctx.close()


def test_players_of_the_same_name_are_told_apart(browser: Any, base: str) -> None:
    """Names are not unique: each person's seat card carries the start of their player id."""
    actx, ana = new_page(browser, base, "Twin")
    room = create_room(ana, "tictactoe", "human")
    bctx, bob = new_page(browser, base, "Twin", path=f"/#/room/{room}")
    for p in (ana, bob):
        p.wait_for_function("window.tablas.room && window.tablas.room.status === 'playing'")
    ids = {p.evaluate("window.tablas.me.player_id") for p in (ana, bob)}
    assert len(ids) == 2
    for p in (ana, bob):
        shown = p.eval_on_selector_all(".seat-card .pid", "els => els.map(e => e.textContent)")
        assert sorted(s.strip("#") for s in shown) == sorted(i[:4] for i in ids), shown
        me = p.evaluate("window.tablas.me.player_id")
        assert (p.locator("#card-bottom .pid").text_content() or "").strip("#") == me[:4]
    # and so does the lobby's line for the room
    cctx, cy = new_page(browser, base, "Cy")
    sel = f".room-item[data-room='{room}'] .pid"
    cy.wait_for_function(f"document.querySelectorAll(\"{sel}\").length === 2", timeout=15000)
    shown = cy.eval_on_selector_all(sel, "els => els.map(e => e.textContent)")
    assert sorted(x.strip("#") for x in shown) == sorted(i[:4] for i in ids), shown
    actx.close()
    bctx.close()
    cctx.close()


# --- rooms that end while open ----------------------------------------------------------------

@pytest.fixture(scope="module")
def brief(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server where a person is absent half a second after their last connection closed."""
    with served(tmp_path_factory.mktemp("brief"), workers=1,
                args=["--abandon-after", "0.5"]) as url:
        yield url


def assert_nothing_to_do(page: Any) -> list[str]:
    """No turn to take and nothing to click on the board; the room's actions and controls
    offered (their labels)."""
    assert page.locator(".turn-flag, .seat-card.to-move").count() == 0
    assert page.locator("svg.board .hot, svg.board.can-move").count() == 0
    assert not (page.locator("#turn").text_content() or "").startswith("Your turn")
    actions: list[str] = page.eval_on_selector_all(
        "#room-actions button, #room-actions a, #controls button",
        "els => els.map(e => e.textContent)")
    return actions


def test_a_room_that_ends_while_open(browser: Any, brief: str) -> None:
    """Played by two people and watched by a third: when both leave the game is adjourned,
    and the spectator's page says so with nothing left to click; when one leaves, the other
    wins and is told why; a waiting table whose creator leaves is closed for its watcher."""
    actx, ana = new_page(browser, brief, "Ana")
    room = create_room(ana, "tictactoe", "human")
    bctx, bob = new_page(browser, brief, "Bob", path=f"/#/room/{room}")
    sctx, spec = new_page(browser, brief, "Sid", path=f"/#/watch/{room}")
    for p in (ana, bob, spec):
        p.wait_for_function("window.tablas.room && window.tablas.room.status === 'playing'")
    actx.close()
    bctx.close()
    spec.wait_for_function("window.tablas.room.status === 'adjourned'", timeout=10_000)
    assert "Adjourned" in (spec.locator("#turn").text_content() or "")
    assert assert_nothing_to_do(spec) == []

    actx, ana = new_page(browser, brief, "Ana")
    room = create_room(ana, "connect4", "human")
    bctx, bob = new_page(browser, brief, "Bob", path=f"/#/room/{room}")
    ana.wait_for_selector("svg.board.can-move")  # Ana's turn, the board waiting for her
    bctx.close()
    ana.wait_for_function("window.tablas.room.status === 'finished'", timeout=10_000)
    text = ana.locator("#result-text").text_content() or ""
    assert text.startswith("You win") and "Bob left" in text, text
    assert_nothing_to_do(ana)
    assert ana.locator("#resign-btn, #hand-to-bot-btn").count() == 0

    room = create_room(ana, "connect4", "human")
    spec.goto(f"{brief}/#/watch/{room}")
    spec.wait_for_function(f"window.tablas.room && window.tablas.room.room_id === '{room}'")
    actx.close()
    spec.wait_for_function("window.tablas.room.status === 'closed'", timeout=10_000)
    assert "Closed" in (spec.locator("#turn").text_content() or "")
    assert assert_nothing_to_do(spec) == []
    assert spec.locator("#share-url, [id^=take-seat]").count() == 0
    assert spec.errors == []
    sctx.close()


def test_sound_is_off_until_turned_on_and_the_choice_is_kept(browser: Any, base: str) -> None:
    ctx, page = new_page(browser, base, "Sam")
    toggle = page.locator("#sound")
    assert_usable(page, "#sound")
    assert toggle.get_attribute("aria-pressed") == "false"
    assert page.evaluate("localStorage.getItem('tablas-sound')") is None
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    assert page.evaluate("localStorage.getItem('tablas-sound')") == "1"
    page.reload()
    page.wait_for_selector("#conn[data-status=online]")
    assert page.locator("#sound").get_attribute("aria-pressed") == "true"
    # With sound on, a game is played as before (the sounds play on moves and rolls).
    create_room(page, "tictactoe", "random")
    assert wait_my_turn_or_end(page)
    n = ply(page)
    page.locator("svg.board g.ttt-cell.hot").first.click()
    wait_ply_above(page, n)
    page.locator("#sound").click()
    assert page.locator("#sound").get_attribute("aria-pressed") == "false"
    assert page.evaluate("localStorage.getItem('tablas-sound')") == "0"
    assert page.errors == []
    ctx.close()
