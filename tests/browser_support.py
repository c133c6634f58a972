"""Helpers for the browser tests: Debian's Chromium driven by Playwright, a real server.

The browser is the system's ``/usr/bin/chromium`` (``apt-get install chromium``); Playwright's
own browser downloads are never used. Tests skip only when that binary is missing.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from server_support import Subprocess

CHROMIUM = os.environ.get("TABLAS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "artifacts" / "screenshots"


# Playwright polls a predicate given as a bare expression ("window.x === 1") with eval() in
# the page, which the pages' Content-Security-Policy refuses (no 'unsafe-eval': contract
# section 10); a predicate given as a function is called without eval. So every test's
# wait_for_function turns a bare expression into a function of it, here, once.
_FUNCTION = re.compile(r"\s*(async\s+)?(function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)")


def _as_function(expression: str) -> str:
    return expression if _FUNCTION.match(expression) else f"() => ({expression})"


def _csp_safe_waits() -> None:
    from playwright.sync_api import Frame, Page

    for cls in (Page, Frame):
        wait = cls.wait_for_function
        if getattr(wait, "csp_safe", False):
            continue

        def safe(self: Any, expression: str, *args: Any, _wait: Any = wait,
                 **kw: Any) -> Any:
            return _wait(self, _as_function(expression), *args, **kw)

        safe.csp_safe = True  # type: ignore[attr-defined]
        cls.wait_for_function = safe  # type: ignore[method-assign]


def require_chromium() -> None:
    """Skips (with the install hint) when the system Chromium is absent."""
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        pytest.skip(f"{CHROMIUM} is missing: install it with `apt-get install -y chromium` "
                    "(the README's test command does)")


def launch(playwright: Any) -> Any:
    return playwright.chromium.launch(
        executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
    )


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium, headless (the test skips when it is missing)."""
    from playwright.sync_api import sync_playwright

    require_chromium()
    _csp_safe_waits()
    with sync_playwright() as p:
        b = launch(p)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, shared by a test module's tests (conftest.py offers it)."""
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
         ) -> Iterator[str]:
    """One ``tablas serve`` shared by a test module's tests, on a database of its own; its
    http:// URL. A module changes how it starts with ``SERVE_WORKERS`` (2) and
    ``SERVE_ARGS``."""
    module = request.module
    with served(tmp_path_factory.mktemp(module.__name__.removeprefix("test_")),
                getattr(module, "SERVE_WORKERS", 2), getattr(module, "SERVE_ARGS", ())) as url:
        yield url


@contextmanager
def served(folder: Path, workers: int, args: Sequence[str] = ()) -> Iterator[str]:
    """``tablas serve`` as a real process, its database in ``folder``; its http:// URL.
    ``args``: more options for ``tablas serve`` (e.g. ``--abandon-after 0.5``)."""
    srv = Subprocess(folder / "t.db", folder / "server.log", workers=workers, args=args)
    srv.start()
    try:
        yield f"http://127.0.0.1:{srv.port}"
    finally:
        srv.terminate()


def new_page(browser: Any, base: str, name: str | None = None, *,
             width: int = 1280, height: int = 860, path: str = "/",
             locale: str = "en-US") -> tuple[Any, Any]:
    """A fresh context (its own localStorage: a new player) and a page open at ``path``;
    the browser's language is ``locale`` (the page speaks it if it has it: docs/i18n.md)."""
    ctx = browser.new_context(viewport={"width": width, "height": height}, locale=locale)
    if name is not None:
        ctx.add_init_script(
            "if (!localStorage.getItem('tablas-name')) localStorage.setItem('tablas-name', "
            + _js_string(name) + ");"
        )
    page = ctx.new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors  # type: ignore[attr-defined]
    page.goto(base + path)
    wait_online(page)
    return ctx, page


def _js_string(s: str) -> str:
    import json

    return json.dumps(s)


def wait_online(page: Any, timeout: float = 20_000) -> None:
    page.wait_for_selector("#conn[data-status=online]", timeout=timeout)


def create_room(page: Any, game: str, opponent: str = "random", seat: str = "0",
                heap: int | None = None, cube: bool | None = None,
                show_analysis: bool | None = None, seed: str | None = None,
                match_to: int | None = None) -> str:
    """Creates a room from the lobby form; returns its id once its board is shown
    (``seed``: the dice seed typed in, or "random" for the form's random button;
    ``match_to``: backgammon's "match to" choice, 0 for a money game)."""
    page.goto(page.url.split("#")[0] + "#/")
    page.click(f"label[for=g-{game}]")
    page.select_option("#opponent", opponent)
    page.select_option("#seat", seat)
    if heap is not None:
        page.fill("#opt-heap", str(heap))
    if cube is not None:
        page.set_checked("#opt-cube", cube)
    if show_analysis is not None:
        page.set_checked("#show-analysis", show_analysis)
    if match_to is not None:
        page.select_option("#opt-match", str(match_to or ""))
    if seed == "random":
        page.click("#opt-seed-random")
    elif seed is not None:
        page.fill("#opt-seed", seed)
    page.click("#create-btn")
    page.wait_for_selector("#room-view svg.board")
    room_id: str = page.evaluate("window.tablas.room.room_id")
    return room_id


def ply(page: Any) -> int:
    return int(page.evaluate("window.tablas.room ? window.tablas.room.ply : -1"))


def wait_my_turn_or_end(page: Any, timeout: float = 30_000) -> bool:
    """Waits until this page may move (True) or the game is over (False)."""
    page.wait_for_function(
        "() => { const a = window.tablas; return a.room && (a.room.status === 'finished' ||"
        " document.querySelector('svg.board.can-move')); }",
        timeout=timeout,
    )
    return bool(page.evaluate("window.tablas.room.status !== 'finished'"))


def screenshot(page: Any, name: str, full_page: bool = False, still: bool = True) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page,
                    animations="disabled" if still else "allow")
    return path


def wait_ply_above(page: Any, n: int, timeout: float = 30_000) -> None:
    page.wait_for_function(f"window.tablas.room && window.tablas.room.ply > {n}", timeout=timeout)


def build_backgammon_play(page: Any) -> None:
    """Clicks checker then destination until a complete play is built (does not send it)."""
    for _ in range(16):
        play = page.locator("#play-btn")
        if play.is_enabled() and not page.locator("rect.hit.src").count():
            return
        if page.locator("rect.hit.dest").count():
            page.locator("rect.hit.dest").first.click()
        elif page.locator("rect.hit.src").count():
            page.locator("rect.hit.src").first.click()
        else:
            return


def play_backgammon_turn(page: Any) -> int:
    """Plays this page's next checker play (taking a double or rolling first if needed);
    returns the ply before the play was sent."""
    while True:
        assert wait_my_turn_or_end(page), "the game ended before our turn"
        n = ply(page)
        if page.locator("#take-btn").count():
            page.click("#take-btn")
        elif page.locator("#roll-btn").count():
            page.click("#roll-btn")
        else:
            page.wait_for_selector("#play-btn")
            build_backgammon_play(page)
            page.click("#play-btn")
            wait_ply_above(page, n)
            return n
        wait_ply_above(page, n)
