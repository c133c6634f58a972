"""The page's languages (contract section 18; docs/i18n.md): the catalogues complete and in
step, the i18n module's choices and formats, every refusal code worded, and the server's
refusals carrying the reason and values a page words them from.

The JavaScript runs under node (tests/i18n_check.mjs, tests/i18n_units.mjs)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from server_support import Client, create, running
from tablas.server.errors import ERROR_CODES, RoomError
from tablas.server.protocol import Error

ROOT = Path(__file__).resolve().parent.parent
CHECK = ROOT / "tests" / "i18n_check.mjs"
UNITS = ROOT / "tests" / "i18n_units.mjs"
CATALOGUES = ROOT / "client" / "js" / "i18n"


def node(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("node")
    if exe is None:
        pytest.skip("node is missing: install it with `apt-get install -y nodejs`")
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=60,
                          check=False)


def test_the_catalogues_are_complete_and_every_key_used_exists() -> None:
    done = node(str(CHECK))
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"en, es: \d+ keys; \d+ named by the page", done.stdout)


def test_the_check_finds_what_is_missing(tmp_path: Path) -> None:
    client = tmp_path / "client"
    shutil.copytree(ROOT / "client", client)
    es = client / "js" / "i18n" / "es.js"
    text = es.read_text(encoding="utf-8")
    # A key dropped, a placeholder renamed, and the page naming a key no catalogue has.
    text = re.sub(r'\n  "room\.hide": .*', "", text)
    text = text.replace('"turn.waitingFor": "Esperando a {name}."',
                        '"turn.waitingFor": "Esperando a {nombre}."')
    es.write_text(text, encoding="utf-8")
    app = client / "js" / "app.js"
    app.write_text(app.read_text(encoding="utf-8") + '\nt("no.such.key");\n', encoding="utf-8")
    done = node(str(CHECK), str(client))
    assert done.returncode == 1
    assert "es: missing room.hide" in done.stdout
    assert "es: turn.waitingFor does not use {name}" in done.stdout
    assert "es: turn.waitingFor uses {nombre}, which English does not give" in done.stdout
    assert "uses no.such.key, which no catalogue has" in done.stdout


def units(lang: str) -> dict[str, Any]:
    done = node(str(UNITS), lang)
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def test_the_module_picks_words_and_formats_in_spanish() -> None:
    u = units("es")
    assert u["lang"] == "es"
    # The first of the browser's languages the page has, English otherwise.
    assert u["pick"] == ["es", "es", "en", "en", "en"]
    assert u["rooms"] == ["0 mesas", "1 mesa", "2 mesas", "5 mesas"]
    assert u["named"] == "Esperando a Ana."
    assert u["missing"] == "no.such.key"
    assert u["number"] == "1234,5"
    assert u["signed"] == "+0,125"
    assert u["date"] == "28 nov 2026"
    assert u["error"] == "No te toca."
    assert u["reason"] == ("Tu rival lleva 12 s ausente: podrás reclamar la victoria cuando "
                           "lleve 60 s.")
    # A reason the page does not know yet: its code's words; an unknown code: a general one.
    assert u["unknownReason"] == "Ese asiento ya está ocupado."
    assert u["unknownCode"] == "El servidor lo ha rechazado."
    assert u["word"] == "cuatro en línea"
    assert u["newWord"] == "some new reason"


def test_the_module_in_english() -> None:
    u = units("en")
    assert u["lang"] == "en"
    assert u["rooms"] == ["0 rooms", "1 room", "2 rooms", "5 rooms"]
    assert u["number"] == "1,234.5"
    assert u["date"] == "Nov 28, 2026"
    assert u["error"] == "It is not your turn."


def catalogue_keys(lang: str) -> set[str]:
    text = (CATALOGUES / f"{lang}.js").read_text(encoding="utf-8")
    return set(re.findall(r'^\s*"([\w.-]+)":', text, flags=re.M))


def test_every_refusal_code_is_worded_in_every_language() -> None:
    for lang in ("en", "es"):
        keys = catalogue_keys(lang)
        missing = [c for c in (*ERROR_CODES, "offline") if f"error.{c}" not in keys]
        assert missing == [], (lang, missing)


def test_every_reason_the_server_gives_is_worded() -> None:
    """Each ``reason="…"`` in the server's code has its words in the catalogues: a refusal's
    (error.reason.…), or a game's end (reason.…, the Outcome's)."""
    given: set[str] = set()
    for path in (ROOT / "server").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        given.update(re.findall(r'\breason="([a-z_]+)"', text))
        # (reason, params) returned; a store's (status, seat) is no refusal's reason
        if "store" not in path.parts:
            given.update(re.findall(r'^\s+return "([a-z_]+)", ', text, flags=re.M))
    assert {"claim_too_early", "waiting_rooms", "name_look_alike", "password_too_short"} <= given
    keys = catalogue_keys("en") & catalogue_keys("es")
    assert sorted(r for r in given
                  if f"error.reason.{r}" not in keys and f"reason.{r}" not in keys) == []


def test_an_error_carries_its_reason_and_params_only_when_it_has_them() -> None:
    plain = json.loads(Error.of(RoomError("not_your_turn", "not your turn"), 3).to_json())
    assert plain == {"type": "error", "re": 3, "code": "not_your_turn",
                     "message": "not your turn"}
    e = RoomError("bad_request", "your opponent has been away for 5 s", reason="claim_too_early",
                  params={"away": 5, "wait": 60})
    full = json.loads(Error.of(e, None).to_json())
    assert full == {"type": "error", "code": "bad_request",
                    "message": "your opponent has been away for 5 s",
                    "reason": "claim_too_early", "params": {"away": 5, "wait": 60}}


async def test_a_refusal_over_the_wire_carries_its_reason(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        a = Client(url)
        await a.connect("Ana")
        room, _ = await create(a, "tictactoe", [{"kind": "human"}, {"kind": "human"}])
        e = await a.error({"type": "chat", "room_id": room, "text": "   "})
        assert (e["code"], e.get("reason")) == ("bad_request", "empty_chat")
        e = await a.error({"type": "move", "room_id": room, "ply": 0, "move": {"cell": 0}})
        assert e["code"] == "not_your_turn" and "reason" not in e and "params" not in e
