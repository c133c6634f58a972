"""Draws, takebacks, the rating change, bot accounts and the two chats in the room page
(Debian's Chromium against a real ``tablas serve``), at 1280×800 and 390×844, pressed as a
person presses (mouse down, a pause, up) and from the keyboard: a takeback asked and
accepted, one asked of a house bot; a draw offered by the other side and accepted; the
rating change at a rated game's end; a bot account's seat marked; chat lines marked with
their chat.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from browser_support import chromium, new_page, served
from test_meet_browser import PASSWORD, Other

SIZES = [(1280, 800), (390, 844)]
HUMANS = [{"kind": "human"}, {"kind": "human"}]

# The pages and clients all come from 127.0.0.1: vouched for, so that they rate each other
# (contract section 16).
SAME_ADDRESS_OK = ["--shared-address-ok", "127.0.0.1/32"]


def press(page: Any, selector: str) -> None:
    """A person's press: the pointer over the element, down, 150 ms, up."""
    loc = page.locator(selector)
    loc.scroll_into_view_if_needed()
    box = loc.bounding_box()
    assert box is not None, selector
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.wait_for_timeout(150)
    page.mouse.up()


def keyboard(page: Any, selector: str) -> None:
    page.focus(selector)
    page.keyboard.press("Enter")


def open_room(page: Any, base: str, room: str) -> None:
    page.goto(f"{base}/#/room/{room}")
    page.wait_for_selector("#room-view svg.board")


def drop(page: Any, column: int) -> None:
    """Ana drops in ``column`` by pressing the board's column."""
    n = page.evaluate("window.tablas.room.ply")
    press(page, f"svg.board.can-move g.col[data-col='{column}']")
    page.wait_for_function(f"window.tablas.room.ply === {n + 1}")


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_takeback_and_draw_between_two_people(tmp_path: Path, width: int, height: int) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser, ExitStack() as stack:
        _, page = new_page(browser, base, "Ana", width=width, height=height)
        bob = Other(stack, base, "Bob")
        room = bob.ask({"type": "create_room", "game": "connect4", "options": {},
                        "seats": HUMANS, "join_seat": 1}, "room_created")["room_id"]
        open_room(page, base, room)
        page.wait_for_function("window.tablas.room.status === 'playing'")
        assert "Casual" in page.inner_text("#room-kind")
        assert page.locator("#takeback-btn").is_disabled()  # nothing to take back yet
        drop(page, 3)
        bob.ask({"type": "move", "room_id": room, "ply": 1, "move": {"column": 4}}, "update")
        page.wait_for_function("window.tablas.room.ply === 2")
        # Ana asks for a takeback (a person's press); Bob accepts: back to ply 0.
        press(page, "#takeback-btn")
        assert bob.expect("takeback_offer")["seat"] == 0
        page.wait_for_selector("#takeback-offer-text")
        assert "waiting" in page.inner_text("#takeback-offer-text")
        bob.ask({"type": "accept_takeback", "room_id": room}, "update")
        page.wait_for_function("window.tablas.room.ply === 0")
        assert page.evaluate("window.tablas.room.history") == []
        page.wait_for_selector("#play-offer", state="hidden")
        assert page.locator("#movelist .mv").count() == 0
        # The board is hers to play again; then Bob offers a draw, Ana accepts by keyboard.
        drop(page, 0)
        bob.ask({"type": "offer_draw", "room_id": room}, "draw_offer")
        page.wait_for_selector("#accept-draw-btn")
        assert "Bob offers a draw" in page.inner_text("#draw-offer-text")
        keyboard(page, "#accept-draw-btn")
        page.wait_for_function("window.tablas.room.status === 'finished'")
        assert "agreed" in page.inner_text("#result-text")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.errors == []


def test_a_house_bot_takes_back_and_a_declined_draw_is_told(tmp_path: Path) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser, ExitStack() as stack:
        _, page = new_page(browser, base, "Ana")
        del stack
        page.evaluate("window.tablas.createRoom({game: 'grundy', options: {heap: 7},"
                      " seats: [{kind: 'human'}, {kind: 'bot', level: 'easy'}], join_seat: 0})")
        page.wait_for_selector("#room-view svg.board")
        page.wait_for_function("window.tablas.room && window.tablas.room.status === 'playing'")
        # Heap 7 is lost for the side to move: the bot declines a draw at once.
        press(page, "#draw-btn")
        page.wait_for_function("[...document.querySelectorAll('.toast')]"
                               ".some((t) => t.textContent.includes('declined'))")
        assert page.evaluate("window.tablas.room.draw_offer") is None
        page.evaluate("window.tablas.sendMove(window.tablas.room.legal_moves[0])")
        page.wait_for_function("window.tablas.room.ply === 2")  # the bot replied
        keyboard(page, "#takeback-btn")
        page.wait_for_function("window.tablas.room.ply === 0")
        assert page.locator("svg.board.can-move").count() == 1
        assert page.errors == []


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_rating_change_at_the_end_and_a_bot_account_marked(
        tmp_path: Path, width: int, height: int) -> None:
    with served(tmp_path, workers=1, args=SAME_ADDRESS_OK) as base, chromium() as browser, \
            ExitStack() as stack:
        _, page = new_page(browser, base, "Ana", width=width, height=height)
        page.fill("#login-password", PASSWORD)
        page.click("#register-btn")
        page.wait_for_selector("#account-status")
        robo = Other(stack, base, "Robo")
        robo.ask({"type": "register", "password": PASSWORD, "bot": True}, "registered")
        room = robo.ask({"type": "create_room", "game": "tictactoe", "options": {},
                         "seats": HUMANS, "join_seat": 1, "rated": True,
                         "clock": {"base_ms": 300_000, "increment_ms": 0}},
                        "room_created")["room_id"]
        open_room(page, base, room)
        page.wait_for_function("window.tablas.room.status === 'playing'")
        assert "Rated · 5+0" in page.inner_text("#room-kind")
        assert "takeback-btn" not in page.inner_html("#room-actions")  # rated: no takebacks
        bot_card = page.locator(".seat-card[data-seat='1']")
        assert "bot" in bot_card.locator(".tags").inner_text().lower()
        for ply, cell in enumerate([0, 3, 1, 4, 2]):
            if ply % 2:
                robo.ask({"type": "move", "room_id": room, "ply": ply, "move": {"cell": cell}},
                         "update")
            else:
                page.wait_for_function(f"window.tablas.room.ply === {ply}")
                page.evaluate(f"window.tablas.sendMove({{cell: {cell}}})")
                page.wait_for_function(f"window.tablas.room.ply === {ply + 1}")
        page.wait_for_selector("#rating-change")
        text = page.inner_text("#rating-change")
        assert "Your rating: 1500 → 1662 (+162)" in text, text
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.errors == []


def test_the_two_chats_are_marked(tmp_path: Path) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser, ExitStack() as stack:
        _, page = new_page(browser, base, "Ana")
        bob = Other(stack, base, "Bob")
        room = bob.ask({"type": "create_room", "game": "connect4", "options": {},
                        "seats": HUMANS, "join_seat": 1}, "room_created")["room_id"]
        open_room(page, base, room)
        bob.ask({"type": "chat", "room_id": room, "text": "good luck"}, "chat")
        page.wait_for_selector(".chat-line[data-audience='players']")
        line = page.locator(".chat-line").last
        assert "players" in line.inner_text().lower() and "good luck" in line.inner_text()
        # A spectators' line, as the server marks it, shows as the spectators'.
        page.evaluate("window.tablas.onMessage({type: 'chat', room_id: window.tablas.room.room_id,"
                      " player_id: 'x', name: 'Eve', text: 'nice', time: 1,"
                      " audience: 'spectators'})")
        spect = page.locator(".chat-line[data-audience='spectators']")
        assert "spectators" in spect.inner_text().lower() and "nice" in spect.inner_text()
        assert page.errors == []
