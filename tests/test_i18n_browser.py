"""The page in Spanish and English (contract section 18; docs/i18n.md), in Debian's Chromium
against a real ``tablas serve``.

With the browser's locale ``es-ES`` every page (the lobby, a room of each game, a review, the
explain page, the leaderboard, a player's page, a tournament's page) shows no text of the
English catalogue, and with ``en-US`` none of the Spanish one; a refusal of the server is worded
in the page's language; a date and a decimal are written the language's way; the header's
switch changes the page's words at once and is remembered by the browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from browser_support import create_room, new_page

ROOT = Path(__file__).resolve().parent.parent
GAMES = ["tictactoe", "grundy", "connect4", "boom", "backgammon"]

# The catalogues as JSON, read by node the way the page reads them (ES modules).
DUMP = """
import { readFileSync } from "node:fs";
const load = async (f) => (await import("data:text/javascript;charset=utf-8," +
  encodeURIComponent(readFileSync(f, "utf8")))).default;
console.log(JSON.stringify({ en: await load(process.argv[1]), es: await load(process.argv[2]) }));
"""


@cache
def catalogues() -> dict[str, dict[str, Any]]:
    exe = shutil.which("node")
    if exe is None:
        pytest.skip("node is missing: install it with `apt-get install -y nodejs`")
    folder = ROOT / "client" / "js" / "i18n"
    done = subprocess.run([exe, "--input-type=module", "-e", DUMP, str(folder / "en.js"),
                           str(folder / "es.js")], capture_output=True, text=True, check=True)
    out: dict[str, dict[str, Any]] = json.loads(done.stdout)
    return out


def texts(cat: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for v in cat.values():
        out.extend(v.values() if isinstance(v, dict) else [v])
    return out


@cache
def foreign_fragments(lang: str) -> tuple[str, ...]:
    """The pieces of the other language's texts (split at their placeholders) that a page in
    ``lang`` must not show: words of 4 letters or more that its own catalogue never uses
    (names the two share, like Backgammon or minimax, are no sign of either)."""
    cats = catalogues()
    other = "en" if lang == "es" else "es"
    own = " ".join(texts(cats[lang])).lower()
    found: set[str] = set()
    for text in texts(cats[other]):
        for piece in re.split(r"\{\w+\}", text):
            piece = piece.strip(" ·:—–-,.;()…!?¡¿✓✔✘←→↶▶❚|/+±#%\n")
            if len(piece) >= 4 and re.search(r"[^\W\d_]{4}", piece) and piece.lower() not in own:
                found.add(piece)
    return tuple(sorted(found, key=len, reverse=True))


def shown_text(page: Any) -> str:
    """What the page shows now: its visible text and its title."""
    text: str = page.evaluate("document.title + '\\n' + document.body.innerText")
    return text


def assert_in_language(page: Any, lang: str, where: str) -> None:
    assert page.evaluate("document.documentElement.lang") == lang, where
    text = shown_text(page)
    wrong = []
    for f in foreign_fragments(lang):
        m = re.search(rf"(?<!\w){re.escape(f)}(?!\w)", text, flags=re.I)
        if m:
            wrong.append((f, text[max(0, m.start() - 60):m.end() + 60]))
    assert wrong == [], (where, wrong)
    assert page.errors == [], (where, page.errors)


def goto_standalone(page: Any, url: str, ready: str) -> None:
    page.goto(url)
    page.wait_for_function(ready)


# The words a test looks for, per language.
WORDS = {
    "es": {"bad_login": "Nombre o contraseña incorrectos.",
           "bot_never_leaves": "Tu rival es un bot: nunca se va.",
           "seat_taken": "Ese asiento ya está ocupado.",
           "decimal": "1,5+2",
           "month": r"\d{1,2} (ene|feb|mar|abr|may|jun|jul|ago|sept?|oct|nov|dic) \d{4}",
           "create": "Crear partida", "title": "Tres en raya"},
    "en": {"bad_login": "Wrong name or password.",
           "bot_never_leaves": "Your opponent is a bot: it never leaves.",
           "seat_taken": "That seat is taken.",
           "decimal": "1.5+2",
           "month": r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{1,2}, \d{4}",
           "create": "Create game", "title": "Tic-tac-toe"},
}


@pytest.mark.parametrize(("locale", "lang"), [("es-ES", "es"), ("en-US", "en")])
def test_every_page_speaks_the_browsers_language(browser: Any, base: str, locale: str,
                                                 lang: str) -> None:
    words = WORDS[lang]
    name = f"Ana{lang}"
    ctx, page = new_page(browser, base, name, locale=locale)
    assert_in_language(page, lang, "lobby")
    assert page.text_content("#create-btn") == words["create"]

    # Registered (a tournament is a registered player's): the lobby as they see it.
    page.fill("#login-password", "contraseña-1")
    page.click("#register-btn")
    page.wait_for_selector("#account-status")
    page.wait_for_selector("#tourney-create")
    assert_in_language(page, lang, "lobby, registered")

    # A refusal of the server, in the page's words: a login with the wrong password.
    ctx2, other = new_page(browser, base, f"Bea{lang}", locale=locale)
    other.fill("#login-name", name)
    other.fill("#login-password", "equivocada-1")
    other.click("#login-btn")
    other.wait_for_function("document.getElementById('account-error') && "
                            "!document.getElementById('account-error').hidden")
    assert other.text_content("#account-error") == words["bad_login"]
    ctx2.close()

    # A decimal: a seek with a custom clock of a minute and a half.
    page.select_option("#seek-clock", "custom")
    page.fill("#seek-clock-custom", "1,5+2" if lang == "es" else "1.5+2")
    page.click("#seek-btn")
    page.wait_for_selector(".seek-row")
    assert words["decimal"] in page.text_content(".seek-row")
    assert_in_language(page, lang, "lobby with a seek")
    page.click(".seek-row [data-cancel]")
    page.wait_for_selector("#no-seeks")

    # A room of each game, against a bot.
    rooms = {}
    for game in GAMES:
        rooms[game] = create_room(page, game, opponent="random")
        page.wait_for_function("document.getElementById('turn').textContent.length > 0")
        assert_in_language(page, lang, f"room of {game}")
    assert page.text_content("#room-game") != "" and page.title() != ""

    # Refusals in the room (the server's codes and reasons): a bot's seat is taken, and a bot
    # never leaves, so there is no win to claim.
    page.goto(f"{base}/#/room/{rooms['tictactoe']}")
    page.wait_for_selector("#room-view svg.board")
    page.evaluate("window.tablas.takeSeat(1)")
    page.wait_for_function(f"[...document.querySelectorAll('.toast')].some(t => "
                           f"t.textContent === {json.dumps(words['seat_taken'])})")
    page.evaluate("window.tablas.claimWin()")
    page.wait_for_function(f"[...document.querySelectorAll('.toast')].some(t => "
                           f"t.textContent === {json.dumps(words['bot_never_leaves'])})")
    assert page.title().endswith("Tablas") and words["title"] in page.title()

    # The game resigned: the result, then its review.
    page.click("#resign-btn")
    page.click("#resign-btn")
    page.wait_for_selector("#result-text")
    assert_in_language(page, lang, "a finished room")
    goto_standalone(page, f"{base}/review/{rooms['tictactoe']}",
                    "document.getElementById('rv-body') && "
                    "!document.getElementById('rv-body').hidden")
    page.wait_for_selector("#rv-summary:not([hidden])")
    assert_in_language(page, lang, "review")

    goto_standalone(page, f"{base}/explain?game=tictactoe&depth=2",
                    "document.body.dataset.state === 'ready'")
    page.wait_for_function("document.getElementById('ex-counts').dataset.complete === '1'")
    assert_in_language(page, lang, "explain")

    goto_standalone(page, f"{base}/leaderboard?game=tictactoe",
                    "document.getElementById('lb-game').options.length > 0")
    page.wait_for_function("!document.getElementById('lb-table').hidden || "
                           "document.getElementById('lb-status').textContent.length > 12")
    assert_in_language(page, lang, "leaderboard")

    # The player's own page: its games, each with the day it was played.
    page.goto(f"{base}/#/")
    page.wait_for_selector("#conn[data-status=online]")
    me = page.evaluate("window.tablas.me.player_id")
    goto_standalone(page, f"{base}/players/{me}",
                    "document.querySelectorAll('.pl-game').length > 0")
    assert_in_language(page, lang, "player")
    day = page.text_content(".pl-game .pl-date") or ""
    assert re.search(words["month"], day), day

    # A tournament made from the lobby's form, and its page.
    page.goto(f"{base}/#/")
    page.wait_for_selector("#tourney-create")
    page.click("#tourney-create")
    page.wait_for_selector("[data-tourney]")
    assert_in_language(page, lang, "lobby with a tournament")
    tid = page.get_attribute("[data-tourney]", "data-tourney")
    page.click(f"[data-join-tourney='{tid}']")
    page.wait_for_function(f"document.querySelector(\"[data-join-tourney='{tid}']\")"
                           ".classList.contains('primary') === false")
    goto_standalone(page, f"{base}/tournaments/{tid}",
                    "document.querySelectorAll('#to-rows tr').length > 0")
    page.wait_for_function("document.getElementById('to-creator').textContent.length > 0")
    assert_in_language(page, lang, "tournament")
    ctx.close()


def test_the_switch_changes_the_words_and_is_remembered(browser: Any, base: str) -> None:
    ctx, page = new_page(browser, base, "Cid", locale="en-US")
    assert page.evaluate("document.documentElement.lang") == "en"
    assert page.text_content("#create-btn") == "Create game"
    # Switched: the page's words change at once, without a reload (the marker survives).
    page.evaluate("window.__notReloaded = true")
    page.select_option("#lang-switch", "es")
    page.wait_for_function("document.documentElement.lang === 'es'")
    assert page.text_content("#create-btn") == "Crear partida"
    assert page.text_content("#sound") in ("Sonido: no", "Sonido: sí")
    assert page.evaluate("window.__notReloaded === true")
    assert_in_language(page, "es", "lobby after the switch")
    # In a room, its texts too.
    create_room(page, "connect4", opponent="random")
    page.wait_for_function("document.getElementById('turn').textContent.length > 0")
    assert page.text_content("#room-game") == "Conecta 4"
    page.select_option("#lang-switch", "en")
    page.wait_for_function("document.getElementById('room-game').textContent === 'Connect-4'")
    assert_in_language(page, "en", "room after the switch")
    page.select_option("#lang-switch", "es")
    page.wait_for_function("document.getElementById('room-game').textContent === 'Conecta 4'")
    assert_in_language(page, "es", "room switched back")
    # Remembered by this browser: a reload, and another page, speak Spanish.
    page.reload()
    page.wait_for_selector("#conn[data-status=online]")
    page.wait_for_selector("#room-view svg.board")
    assert page.evaluate("document.documentElement.lang") == "es"
    assert page.input_value("#lang-switch") == "es"
    page.goto(f"{base}/leaderboard")
    page.wait_for_function("document.getElementById('lb-game').options.length > 0")
    assert page.text_content("h1") == "Clasificación"
    # A standalone page switched back: drawn again in English.
    page.select_option("#lang-switch", "en")
    page.wait_for_function("document.querySelector('h1').textContent === 'Leaderboard'")
    assert_in_language(page, "en", "leaderboard switched")
    ctx.close()


def test_a_browser_without_either_language_gets_english(browser: Any, base: str) -> None:
    ctx, page = new_page(browser, base, "Dai", locale="de-DE")
    assert page.evaluate("document.documentElement.lang") == "en"
    assert page.text_content("#create-btn") == "Create game"
    ctx.close()
