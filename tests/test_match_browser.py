"""A backgammon match from the page, in Debian's Chromium against a real ``tablas serve``: the
create form's "match to" choice, the score on the board while the games go on, the Crawford
game named, and the result that names the match."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import (
    build_backgammon_play,
    chromium,
    create_room,
    new_page,
    ply,
    served,
    wait_my_turn_or_end,
    wait_ply_above,
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(tmp_path_factory.mktemp("match"), workers=2,
                args=["--max-msgs-per-address", "0"]) as url:
        yield url


def score_text(page: Any) -> str:
    return str(page.locator("#match-score").inner_text())


def test_a_match_to_3_against_a_bot_from_the_page(browser: Any, base: str) -> None:
    """Created from the form with "Match to 3"; the board says "Match to 3 · 0–0". We double
    whenever we may and the bot (``random``) takes or drops at random: a drop shows the score
    and the next game; then we resign and the result names the match to 3."""
    ctx, page = new_page(browser, base, "Ana")
    create_room(page, "backgammon", "random", cube=True, match_to=3)
    room = page.evaluate("window.tablas.room")
    assert room["options"] == {"cube": True, "match_to": 3}
    page.wait_for_selector("#match-score")
    assert score_text(page).startswith("Match to 3 · 0–0")
    me = room["your_seats"][0]
    for _turn in range(40):
        if not wait_my_turn_or_end(page):
            break
        state = page.evaluate("window.tablas.room.state")
        if sum(state["score"]):
            break  # a game was won: the score shows it
        n = ply(page)
        if page.locator("#take-btn").count():
            page.click("#take-btn")
        elif page.locator("#double-btn").count():
            page.click("#double-btn")
        elif page.locator("#roll-btn").count():
            page.click("#roll-btn")
        else:
            page.wait_for_selector("#play-btn")
            build_backgammon_play(page)
            page.click("#play-btn")
        wait_ply_above(page, n)
    state = page.evaluate("window.tablas.room.state")
    shown = score_text(page)
    assert f"{state['score'][0]}–{state['score'][1]}" in shown
    if state["crawford"]:
        assert "Crawford" in shown
    # The cards name each side's score too.
    assert f"score {state['score'][me]}/3" in page.locator("body").inner_text()
    page.click("#resign-btn")
    page.click("#resign-btn")  # confirm
    page.wait_for_function("window.tablas.room.status === 'finished'")
    text = page.locator("#result-text").inner_text()
    assert "match to 3" in text, text
    final = page.evaluate("window.tablas.room.result")
    assert final["points"] == 3 and final["winner"] == 1 - me
    assert page.errors == []
    ctx.close()
