"""A player's page draws their rating history (an SVG drawn by hand) beside their wins, draws
and losses, and says a bot account is one; the review marks a bot account's seat (Debian's
Chromium against a real ``tablas serve``, at 1280×800 and 390×844)."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest
from browser_support import chromium, served
from test_meet_browser import PASSWORD, Other

SIZES = [(1280, 800), (390, 844)]
HUMANS = [{"kind": "human"}, {"kind": "human"}]
CLOCK = {"base_ms": 300_000, "increment_ms": 0}

# The pages and clients all come from 127.0.0.1: vouched for, so that they rate each other
# (contract section 16).
SAME_ADDRESS_OK = ["--shared-address-ok", "127.0.0.1/32"]


def rated_game(ana: Other, robo: Other, cells: list[int]) -> str:
    """A rated tic-tac-toe game, Ana X, Robo O, played out with ``cells``; its room."""
    room = ana.ask({"type": "create_room", "game": "tictactoe", "options": {}, "seats": HUMANS,
                    "join_seat": 0, "rated": True, "clock": CLOCK}, "room_created")["room_id"]
    robo.ask({"type": "join", "room_id": room, "seat": 1}, "room")
    for ply, cell in enumerate(cells):
        (ana if ply % 2 == 0 else robo).ask(
            {"type": "move", "room_id": room, "ply": ply, "move": {"cell": cell}}, "update")
    return room


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_rating_graph_the_tally_and_a_bot_account(tmp_path: Path, width: int, height: int
                                                      ) -> None:
    with served(tmp_path, workers=1, args=SAME_ADDRESS_OK) as base, chromium() as browser, \
            ExitStack() as stack:
        ana = Other(stack, base, "Ana", register=True)
        robo = Other(stack, base, "Robo")
        robo.ask({"type": "register", "password": PASSWORD, "bot": True}, "registered")
        first = rated_game(ana, robo, [0, 3, 1, 4, 2])  # Ana wins
        rated_game(ana, robo, [0, 1, 3, 6, 4, 8, 2, 5, 7])  # a draw: the board fills
        rated_game(ana, robo, [1, 0, 2, 3, 5, 6])  # Robo wins (0, 3, 6)
        page = browser.new_context(viewport={"width": width, "height": height}).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{base}/players/{ana.player_id}")
        page.wait_for_selector(".pl-hist[data-game='tictactoe'] svg.rating-graph")
        assert page.locator(".rating-graph .rg-point").count() == 3
        assert page.inner_text(".pl-wdl") == "1 W · 1 D · 1 L"
        shown = [int(x) for x in page.eval_on_selector_all(
            ".rg-point", "(els) => els.map((e) => e.getAttribute('data-rating'))")]
        assert shown[0] > 1500 and shown[2] < shown[1]  # a win, a draw, a loss
        label = page.get_attribute("svg.rating-graph", "aria-label")
        assert label is not None and "3 rated games" in label
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert "Robo [bot]" in page.inner_text("#pl-games")
        assert errors == []

        page.goto(f"{base}/players/{robo.player_id}")
        page.wait_for_selector("#pl-kind.is-bot")
        assert "bot account" in page.inner_text("#pl-kind")

        page.goto(f"{base}/review/{first}")
        page.wait_for_selector(".rv-player[data-seat='1'] .tag.bot")
        assert page.locator(".rv-player[data-seat='0'] .tag.bot").count() == 0
        assert errors == []
