"""The review page shows each side summed up above the board and the moves (contract section
7's ``players``): decisions, inaccuracies, mistakes, blunders and the average loss (for
backgammon, the error rate), the numbers the review's JSON has; on a desktop (1366×768) and a
phone (390×844), nothing wider than the screen. Debian's Chromium against a real
``tablas serve``; the game is played over the socket."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from server_support import Client

SERVE_ARGS = ["--max-msgs-per-address", "0"]  # the module's server (browser_support.base)


SIZES = {"desktop": (1366, 768), "phone": (390, 844)}
HUMANS = [{"kind": "human"}, {"kind": "human"}]


def played(base: str, game: str, options: dict[str, Any], plies: int,
           resign_points: int | None) -> str:
    """A game of ``game`` by one person holding both seats: the first legal move ``plies``
    times, then a resignation (of the game for ``resign_points``, or whole); its room id."""
    ws = base.replace("http://", "ws://") + "/ws"

    async def play() -> str:
        c = Client(ws)
        await c.connect("Ana")
        created = await c.request({"type": "create_room", "game": game, "options": options,
                                   "seats": HUMANS, "join_seat": 0}, "room_created")
        room = str(created["room_id"])
        await c.expect("room")
        view = await c.request({"type": "join", "room_id": room, "seat": 1}, "room")
        for _ in range(plies):
            view = await c.request({"type": "move", "room_id": room, "ply": view["ply"],
                                    "move": view["legal_moves"][0]}, "update")
            if view["status"] == "finished":
                break
        if view["status"] != "finished":
            if resign_points is not None:
                await c.request({"type": "resign", "room_id": room, "points": resign_points},
                                "resign_offer")
                await c.request({"type": "accept_resign", "room_id": room}, "update")
            else:
                await c.request({"type": "resign", "room_id": room}, "room")
        await c.close()
        return room

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, play()).result()


def review_json(base: str, room: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{base}/api/rooms/{room}/review", timeout=60) as r:
        assert r.status == 200
        body: dict[str, Any] = json.load(r)
        return body


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("game", ["connect4", "backgammon"])
def test_the_summary_is_shown_above_the_moves(browser: Any, base: str, size: str,
                                              game: str) -> None:
    if game == "backgammon":
        room = played(base, game, {"cube": False}, 6, 1)
    else:
        room = played(base, game, {}, 9, None)
    w, h = SIZES[size]
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(f"{base}/review/{room}")
    page.wait_for_selector("#rv-summary .rv-summary-side", timeout=60_000)
    players = review_json(base, room)["players"]
    sides = page.locator("#rv-summary .rv-summary-side")
    assert sides.count() == 2
    for p in players:
        text = sides.nth(p["seat"]).inner_text()
        assert "Ana" in text
        assert f"{p['moves']} decision" in text
        assert f"{p['inaccuracies']} inaccurac" in text
        assert f"{p['mistakes']} mistake" in text and f"{p['blunders']} blunder" in text
        if game == "backgammon":
            assert f"error rate {p['average_loss']:.3f}" in text
        else:
            assert f"average loss {p['average_loss']:.1f}" in text
    # Above the board and the moves, and within the screen.
    top = page.locator("#rv-summary").bounding_box()["y"]
    assert top < page.locator("#rv-moves").bounding_box()["y"]
    assert top < page.locator("#rv-board").bounding_box()["y"]
    assert page.evaluate("document.documentElement.scrollWidth") <= w
    assert problems == []
    ctx.close()
