"""Meeting an opponent in the page (Debian's Chromium against a real ``tablas serve``): a
seek another client made shows in the lobby within a second and a click pairs with it; the
quick-pairing form seeks; a challenge shows with Accept and Decline; the panel works from the
keyboard and fits a phone."""

from __future__ import annotations

import json
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from browser_support import chromium, new_page, served
from websockets.sync.client import ClientConnection, connect

PASSWORD = "correct horse battery"


class Other:
    """Another player, a plain WebSocket client (not a page); closed with the test's stack."""

    def __init__(self, stack: ExitStack, base: str, name: str, register: bool = False) -> None:
        self.ws: ClientConnection = stack.enter_context(
            connect(base.replace("http://", "ws://") + "/ws"))
        self.n = 0
        self.player_id = self.ask({"type": "hello", "name": name}, "welcome")["player_id"]
        if register:
            self.ask({"type": "register", "password": PASSWORD}, "registered")

    def ask(self, msg: dict[str, Any], kind: str) -> dict[str, Any]:
        self.n += 1
        self.ws.send(json.dumps(dict(msg, id=self.n)))
        while True:
            m = json.loads(self.ws.recv(timeout=20))
            if m.get("re") == self.n:
                assert m["type"] == kind, m
                return m

    def expect(self, kind: str) -> dict[str, Any]:
        while True:
            m = json.loads(self.ws.recv(timeout=20))
            if m["type"] == kind:
                return m


def test_a_seek_made_elsewhere_shows_within_a_second_and_a_click_pairs(tmp_path: Path) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser, ExitStack() as stack:
        _, page = new_page(browser, base, "Ana")
        page.wait_for_selector("#seek-form")
        bob = Other(stack, base, "Bob")
        seek_id = bob.ask({"type": "seek", "game": "tictactoe"}, "seeking")["seek_id"]
        asked = time.monotonic()
        page.wait_for_selector(f"[data-seek='{seek_id}'] [data-accept]", timeout=1000)
        assert time.monotonic() - asked < 1.0
        assert "Bob" in page.inner_text(f"[data-seek='{seek_id}']")
        page.click(f"[data-seek='{seek_id}'] [data-accept]")
        page.wait_for_selector("#room-view svg.board")
        paired = bob.expect("paired")
        room = page.evaluate("window.tablas.room")
        assert room["room_id"] == paired["room_id"] and room["status"] == "playing"
        assert room["your_seats"] == [1 - paired["seat"]]
        assert page.errors == []


def test_quick_pairing_from_the_keyboard_and_a_challenge_accepted(tmp_path: Path) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser, ExitStack() as stack:
        _, page = new_page(browser, base, "Ana")
        page.select_option("#seek-game", "connect4")
        page.select_option("#seek-clock", "")
        page.focus("#seek-btn")
        page.keyboard.press("Enter")
        page.wait_for_function("window.tablas.mySeeks.size === 1")
        page.wait_for_selector("[data-seek] [data-cancel]")
        bob = Other(stack, base, "Bob")
        bob.ask({"type": "seek", "game": "connect4"}, "seeking")
        page.wait_for_selector("#room-view svg.board")
        assert bob.expect("paired")["room_id"] == page.evaluate("window.tablas.room.room_id")

        # Registered now (challenges are for registered players), back in the lobby.
        page.goto(base + "/#/")
        page.fill("#login-password", PASSWORD)
        page.click("#register-btn")
        page.wait_for_selector("#account-status")
        cleo = Other(stack, base, "Cleo", register=True)
        sent = cleo.ask({"type": "challenge", "to": "ana", "game": "tictactoe"},
                        "challenge_sent")
        cid = sent["challenge_id"]
        page.wait_for_selector(f"[data-challenge='{cid}']")
        assert "Cleo" in page.inner_text(f"[data-challenge='{cid}']")
        page.click(f"[data-decline-challenge='{cid}']")
        assert cleo.expect("challenge_declined")["challenge_id"] == cid
        # A declined challenger waits a minute before asking again (contract section 15):
        # another player asks.
        dora = Other(stack, base, "Dora", register=True)
        cid = dora.ask({"type": "challenge", "to": "Ana", "game": "tictactoe"},
                       "challenge_sent")["challenge_id"]
        page.focus(f"[data-accept-challenge='{cid}']")
        page.keyboard.press("Enter")
        page.wait_for_selector("#room-view svg.board")
        assert dora.expect("paired")["room_id"] == page.evaluate("window.tablas.room.room_id")
        assert page.errors == []


def test_the_panel_fits_a_phone_and_challenges_a_house_bot(tmp_path: Path) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser, ExitStack() as stack:
        _, page = new_page(browser, base, "Ana", width=390, height=844)
        page.wait_for_selector("#seek-form")
        Other(stack, base, "Bob").ask({"type": "seek", "game": "backgammon"}, "seeking")
        page.wait_for_selector("[data-seek] [data-accept]")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.wait_for_function("document.getElementById('online-count').textContent"
                               ".includes('2 online')", timeout=8000)
        page.fill("#challenge-to", "bot (easy)")
        page.select_option("#challenge-game", "tictactoe")
        page.click("#challenge-btn")
        page.wait_for_selector("#room-view svg.board")
        room = page.evaluate("window.tablas.room")
        other = room["seats"][1 - room["your_seats"][0]]
        assert other["kind"] == "bot" and other["level"] == "easy"
        assert page.errors == []
