"""An arena in the page (Debian's Chromium against a real ``tablas serve``, contract section
19): a registered player joins it from the lobby and is taken to each of their games; in the
first they go berserk with the room's button (their clock halves) and win; the second they
resign; the arena's page shows the time left, who plays whom and the points, live."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path

from browser_support import chromium, new_page, served
from test_meet_browser import Other
from test_server_ratings import PASSWORD
from test_tournament_browser import tournament_page


def test_join_an_arena_from_the_lobby_and_play_two_games(tmp_path: Path) -> None:
    with served(tmp_path, workers=1, args=["--arena-minute-s", "3"]) as base, \
            chromium() as browser, ExitStack() as stack:
        org = Other(stack, base, "Org", register=True)
        tid = org.ask({"type": "create_tournament", "game": "tictactoe", "format": "arena",
                       "minutes": 10, "clock": {"base_ms": 60000, "increment_ms": 2000}},
                      "tournament_created")["tournament_id"]
        org.ask({"type": "join_tournament", "tournament_id": tid}, "tournament_joined")
        _, page = new_page(browser, base, "Ana")
        page.fill("#login-password", PASSWORD)
        page.click("#register-btn")
        page.wait_for_function("window.tablas.me && window.tablas.me.registered")
        page.wait_for_selector(f"[data-join-tourney='{tid}']", timeout=8000)
        assert "Arena 10 min" in page.inner_text(f"[data-tourney='{tid}']")
        page.click(f"[data-join-tourney='{tid}']")
        page.wait_for_selector(f"[data-tourney='{tid}'] >> text=2 entered", timeout=8000)
        org.ask({"type": "start_tournament", "tournament_id": tid}, "tournament_started")

        # Game 1: Ana goes berserk (her clock halves), then Org resigns.
        page.wait_for_function("window.tablas.room && window.tablas.room.status === 'playing'"
                               " && window.tablas.room.your_seats.length === 1")
        first = page.evaluate("window.tablas.room.room_id")
        seat = page.evaluate("window.tablas.room.your_seats[0]")
        game = org.expect("tournament_game")
        assert game["room_id"] == first and game["seat"] == 1 - seat
        page.click("#berserk-btn")
        page.wait_for_function(f"window.tablas.room.clocks[{seat}] <= 30000")
        assert page.locator("#berserk-btn").count() == 0
        org.ask({"type": "join", "room_id": first}, "room")
        org.ask({"type": "resign", "room_id": first}, "room")

        # Game 2 (the two of them are the only ones free): Ana resigns it in the page.
        page.wait_for_function(
            f"window.tablas.room && window.tablas.room.room_id !== {json.dumps(first)}"
            " && window.tablas.room.status === 'playing'", timeout=15000)
        second = page.evaluate("window.tablas.room.room_id")
        page.click("#resign-btn")
        page.click("#resign-btn")
        page.wait_for_function(
            f"!window.tablas.room || window.tablas.room.room_id !== {json.dumps(second)}"
            " || window.tablas.room.status === 'finished'")

        view = tournament_page(browser, base, tid)
        view.wait_for_selector("#to-status[data-status=playing]")
        assert " left · " in view.inner_text("#to-status")
        assert view.inner_text("#to-games-title") == "Games"
        view.wait_for_function("document.querySelectorAll('#to-done .to-game').length >= 2")
        done = view.locator("#to-done .to-game").all_inner_texts()
        assert any("berserk: Ana" in d and "Ana won" in d for d in done), done
        rows = {r.split("\t")[1].strip(): r for r in view.locator("#to-rows tr").all_inner_texts()}
        # Ana: a berserk win (2 + 1); Org: a win (2).
        assert rows["Ana"].split("\t")[2] == "3" and rows["Org"].split("\t")[2] == "2", rows
        assert view.inner_text("#to-tiebreak") == "G"
        assert page.errors == [] and view.errors == []
