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
    """The import name of a file of the repository's ``engine/`` or ``server/``: under the
    package ``tablas`` (``engine/core.py`` is ``tablas.engine.core``)."""
    parts = ["tablas", *path.relative_to(ROOT).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def engine_modules(package: str = PACKAGE) -> dict[str, Path]:
    return {module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}


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


def import_graph(package: str = PACKAGE) -> dict[str, set[str]]:
    modules = engine_modules(package)
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
    # from tablas.engine.core import Game
    assert "tablas.engine.core" in graph["tablas.engine.games.tictactoe"]
    # from tablas.engine.search import evals
    assert "tablas.engine.search.evals" in graph["tablas.engine.search.profiles"]
    # importlib.import_module, by name
    assert "tablas.engine.games.boom" in graph["tablas.engine.games"]


def test_the_engine_has_no_import_circle() -> None:
    found = circles(import_graph())
    assert not found, "import circles in engine/: " + "; ".join(
        " <-> ".join(c) for c in found)


def test_the_server_has_no_import_circle() -> None:
    """server/ is layers too (docs/architecture.md's arrows), lazy and type-only imports
    counted: what a lower part tells a higher one goes through an interface it is given."""
    found = circles(import_graph("server"))
    assert not found, "import circles in server/: " + "; ".join(
        " <-> ".join(c) for c in found)


def test_code_imports_the_package_by_its_one_name() -> None:
    """Every import of the shipped code says ``tablas.server`` / ``tablas.engine``: a bare
    ``server`` or ``engine`` would load the same files a second time, as other modules (the
    repository's top level is on the tests' path), with classes that are not the same."""
    bare = []
    for folder in ("engine", "server", "tests", "tools"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom)
                         and not node.level else [])
                bare += [f"{path.relative_to(ROOT)}:{node.lineno}: {n}" for n in names
                         if n.split(".")[0] in ("server", "engine")]
    assert not bare, "bare imports: " + "; ".join(bare)


def test_the_wheel_lists_every_package() -> None:
    """pyproject's explicit package list (setuptools maps the top-level folders under
    ``tablas``) names every folder of code: a new subpackage left out would be missing from
    the wheel while the editable install still finds it."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    folders = {module_name(p) for top in ("engine", "server")
               for p in (ROOT / top).rglob("__init__.py")}
    assert folders <= listed, f"not in pyproject's packages: {sorted(folders - listed)}"
    assert listed - folders == {"tablas.client", "tablas.migrations"}


def test_no_class_in_the_server_grows_past_350_lines() -> None:
    """A class that does one job stays small (docs/architecture.md): past 350 lines it is
    doing two, and the second goes to a part of its own."""
    big = []
    for path in sorted((ROOT / "server").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > 350:
                    big.append(f"{path.relative_to(ROOT)}: {node.name} ({lines} lines)")
    assert not big, "; ".join(big)
