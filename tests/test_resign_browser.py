"""Backgammon resignations with a value from the page, in Debian's Chromium against a real
``tablas serve`` (contract section 8), on a desktop (1366×768) and a phone (390×844): a match
to 3 against the ``easy`` bot where the person resigns one game for a single point, the bot
accepts, the seat cards and the board show 0–1 and the match goes on, then the whole match is
resigned and the cards show the final score; between two people, an offer declined then one
accepted, each side seeing the other's."""

from __future__ import annotations

from typing import Any

import pytest
from browser_support import create_room, new_page

SERVE_ARGS = ["--max-msgs-per-address", "0"]  # the module's server (browser_support.base)


SIZES = {"desktop": (1366, 768), "phone": (390, 844)}


def card(page: Any, seat: int) -> str:
    return str(page.locator(f".seat-card[data-seat='{seat}']").inner_text())


def offer(page: Any, kind: str) -> None:
    """Opens "Resign this game…" and offers ``kind`` (single, gammon, backgammon)."""
    page.click("#resign-game > summary")
    page.click(f"#resign-{kind}")


@pytest.mark.parametrize("size", SIZES)
def test_a_single_resigned_to_the_easy_bot_and_the_match_goes_on(browser: Any, base: str,
                                                                  size: str) -> None:
    w, h = SIZES[size]
    ctx, page = new_page(browser, base, "Ana", width=w, height=h)
    create_room(page, "backgammon", "easy", cube=True, match_to=3)
    me = page.evaluate("window.tablas.room.your_seats[0]")
    bot = 1 - me
    assert "score 0/3" in card(page, me) and "score 0/3" in card(page, bot)
    assert page.locator("#resign-btn").inner_text() == "Resign the match"
    offer(page, "single")
    page.wait_for_function("window.tablas.room.state.game_number === 2")
    state = page.evaluate("window.tablas.room.state")
    assert state["score"][bot] == 1 and state["score"][me] == 0
    assert state["last_game"] == {"winner": bot, "points": 1, "reason": "resign"}
    assert page.evaluate("window.tablas.room.status") == "playing"
    # The cards, the board's score and the move list say so.
    page.wait_for_function(f"document.querySelector(\".seat-card[data-seat='{bot}']\")"
                           ".innerText.includes('score 1/3')")
    assert "score 0/3" in card(page, me)
    shown = page.locator("#match-score").inner_text()
    assert f"{state['score'][0]}–{state['score'][1]}" in shown
    moves = page.locator("#movelist").inner_text()
    assert "resigns a single" in moves and "New game" in moves
    assert "resign" in page.locator("#last-game").inner_text().lower()
    # The match goes on: game 2 gets a move.
    n = page.evaluate("window.tablas.room.ply")
    if page.evaluate("window.tablas.room.to_move") == me:
        if page.locator("#roll-btn").count():
            page.click("#roll-btn")
        else:
            from browser_support import build_backgammon_play

            build_backgammon_play(page)
            page.click("#play-btn")
    page.wait_for_function(f"window.tablas.room.ply > {n}", timeout=60_000)
    assert page.evaluate("window.tablas.room.state.game_number") == 2
    # Nothing sticks out of a phone's width.
    assert page.evaluate("document.documentElement.scrollWidth") <= w
    # The whole match given up: the cards show the final score, the result names the match.
    page.click("#resign-btn")
    page.click("#resign-btn")
    page.wait_for_function("window.tablas.room.status === 'finished'")
    assert "match to 3" in page.locator("#result-text").inner_text()
    assert "score 3/3" in card(page, bot) and "score 0/3" in card(page, me)
    assert page.errors == []
    ctx.close()


@pytest.mark.parametrize("size", SIZES)
def test_two_people_decline_then_accept(browser: Any, base: str, size: str) -> None:
    w, h = SIZES[size]
    actx, ana = new_page(browser, base, "Ana", width=w, height=h)
    room = create_room(ana, "backgammon", "human", cube=True, match_to=5)
    bctx, bo = new_page(browser, base, "Bo", width=w, height=h, path=f"/#/room/{room}")
    for p in (ana, bo):
        p.wait_for_function("window.tablas.room && window.tablas.room.status === 'playing'")
    offer(ana, "gammon")
    bo.wait_for_selector("#decline-resign-btn")
    assert "a gammon, 2 points to you" in bo.locator("#resign-offer-text").inner_text()
    ana.wait_for_selector("#resign-offer-text")
    assert "waiting for the answer" in ana.locator("#resign-offer-text").inner_text()
    assert ana.locator("#resign-single").is_disabled()
    bo.click("#decline-resign-btn")
    # The answer stays said in the room (not only in a toast) until the next move.
    ana.wait_for_selector("#resign-declined-text")
    assert "declined" in ana.inner_text("#resign-declined-text")
    bo.wait_for_selector("#resign-declined-text")
    ana.wait_for_timeout(4500)  # past a toast's life
    assert ana.locator("#resign-declined-text").is_visible()
    assert ana.evaluate("window.tablas.room.state.score") == [0, 0]
    offer(ana, "single")
    bo.click("#accept-resign-btn")
    for p in (ana, bo):
        p.wait_for_function("window.tablas.room.state.game_number === 2")
        assert p.evaluate("window.tablas.room.state.score") == [0, 1]
        assert "score 1/5" in card(p, 1) and "score 0/5" in card(p, 0)
        assert p.locator("#resign-offer").is_hidden()
    assert ana.errors == [] and bo.errors == []
    actx.close()
    bctx.close()
