"""The page's small defects a new player met (issue 49), each shown fixed in Debian's Chromium
against a real ``tablas serve``, at 1280×800 and 390×844: an aborted game is no draw and
no rated game; a challenge that ends is told, with the player's own name; the seeking toast
goes once paired; a registered player has no name box; the header stays one line on a
phone and the leaderboard's RD one piece; the background reaches the bottom; a tournament
game links its tournament, whose page names it, its creator and its players, and which
stays listed once finished; Rounds shows for a Swiss only.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest
from browser_support import chromium, new_page, served
from test_lobby_lists_browser import register
from test_meet_browser import Other
from test_offers_browser import press

SIZES = [(1280, 800), (390, 844)]


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_an_aborted_game_is_no_draw_and_not_rated(tmp_path: Path, width: int, height: int
                                                   ) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser:
        _, page = new_page(browser, base, "Ana", width=width, height=height)
        register(page)
        me = page.evaluate("window.tablas.me.player_id")
        page.evaluate("window.tablas.createRoom({game: 'connect4', options: {}, rated: true,"
                      " clock: {base_ms: 300000, increment_ms: 0},"
                      " seats: [{kind: 'human'}, {kind: 'bot', level: 'easy'}], join_seat: 0})")
        page.wait_for_selector("#abort-btn")
        press(page, "#abort-btn")
        page.wait_for_function("window.tablas.room.status === 'finished'")
        text = page.inner_text("#result-text")
        assert "Aborted" in text and "Draw" not in text
        assert "unrated" in page.inner_text("#room-kind").lower()
        page.goto(f"{base}/players/{me}")
        page.wait_for_selector(".pl-game")
        game = page.inner_text(".pl-game")
        assert "aborted" in game and "draw" not in game
        assert page.locator(".pl-game .tag.rated").count() == 0
        assert page.errors == []


def test_the_lobby_edges_on_a_phone(tmp_path: Path) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser, ExitStack() as stack:
        _, page = new_page(browser, base, "Ana", width=390, height=844)
        # The background is the root's: it reaches the bottom of a page longer than a screen.
        assert page.evaluate("getComputedStyle(document.documentElement).backgroundColor") \
            not in ("rgba(0, 0, 0, 0)", "transparent")
        assert page.evaluate("document.documentElement.scrollHeight") > 844
        # The challenge box's placeholder fits its box.
        assert page.evaluate("""() => { const el = document.getElementById('challenge-to');
            const c = document.createElement('canvas').getContext('2d');
            c.font = getComputedStyle(el).font;
            return c.measureText(el.placeholder).width <= el.clientWidth - 8; }""")
        register(page)
        cleo = Other(stack, base, "Cleo", register=True)
        # A challenge typed in another case shows the player's own name.
        page.wait_for_selector(f"[data-online='{cleo.player_id}']", timeout=8000)
        page.fill("#challenge-to", "cLEO")
        page.select_option("#challenge-clock", "")
        page.focus("#challenge-to")
        page.keyboard.press("Enter")
        assert cleo.expect("challenge")["from"]["name"] == "Ana"
        page.wait_for_selector("[data-challenge-out]")
        assert "Waiting for Cleo to answer" in page.inner_text("[data-challenge-out]")
        # A challenge received and withdrawn is told.
        sent = cleo.ask({"type": "challenge", "to": "Ana", "game": "tictactoe"},
                        "challenge_sent")
        page.wait_for_selector(f"[data-challenge='{sent['challenge_id']}']")
        cleo.ask({"type": "cancel_challenge", "challenge_id": sent["challenge_id"]},
                 "challenge_canceled")
        page.wait_for_function("[...document.querySelectorAll('.toast')]"
                               ".some((t) => t.textContent.includes('withdrawn'))")
        # Quick pairing: the seeking toast goes once paired.
        page.select_option("#seek-game", "tictactoe")
        page.select_option("#seek-clock", "")
        page.uncheck("#seek-rated")
        press(page, "#seek-btn")
        page.wait_for_selector(".toast:has-text('Looking for an opponent')")
        cleo.ask({"type": "seek", "game": "tictactoe"}, "seeking")
        page.wait_for_selector("#room-view svg.board")
        page.wait_for_selector(".toast:has-text('Looking for an opponent')", state="detached",
                               timeout=1000)
        # In the room: no name box for a registered player, and the header is one line.
        assert page.locator("#name-form").is_hidden()
        header = page.locator(".topbar").bounding_box()
        assert header is not None and header["height"] < 60, header
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.goto(f"{base}/leaderboard?game=tictactoe")
        page.wait_for_selector("table tbody tr")
        assert page.evaluate("""() => [...document.querySelectorAll('tbody td')]
            .every((td) => td.getClientRects().length === 1
                && td.offsetHeight < 2 * parseFloat(getComputedStyle(td).lineHeight || 20) + 16)""")
        assert page.errors == []


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_a_tournament_named_linked_and_kept_when_finished(tmp_path: Path, width: int,
                                                          height: int) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser:
        _, page = new_page(browser, base, "Ana", width=width, height=height)
        register(page)
        page.wait_for_selector("#tourney-form")
        assert page.locator("#tourney-rounds-label").is_hidden()  # a round robin's own
        page.select_option("#tourney-format", "swiss")
        assert page.locator("#tourney-rounds-label").is_visible()
        page.select_option("#tourney-format", "round_robin")
        page.select_option("#tourney-game", "tictactoe")
        page.check("#tourney-bot-easy")
        press(page, "#tourney-create")
        page.wait_for_selector("[data-join-tourney]")
        press(page, "[data-join-tourney]")
        page.wait_for_function("document.querySelector('[data-join-tourney]')"
                               ".textContent === 'Leave'")
        press(page, "[data-start-tourney]")
        page.wait_for_selector("#room-view svg.board")
        page.wait_for_selector("#room-tournament:not([hidden])")
        assert "round 1" in page.inner_text("#room-tournament")
        href = page.get_attribute("#room-tournament", "href")
        page.wait_for_selector("#resign-btn")
        page.click("#resign-btn")
        page.click("#resign-btn")
        page.wait_for_function("window.tablas.room.status === 'finished'")
        page.goto(f"{base}/{href}")
        page.wait_for_selector("#to-creator a")
        assert "Tic-tac-toe" in page.inner_text("#to-title") and "5+0" in page.inner_text(
            "#to-title")
        assert page.inner_text("#to-creator a") == "Ana"
        names = page.inner_text("#to-rows")
        assert "bot (easy)" in names and "(bot)" not in names
        assert page.locator("#to-rows a.pname").count() == 2
        page.goto(f"{base}/#/")
        page.wait_for_selector(".tourney-row")
        assert "finished" in page.inner_text(".tourney-row")
        assert page.errors == []


def test_a_money_game_has_one_resign_control(tmp_path: Path) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser:
        _, page = new_page(browser, base, "Ana", width=390, height=844)
        page.evaluate("window.tablas.createRoom({game: 'backgammon', options: {cube: true},"
                      " seats: [{kind: 'human'}, {kind: 'bot', level: 'easy'}], join_seat: 0})")
        page.wait_for_selector("#resign-game")
        # Not two buttons side by side: the choices, giving up at once among them.
        assert page.locator("#room-actions > #resign-btn").count() == 0
        page.click("#resign-game summary")
        assert page.locator("#resign-game #resign-btn").inner_text() == "Give up at once"
        press(page, "#resign-btn")
        press(page, "#resign-btn")  # the second press confirms
        page.wait_for_function("window.tablas.room.status === 'finished'")
        assert page.errors == []
