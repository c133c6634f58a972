"""Every page works under its Content-Security-Policy (contract section 10, "Pages are framed
by nobody"), in Debian's Chromium against a real ``tablas serve``: the lobby, a game played
against a bot over the page's WebSocket, its review, the explain page with a tree, the
leaderboard and a player's page, each without a console error, a page error or a CSP
violation; and another site cannot frame a page."""

from __future__ import annotations

from typing import Any

from browser_support import (
    create_room,
    ply,
    wait_my_turn_or_end,
    wait_ply_above,
)

# Reports every violation as a console error the listener below records (Chromium logs
# most of them itself; this catches any it would not, such as a report-only one).
WATCH_CSP = """document.addEventListener('securitypolicyviolation', (e) => console.error(
  'CSP violation: ' + e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline')));"""
REVIEW_WAIT = 120_000


def _watched(browser: Any, base: str) -> tuple[Any, Any, list[str]]:
    """A page in the lobby (a new player, Cleo) whose console errors, page errors and CSP
    violations are kept, from its first load on."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 860})
    ctx.add_init_script("if (!localStorage.getItem('tablas-name')) "
                        "localStorage.setItem('tablas-name', 'Cleo');")
    ctx.add_init_script(WATCH_CSP)
    problems: list[str] = []
    ctx.on("console", lambda m: problems.append(f"console: {m.text}")
           if m.type == "error" else None)
    page = ctx.new_page()
    page.set_default_timeout(20_000)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto(base + "/")
    page.wait_for_selector("#conn[data-status=online]")
    return ctx, page, problems


def test_every_page_works_under_its_csp(browser: Any, base: str) -> None:
    ctx, page, problems = _watched(browser, base)
    try:
        # the CSP is on the page, and the WebSocket (connect-src 'self') is online
        csp = page.evaluate("async () => (await fetch('/')).headers.get('content-security-policy')")
        assert "frame-ancestors 'none'" in csp
        # a game against a bot, played by clicks to its end
        room = create_room(page, "tictactoe", opponent="easy")
        while wait_my_turn_or_end(page):
            n = ply(page)
            page.locator("svg.board g.ttt-cell.hot").first.click()
            wait_ply_above(page, n)
        page.wait_for_selector("#banner:not([hidden]) #result-text")
        me = page.evaluate("window.tablas.me.player_id")
        assert not problems, problems

        page.goto(f"{base}/review/{room}")
        page.wait_for_selector("#rv-moves li.rv-move", timeout=REVIEW_WAIT)
        assert not problems, problems

        page.goto(f"{base}/explain?game=random&branching=3&depth=3&seed=4")
        page.wait_for_function("document.body.dataset.state === 'ready'")
        assert page.locator("#ex-view [data-node-id]").count() == 1 + 3 + 9 + 27
        page.goto(f"{base}/explain?game=tictactoe&position=X.O.X....&depth=2")
        page.wait_for_function("document.body.dataset.state === 'ready'")
        assert not problems, problems

        page.goto(f"{base}/leaderboard")
        # no rated game was played: the board lists the house levels at their fixed ratings
        page.wait_for_selector("#lb-game option", state="attached")
        page.wait_for_function("document.querySelectorAll('#lb-rows tr').length === 5")
        assert not problems, problems

        page.goto(f"{base}/players/{me}")
        page.wait_for_function("document.getElementById('pl-name').textContent === 'Cleo'")
        page.wait_for_selector("#pl-games li")
        page.goto(f"{base}/")
        page.wait_for_selector("#conn[data-status=online]")
        assert not problems, problems
    finally:
        ctx.close()


def test_a_violation_would_be_seen(browser: Any, base: str) -> None:
    """The watch above can fail: an inline script and an inline style attribute on one of
    the pages are blocked and reported."""
    ctx, page, problems = _watched(browser, base)
    try:
        page.evaluate("""() => {
            const d = document.createElement('div');
            d.innerHTML = '<p style="color: red">x</p>';
            document.body.append(d);
            const s = document.createElement('script');
            s.textContent = 'window.ran = true';
            document.body.append(s);
        }""")
        page.wait_for_function("true")
        assert page.evaluate("window.ran === undefined")
        page.wait_for_timeout(300)
        assert any("style-src" in p for p in problems), problems
        assert any("script-src" in p for p in problems), problems
    finally:
        ctx.close()


def test_another_site_cannot_frame_a_page(browser: Any, base: str) -> None:
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        # a page of no site of ours (every answer of the server is held to the CSP, whose
        # default-src would keep one of its pages from framing anything) frames the lobby
        page.goto("about:blank")
        page.evaluate("""(src) => { const f = document.createElement('iframe');
            f.src = src; document.body.append(f); }""", f"{base}/")
        page.wait_for_function("document.querySelector('iframe') !== null")
        page.wait_for_timeout(1500)
        (child,) = page.frames[1:]
        # the frame holds Chromium's error page instead: the lobby never ran in it
        assert child.url.startswith("chrome-error:"), child.url
        assert child.query_selector("#conn") is None
    finally:
        ctx.close()
