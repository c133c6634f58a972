"""``tablas explain``, ``GET /api/explain`` and the page ``/explain``: a search tree as the search
walks it, for teaching minimax and alpha-beta (docs/explain.md).

:func:`explain` checks the parameters, builds the whole tree to the depth asked
(:func:`tablas.engine.search.trace.build_tree`) and searches it once
(:func:`tablas.engine.search.trace.search`); :func:`to_json`, :func:`to_dot` and :func:`to_text`
write the result as the contract's JSON, Graphviz DOT and an indented text tree.
:func:`explain_query` does the same for the HTTP query's parameters, given as strings.

Leaf values, from the root player's point of view:

* a random tree: the number drawn at the leaf (0 to 10);
* a game that ended: ``WIN - plies`` for a win (``tablas.engine.search.scores.WIN`` = 1,000,000,
  less the decision plies from the root, so a sooner win is worth more and any win beats any
  evaluation), its negation for a loss, 0 for a draw; in a game with dice (backgammon) the
  points won or lost (1, 2 or 3), on the scale of its evaluation (cubeless equity);
* a game where the depth ran out: the engine's evaluation (its profile's ``evaluate_seat0``),
  or 0 for a game that has none (tic-tac-toe).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tablas.engine.core import JSON, Game, Outcome
from tablas.engine.errors import InvalidInputError
from tablas.engine.games import GAME_IDS, get_game
from tablas.engine.positions import position_state
from tablas.engine.search.profiles import profile
from tablas.engine.search.random_tree import RandomTree, tree_size
from tablas.engine.search.scores import PROVEN_MIN, WIN
from tablas.engine.search.trace import (
    ORDERS,
    Node,
    Order,
    StaticValue,
    Trace,
    Tree,
    build_tree,
    count_nodes,
    player_to_act,
    search,
)

RANDOM = "random"
ALGORITHMS = ("minimax", "alphabeta")
DEFAULT_ALGORITHM = "alphabeta"
DEFAULT_ORDER: Order = "left"
DEFAULT_MAX_NODES = 5000
MAX_DEPTH = 30
# Depth when none is given: three plies show a MAX, a MIN and a MAX level; a game with dice
# has 21 rolls below every chance node, so one ply (each roll and its plays) is already wide.
DEFAULT_DEPTH = 3
DEFAULT_DEPTH_WITH_DICE = 1
DEFAULT_BRANCHING = 3
MAX_BRANCHING = 100
DEFAULT_SEED = 0
MAX_SEED = 2**32 - 1
# How far a refused tree is counted, in multiples of --max-nodes, to say how large it is.
COUNT_BEYOND = 4
QUERY_PARAMETERS = ("game", "position", "dice", "algorithm", "depth", "order", "branching", "seed")


# --- per game: what the engine knows about its positions ---------------------------------------


def terminal_value(game: Game[Any, Any], outcome: Outcome, plies: int, root_player: int) -> int:
    """The value of a finished game for ``root_player``: see the module docstring."""
    if outcome.winner is None:
        return 0
    v = outcome.points if game.has_chance else WIN - plies
    return v if outcome.winner == root_player else -v


def game_static(game: Game[Any, Any], root_player: int) -> StaticValue:
    """The leaf values of a game's tree, from ``root_player``'s point of view."""
    evaluate = profile(game.id).evaluate_seat0
    sign = 1 if root_player == 0 else -1

    def static(state: Any, plies: int) -> float:
        out = game.outcome(state)
        if out is not None:
            return terminal_value(game, out, plies, root_player)
        return 0 if evaluate is None else sign * evaluate(state)

    return static


# --- the explanation ---------------------------------------------------------------------------


@dataclass(slots=True)
class Explanation:
    """One searched tree and what to call it; write it with :func:`to_json`, :func:`to_dot`
    or :func:`to_text`."""

    game: str
    position: str | None
    algorithm: str
    order: Order
    depth: int
    title: str
    tree: Tree
    trace: Trace


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise InvalidInputError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _check_range(name: str, value: int, lo: int, hi: int) -> int:
    if not lo <= value <= hi:
        raise InvalidInputError(f"{name} must be an integer from {lo} to {hi}, got {value}")
    return value


def _check_order(order: str) -> Order:
    for o in ORDERS:
        if o == order:
            return o
    raise InvalidInputError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")


def _too_large(
    what: str, depth: int, count: int | None, limit: int, max_nodes: int
) -> InvalidInputError:
    size = f"{count}" if count is not None else f"over {limit}"
    return InvalidInputError(
        f"{what} at depth {depth} has {size} nodes, more than --max-nodes {max_nodes}: "
        f"lower --depth"
    )


def explain(
    game_id: str,
    position: str | None = None,
    dice: str | None = None,
    algorithm: str = DEFAULT_ALGORITHM,
    depth: int | None = None,
    order: str = DEFAULT_ORDER,
    branching: int | None = None,
    seed: int | None = None,
    max_nodes: int = DEFAULT_MAX_NODES,
) -> Explanation:
    """Builds and searches the tree the parameters describe (the command line's, typed), or
    raises :class:`InvalidInputError` naming the parameter that is wrong; then write it out."""
    _check_choice("algorithm", algorithm, ALGORITHMS)
    checked_order = _check_order(order)
    _check_range("--max-nodes", max_nodes, 1, 10**9)
    if depth is not None:
        _check_range("depth", depth, 1, MAX_DEPTH)
    if game_id == RANDOM:
        if position is not None or dice is not None:
            raise InvalidInputError("random tree: takes no position or dice, only "
                                    "branching, depth and seed")
        b = _check_range("branching", DEFAULT_BRANCHING if branching is None else branching,
                         1, MAX_BRANCHING)
        d = DEFAULT_DEPTH if depth is None else depth
        s = _check_range("seed", DEFAULT_SEED if seed is None else seed, 0, MAX_SEED)
        title = f"random tree, branching {b}, depth {d}, seed {s}"
        n = tree_size(b, d)
        if n > max_nodes:
            raise _too_large(f"the random tree with branching {b}", d, n, n, max_nodes)
        rt = RandomTree(b, d, s)
        tree = build_tree(rt, rt.initial(), d, lambda st, _plies: rt.leaf_value(st), 0)
        text = None
    else:
        if game_id not in GAME_IDS:
            raise InvalidInputError(
                f"unknown game {game_id!r}; explain knows: {RANDOM}, {', '.join(GAME_IDS)}"
            )
        if branching is not None or seed is not None:
            raise InvalidInputError(f"{game_id}: branching and seed are for the random tree only")
        game = get_game(game_id)
        if position is None:
            position = game.position_text(game.initial())
        state = position_state(game, position, dice, before_roll=True)
        text = game.position_text(state)
        normalize = profile(game.id).normalize
        root_player = player_to_act(game, state, normalize)
        if game.outcome(state) is not None or root_player is None:
            raise InvalidInputError(
                f"{game_id}: position {position!r} is over; there is no move to search"
            )
        d = depth if depth is not None else (
            DEFAULT_DEPTH_WITH_DICE if game.has_chance else DEFAULT_DEPTH
        )
        rolled = f" with dice {dice}" if dice is not None else ""
        title = f"{game_id} {text!r}{rolled}, depth {d}"
        limit = max_nodes * COUNT_BEYOND
        n_or_none = count_nodes(game, state, d, limit, normalize)
        if n_or_none is None or n_or_none > max_nodes:
            raise _too_large(f"{game_id} position {text!r}{rolled}", d, n_or_none, limit, max_nodes)
        tree = build_tree(game, state, d, game_static(game, root_player), root_player, normalize)
    trace = search(tree, alphabeta=algorithm == "alphabeta", order=checked_order)
    return Explanation(game_id, text, algorithm, checked_order, d, title, tree, trace)


# A number in a query is at most this many digits, checked before it is converted: Python's
# int() of a long text costs time quadratic in its length and refuses one past 4300 digits
# (ValueError), and no parameter here needs more than 10.
MAX_QUERY_DIGITS = 12
# The range of each numeric parameter of the query, checked before anything is built.
QUERY_RANGES = {"depth": (1, MAX_DEPTH), "branching": (1, MAX_BRANCHING), "seed": (0, MAX_SEED)}


def _query_int(params: Mapping[str, str], name: str) -> int | None:
    text = params.get(name)
    if text is None:
        return None
    t = text.strip()
    digits = t[1:] if t[:1] == "-" else t
    if not (digits.isascii() and digits.isdigit()):
        raise InvalidInputError(f"{name} must be an integer, got {text[:40]!r}")
    if len(digits) > MAX_QUERY_DIGITS:
        raise InvalidInputError(f"{name} must be an integer of at most {MAX_QUERY_DIGITS} "
                                f"digits, got {len(digits)} digits")
    return _check_range(name, int(t), *QUERY_RANGES[name])


def query_arguments(params: Mapping[str, str]) -> dict[str, Any]:
    """:func:`explain`'s arguments from the HTTP query's parameters, by name and as strings,
    each checked (names known, numbers short and in range) without building anything, so
    that a server can refuse a bad query at once; anything wrong raises
    :class:`InvalidInputError`, for a 400 answer."""
    unknown = sorted(set(params) - set(QUERY_PARAMETERS))
    if unknown:
        raise InvalidInputError(
            f"unknown parameter(s) {', '.join(repr(u[:40]) for u in unknown)}; "
            f"known: {', '.join(QUERY_PARAMETERS)}"
        )
    if "game" not in params:
        raise InvalidInputError(f"parameter 'game' is missing: {RANDOM}, {', '.join(GAME_IDS)}")
    return {
        "game_id": params["game"],
        "position": params.get("position"),
        "dice": params.get("dice"),
        "algorithm": params.get("algorithm", DEFAULT_ALGORITHM),
        "depth": _query_int(params, "depth"),
        "order": params.get("order", DEFAULT_ORDER),
        "branching": _query_int(params, "branching"),
        "seed": _query_int(params, "seed"),
    }


def explain_query(params: Mapping[str, str]) -> JSON:
    """The contract's JSON for the HTTP query's parameters (:func:`query_arguments`)."""
    return to_json(explain(**query_arguments(params)))


# --- writing it out ----------------------------------------------------------------------------


def _bound(x: float | None) -> float | None:
    return None if x is None or math.isinf(x) else x


def best_move_text(e: Explanation) -> str | None:
    """The root's best move, or ``None`` when the root is a roll of the dice."""
    root = e.tree.root
    if root.kind not in ("max", "min"):
        return None
    b = e.trace.best_child[root.id]
    return None if b is None else e.tree.nodes[b].move_text


def to_json(e: Explanation) -> JSON:
    """The contract's object: the tree, children in the order the search tried them."""
    t = e.trace

    def node(n: Node) -> JSON:
        return {
            "id": n.id,
            "move_text": n.move_text,
            "kind": n.kind,
            "static": n.static,
            "probability": n.probability,
            "alpha": _bound(t.alpha[n.id]),
            "beta": _bound(t.beta[n.id]),
            "value": t.value[n.id],
            "visit": t.visit[n.id],
            "best": t.best[n.id],
            "children": [node(c) for c in t.children[n.id]],
        }

    return {
        "game": e.game,
        "position": e.position,
        "algorithm": e.algorithm,
        "order": e.order,
        "depth": e.depth,
        "value": t.root_value,
        "best_move_text": best_move_text(e),
        "visited": t.visited,
        "root": node(e.tree.root),
        # Additive: how to tell a proof from its value (a page writes W3 for a win in 3), or
        # null where no value is one (a random tree, a game with dice: points at the end).
        "proof": None if e.game == RANDOM or get_game(e.game).has_chance
        else {"win": WIN, "proven_min": PROVEN_MIN},
    }


def value_text(v: float | None) -> str:
    """A value as the page writes it: ``W3``/``L3`` for a game won or lost in 3 plies, integers
    as they are, other numbers to 3 decimals."""
    if v is None:
        return "·"
    if math.isinf(v):
        return "+∞" if v > 0 else "-∞"
    if abs(v) >= PROVEN_MIN:
        return f"{'W' if v > 0 else 'L'}{WIN - abs(int(v))}"
    if float(v).is_integer():
        return str(int(v))
    return f"{v:.3f}".rstrip("0").rstrip(".")


def _summary(e: Explanation) -> str:
    t, n = e.trace, len(e.tree.nodes)
    best = best_move_text(e)
    move = f", best move {best}" if best is not None else ""
    return (
        f"{e.algorithm}, order {e.order}: value {value_text(t.root_value)}{move}; "
        f"visited {t.visited} of {n} nodes ({n - t.visited} pruned)"
    )


_SYMBOL = {"max": "▲", "min": "▼", "chance": "○", "leaf": "□"}


def to_text(e: Explanation) -> str:
    """An indented tree, one node a line: edge, kind, value, visit number, window, and the
    marks ``*`` (principal variation) and ``✂`` (children cut off here); then the counts."""
    t = e.trace
    lines = [e.title, _summary(e), ""]

    def line(n: Node, prefix: str, branch: str) -> None:
        edge = f"{n.move_text} " if n.move_text is not None else ""
        if n.probability is not None:
            edge += f"(p {n.probability:.4g}) "
        parts = [f"{prefix}{branch}{edge}{_SYMBOL[n.kind]} {n.kind}"]
        visit = t.visit[n.id]
        if visit is None:
            if n.static is not None:
                parts.append(f"static {value_text(n.static)}")
            parts.append("not visited")
        else:
            parts.append(f"= {value_text(t.value[n.id])}  #{visit}")
            if t.alphabeta:
                parts.append(f"[{value_text(t.alpha[n.id])}, {value_text(t.beta[n.id])}]")
        if t.cut[n.id]:
            skipped = sum(1 for c in t.children[n.id] if t.visit[c.id] is None)
            parts.append(f"✂ {skipped} cut off")
        if t.best[n.id]:
            parts.append("*")
        lines.append("  ".join(parts))
        kids = t.children[n.id]
        inner = prefix + ("" if not branch else "│  " if branch == "├─ " else "   ")
        for i, c in enumerate(kids):
            line(c, inner, "└─ " if i == len(kids) - 1 else "├─ ")

    line(e.tree.root, "", "")
    return "\n".join(lines)


def _dot_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


_SHAPE = {"max": "triangle", "min": "invtriangle", "chance": "circle", "leaf": "box"}


def to_dot(e: Explanation) -> str:
    """Graphviz DOT of the tree (``dot -Tsvg``): one node per tree node, named ``n<id>``,
    children left to right in the order searched; nodes never entered are grey and dashed,
    the principal variation is bold."""
    t = e.trace
    out = [
        "digraph explain {",
        f"  graph [ordering=out, label={_dot_string(e.title + chr(10) + _summary(e))}];",
        '  node [fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for n in e.tree.nodes:
        visit = t.visit[n.id]
        label = value_text(t.value[n.id] if visit is not None else n.static)
        if visit is not None:
            label += f"\n#{visit}"
        attrs = [f"label={_dot_string(label)}", f"shape={_SHAPE[n.kind]}"]
        if visit is None:
            attrs.append('style=dashed, color="gray60", fontcolor="gray60"')
        if t.best[n.id]:
            attrs.append("penwidth=2.5")
        out.append(f"  n{n.id} [{', '.join(attrs)}];")
    for n in e.tree.nodes:
        for c in t.children[n.id]:
            text = c.move_text or ""
            if c.probability is not None:
                text += f" ({c.probability:.3g})"
            attrs = [f"label={_dot_string(text)}"]
            if t.visit[c.id] is None:
                attrs.append('style=dashed, color="gray60"')
            if t.best[c.id] and t.best[n.id]:
                attrs.append("penwidth=2.5")
            out.append(f"  n{n.id} -> n{c.id} [{', '.join(attrs)}];")
    out.append("}")
    return "\n".join(out) + "\n"
