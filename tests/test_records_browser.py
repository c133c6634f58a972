"""The page shows a room's chat so far when the room opens (from ``GET /api/rooms/{id}``): a
reload keeps the conversation, each line once, and a spectator who comes late sees it too.
Debian's Chromium against a real ``tablas serve``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from browser_support import chromium, create_room, new_page, served, wait_online

LINES = "[...document.querySelectorAll('#chatlog .chat-text')].map(e => e.textContent)"


def _say(page: Any, text: str) -> None:
    n = len(page.evaluate(LINES))
    page.fill("#chat-input", text)
    page.press("#chat-input", "Enter")
    page.wait_for_function(f"{LINES}.length > {n}")


def test_the_chat_backlog_survives_a_reload(tmp_path: Path) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser:
        ctx, page = new_page(browser, base, "Ana")
        room = create_room(page, "tictactoe", "random")
        for text in ("hello", "two, three", "<b>three</b>"):
            _say(page, text)
        assert page.evaluate(LINES) == ["hello", "two, three", "<b>three</b>"]
        page.reload()
        wait_online(page)
        page.wait_for_selector("#room-view svg.board")
        page.wait_for_function(f"{LINES}.length === 3")
        assert page.evaluate(LINES) == ["hello", "two, three", "<b>three</b>"]
        assert page.locator("#chatlog b").count() == 0
        _say(page, "after")
        sctx, spec = new_page(browser, base, "Late", path=f"/#/watch/{room}")
        spec.wait_for_function(f"{LINES}.length === 4")
        assert spec.evaluate(LINES) == ["hello", "two, three", "<b>three</b>", "after"]
        assert page.evaluate(LINES) == spec.evaluate(LINES)
        assert page.errors == [] and spec.errors == []
        ctx.close()
        sctx.close()
