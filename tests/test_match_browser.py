"""A backgammon match from the page, in Debian's Chromium against a real ``tablas serve``: the
create form's "match to" choice, the score on the board and the players' cards while the
games go on, the move list across games, and the result that names the match."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from browser_support import (
    build_backgammon_play,
    create_room,
    new_page,
    ply,
    wait_my_turn_or_end,
    wait_ply_above,
)
from server_support import Client

SERVE_ARGS = ["--max-msgs-per-address", "0"]  # the module's server (browser_support.base)


def score_text(page: Any) -> str:
    return str(page.locator("#match-score").inner_text())


def test_a_match_to_9_against_a_bot_from_the_page(browser: Any, base: str) -> None:
    """Created from the form with "Match to 9"; the board says "Match to 9 · 0–0". We double
    whenever we may and the bot (``random``) takes or drops at random, and never doubles: a
    game is worth at most 6, so the first one won (a drop, or played out) leaves the match
    going: the score and the next game show, and the move list follows the new game's first
    mover. Then we resign: the result names the match to 9."""
    ctx, page = new_page(browser, base, "Ana")
    create_room(page, "backgammon", "random", cube=True, match_to=9)
    room = page.evaluate("window.tablas.room")
    assert room["options"] == {"cube": True, "match_to": 9}
    page.wait_for_selector("#match-score")
    assert score_text(page).startswith("Match to 9 · 0–0")
    me = room["your_seats"][0]
    for _turn in range(300):
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
    # The move list says who played each action, across the games (each game's first mover
    # is its opening roll's), as the server's record does; a new game has its own line.
    room_id = page.evaluate("window.tablas.room.room_id")
    with urllib.request.urlopen(f"{base}/api/rooms/{room_id}/export?format=json") as r:
        record = json.load(r)
    # A "roll" (no double) is no line of its own: its dice head the play that follows.
    lines = [a for a in record["actions"] if a["move"] != {"action": "roll"}]
    page.wait_for_function(f"document.querySelectorAll('#movelist li.mv').length === "
                           f"{len(lines)}")
    classes = page.locator("#movelist li.mv").evaluate_all("els => els.map(e => e.className)")
    assert [f"s{a['seat']}" in c.split() for a, c in zip(lines, classes)] \
        == [True] * len(classes)
    assert not any(t.endswith("roll") for t in page.locator(
        "#movelist li.mv .mv-text").all_inner_texts())
    assert sum(state["score"]) and state["game_number"] >= 2, state
    assert "New game" in page.locator("#movelist").inner_text()
    # The cards name each side's score too.
    assert f"score {state['score'][me]}/9" in page.locator("body").inner_text()
    page.click("#resign-btn")
    page.click("#resign-btn")  # confirm
    page.wait_for_function("window.tablas.room.status === 'finished'")
    text = page.locator("#result-text").inner_text()
    assert "match to 9" in text, text
    final = page.evaluate("window.tablas.room.result")
    assert final["points"] == 9 and final["winner"] == 1 - me
    assert page.errors == []
    ctx.close()


def test_a_spectator_sees_the_crawford_game(browser: Any, base: str) -> None:
    """A match to 2 played over the socket by one person holding both seats (a double
    dropped: 1-0); a page watching it says "Crawford game" and shows the score."""
    ws = base.replace("http://", "ws://") + "/ws"

    async def to_crawford() -> tuple[str, str]:
        c = Client(ws)
        token = (await c.connect("Bo"))["token"]
        created = await c.request({"type": "create_room", "game": "backgammon",
                                   "options": {"match_to": 2}, "join_seat": 0,
                                   "seats": [{"kind": "human"}, {"kind": "human"}]},
                                  "room_created")
        room = created["room_id"]
        await c.expect("room")
        view = await c.request({"type": "join", "room_id": room, "seat": 1}, "room")
        while not view["state"]["crawford"]:
            legal = view["legal_moves"]
            move = next((m for m in ({"action": "drop"}, {"action": "double"}) if m in legal),
                        legal[0])
            view = await c.request({"type": "move", "room_id": room, "ply": view["ply"],
                                    "move": move}, "update")
        # Two plays of the Crawford game, then the match is resigned: a short record.
        for _ in range(2):
            view = await c.request({"type": "move", "room_id": room, "ply": view["ply"],
                                    "move": view["legal_moves"][0]}, "update")
        await c.close()
        return str(room), str(token)

    async def resign(token: str, room: str) -> None:
        c = Client(ws)
        await c.connect("Bo", token)
        await c.send({"type": "resign", "room_id": room})
        while (await c.expect("room"))["status"] != "finished":
            pass
        await c.close()

    # Playwright's sync API holds this thread's event loop: the script runs in another.
    with ThreadPoolExecutor(1) as pool:
        room, player = pool.submit(asyncio.run, to_crawford()).result(timeout=60)
    ctx, page = new_page(browser, base, "Watcher", path=f"/#/room/{room}")
    page.wait_for_selector("#match-score")
    shown = score_text(page)
    assert "Match to 2" in shown and "Crawford game" in shown, shown
    assert page.locator("#match-score").get_attribute("data-crawford") == "1"
    score = page.evaluate("window.tablas.room.state.score")
    assert sorted(score) == [0, 1] and f"{score[0]}–{score[1]}" in shown
    assert page.errors == []
    # The match resigned, its review steps through both games, saying where the match stood.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, resign(player, room)).result(timeout=60)
    page.goto(f"{base}/review/{room}")
    page.wait_for_selector("#rv-moves li.rv-move", timeout=120_000)
    assert "Match to 2 · 0–0" in page.locator("#rv-step").inner_text()
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    assert "Crawford game" in page.locator("#rv-step").inner_text()
    assert page.errors == []
    ctx.close()
