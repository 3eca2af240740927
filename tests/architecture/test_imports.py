"""The ``rankflavor`` package's import graph has no cycle.

The graph is read from the source (``ast``), not from ``sys.modules``: every ``import`` and
``from ... import`` counts, at module level and inside functions (an import deferred into a
function only to dodge a cycle is still a cycle), except those under ``if TYPE_CHECKING:``
(annotations only, never executed). Relative imports are resolved against the importing module's
package; importing ``a.b.c`` also runs ``a/__init__.py`` and ``a/b/__init__.py``, so it depends on
those packages too (not on the importer's own packages, which are being initialised already).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "rankflavor"

#: Cycles known to remain, each as the sorted modules of one strongly connected component, that
#: run through modules being rewritten elsewhere (order, align, spread, chunked, spark, io).
#: Empty it as they go; a cycle not listed here fails, and so does a listed one that is gone.
KNOWN_CYCLES: list[list[str]] = []


def module_names(package: Path) -> dict[str, Path]:
    """``{dotted module name: file}`` for every ``.py`` file under ``package``."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported(name: str, path: Path, modules: dict[str, Path], type_only: bool = False) -> set[str]:
    """Modules of ``modules`` that importing module ``name`` (file ``path``) may execute; with
    ``type_only``, also those it imports under ``if TYPE_CHECKING:`` (for annotations only)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    root = name.split(".")[0]
    targets: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child) and not type_only:
                for other in child.orelse:
                    visit_node(other)
                continue
            visit_node(child)

    def visit_node(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:  # ``from pkg import module`` imports the module
                sub = f"{source}.{alias.name}"
                targets.add(sub if sub in modules else source)
        visit(node)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
    deps: set[str] = set()
    for target in targets:
        if target.split(".")[0] != root:
            continue
        parts = target.split(".")
        deps.update(p for p in (".".join(parts[:i]) for i in range(1, len(parts) + 1)) if p in modules and p not in own)
    return deps


def import_graph(package: Path, type_only: bool = False) -> dict[str, set[str]]:
    """``{module: the modules it imports}``; ``type_only`` counts ``if TYPE_CHECKING:`` imports too."""
    modules = module_names(package)
    return {name: imported(name, path, modules, type_only) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def a_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One cycle through ``component``'s first module, as ``[a, b, ..., a]``, to print."""
    members = set(component)
    start = component[0]
    paths = [[start]]
    seen = {start}
    while paths:
        path = paths.pop(0)
        for nxt in sorted(graph[path[-1]] & members):
            if nxt == start:
                return [*path, start]
            if nxt not in seen:
                seen.add(nxt)
                paths.append([*path, nxt])
    return component


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph(PACKAGE)
    assert "rankflavor.engine.plan" in graph and "rankflavor.metrics.registry" in graph["rankflavor.metrics.measure"]
    found = cycles(graph)
    new = [c for c in found if c not in KNOWN_CYCLES]
    gone = [c for c in KNOWN_CYCLES if c not in found]
    assert not new, "import cycle(s): " + "; ".join(" -> ".join(a_cycle(graph, c)) for c in new)
    assert not gone, f"listed in KNOWN_CYCLES but no longer a cycle, remove: {gone}"


def test_no_cycle_even_through_imports_for_annotations_only() -> None:
    """Issue 38: a type-only import is an arrow of the house too (a reader follows it to understand
    a signature), so no cycle may run through one either."""
    graph = import_graph(PACKAGE, type_only=True)
    found = cycles(graph)
    assert not found, "import cycle(s) through type-only imports: " + "; ".join(" -> ".join(a_cycle(graph, c))
                                                                             for c in found)


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """A package whose only cycle runs through an import deferred into a function."""
    pkg = tmp_path / "toy"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "def late():\n    from .sub import c\n    return c\n",
        "sub/__init__.py": "",
        "sub/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..d import X\nfrom .. import a\n",
        "d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import Y\nimport os\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    return pkg


def test_the_cycle_finder_sees_deferred_and_relative_imports_not_type_checking_ones(toy: Path) -> None:
    graph = import_graph(toy)
    assert graph["toy.b"] == {"toy.sub", "toy.sub.c"}  # inside a function, and the package it runs
    assert graph["toy.sub.c"] == {"toy.a"}  # ``from .. import a``; the TYPE_CHECKING import is left out
    assert graph["toy.d"] == set()
    found = cycles(graph)
    assert found == [["toy.a", "toy.b", "toy.sub.c"]]
    assert a_cycle(graph, found[0]) == ["toy.a", "toy.b", "toy.sub.c", "toy.a"]
    (toy / "b.py").write_text("def late():\n    return 1\n")
    assert cycles(import_graph(toy)) == []


def test_the_cycle_finder_counts_type_checking_imports_when_asked(toy: Path) -> None:
    graph = import_graph(toy, type_only=True)
    assert graph["toy.sub.c"] == {"toy.a", "toy.d"}  # the TYPE_CHECKING import counted
    assert graph["toy.d"] == {"toy.a"}
    assert cycles(graph) == [["toy.a", "toy.b", "toy.d", "toy.sub.c"]]
    (toy / "b.py").write_text("def late():\n    return 1\n")
    (toy / "a.py").write_text("from . import d\n")  # d imports a for annotations only
    assert cycles(import_graph(toy)) == []
    assert cycles(import_graph(toy, type_only=True)) == [["toy.a", "toy.d"]]
