"""The explain page (/explain) in Debian's Chromium against a real ``tablas serve``: the nodes it
draws are the API's one for one, stepping moves the current node and its window, the counts
panel, the controls kept in the URL, the clickable board, Save SVG, and the links to it; plus
``GET /api/explain`` over HTTP, answers and refusals."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import create_room, new_page, screenshot
from tablas.engine.games import get_game

Json = dict[str, Any]
SERVE_WORKERS = 1  # the module's server (browser_support.base)


NODES = "#ex-view [data-node-id]"


def api(base: str, **params: str) -> tuple[int, Json]:
    url = f"{base}/api/explain?{urllib.parse.urlencode(params)}"
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def open_page(browser: Any, base: str, query: str) -> tuple[Any, Any]:
    ctx = browser.new_context(viewport={"width": 1300, "height": 860}, accept_downloads=True)
    page = ctx.new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # Console errors count too, but for the browser's own note of an expected 400 answer.
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "status of 400"
            not in m.text else None)
    page.errors = errors
    page.goto(f"{base}/explain?{query}")
    page.wait_for_function("['ready', 'error'].includes(document.body.dataset.state)")
    return ctx, page


def nodes(n: Json) -> Iterator[Json]:
    yield n
    for c in n["children"]:
        yield from nodes(c)


def drawn(page: Any) -> list[dict[str, str]]:
    out: list[dict[str, str]] = page.eval_on_selector_all(
        NODES, "els => els.map(e => ({id: e.dataset.nodeId, kind: e.dataset.kind, "
        "value: e.dataset.value, visit: e.dataset.visit, tag: e.namespaceURI}))")
    return out


def attr(x: Any) -> str:
    return "" if x is None else str(x)


@pytest.mark.parametrize("params", [
    {"game": "random", "branching": "3", "depth": "3", "seed": "5"},
    {"game": "random", "branching": "2", "depth": "4", "seed": "1", "order": "right",
     "algorithm": "minimax"},
    {"game": "tictactoe", "position": "X.O.X....", "depth": "3", "order": "best"},
    {"game": "backgammon", "position": "4HPwATDgc/ABMA"},
])
def test_the_nodes_drawn_are_the_json_one_for_one(browser: Any, base: str,
                                                  params: dict[str, str]) -> None:
    status, tree = api(base, **params)
    assert status == 200
    ctx, page = open_page(browser, base, urllib.parse.urlencode(params))
    assert page.evaluate("document.body.dataset.state") == "ready"
    got = drawn(page)
    want = [{"id": str(n["id"]), "kind": n["kind"], "value": attr(n["value"]),
             "visit": attr(n["visit"])} for n in nodes(tree["root"])]
    assert len(got) == len(want)
    assert all(g["tag"] == "http://www.w3.org/2000/svg" for g in got)
    by_id = {g["id"]: g for g in got}
    for w in want:
        g = by_id[w["id"]]
        assert (g["kind"], g["visit"]) == (w["kind"], w["visit"]), w
        # Numbers as JavaScript writes them: compare as numbers.
        assert (g["value"] == "") == (w["value"] == "")
        if w["value"]:
            assert float(g["value"]) == float(w["value"])
    assert page.locator("#ex-visited").text_content() == (
        f"{tree['visited']} of {len(want)} nodes visited")
    # The URL keeps the parameters: the page can be shared as it is.
    url = urllib.parse.urlsplit(page.url)
    assert dict(urllib.parse.parse_qsl(url.query)) == params
    assert page.errors == []
    ctx.close()


def test_stepping_moves_the_current_node_and_its_window(browser: Any, base: str) -> None:
    params = {"game": "random", "branching": "3", "depth": "2", "seed": "0"}
    _, tree = api(base, **params)
    by_visit = {n["visit"]: n for n in nodes(tree["root"]) if n["visit"] is not None}
    ctx, page = open_page(browser, base, urllib.parse.urlencode(params))
    # The page opens at the start of the search: nothing entered yet (End: all of it).
    assert page.get_attribute("#ex-step", "data-step") == "0"
    page.keyboard.press("End")
    assert page.get_attribute("#ex-step", "data-step") == str(tree["visited"])
    page.keyboard.press("Home")
    assert page.locator("#ex-view .ex-node.current").count() == 0
    assert page.get_attribute("#ex-window", "data-window") == ""

    def window(n: Json) -> str:
        lo = "-∞" if n["alpha"] is None else str(n["alpha"])
        hi = "+∞" if n["beta"] is None else str(n["beta"])
        return f"[{lo}, {hi}]"

    windows = []
    for k in range(1, tree["visited"] + 1):
        page.keyboard.press("ArrowRight")
        current = page.locator("#ex-view .ex-node.current")
        assert current.count() == 1
        assert current.get_attribute("data-visit") == str(k)
        assert current.get_attribute("data-node-id") == str(by_visit[k]["id"])
        assert page.get_attribute("#ex-window", "data-window") == window(by_visit[k])
        windows.append(window(by_visit[k]))
    assert len(set(windows)) > 2  # the window really changes along the walk
    # The pruned leaves are greyed once the search is over, and the PV is marked.
    pruned = sorted(str(n["id"]) for n in nodes(tree["root"]) if n["visit"] is None)
    ids = "els => els.map(e => e.dataset.nodeId)"
    got = page.eval_on_selector_all("#ex-view .ex-node.pruned", ids)
    assert sorted(got) == pruned
    pv = sorted(str(n["id"]) for n in nodes(tree["root"]) if n["best"])
    got = page.eval_on_selector_all("#ex-view .ex-node.pv", ids)
    assert sorted(got) == pv
    page.click("#ex-prev")
    assert page.locator("#ex-view .ex-node.current").get_attribute("data-visit") == str(
        tree["visited"] - 1)
    # Half-way, an unfinished MAX node shows its best value so far.
    page.keyboard.press("Home")
    for _ in range(6):
        page.click("#ex-next")
    assert page.locator("#ex-view [data-node-id='0'] .ex-val").text_content() == "≥1"
    page.click("#ex-play")
    page.wait_for_function(f"document.getElementById('ex-step').dataset.step === "
                           f"'{tree['visited']}'", timeout=20_000)
    screenshot(page, "explain-random")
    assert page.errors == []
    ctx.close()


def test_the_counts_panel_compares_the_variants(browser: Any, base: str) -> None:
    params = {"game": "random", "branching": "3", "depth": "3", "seed": "11"}
    ctx, page = open_page(browser, base, urllib.parse.urlencode(params))
    page.wait_for_selector("#ex-counts[data-complete]")
    for algorithm in ("minimax", "alphabeta"):
        for order in ("left", "right", "best", "worst"):
            _, t = api(base, **params, algorithm=algorithm, order=order)
            cell = page.locator(f"#ex-counts td[data-algorithm={algorithm}][data-order={order}]")
            assert cell.text_content() == str(t["visited"])
    assert page.locator("#ex-counts td.this").get_attribute("data-order") == "left"
    assert page.errors == []
    ctx.close()


def test_controls_change_the_url_and_the_tree(browser: Any, base: str) -> None:
    ctx, page = open_page(browser, base, "game=tictactoe&position=X.O.X....&depth=2")
    before = page.locator(NODES).count()
    page.select_option("#ex-order", "best")
    page.wait_for_function("location.search.includes('order=best')")
    page.wait_for_function("document.body.dataset.state === 'ready'")
    _, best = api(base, game="tictactoe", position="X.O.X....", depth="2", order="best")
    page.wait_for_function("document.getElementById('ex-step').dataset.step === '0'")
    assert page.locator("#ex-visited").text_content().startswith(f"{best['visited']} of")
    # The clickable board plays O in the last cell.
    page.click("#ex-board [data-cell='8']")
    page.wait_for_function("new URLSearchParams(location.search).get('position') === 'X.O.X...O'")
    page.wait_for_function("document.body.dataset.state === 'ready'")
    _, after = api(base, game="tictactoe", position="X.O.X...O", depth="2", order="best")
    page.wait_for_function(f"document.querySelectorAll('{NODES}').length === "
                           f"{len(list(nodes(after['root'])))}")
    assert page.locator(NODES).count() != before
    page.click("#ex-undo")
    page.wait_for_function("new URLSearchParams(location.search).get('position') === 'X.O.X....'")
    # A random tree: branching and seed in the URL.
    page.select_option("#ex-game", "random")
    page.wait_for_function("new URLSearchParams(location.search).get('game') === 'random'")
    page.fill("#ex-branching", "2")
    page.fill("#ex-seed", "77")
    page.press("#ex-seed", "Enter")
    page.wait_for_function("new URLSearchParams(location.search).get('seed') === '77'")
    page.wait_for_function("document.querySelectorAll('#ex-view [data-node-id]').length === 15")
    assert page.errors == []
    ctx.close()


def board_matches_the_engine(page: Any, game: str, position: str) -> None:
    """The little board's discs are where the engine's state puts them (bombs included)."""
    state = get_game(game).state_to_json(get_game(game).parse_position(position))
    want = {f"{r},{c},{v}" for r, row in enumerate(state["board"]) for c, v in enumerate(row)
            if v >= 0}
    got = page.eval_on_selector_all("#ex-board .ex-disc", "els => els.map(e => e.dataset.cell)")
    assert set(got) == want and len(got) == len(want)
    bombs = page.eval_on_selector_all("#ex-board .ex-bomb", "els => els.map(e => e.dataset.cell)")
    assert {",".join(b.split(",")[:2]) for b in bombs} == {
        f"{r},{c}" for r, c in state.get("bombs", [])}


def test_connect4_and_boom_boards_drop_by_click(browser: Any, base: str) -> None:
    ctx, page = open_page(browser, base, "game=connect4&position=44&depth=1")
    page.click("#ex-board [data-col='2']")
    page.wait_for_function("new URLSearchParams(location.search).get('position') === '443'")
    page.wait_for_function("document.body.dataset.state === 'ready'")
    board_matches_the_engine(page, "connect4", "443")
    page.select_option("#ex-game", "boom")
    page.wait_for_function("new URLSearchParams(location.search).get('game') === 'boom'")
    page.fill("#ex-position", "123456712")
    page.press("#ex-position", "Enter")
    page.wait_for_function("document.body.dataset.state === 'ready'")
    board_matches_the_engine(page, "boom", "123456712")
    page.click("#ex-board [data-col='4']")
    page.wait_for_function("new URLSearchParams(location.search).get('position') === '1234567125'")
    page.wait_for_function("document.body.dataset.state === 'ready'")
    board_matches_the_engine(page, "boom", "1234567125")  # a bomb each
    page.click("#ex-board .ex-boom-btn")
    page.wait_for_function("new URLSearchParams(location.search).get('position') === "
                           "'1234567125B'")
    page.wait_for_function("document.body.dataset.state === 'ready'")
    board_matches_the_engine(page, "boom", "1234567125B")  # red's bomb and row are gone
    assert page.errors == []
    ctx.close()


def test_save_svg_downloads_the_whole_tree(browser: Any, base: str) -> None:
    ctx, page = open_page(browser, base, "game=grundy&position=7&depth=4")
    count = page.locator(NODES).count()
    with page.expect_download() as info:
        page.click("#ex-save")
    path = info.value.path()
    assert info.value.suggested_filename.endswith(".svg")
    root = ET.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    ids = [e for e in root.iter() if e.get("data-node-id") is not None]
    assert len(ids) == count
    style = root.find("{http://www.w3.org/2000/svg}style")
    assert style is not None and ".ex-tree" in (style.text or "")
    assert page.errors == []
    ctx.close()


def test_a_refused_tree_shows_the_message(browser: Any, base: str) -> None:
    ctx, page = open_page(browser, base, "game=random&branching=3&depth=12&seed=1")
    assert page.evaluate("document.body.dataset.state") == "error"
    text = page.locator("#ex-error").text_content() or ""
    assert "more than --max-nodes 5000: lower --depth" in text
    assert page.errors == []
    ctx.close()


def test_the_lobby_and_a_room_link_to_the_page(browser: Any, base: str) -> None:
    ctx, page = new_page(browser, base, "Ana")
    assert page.get_attribute("#explain-link", "href") == "explain"
    create_room(page, "connect4", "random")
    href = page.get_attribute("#explain-position", "href") or ""
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(href).query, keep_blank_values=True))
    assert query["game"] == "connect4"
    assert query["position"] == page.evaluate("window.tablas.room.state.notation")
    ctx2, explain = open_page(browser, base, urllib.parse.urlsplit(href).query)
    assert explain.evaluate("document.body.dataset.state") == "ready"
    assert explain.errors == [] and page.errors == []
    ctx2.close()
    ctx.close()


def test_the_api_over_http(base: str) -> None:
    status, tree = api(base, game="random", branching="2", depth="3", seed="4")
    assert status == 200 and tree["visited"] > 0 and tree["position"] is None
    status, err = api(base, game="random", branching="3", depth="9")
    assert status == 400
    assert err == {"error": "the random tree with branching 3 at depth 9 has 29524 nodes, "
                            "more than --max-nodes 5000: lower --depth"}
    for params, word in [({"game": "tictactoe", "depth": "nine"}, "depth"),
                         ({"game": "random", "bogus": "1"}, "bogus"),
                         ({"game": "backgammon", "position": "nonsense"}, "nonsense")]:
        status, err = api(base, **params)
        assert status == 400 and word in err["error"], err
