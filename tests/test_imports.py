"""The layers hold: no import cycles among trove's modules, and the indexer never imports
the query side."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("indexer", "query")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(p): p
        for top in PACKAGES
        for p in (REPO / top).rglob("*.py")
        if "__pycache__" not in p.parts
    }


def _imports_at_load(path: Path, modules: dict[str, Path]) -> set[str]:
    """The trove modules ``path`` imports when it is loaded: top-level imports, not those
    under ``if TYPE_CHECKING`` or inside functions. ``from a import b`` is an import of
    ``a.b`` when that is a module, else of ``a``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in modules else node.module)
    return {name for name in found if name in modules}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports_at_load(path, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_no_module_imports_itself_through_others() -> None:
    graph = _graph()
    # A package's __init__ re-exports its modules; a module importing a sibling through
    # the package name is the one edge back that Python resolves: count it as the sibling.
    for name, deps in graph.items():
        graph[name] = {d for d in deps if not name.startswith(d + ".")}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_indexer_never_imports_the_query_side() -> None:
    graph = _graph()
    upward = {
        name: sorted(d for d in deps if d.startswith("query"))
        for name, deps in graph.items()
        if name.startswith("indexer")
    }
    assert {n: d for n, d in upward.items() if d} == {}
