"""``tablas explain`` (docs/explain.md): the traced trees against independent textbook searches
written here, exact solvers, the contract's JSON shape, the DOT export and the command line."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tablas.engine.errors import InvalidInputError
from tablas.engine.explain import explain, explain_query, to_dot, to_json
from tablas.engine.games import get_game
from tablas.engine.search import grundy_solver
from tablas.engine.search.evals import boom_eval, connect4_eval
from tablas.engine.search.random_tree import leaf_values
from tablas.engine.search.scores import MAX_PLIES, WIN

ORDERS = ("left", "right", "best", "worst")
NODE_KEYS = {"id", "move_text", "kind", "static", "probability", "alpha", "beta", "value",
             "visit", "best", "children"}
TOP_KEYS = {"game", "position", "algorithm", "order", "depth", "value", "best_move_text",
            "visited", "root", "proof"}

Json = dict[str, Any]


def tree(game: str, **kw: Any) -> Json:
    out: Json = to_json(explain(game, **kw))
    return out


def nodes(n: Json) -> Iterator[Json]:
    """Preorder, children in the order given."""
    yield n
    for c in n["children"]:
        yield from nodes(c)


def by_id(root: Json) -> dict[int, Json]:
    return {n["id"]: n for n in nodes(root)}


def tablas(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tablas.server.cli", *args],
                          capture_output=True, text=True, timeout=60)


# --- independent textbook searches over nested lists ----------------------------------------
# A textbook tree is (id, leaf value or None, [children]); built from the left-order JSON, so
# the searches below see only the shape and the leaves, never the traced values.

Tb = tuple[int, float | None, list[Any]]


def textbook(n: Json) -> Tb:
    return (n["id"], n["static"], [textbook(c) for c in n["children"]])


def tb_minimax(t: Tb, maximize: bool) -> float:
    _, leaf, kids = t
    if not kids:
        assert leaf is not None
        return leaf
    values = [tb_minimax(c, not maximize) for c in kids]
    return max(values) if maximize else min(values)


def tb_all_values(t: Tb, maximize: bool, out: dict[int, float]) -> float:
    _, leaf, kids = t
    if not kids:
        assert leaf is not None
        v = leaf
    else:
        values = [tb_all_values(c, not maximize, out) for c in kids]
        v = max(values) if maximize else min(values)
    out[t[0]] = v
    return v


def tb_sorted(t: Tb, maximize: bool, order: str, exact: dict[int, float]) -> Tb:
    """The tree with each node's children in ``order``; a stable sort keeps ties as generated."""
    i, leaf, kids = t
    kids = [tb_sorted(c, not maximize, order, exact) for c in kids]
    if order == "right":
        kids = kids[::-1]
    elif order in ("best", "worst"):
        best_first = sorted(kids, key=lambda c: -exact[c[0]] if maximize else exact[c[0]])
        kids = best_first if order == "best" else sorted(
            kids, key=lambda c: exact[c[0]] if maximize else -exact[c[0]])
    return (i, leaf, kids)


def tb_alphabeta(t: Tb, alpha: float, beta: float, maximize: bool, seen: list[int]) -> float:
    """Fail-hard alpha-beta as in the lesson: cut as soon as α ≥ β."""
    i, leaf, kids = t
    seen.append(i)
    if not kids:
        assert leaf is not None
        return leaf
    for c in kids:
        v = tb_alphabeta(c, alpha, beta, not maximize, seen)
        if maximize:
            alpha = max(alpha, v)
        else:
            beta = min(beta, v)
        if alpha >= beta:
            break
    return alpha if maximize else beta


def visit_sequence(root: Json) -> list[int]:
    visited = [n for n in nodes(root) if n["visit"] is not None]
    return [n["id"] for n in sorted(visited, key=lambda n: n["visit"])]


# --- random trees ----------------------------------------------------------------------------


def test_splitmix64_matches_the_reference_outputs() -> None:
    # The first outputs of Vigna's SplitMix64 from seed 1234567 (the published test vector),
    # reduced to leaves 0..10: the leaves are reproducible outside Python.
    ref = [6457827717110365317, 3203168211198807973, 9817491932198370423,
           4593380528125082431, 16408922859458223821]
    assert leaf_values(1234567, 5) == [x % 11 for x in ref]


def test_the_lesson_tree_by_hand() -> None:
    out = tree("random", branching=3, depth=2, seed=0, algorithm="alphabeta")
    root = out["root"]
    leaves = [[c["static"] for c in m["children"]] for m in root["children"]]
    assert leaves == [[1, 10, 1], [3, 7, 4], [2, 5, 9]]
    assert out["value"] == 3 and out["best_move_text"] == "2"
    # Third MIN node: its first leaf (2) is below α = 3, so its last two leaves are cut.
    third = root["children"][2]
    assert third["alpha"] == 3 and third["beta"] is None and third["value"] == 2
    assert [c["visit"] for c in third["children"]] == [11, None, None]
    assert out["visited"] == 11


@pytest.mark.parametrize("b,d,seed", [(2, 4, 1), (3, 3, 7), (4, 2, 3), (3, 4, 11), (5, 3, 2)])
def test_random_tree_values_agree_with_a_textbook_minimax(b: int, d: int, seed: int) -> None:
    out = tree("random", branching=b, depth=d, seed=seed, algorithm="minimax")
    exact: dict[int, float] = {}
    tb_all_values(textbook(out["root"]), True, exact)
    for n in nodes(out["root"]):
        assert n["value"] == exact[n["id"]], n["id"]
    assert out["value"] == tb_minimax(textbook(out["root"]), True)
    leaves = [n for n in nodes(out["root"]) if n["kind"] == "leaf"]
    assert len(leaves) == b**d and all(isinstance(x["static"], int) for x in leaves)
    assert all(0 <= x["static"] <= 10 for x in leaves)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("b,d,seed", [(2, 4, 1), (3, 3, 7), (4, 3, 3), (3, 4, 11), (2, 7, 5)])
def test_alphabeta_visits_what_a_textbook_alphabeta_visits(
    order: str, b: int, d: int, seed: int
) -> None:
    left = tree("random", branching=b, depth=d, seed=seed, algorithm="minimax")
    tb = textbook(left["root"])
    exact: dict[int, float] = {}
    tb_all_values(tb, True, exact)
    seen: list[int] = []
    value = tb_alphabeta(tb_sorted(tb, True, order, exact), -math.inf, math.inf, True, seen)
    out = tree("random", branching=b, depth=d, seed=seed, order=order)
    assert visit_sequence(out["root"]) == seen
    assert out["visited"] == len(seen)
    assert out["value"] == value == exact[0]
    # The children are listed in the order they were tried.
    sorted_tb = tb_sorted(tb, True, order, exact)

    def same_order(n: Json, t: Tb) -> None:
        assert [c["id"] for c in n["children"]] == [c[0] for c in t[2]]
        for c, ct in zip(n["children"], t[2], strict=True):
            same_order(c, ct)

    same_order(out["root"], sorted_tb)


@settings(max_examples=60, deadline=None)
@given(b=st.integers(1, 5), d=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_best_order_never_visits_more_than_left(b: int, d: int, seed: int) -> None:
    if b**d > 700:
        d = 2
    best = explain("random", branching=b, depth=d, seed=seed, order="best").trace
    left = explain("random", branching=b, depth=d, seed=seed, order="left").trace
    worst = explain("random", branching=b, depth=d, seed=seed, order="worst").trace
    assert best.visited <= left.visited
    assert best.visited <= worst.visited
    assert best.root_value == left.root_value == worst.root_value


@pytest.mark.parametrize("order", ORDERS)
def test_minimax_visits_every_node_in_preorder(order: str) -> None:
    out = tree("random", branching=3, depth=4, seed=9, algorithm="minimax", order=order)
    all_nodes = list(nodes(out["root"]))
    assert out["visited"] == len(all_nodes) == 121
    assert [n["visit"] for n in all_nodes] == list(range(1, 122))
    assert all(n["alpha"] is None and n["beta"] is None for n in all_nodes)


def test_the_same_seed_gives_the_same_leaves_for_every_algorithm_and_order() -> None:
    statics = set()
    for algorithm in ("minimax", "alphabeta"):
        for order in ORDERS:
            out = tree("random", branching=3, depth=3, seed=42, algorithm=algorithm, order=order)
            statics.add(tuple(sorted((i, n["static"]) for i, n in by_id(out["root"]).items())))
    assert len(statics) == 1
    other = tree("random", branching=3, depth=3, seed=43)
    assert tuple(sorted((i, n["static"]) for i, n in by_id(other["root"]).items())) not in statics


# --- games -----------------------------------------------------------------------------------


@cache
def ttt_solve(cells: str) -> int:
    """Tic-tac-toe by plain negamax, for the side to move: WIN - plies for a win (the winner
    hurries, the loser delays), 0 for a draw."""
    lines = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8),
             (2, 4, 6)]
    if any(cells[a] != "." and cells[a] == cells[b] == cells[c] for a, b, c in lines):
        return -WIN  # the side that just moved has won, at distance 0 from here
    if "." not in cells:
        return 0
    me = "X" if cells.count("X") == cells.count("O") else "O"
    best = -math.inf
    for i, ch in enumerate(cells):
        if ch == ".":
            v = -ttt_solve(cells[:i] + me + cells[i + 1:])
            v = v - 1 if v > 0 else v + 1 if v < 0 else 0  # one ply further away
            best = max(best, v)
    return int(best)


@pytest.mark.parametrize("position", ["XX.OO....", "X.O.X..O.", "XOX.O....", "XO..X..O.",
                                      "OX.XO.X..", "XOXOXO..."])
@pytest.mark.parametrize("algorithm", ["minimax", "alphabeta"])
def test_tictactoe_to_the_end_agrees_with_a_full_minimax(position: str, algorithm: str) -> None:
    empty = position.count(".")
    out = tree("tictactoe", position=position, depth=empty, algorithm=algorithm)
    assert out["value"] == ttt_solve(position)


@pytest.mark.parametrize("position,depth", [("7", 8), ("8", 8), ("4,3", 8), ("9", 8),
                                            ("5,4", 8)])
@pytest.mark.parametrize("order", ["left", "best"])
def test_grundy_to_the_end_agrees_with_the_exact_solver(position: str, depth: int,
                                                         order: str) -> None:
    game = get_game("grundy")
    state = game.parse_position(position)
    wins, plies = grundy_solver.solve(game.key(state))
    out = tree("grundy", position=position, depth=depth, order=order)
    assert out["value"] == (WIN - plies if wins else -(WIN - plies))
    assert (out["value"] > 0) == wins


@pytest.mark.parametrize("game,position,dice", [
    ("tictactoe", "X.O.X....", None), ("grundy", "9", None), ("connect4", "4453", None),
    ("boom", "4453", None), ("backgammon", "4HPwATDgc/ABMA", "31"),
])
def test_every_algorithm_and_order_finds_the_same_root_value(
    game: str, position: str, dice: str | None
) -> None:
    values, visited = set(), {}
    for algorithm in ("minimax", "alphabeta"):
        for order in ORDERS:
            out = tree(game, position=position, dice=dice, algorithm=algorithm, order=order)
            values.add(out["value"])
            visited[algorithm, order] = out["visited"]
    assert len(values) == 1, values
    n = visited["minimax", "left"]
    assert all(visited["minimax", o] == n for o in ORDERS)
    assert all(visited["alphabeta", o] <= n for o in ORDERS)


@pytest.mark.parametrize("game,position", [("connect4", "4453"), ("connect4", "445"),
                                           ("boom", "4453"), ("boom", "445")])
def test_depth_cut_leaves_hold_the_evaluation_for_the_root_player(game: str,
                                                                  position: str) -> None:
    g = get_game(game)
    state = g.parse_position(position)
    out = tree(game, position=position, depth=1)
    children = g.successors(state)
    assert [c["move_text"] for c in out["root"]["children"]] == [
        g.move_text(state, m) for m, _ in children]
    for c, (_, child) in zip(out["root"]["children"], children, strict=True):
        # The evaluation scores the child for its side to move, the root player's opponent.
        evaluate = {"connect4": connect4_eval, "boom": boom_eval}[game]
        assert c["static"] == -evaluate(child)
    assert out["value"] == max(c["static"] for c in out["root"]["children"])


def test_a_win_outranks_any_evaluation_and_comes_sooner_first() -> None:
    # Connect-4 with three in a row for the side to move: the win beats every evaluation.
    out = tree("connect4", position="112233", depth=2)
    assert out["best_move_text"] == "4" and out["value"] == WIN - 1


def test_backgammon_before_the_roll_is_a_chance_node_of_21_rolls() -> None:
    out = tree("backgammon", position="4HPwATDgc/ABMA")
    root = out["root"]
    assert out["depth"] == 1 and root["kind"] == "chance" and out["best_move_text"] is None
    rolls = root["children"]
    assert len(rolls) == 21
    assert math.isclose(sum(c["probability"] for c in rolls), 1.0)
    assert sum(c["move_text"] in ("11", "22", "33", "44", "55", "66") for c in rolls) == 6
    assert all(c["kind"] == "max" for c in rolls)
    assert math.isclose(out["value"], sum(c["probability"] * c["value"] for c in rolls))
    # Every roll's best play is on the principal variation.
    assert root["best"] and all(c["best"] for c in rolls)
    assert all(sum(g["best"] for g in c["children"]) == 1 for c in rolls)
    # A chance node searches its rolls with a full window: nothing is pruned at depth 1.
    assert out["visited"] == len(list(nodes(root)))
    for n in nodes(root):
        assert n["probability"] is None or n in rolls


def test_backgammon_depth_two_after_a_roll_has_chance_nodes_between_the_plies() -> None:
    # A bear-off race keeps the tree small: the mover's plays, the opponent's 21 rolls, the
    # opponent's plays.
    out = tree("backgammon", position="VQAAgCoAAAAAAA", dice="21", depth=2)
    check_contract(out)
    root = out["root"]
    assert root["kind"] == "max" and len(root["children"]) == 11
    for play in root["children"]:
        assert play["kind"] == "chance" and len(play["children"]) == 21
        assert math.isclose(play["value"],
                            sum(c["probability"] * c["value"] for c in play["children"]))
        for roll in play["children"]:
            assert roll["kind"] == "min" and roll["alpha"] is None and roll["beta"] is None
            assert all(g["kind"] == "leaf" for g in roll["children"])
    assert out["value"] == max(c["value"] for c in root["children"])


# --- the contract ----------------------------------------------------------------------------


def check_contract(out: Json) -> None:
    assert set(out) == TOP_KEYS
    json.dumps(out, allow_nan=False)  # strict JSON: no Infinity anywhere
    ids = []
    for n in nodes(out["root"]):
        assert set(n) == NODE_KEYS
        ids.append(n["id"])
        assert n["kind"] in ("max", "min", "chance", "leaf")
        assert (n["kind"] == "leaf") == (not n["children"]) == (n["static"] is not None)
        if n["visit"] is None:
            assert n["value"] is None and n["alpha"] is None and n["beta"] is None
            assert not n["best"]
        if out["algorithm"] == "minimax":
            assert n["alpha"] is None and n["beta"] is None
    assert sorted(ids) == list(range(len(ids)))
    visits = sorted(n["visit"] for n in nodes(out["root"]) if n["visit"] is not None)
    assert visits == list(range(1, out["visited"] + 1))
    assert out["value"] == out["root"]["value"]


@pytest.mark.parametrize("game,kw", [
    ("random", {"branching": 3, "depth": 3}),
    ("random", {"branching": 2, "depth": 5, "algorithm": "minimax", "order": "worst"}),
    ("tictactoe", {"position": "X.O.X...."}),
    ("grundy", {"position": "4,2,1"}),
    ("connect4", {}),
    ("boom", {"position": "1234567123B"}),
    ("backgammon", {}),
    ("backgammon", {"dice": "31", "order": "best"}),
])
def test_the_json_has_exactly_the_contract_shape(game: str, kw: dict[str, Any]) -> None:
    check_contract(tree(game, **kw))


def test_best_marks_one_path_from_the_root_in_a_game_without_dice() -> None:
    out = tree("connect4", position="4453", order="right")
    path = [out["root"]]
    while path[-1]["children"]:
        best = [c for c in path[-1]["children"] if c["best"]]
        assert len(best) == 1
        path.append(best[0])
    assert sum(n["best"] for n in nodes(out["root"])) == len(path)
    assert all(n["value"] == out["value"] for n in path)
    assert path[1]["move_text"] == out["best_move_text"]


def test_explain_query_reads_strings_and_refuses_bad_input() -> None:
    out = explain_query({"game": "random", "branching": "2", "depth": "3", "seed": "7",
                         "algorithm": "minimax", "order": "right"})
    assert out == to_json(explain("random", branching=2, depth=3, seed=7,
                                  algorithm="minimax", order="right"))
    assert explain_query({"game": "connect4"})["position"] == ""
    bad = [
        ({"game": "random", "depth": "x"}, "depth"),
        ({"game": "random", "depth": "0"}, "depth"),
        ({"game": "random", "depth": "12", "branching": "9"}, "lower --depth"),
        ({"game": "random", "branching": "0"}, "branching"),
        ({"game": "random", "position": "7"}, "position"),
        ({"game": "grundy", "seed": "3"}, "seed"),
        ({"game": "tictactoe", "algorithm": "negamax"}, "algorithm"),
        ({"game": "tictactoe", "order": "up"}, "order"),
        ({"game": "tictactoe", "position": "XXX"}, "XXX"),
        ({"game": "tictactoe", "position": "XXXOO...."}, "over"),
        ({"game": "chess"}, "chess"),
        ({"position": "7"}, "game"),
        ({"game": "random", "max_nodes": "9"}, "max_nodes"),
        ({"game": "grundy", "dice": "31"}, "dice"),
        ({"game": "backgammon", "dice": "77"}, "77"),
    ]
    for params, word in bad:
        with pytest.raises(InvalidInputError, match=re.escape(word)):
            explain_query(params)


def test_a_tree_over_max_nodes_is_refused_with_its_size() -> None:
    with pytest.raises(InvalidInputError) as e:
        explain("random", branching=3, depth=8)
    assert str(e.value) == ("the random tree with branching 3 at depth 8 has 9841 nodes, "
                            "more than --max-nodes 5000: lower --depth")
    assert len(explain("random", branching=3, depth=8, max_nodes=9841).tree.nodes) == 9841
    with pytest.raises(InvalidInputError, match="over 400 nodes, more than --max-nodes 100"):
        explain("tictactoe", depth=5, max_nodes=100)


# --- DOT -------------------------------------------------------------------------------------

_DOT_ID = r'(?:[A-Za-z_][A-Za-z_0-9]*|"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?)'
_DOT_ATTRS = rf"\[\s*(?:{_DOT_ID}\s*=\s*{_DOT_ID}\s*,?\s*)*\]"


def parse_dot(text: str) -> tuple[set[str], list[tuple[str, str]]]:
    """A strict reader of the DOT subset a digraph of nodes and edges uses: every statement
    must be a graph/node/edge attribute list, a node or an edge; anything else fails."""
    m = re.fullmatch(r"\s*digraph\s+(\w+)\s*\{(.*)\}\s*", text, re.S)
    assert m, "not a digraph"
    body = m.group(2)
    stmt_re = re.compile(rf"\s*(?:(graph|node|edge)\s*{_DOT_ATTRS}|(\w+)\s*->\s*(\w+)\s*"
                         rf"(?:{_DOT_ATTRS})?|(\w+)\s*(?:{_DOT_ATTRS})?)\s*;", re.S)
    declared: set[str] = set()
    edges: list[tuple[str, str]] = []
    pos = 0
    while body[pos:].strip():
        s = stmt_re.match(body, pos)
        assert s, f"cannot read DOT at {body[pos:pos + 80]!r}"
        if s.group(2):
            edges.append((s.group(2), s.group(3)))
        elif s.group(4):
            declared.add(s.group(4))
        pos = s.end()
    return declared, edges


@pytest.mark.parametrize("game,kw", [("random", {"branching": 3, "depth": 3}),
                                     ("backgammon", {"dice": "31"}),
                                     ("tictactoe", {"position": 'XO..X..O.', "depth": 3})])
def test_dot_is_a_digraph_with_one_node_per_tree_node(game: str, kw: dict[str, Any]) -> None:
    e = explain(game, **kw)
    text = to_dot(e)
    declared, edges = parse_dot(text)
    assert declared == {f"n{n.id}" for n in e.tree.nodes}
    assert len(edges) == len(e.tree.nodes) - 1
    assert {b for _, b in edges} == declared - {"n0"}
    if shutil.which("dot"):  # Graphviz itself, where it is installed
        r = subprocess.run(["dot", "-Tcanon"], input=text, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


def test_dot_reader_rejects_what_is_not_dot() -> None:
    with pytest.raises(AssertionError):
        parse_dot("digraph g { n0 -> ; }")
    with pytest.raises(AssertionError):
        parse_dot("graph g { n0; }")


# --- the command line ------------------------------------------------------------------------


def test_cli_json_is_the_contract() -> None:
    r = tablas("explain", "random", "--branching", "3", "--depth", "3", "--seed", "5", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    check_contract(out)
    assert out == tree("random", branching=3, depth=3, seed=5)
    r = tablas("explain", "backgammon", "4HPwATDgc/ABMA", "--dice", "31", "--algorithm",
               "minimax", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["best_move_text"] == "8/5 6/5" and out["visited"] == 17


def test_cli_text_and_dot() -> None:
    r = tablas("explain", "random", "--branching", "3", "--depth", "2")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[1].startswith("alphabeta, order left: value 3, best move 2; visited 11 of 13")
    assert sum("not visited" in ln for ln in lines) == 2 and "✂ 2 cut off" in r.stdout
    r = tablas("explain", "grundy", "7", "--dot", "--algorithm", "minimax")
    assert r.returncode == 0, r.stderr
    declared, _ = parse_dot(r.stdout)
    assert len(declared) == tree("grundy", position="7", algorithm="minimax")["visited"]


def test_cli_refuses_a_large_tree_and_bad_input_with_exit_2() -> None:
    r = tablas("explain", "tictactoe", ".........", "--depth", "6")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "more than --max-nodes 5000: lower --depth" in r.stderr
    r = tablas("explain", "tictactoe", ".........", "--depth", "6", "--max-nodes", "100000",
               "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["visited"] > 0
    for args, word in [(("random", "--depth", "0"), "depth"), (("nim",), "nim"),
                       (("grundy", "7", "--dice", "31"), "dice"),
                       (("random", "--order", "up"), "order"),
                       (("random", "--json", "--dot"), "not allowed")]:
        r = tablas("explain", *args)
        assert r.returncode == 2 and word in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_the_engine_stays_pure() -> None:
    code = ("import sys; from engine.explain import explain, to_json; "
            "to_json(explain('backgammon')); to_json(explain('connect4')); "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('asyncio', 'server', 'websockets', 'aiosqlite')); print(bad)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_the_tree_says_how_to_read_a_proof_and_the_page_keeps_no_copy() -> None:
    """A page writes W3/L3 for a win/loss in 3 plies from the JSON's ``proof``, which only
    trees that can hold a proof carry; the page has no copy of the engine's scale."""
    won = to_json(explain("tictactoe", "XX.OO....", depth=1))
    assert won["proof"] == {"win": WIN, "proven_min": WIN - MAX_PLIES}
    assert won["value"] >= won["proof"]["proven_min"]
    assert to_json(explain("random", branching=2, depth=2, seed=1))["proof"] is None
    assert to_json(explain("backgammon"))["proof"] is None
    web = Path(__file__).resolve().parent.parent / "client"
    for js in web.rglob("*.js"):
        text = js.read_text(encoding="utf-8").replace("_", "")
        assert str(WIN) not in text and str(WIN - MAX_PLIES) not in text, js
