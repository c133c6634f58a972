"""Accounts and ratings in the page (Debian's Chromium against a real ``tablas serve``):
register in the lobby, open a rated game against a bot, resign it, and find the new ratings
on the leaderboard page and on the player's page (with a link to the game's review); then
log in from another browser (another device) as the same player."""

from __future__ import annotations

from pathlib import Path

from browser_support import chromium, new_page, served, wait_online
from test_server_ratings import NEW, after_game, anchor

PASSWORD = "correct horse battery"


def test_register_play_rated_and_see_the_rating(tmp_path: Path) -> None:
    with served(tmp_path, workers=1) as base, chromium() as browser:
        ctx, page = new_page(browser, base, "Ana")
        page.fill("#login-password", PASSWORD)
        page.click("#register-btn")
        page.wait_for_selector("#account-status")
        assert "Ana" in page.inner_text("#account-status")
        me = page.evaluate("window.tablas.me")
        assert me["registered"] is True

        page.click("label[for=g-tictactoe]")
        page.select_option("#opponent", "random")
        page.select_option("#seat", "0")
        page.set_checked("#rated", True)
        page.click("#create-btn")
        page.wait_for_selector("#room-view svg.board")
        room = page.evaluate("window.tablas.room.room_id")
        assert page.evaluate("window.tablas.room.rated") is True
        rating = "document.querySelector('.seat-card[data-seat=\"%d\"] .tag.rating').textContent"
        # A new player, and the house's random mover at its fixed rating (docs/ratings.md).
        fixed = anchor("tictactoe", "random")
        page.wait_for_function(f"{rating % 0} === '1500' && {rating % 1} === '{round(fixed[0])}'")
        # Until each side has moved the game may be aborted; a resignation then would be too.
        page.wait_for_selector("#abort-btn")
        page.locator("svg.board g.ttt-cell.hot").first.click()
        page.wait_for_function("window.tablas.room.ply >= 2")  # the bot has answered
        page.wait_for_selector("#abort-btn", state="detached")
        page.click("#resign-btn")
        page.click("#resign-btn")  # the second click confirms
        page.wait_for_function("window.tablas.room.status === 'finished'")
        # One game from a new rating against the anchor: the anchor does not move.
        lost, _ = after_game(NEW, fixed, 0.0)
        page.wait_for_function(f"{rating % 0} === '{round(lost[0])}'"
                               f" && {rating % 1} === '{round(fixed[0])}'")

        page.goto(base + "/leaderboard?game=tictactoe")
        page.wait_for_selector("#lb-rows tr")
        rows = page.locator("#lb-rows tr").all_inner_texts()
        assert len(rows) == 6  # Ana and the five house levels
        ana_row = next(r for r in rows if "Ana" in r)
        assert str(round(lost[0])) in ana_row
        random_row = next(r for r in rows if "bot (random)" in r)
        assert str(round(fixed[0])) in random_row
        page.click(f"#lb-rows tr[data-player='{me['player_id']}'] a")
        page.wait_for_selector("#pl-rating-rows tr")
        assert page.inner_text("#pl-name") == "Ana"
        assert page.inner_text("#pl-rating-rows .pl-rating") == str(round(lost[0]))
        link = page.locator(f"#pl-games li[data-room='{room}'] a.review-link")
        assert link.get_attribute("href") == f"../review/{room}"
        link.click()
        page.wait_for_url(f"**/review/{room}")
        assert page.errors == []

        # Another device: log in by name (any case) and password: the same player.
        ctx2, other = new_page(browser, base, "Someone")
        other.fill("#login-name", "ANA")
        other.fill("#login-password", PASSWORD)
        other.click("#login-btn")
        other.wait_for_selector("#account-status")
        wait_online(other)
        assert other.evaluate("window.tablas.me") == {**me, "registered": True}
        # A wrong password is refused with a message, and the page stays the player it was.
        ctx3, third = new_page(browser, base, "Eve")
        before = third.evaluate("window.tablas.me.player_id")
        third.fill("#login-name", "Ana")
        third.fill("#login-password", "not the password")
        third.click("#login-btn")
        third.wait_for_selector(".toast")
        wait_online(third)
        third.wait_for_function(f"window.tablas.me && window.tablas.me.player_id === '{before}'")
        assert other.errors == [] and third.errors == []
        for c in (ctx, ctx2, ctx3):
            c.close()


def test_the_account_form_registers_the_typed_name_and_a_refusal_changes_nothing(
        tmp_path: Path) -> None:
    """The hostile tester's findings on the page: "Register this name" registers the name
    typed in the form; a wrong password leaves the guest (name, id) and the typed name as
    they were and says why in a sentence; so does a short password, and a look-alike of a
    registered name."""
    with served(tmp_path, workers=1) as base, chromium() as browser:
        ctx, page = new_page(browser, base, "Player 6751")
        wait_online(page)
        guest = page.evaluate("window.tablas.me")
        # A short password: a sentence, nothing changed.
        page.fill("#login-name", "victim")
        page.fill("#login-password", "short")
        page.click("#register-btn")
        page.wait_for_selector("#account-error:not([hidden])")
        assert page.inner_text("#account-error") == "A password needs at least 8 characters."
        assert page.evaluate("window.tablas.me") == guest
        assert page.input_value("#login-name") == "victim"
        # Register: the typed name, not the guest's.
        page.fill("#login-password", PASSWORD)
        page.click("#register-btn")
        page.wait_for_selector("#account-status")
        assert "victim" in page.inner_text("#account-status")
        me = page.evaluate("window.tablas.me")
        assert me == {"player_id": guest["player_id"], "name": "victim", "registered": True}
        assert page.input_value("#name-input") == "victim"

        # Another guest: a wrong password for victim changes nothing and says why.
        ctx2, other = new_page(browser, base, "Player 1234")
        wait_online(other)
        before = other.evaluate("window.tablas.me")
        other.fill("#login-name", "victim")
        other.fill("#login-password", "not the password")
        other.click("#login-btn")
        other.wait_for_selector("#account-error:not([hidden])")
        assert other.inner_text("#account-error") == "Wrong name or password."
        wait_online(other)
        other.wait_for_function(
            f"window.tablas.me && window.tablas.me.player_id === '{before['player_id']}'")
        assert other.evaluate("window.tablas.me") == before  # "Player 1234", still a guest
        assert other.input_value("#login-name") == "victim"
        assert other.inner_text("#account-error") == "Wrong name or password."
        assert other.input_value("#name-input") == "Player 1234"
        # A look-alike of a registered name: refused in words, still the same guest.
        other.fill("#login-name", "v\u0456ctim")
        other.fill("#login-password", PASSWORD)
        other.click("#register-btn")
        other.wait_for_function(
            "document.getElementById('account-error').textContent.includes('looks like')")
        assert other.inner_text("#account-error").endswith("Please choose another name.")
        assert other.evaluate("window.tablas.me") == before
        assert page.errors == [] and other.errors == []
        for c in (ctx, ctx2):
            c.close()


def test_a_rated_game_between_two_pages_abort_then_claim(tmp_path: Path) -> None:
    """Two registered people in a rated game: the page offers Abort until each has moved;
    when one closes the tab, the other's page offers Claim the win, counting down the
    server's --claim-after until it may be claimed; then it wins."""
    with served(tmp_path, workers=1, args=["--claim-after", "2"]) as base, \
            chromium() as browser:
        pages = []
        for name in ("Ana", "Bob"):
            ctx, page = new_page(browser, base, name)
            page.fill("#login-password", PASSWORD)
            page.click("#register-btn")
            page.wait_for_selector("#account-status")
            pages.append((ctx, page))
        (actx, ana), (bctx, bob) = pages
        ana.click("label[for=g-tictactoe]")
        ana.select_option("#opponent", "human")
        ana.select_option("#seat", "0")
        ana.select_option("#clock", "")  # no clock chosen: a rated game gets one anyway
        ana.set_checked("#rated", True)
        ana.click("#create-btn")
        ana.wait_for_selector("#room-view svg.board")
        room = ana.evaluate("window.tablas.room.room_id")
        assert ana.evaluate("window.tablas.room.room_options.clock") is not None
        bob.goto(f"{base}/#/room/{room}")
        for p in (ana, bob):
            p.wait_for_function("window.tablas.room && window.tablas.room.status === 'playing'")
            p.wait_for_selector("#abort-btn")
        ana.locator("svg.board g.ttt-cell.hot").first.click()
        bob.wait_for_function("window.tablas.room.ply === 1")
        bob.locator("svg.board g.ttt-cell.hot").first.click()
        ana.wait_for_function("window.tablas.room.ply === 2")
        ana.wait_for_selector("#abort-btn", state="detached")
        assert ana.locator("#claim-win-btn").count() == 0  # Bob is here
        bctx.close()
        ana.wait_for_selector("#claim-win-btn")
        # Too early, the button counts down the server's --claim-after, then it claims.
        assert ana.locator("#claim-win-btn").is_disabled()
        assert "Claim the win in" in ana.inner_text("#claim-win-btn")
        ana.wait_for_selector("#claim-win-btn:not([disabled])", timeout=5000)
        ana.click("#claim-win-btn")
        ana.wait_for_function("window.tablas.room.status === 'finished'")
        assert ana.evaluate("window.tablas.room.result") == {
            "winner": 0, "points": 1, "reason": "abandoned"}
        assert ana.errors == []
        actx.close()
