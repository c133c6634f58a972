"""The review page, ``/review/{room_id}``: a finished game step by step with the engine's
verdict on every move, the best move on the board, the score chart; reached from the finished
room's result box and from the lobby's recent games. Debian's Chromium against a real
``tablas serve``, with games really played to their end."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from browser_support import chromium, create_room, new_page, screenshot, served

# Ana (X) and Bob (O) play cells 0-8 in turn. O's edge reply to the centre (cell 1) turns a
# draw into a loss: the blunder. X then wins down the left column.
CELLS = [4, 1, 0, 8, 6, 2, 3]
BLUNDER = 1  # the ply of O's blunder
REVIEW_WAIT = 60_000  # ms: a tic-tac-toe review takes the engine well under a second
# The marks drawn on the board, a ghost (a move one could make) not counted.
MARKS = """() => [...Array(9).keys()].map((i) => {
  const cell = document.querySelector(`#rv-board .ttt-cell[data-cell="${i}"]`);
  if (!cell) return null;
  if (cell.querySelector(':scope > .ttt-x')) return 0;
  if (cell.querySelector(':scope > .ttt-o')) return 1;
  return -1;
})"""


def _cells_after(k: int) -> list[int]:
    cells = [-1] * 9
    for ply, cell in enumerate(CELLS[:k]):
        cells[cell] = ply % 2
    return cells


def _fetch(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.headers["Content-Type"], r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read()


def _review_page(browser: Any, base: str, room: str) -> tuple[Any, Any, list[str]]:
    """A fresh context on ``/review/{room}``, with every console error and page error."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(f"{base}/review/{room}")
    return ctx, page, problems


def _step(page: Any) -> int:
    return int(page.get_attribute("#rv-board", "data-step"))


def _play_tictactoe(browser: Any, base: str) -> tuple[str, Any, Any, list[Any]]:
    """Ana and Bob play CELLS through the page to the end: the room, Ana's and Bob's pages."""
    actx, ana = new_page(browser, base, "Ana")
    room = create_room(ana, "tictactoe", "human")
    bctx, bob = new_page(browser, base, "Bob", path=f"/#/room/{room}")
    bob.wait_for_selector("#room-view svg.board")
    for ply, cell in enumerate(CELLS):
        page = ana if ply % 2 == 0 else bob
        page.wait_for_function(f"window.tablas.room && window.tablas.room.ply === {ply}")
        page.wait_for_selector(f"svg.board.can-move .ttt-cell.hot[data-cell='{cell}']")
        page.click(f".ttt-cell[data-cell='{cell}']")
        page.wait_for_function(f"window.tablas.room.ply > {ply}")
    ana.wait_for_function("window.tablas.room.status === 'finished'")
    return room, ana, bob, [actx, bctx]


def test_a_finished_game_is_reviewed_step_by_step(tmp_path: Path) -> None:
    """The finished room's result box and the lobby's recent games link to the review; it
    lists every move with its verdict (O's edge reply a blunder), → ← Home End and a click on
    a move or the chart step through it, the board drawn as it was at each step, the best
    move drawn where the blunder was played, one point a move on the chart."""
    with served(tmp_path, workers=2) as base, chromium() as browser:
        room, ana, bob, ctxs = _play_tictactoe(browser, base)
        # The result box and the side panel link to the review.
        ana.wait_for_selector("#banner #review-link")
        assert ana.get_attribute("#banner #review-link", "href") == f"review/{room}"
        assert ana.get_attribute("#review-game", "href") == f"review/{room}"
        # The lobby lists the game among the recent ones, with its review.
        ana.click("#banner a[href='#/']")
        link = f"#recent-list li[data-room='{room}'] a.review-link"
        ana.wait_for_selector(link)
        assert "Ana" in ana.inner_text(f"#recent-list li[data-room='{room}']")
        screenshot(ana, "review-lobby-recent")
        ana.click(link)
        ana.wait_for_url(f"{base}/review/{room}")
        ana.wait_for_selector("#rv-moves li.rv-move", timeout=REVIEW_WAIT)
        ana.close()

        ctx, page, problems = _review_page(browser, base, room)
        page.wait_for_selector("#rv-moves li.rv-move", timeout=REVIEW_WAIT)
        review = json.loads(_fetch(f"{base}/api/rooms/{room}/review")[2])
        assert "Ana" in page.inner_text("#rv-players") and "Bob" in page.inner_text("#rv-players")
        assert page.inner_text("#rv-result").startswith("Ana (X) wins")

        # One entry a move, each with its verdict; O's edge reply is the blunder.
        items = page.locator("#rv-moves li.rv-move")
        assert items.count() == len(CELLS)
        tags = page.eval_on_selector_all(
            "#rv-moves li.rv-move", "els => els.map(e => e.querySelector('.verdict-tag')"
            " && e.querySelector('.verdict-tag').dataset.verdict)")
        assert tags == [m["verdict"] for m in review["moves"]]
        assert tags[BLUNDER] == "blunder"
        assert page.text_content(f"#rv-moves li[data-ply='{BLUNDER}'] .verdict-tag") == "blunder"

        # The start, then → and ← step, the board drawn as it was.
        assert _step(page) == 0 and page.evaluate(MARKS) == _cells_after(0)
        for k in range(1, len(CELLS) + 1):
            page.keyboard.press("ArrowRight")
            page.wait_for_function(f"document.querySelector('#rv-board').dataset.step === '{k}'")
            assert page.evaluate(MARKS) == _cells_after(k), k
        page.keyboard.press("ArrowRight")  # past the end: stays there
        assert _step(page) == len(CELLS)
        assert page.locator("#rv-board line.win-line").count() == 1
        page.keyboard.press("ArrowLeft")
        assert _step(page) == len(CELLS) - 1
        assert page.evaluate(MARKS) == _cells_after(len(CELLS) - 1)
        page.keyboard.press("Home")
        assert _step(page) == 0 and page.evaluate(MARKS) == _cells_after(0)
        page.keyboard.press("End")
        assert _step(page) == len(CELLS)

        # A click on a move goes to it: the position it was played in.
        page.click(f"#rv-moves li[data-ply='{BLUNDER}'] .rv-move-btn")
        assert _step(page) == BLUNDER
        assert page.evaluate(MARKS) == _cells_after(BLUNDER)
        assert "current" in page.get_attribute(f"#rv-moves li[data-ply='{BLUNDER}']", "class")
        # The best move is drawn there (the engine's, not the edge played), and said.
        best = review["moves"][BLUNDER]["best_move"]["cell"]
        assert best != CELLS[BLUNDER]
        ghosts = page.eval_on_selector_all(
            "#rv-board .best-ghost", "els => els.map(e => e.closest('[data-cell]').dataset.cell)")
        assert ghosts == [str(best)]
        ghost = f"#rv-board .ttt-cell.best-move[data-cell='{best}'] .ghost .ttt-o"
        assert page.locator(ghost).count() == 1  # O's mark, O to play
        assert "blunder" in page.text_content("#rv-played")
        assert page.locator("#rv-best").count() == 1
        screenshot(page, "review-tictactoe-blunder")
        # No best move is drawn where the move played was the best.
        page.click("#rv-moves li[data-ply='2'] .rv-move-btn")
        assert _step(page) == 2 and page.locator("#rv-board .best-ghost").count() == 0

        # The chart: a point a move, its marker at the step; a click goes to that move.
        points = page.locator("#rv-chart circle.rv-pt")
        assert points.count() == len(CELLS)
        assert page.get_attribute(f"#rv-chart circle.rv-pt[data-ply='{BLUNDER}']", "class") \
            .split() == ["rv-pt", "v-blunder"]
        page.locator("#rv-chart circle.rv-pt[data-ply='5']").click()
        assert _step(page) == 5 and page.evaluate(MARKS) == _cells_after(5)
        marker = float(page.get_attribute("#rv-chart-marker", "x1"))
        assert marker == float(page.get_attribute("#rv-chart circle.rv-pt[data-ply='5']", "cx"))

        # The links: back to the room, and the exports the game has.
        assert page.get_attribute("#rv-room-link", "href") == f"../#/watch/{room}"
        formats = page.eval_on_selector_all("a.rv-export", "els => els.map(e => e.dataset.format)")
        assert formats == ["json", "moves"]
        for f in formats:
            href = page.get_attribute(f"a.rv-export[data-format='{f}']", "href")
            assert _fetch(href)[0] == 200
        assert problems == []
        ctx.close()
        bob.close()
        for c in ctxs:
            c.close()


def test_a_game_not_over_has_no_review_yet(tmp_path: Path) -> None:
    """The review page of a room still waiting says the game is not over; of no room, that
    there is none; an id no room can have is refused before any page is served."""
    with served(tmp_path, workers=1) as base, chromium() as browser:
        actx, ana = new_page(browser, base, "Ana")
        room = create_room(ana, "tictactoe", "human")
        ctx, page, problems = _review_page(browser, base, room)
        page.wait_for_selector("#rv-not-over")
        assert "not over" in page.inner_text("#rv-not-over")
        assert page.is_hidden("#rv-body")
        page.goto(f"{base}/review/0000000000000000")
        page.wait_for_function("document.querySelector('#rv-status').textContent.includes("
                               "'no such room')")
        # The missing room's 404 is the console's one error: the page itself raised none.
        assert [p for p in problems if "404" not in p] == []
        status, ctype, _ = _fetch(f"{base}/review/not!an!id")
        assert status == 400 and ctype.startswith("text/plain")
        assert _fetch(f"{base}/review/{room}/more")[0] == 404
        status, ctype, body = _fetch(f"{base}/review/{room}")
        assert status == 200 and ctype.startswith("text/html") and b"review.js" in body
        ctx.close()
        actx.close()


def _checkers(page: Any) -> list[int]:
    """Each seat's checkers drawn (on points, on the bar, borne off)."""
    return [page.locator(f"#rv-board .checker.c{s}").count()
            + page.locator(f"#rv-board .slab.c{s}").count() for s in (0, 1)]


def _points(seat: int, play: list[list[int]]) -> tuple[set[int], set[int]]:
    """The points a play leaves and reaches, as the board (seat 0 at the bottom) numbers them:
    seat 1's point p is seat 0's 25 - p; the bar and the trays are no points."""
    see = (lambda p: p) if seat == 0 else (lambda p: 25 - p)
    return ({see(f) for f, _ in play if 1 <= f <= 24}, {see(t) for _, t in play if 1 <= t <= 24})


def _marked(page: Any) -> tuple[set[int], set[int]]:
    def pts(cls: str) -> set[int]:
        return {int(p) for p in page.eval_on_selector_all(
            f"#rv-board .point.{cls}", "els => els.map(e => e.dataset.pt)")}
    return pts("last-from"), pts("last-to")


def test_a_backgammon_game_between_bots_is_reviewed(tmp_path: Path) -> None:
    """Two bots play a backgammon game to its end; its review steps through without an error,
    the board (all 30 checkers) drawn at every step visited, the play made or the engine's
    marked on it."""
    with served(tmp_path, workers=2) as base, chromium() as browser:
        actx, ana = new_page(browser, base, "Ana")
        room = ana.evaluate("""() => window.tablas.conn.request({type: "create_room",
            game: "backgammon", options: {cube: false},
            seats: [{kind: "bot", level: "random"}, {kind: "bot", level: "random"}]})
            .then((m) => m.room_id)""")
        deadline = time.monotonic() + 120
        while json.loads(_fetch(f"{base}/api/rooms/{room}")[2])["status"] != "finished":
            assert time.monotonic() < deadline, "the bots did not finish in two minutes"
            time.sleep(1)
        ctx, page, problems = _review_page(browser, base, room)
        # A long game's review takes the engine a minute or more: the page says it is at work.
        page.wait_for_selector("#rv-status:not([hidden])")
        page.wait_for_selector("#rv-moves li.rv-move", timeout=300_000)
        n = page.locator("#rv-moves li.rv-move").count()
        assert n > 10
        assert page.locator("#rv-chart circle.rv-pt").count() == n
        assert _checkers(page) == [15, 15]
        boards = set()
        for _ in range(12):
            page.keyboard.press("ArrowRight")
            assert _checkers(page) == [15, 15]
            boards.add(page.inner_html("#rv-board"))
        assert len(boards) > 3  # the position changes as the game goes on
        for ply in (n // 3, n // 2, n - 1):
            page.click(f"#rv-moves li[data-ply='{ply}'] .rv-move-btn")
            assert _step(page) == ply and _checkers(page) == [15, 15]
        page.keyboard.press("End")
        assert _step(page) == n and _checkers(page) == [15, 15]
        assert page.locator("#rv-board .slab").count() >= 15  # the winner bore all off
        # Where the engine would have played otherwise, the board marks the play made, and
        # the engine's at a click.
        review = json.loads(_fetch(f"{base}/api/rooms/{room}/review")[2])["moves"]
        toggled = 0
        for e in review:
            if e["verdict"] == "best" or not e["best_move"] or "play" not in e["best_move"] \
                    or "play" not in e["move"] or e["best_move_text"] == e["move_text"]:
                continue
            page.click(f"#rv-moves li[data-ply='{e['ply']}'] .rv-move-btn")
            assert _marked(page) == _points(e["seat"], e["move"]["play"])
            page.click("#rv-toggle-best")
            assert _marked(page) == _points(e["seat"], e["best_move"]["play"])
            assert _checkers(page) == [15, 15]
            assert page.inner_text("#rv-toggle-best") == "Show the play made"
            toggled += 1
            if toggled == 3:
                break
        assert toggled
        screenshot(page, "review-backgammon-best")
        assert page.get_attribute("a.rv-export[data-format='mat']", "href").endswith(
            f"/api/rooms/{room}/export?format=mat")
        assert problems == []
        ctx.close()
        actx.close()
