"""A search that shows its work: minimax or alpha-beta over a small, complete game tree.

Two steps, so that the picture always shows the whole tree and what the search skipped:

1. :func:`build_tree` expands a position through the game protocol (``successors``,
   ``chance_outcomes``, ``apply_chance``) to a fixed depth in plies, numbering the nodes in the
   order the game generates them; a chance node (a roll of the dice) is not a ply. Every leaf
   gets its static value, from the root player's point of view. :func:`count_nodes` counts the
   same tree first, so a caller refuses a tree too large to draw before building it.
2. :func:`search` walks that tree once, as plain minimax or as alpha-beta (one function, a
   flag), and records for every node the order it was entered, the α/β window it was entered
   with, the value it returned and whether it cut off its remaining children.

Values are from the root player's point of view: the root player maximises (MAX), the other
side minimises (MIN). Alpha-beta is fail-soft (a node returns the best value it saw, which may
lie outside its window) and cuts as soon as α ≥ β. A chance node's value is the
probability-weighted sum of its children's; its children are searched with a full window, so a
chance node never prunes and always returns its exact value.

Child orders: ``left`` (as generated), ``right`` (the reverse), and two teaching devices,
``best`` and ``worst``: each decision node's children sorted by their exact minimax value for
the player to move there (best first, or worst first), found by a plain minimax of the whole
tree beforehand, which is not counted. Ties keep the generated order, and a chance node keeps
its children as generated under ``best`` and ``worst`` (the order of rolls cannot matter to a
search that cannot prune there).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tablas.engine.core import Outcome

Kind = Literal["max", "min", "chance", "leaf"]
Order = Literal["left", "right", "best", "worst"]
ORDERS: tuple[Order, ...] = ("left", "right", "best", "worst")


class TreeGame(Protocol):
    """The part of the game protocol (:class:`tablas.engine.core.Game`) the tree is built from; any
    object with these methods can be drawn and searched, a random tree included."""

    def to_move(self, state: Any) -> int | None: ...

    def outcome(self, state: Any) -> Outcome | None: ...

    def successors(self, state: Any) -> list[tuple[Any, Any]]: ...

    def is_chance(self, state: Any) -> bool: ...

    def chance_outcomes(self, state: Any) -> Sequence[tuple[Any, float]]: ...

    def apply_chance(self, state: Any, outcome: Any) -> Any: ...

    def move_text(self, state: Any, move: Any) -> str: ...

    def chance_text(self, outcome: Any) -> str: ...


# A leaf's value from the root player's point of view, given the leaf's state and the number of
# decision plies from the root to it (a win sooner is worth more).
StaticValue = Callable[[Any, int], float]
# Applied to every state a move or a roll leads to, e.g. to skip a decision the lesson leaves
# out (backgammon's doubling cube).
Normalize = Callable[[Any], Any]


@dataclass(slots=True, eq=False)
class Node:
    """One position of the tree. ``id`` numbers the nodes in preorder of the generated order,
    so a node keeps its id whatever order a search tries the children in."""

    id: int
    move_text: str | None
    kind: Kind
    static: float | None = None
    probability: float | None = None
    children: list[Node] = field(default_factory=list)


@dataclass(slots=True)
class Tree:
    """A complete tree to a depth; ``nodes[i].id == i``."""

    root: Node
    nodes: list[Node]
    depth: int
    root_player: int


def player_to_act(game: TreeGame, state: Any, normalize: Normalize | None = None) -> int | None:
    """The seat whose decision the tree's root is about: the side to move, or at a chance root
    the side that moves after the roll; ``None`` when the game is over."""
    while game.is_chance(state):
        outcomes = game.chance_outcomes(state)
        if not outcomes:
            return None
        state = game.apply_chance(state, outcomes[0][0])
        if normalize is not None:
            state = normalize(state)
    return game.to_move(state)


def _expansion(
    game: TreeGame, state: Any, normalize: Normalize | None
) -> tuple[bool, list[tuple[str, float | None, Any]]]:
    """(is a chance node, [(edge text, probability, child state)]) of a non-terminal state."""
    if game.is_chance(state):
        out: list[tuple[str, float | None, Any]] = []
        for roll, p in game.chance_outcomes(state):
            child = game.apply_chance(state, roll)
            out.append((game.chance_text(roll), p, normalize(child) if normalize else child))
        return True, out
    return False, [
        (game.move_text(state, m), None, normalize(child) if normalize else child)
        for m, child in game.successors(state)
    ]


def count_nodes(
    game: TreeGame, state: Any, depth: int, limit: int, normalize: Normalize | None = None
) -> int | None:
    """The number of nodes :func:`build_tree` would make, or ``None`` as soon as it passes
    ``limit`` (the count stops there: a huge tree is not walked to be refused)."""
    n = 0

    def walk(s: Any, left: int) -> bool:
        nonlocal n
        n += 1
        if n > limit:
            return False
        if left == 0 or game.outcome(s) is not None:
            return True
        chance, children = _expansion(game, s, normalize)
        return all(walk(c, left if chance else left - 1) for _, _, c in children)

    return n if walk(state, depth) else None


def build_tree(
    game: TreeGame,
    state: Any,
    depth: int,
    static: StaticValue,
    root_player: int,
    normalize: Normalize | None = None,
) -> Tree:
    """The whole tree below ``state`` to ``depth`` plies (check its size with
    :func:`count_nodes` first); then :func:`search` it, as often as there are variants."""
    nodes: list[Node] = []

    def make(s: Any, text: str | None, p: float | None, left: int, plies: int) -> Node:
        node = Node(len(nodes), text, "leaf", probability=p)
        nodes.append(node)
        done = game.outcome(s) is not None
        if not done and left > 0:
            chance, children = _expansion(game, s, normalize)
            if children:
                node.kind = (
                    "chance" if chance else "max" if game.to_move(s) == root_player else "min"
                )
                step = 0 if chance else 1
                node.children = [
                    make(c, t, q, left - step, plies + step) for t, q, c in children
                ]
                return node
        node.static = static(s, plies)
        return node

    root = make(state, None, None, depth, 0)
    return Tree(root, nodes, depth, root_player)


@dataclass(slots=True)
class Trace:
    """What one search did, per node id. ``visit`` numbers the nodes in the order the search
    entered them (from 1; ``None``: never entered); ``alpha``/``beta`` is the window a node was
    entered with (alpha-beta only; ``±inf`` for an open bound); ``value`` what it returned;
    ``order`` the children in the order they were (or would have been) tried; ``cut`` whether
    the node stopped before its last child; ``best`` the principal variation."""

    alphabeta: bool
    order: Order
    visit: list[int | None]
    alpha: list[float | None]
    beta: list[float | None]
    value: list[float | None]
    best_child: list[int | None]
    cut: list[bool]
    children: list[list[Node]]
    best: list[bool]
    visited: int

    @property
    def root_value(self) -> float:
        v = self.value[0]
        assert v is not None
        return v


def _ordered(node: Node, order: Order, exact: list[float | None] | None) -> list[Node]:
    if order == "left":
        return node.children
    if order == "right":
        return node.children[::-1]
    if node.kind == "chance":
        return node.children
    assert exact is not None
    # The player to move's best first: MAX wants the highest value, MIN the lowest.
    sign = 1.0 if (node.kind == "max") == (order == "best") else -1.0

    def key(c: Node) -> float:
        v = exact[c.id]
        assert v is not None
        return -sign * v

    return sorted(node.children, key=key)


def search(tree: Tree, *, alphabeta: bool, order: Order = "left") -> Trace:
    """Minimax (``alphabeta=False``) or fail-soft alpha-beta over ``tree``, recording the walk;
    read the :class:`Trace` per node id."""
    n = len(tree.nodes)
    exact = None
    if order in ("best", "worst"):
        exact = search(tree, alphabeta=False, order="left").value
    t = Trace(
        alphabeta=alphabeta,
        order=order,
        visit=[None] * n,
        alpha=[None] * n,
        beta=[None] * n,
        value=[None] * n,
        best_child=[None] * n,
        cut=[False] * n,
        children=[_ordered(node, order, exact) for node in tree.nodes],
        best=[False] * n,
        visited=0,
    )

    def enter(node: Node, alpha: float, beta: float) -> float:
        t.visited += 1
        t.visit[node.id] = t.visited
        if alphabeta:
            t.alpha[node.id], t.beta[node.id] = alpha, beta
        children = t.children[node.id]
        if node.kind == "leaf":
            assert node.static is not None
            v = node.static
        elif node.kind == "chance":
            # A full window below a chance node: its value is then exact, and a weighted sum
            # of exact values is the only thing a parent may compare with its own window.
            v = 0.0
            for c in children:
                assert c.probability is not None
                v += c.probability * enter(c, -math.inf, math.inf)
        else:
            maximize = node.kind == "max"
            v = -math.inf if maximize else math.inf
            for i, c in enumerate(children):
                cv = enter(c, alpha, beta)
                if cv > v if maximize else cv < v:
                    v = cv
                    t.best_child[node.id] = c.id
                if not alphabeta:
                    continue
                if maximize:
                    alpha = max(alpha, v)
                else:
                    beta = min(beta, v)
                if alpha >= beta:
                    t.cut[node.id] = i + 1 < len(children)
                    break
        t.value[node.id] = v
        return v

    enter(tree.root, -math.inf, math.inf)
    _mark_best(tree.root, t)
    return t


def _mark_best(node: Node, t: Trace) -> None:
    """The principal variation: from the root, each decision's best child; below a chance node
    every roll's, since the best reply to each roll is part of the plan."""
    t.best[node.id] = True
    if node.kind == "chance":
        for c in node.children:
            _mark_best(c, t)
    elif node.kind != "leaf":
        b = t.best_child[node.id]
        if b is not None:
            _mark_best(next(c for c in node.children if c.id == b), t)
