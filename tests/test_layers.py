"""engine/ is layers, not a circle: no module of it imports, at any depth, one that imports
it back. Every import counts, at the top of a module or inside a function (a lazy import is
still a dependency), and under ``TYPE_CHECKING`` too (a type is one); so does a module named
as text in a module that loads modules by name (the registry's ``importlib``)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "engine"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def engine_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((ROOT / PACKAGE).rglob("*.py"))}


def imports_of(name: str, path: Path, modules: set[str]) -> set[str]:
    """The engine modules that the module ``name`` (at ``path``) imports anywhere in it."""
    is_package = path.name == "__init__.py"
    source = path.read_text(encoding="utf-8")
    by_name = "import_module" in source
    found: set[str] = set()
    for node in ast.walk(ast.parse(source, str(path))):
        if by_name and isinstance(node, ast.Constant) and isinstance(node.value, str):
            targets = [node.value]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package, up level - 1 more
                package = name.split(".") if is_package else name.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, *([base] if base else [])])
            # ``from a.b import c`` imports the module a.b.c if there is one, else names of a.b
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                       for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules and t != name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = engine_modules()
    return {name: imports_of(name, path, set(modules)) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, or of one that imports
    itself (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_checker_sees_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert sorted(circles(graph)) == [["a", "b", "c"], ["e"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_checker_reads_every_kind_of_import() -> None:
    graph = import_graph()
    assert "engine.core" in graph["engine.games.tictactoe"]  # from engine.core import Game
    assert "engine.search.evals" in graph["engine.search.profiles"]  # from engine.search import
    assert "engine.games.boom" in graph["engine.games"]  # importlib.import_module, by name


def test_the_engine_has_no_import_circle() -> None:
    found = circles(import_graph())
    assert not found, "import circles in engine/: " + "; ".join(
        " <-> ".join(c) for c in found)
