"""Tournaments in the page (Debian's Chromium against a real ``tablas serve``): the lobby
lists a tournament waiting, a person joins it with a click and is taken to each of their
games; the tournament's page shows its standings, crosstable and rounds live, without a
reload, to the end; it fits a phone."""

from __future__ import annotations

import json
import threading
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from browser_support import chromium, new_page, served
from test_meet_browser import Other
from test_server_ratings import PASSWORD


def tournament_page(browser: Any, base: str, tid: str, width: int = 1280, height: int = 860
                    ) -> Any:
    """The tournament's own page (no WebSocket: it reads /api/tournaments/{id})."""
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    page.goto(f"{base}/tournaments/{tid}")
    return page


def _resigns_to_bots(player: Other, games: int) -> None:
    """``player`` resigns each of its next ``games`` tournament games played against a house
    bot, and leaves those against a person to them."""
    for _ in range(games):
        g = player.expect("tournament_game")
        room = player.ask({"type": "join", "room_id": g["room_id"]}, "room")
        if room["seats"][1 - g["seat"]]["kind"] == "bot":
            player.ask({"type": "resign", "room_id": g["room_id"]}, "room")


def test_join_in_the_lobby_and_follow_the_tournament_live(tmp_path: Path) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser, ExitStack() as stack:
        # Registered players only, house bots at most half (contract section 15): the
        # organiser plays too, resigning its games against the bot and waiting for Ana's.
        org = Other(stack, base, "Org", register=True)
        tid = org.ask({"type": "create_tournament", "game": "tictactoe",
                       "clock": {"base_ms": 60000}, "format": "round_robin",
                       "house_bots": ["random"]}, "tournament_created")["tournament_id"]
        org.ask({"type": "join_tournament", "tournament_id": tid}, "tournament_joined")
        _, page = new_page(browser, base, "Ana")
        page.fill("#login-password", PASSWORD)
        page.click("#register-btn")
        page.wait_for_selector("#account-status")
        page.wait_for_selector(f"[data-join-tourney='{tid}']", timeout=8000)
        assert "Round robin" in page.inner_text(f"[data-tourney='{tid}']")
        page.click(f"[data-join-tourney='{tid}']")
        page.wait_for_selector(f"[data-tourney='{tid}'] >> text=3 entered", timeout=8000)

        view = tournament_page(browser, base, tid)
        view.wait_for_selector("#to-status[data-status=waiting]")
        assert view.locator("#to-rows tr").count() == 3
        org.ask({"type": "start_tournament", "tournament_id": tid}, "tournament_started")
        organiser = threading.Thread(target=_resigns_to_bots, args=(org, 2), daemon=True)
        organiser.start()
        # Ana is taken to her first game; she resigns each one she is given.
        for _ in range(2):
            page.wait_for_function("window.tablas.room && window.tablas.room.status === 'playing'"
                                   " && window.tablas.room.your_seats.length === 1")
            room = page.evaluate("window.tablas.room.room_id")
            page.click("#resign-btn")
            page.click("#resign-btn")
            page.wait_for_function(
                f"!window.tablas.room || window.tablas.room.room_id !== {json.dumps(room)}"
                " || window.tablas.room.status === 'finished'")
        view.wait_for_selector("#to-status[data-status=playing]", timeout=15000)
        view.wait_for_selector("#to-status[data-status=finished]", timeout=30000)
        assert view.locator(".to-round").count() == 3
        assert view.locator(".to-game").count() == 6  # 3 games and 3 byes
        rows = view.locator("#to-rows tr").all_inner_texts()
        assert len(rows) == 3 and any("Ana" in r for r in rows)
        assert view.inner_text("#to-tiebreak") == "SB"
        # The crosstable: Ana resigned both her games, a 0 against each level.
        view.wait_for_function("document.querySelectorAll('#to-cross-rows tr').length === 3")
        assert view.locator("#to-cross .to-self").count() == 3
        ana = view.locator("#to-cross-rows tr", has_text="Ana")
        assert ana.locator(".to-cell").all_inner_texts() == ["0", "0"]
        assert view.get_attribute("#to-csv", "href").endswith("/crosstable?format=csv")
        organiser.join(30)
        assert page.errors == [] and view.errors == []


def test_the_tournament_page_fits_a_phone(tmp_path: Path) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser, ExitStack() as stack:
        org = Other(stack, base, "Org", register=True)
        tid = org.ask({"type": "create_tournament", "game": "connect4",
                       "clock": {"base_ms": 60000}, "format": "swiss", "rounds": 2,
                       "house_bots": ["random", "easy"]},
                      "tournament_created")["tournament_id"]
        for player in (org, Other(stack, base, "Bo", register=True)):  # bots at most half
            player.ask({"type": "join_tournament", "tournament_id": tid}, "tournament_joined")
        org.ask({"type": "start_tournament", "tournament_id": tid}, "tournament_started")
        view = tournament_page(browser, base, tid, width=390, height=844)
        view.wait_for_selector(".to-round")
        assert view.evaluate("document.documentElement.scrollWidth") <= 390
        assert view.inner_text("#to-tiebreak") == "Buchholz"
        _, lobby = new_page(browser, base, "Ana", width=390, height=844)
        lobby.wait_for_selector(f"[data-tourney='{tid}']", timeout=8000)
        assert lobby.evaluate("document.documentElement.scrollWidth") <= 390
        assert view.errors == [] and lobby.errors == []
