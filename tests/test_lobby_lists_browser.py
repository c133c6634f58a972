"""The lobby's lists update in place (Debian's Chromium against a real ``tablas serve``), at
1280×800 and 390×844: the open seeks (polled twice a second) and the tournaments (every 3 s)
keep a row that did not change, so a person's press (mouse down, 150 ms, up) lands every time
and the keyboard's focus stays; who is online, with a Challenge button; a custom clock.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest
from browser_support import chromium, new_page, served
from test_meet_browser import PASSWORD, Other
from test_offers_browser import press

SIZES = [(1280, 800), (390, 844)]


def register(page: object) -> None:
    page.fill("#login-password", PASSWORD)  # type: ignore[attr-defined]
    page.click("#register-btn")  # type: ignore[attr-defined]
    page.wait_for_selector("#account-status")  # type: ignore[attr-defined]


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_ten_presses_on_cancel_each_cancel_a_seek_and_focus_stays(
        tmp_path: Path, width: int, height: int) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser, ExitStack() as stack:
        _, page = new_page(browser, base, "Ana", width=width, height=height)
        page.wait_for_selector("#seek-form")
        page.select_option("#seek-game", "boom")
        bob = Other(stack, base, "Bob")
        bob.ask({"type": "seek", "game": "tictactoe"}, "seeking")  # another row, polled too
        for _ in range(10):
            press(page, "#seek-btn")
            page.wait_for_selector("[data-seek] [data-cancel]")
            page.wait_for_timeout(600)  # a poll or two of the list pass over the row
            press(page, "[data-seek] [data-cancel]")
            page.wait_for_function("window.tablas.mySeeks.size === 0 &&"
                                   " !document.querySelector('[data-seek] [data-cancel]')",
                                   timeout=3000)
        # The keyboard's focus on a seek's button outlives the polls.
        page.focus("[data-seek] [data-accept]")
        page.wait_for_timeout(1500)
        assert page.evaluate("document.activeElement.hasAttribute('data-accept')")
        page.keyboard.press("Enter")
        page.wait_for_selector("#room-view svg.board")
        assert bob.expect("paired")["room_id"] == page.evaluate("window.tablas.room.room_id")
        assert page.errors == []


def test_a_tournament_row_is_kept_across_polls(tmp_path: Path) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser:
        _, page = new_page(browser, base, "Ana")
        register(page)
        page.wait_for_selector("#tourney-form")
        page.click("#tourney-create")
        page.wait_for_selector("[data-join-tourney]")
        page.evaluate("window.kept = document.querySelector('[data-join-tourney]')")
        page.focus("[data-join-tourney]")
        page.wait_for_timeout(3500)  # past a poll of the list
        assert page.evaluate("document.querySelector('[data-join-tourney]') === window.kept")
        assert page.evaluate("document.activeElement === window.kept")
        press(page, "[data-join-tourney]")
        page.wait_for_function("document.querySelector('[data-join-tourney]')"
                               ".textContent === 'Leave'")
        assert page.errors == []


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_who_is_online_and_a_challenge_from_the_list_with_a_custom_clock(
        tmp_path: Path, width: int, height: int) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser, ExitStack() as stack:
        _, page = new_page(browser, base, "Ana", width=width, height=height)
        register(page)
        cleo = Other(stack, base, "Cleo", register=True)
        robo = Other(stack, base, "Robo")
        robo.ask({"type": "register", "password": PASSWORD, "bot": True}, "registered")
        Other(stack, base, "Gus")  # a guest: not listed
        page.wait_for_selector(f"[data-online='{cleo.player_id}']", timeout=8000)
        page.wait_for_selector(f"[data-online='{robo.player_id}'] .tag.bot")
        names = page.inner_text("#online-list")
        assert "Cleo" in names and "Robo" in names and "Gus" not in names
        assert "Ana" not in names  # not oneself
        # A custom clock, 7+3, for the challenge sent from the list.
        page.select_option("#challenge-clock", "custom")
        page.fill("#challenge-clock-custom", "7+3")
        press(page, f"[data-challenge-player='{cleo.player_id}']")
        offer = cleo.expect("challenge")
        assert offer["clock"] == {"base_ms": 420_000, "increment_ms": 3000}
        assert offer["from"]["name"] == "Ana"
        page.wait_for_selector("[data-challenge-out]")
        # A clock too short is refused on the page, nothing sent.
        page.fill("#challenge-clock-custom", "0+0")
        page.focus(f"[data-challenge-player='{cleo.player_id}']")
        page.keyboard.press("Enter")
        page.wait_for_function("[...document.querySelectorAll('.toast')]"
                               ".some((t) => t.textContent.includes('custom clock'))")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.errors == []


def test_a_second_browser_of_the_same_player_sees_it_joined(tmp_path: Path) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser:
        _, page = new_page(browser, base, "Ana")
        register(page)
        page.wait_for_selector("#tourney-form")
        page.click("#tourney-create")
        page.wait_for_selector("[data-join-tourney]")
        press(page, "[data-join-tourney]")
        page.wait_for_function("document.querySelector('[data-join-tourney]')"
                               ".textContent === 'Leave'")
        # Another browser (its own storage), logged in as Ana.
        _, other = new_page(browser, base, "Someone")
        other.fill("#login-name", "Ana")
        other.fill("#login-password", PASSWORD)
        other.click("#login-btn")
        other.wait_for_function("window.tablas.me && window.tablas.me.name === 'Ana'")
        other.wait_for_function("document.querySelector('[data-join-tourney]')"
                                " && document.querySelector('[data-join-tourney]')"
                                ".textContent === 'Leave'", timeout=8000)
        press(other, "[data-join-tourney]")  # and may leave from there
        other.wait_for_function("document.querySelector('[data-join-tourney]')"
                                ".textContent === 'Join'")
        assert page.errors == [] and other.errors == []


def test_a_room_with_a_custom_clock_from_the_lobby_form(tmp_path: Path) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser:
        _, page = new_page(browser, base, "Ana", width=390, height=844)
        page.click("label[for=g-connect4]")
        page.select_option("#opponent", "easy")
        page.select_option("#clock", "custom")
        assert page.locator("#clock-custom").is_visible()
        page.fill("#clock-custom", "2.5+4")
        page.click("#create-btn")
        page.wait_for_selector("#room-view svg.board")
        clock = page.evaluate("window.tablas.room.room_options.clock")
        assert clock == {"base_ms": 150_000, "increment_ms": 4000}
        assert "2.5+4" in page.inner_text("#room-kind")
        # Back in the lobby the form offers that clock again.
        page.goto(f"{base}/#/")
        page.wait_for_selector("#clock")
        assert page.evaluate("document.getElementById('clock').value") == "150000:4000"
        assert page.errors == []
