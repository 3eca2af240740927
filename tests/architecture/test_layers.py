"""The house's floors: every package of ``src/rankflavor`` stands on a layer, and an import may only
go down (issue 38).

A module may import its own package and the packages of lower layers, never a higher layer and
never another package of its own layer. Every import counts: at module level, inside a function
(deferred to dodge a cycle is still an arrow) and under ``if TYPE_CHECKING:`` (a reader follows
an annotation too). ``rankflavor/__init__.py`` is the public face that lazily names what the
layers export; it stands above them all and is not checked. A package under ``analysis/`` is a
unit of its own (``analysis.spread``), so capabilities are layered among themselves.

Also here, the house rules a reader checks from the tree: at most 8 modules at the top, no module
over 500 lines, and no package importing another package's private names.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .test_imports import PACKAGE, import_graph, module_names

#: Bottom to top. Units of one tuple are independent of each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("_version", "errors"),  # leaves
    ("base",),  # threads, progress, memory pages, provenance of files, non-finite numbers, kernels
    ("flavor",),  # the knob table and the Flavor: what a number means
    ("io",),  # every byte read: formats, label sources, the run stream, result documents
    ("align", "raters", "clicks", "judge", "stats"),  # judgments joined to runs; judgments made; tests
    ("order",),  # the one place that sorts
    ("metrics",),  # the registry, Measure, gains and every metric's kernel
    ("presets",),  # named flavors and named grade scales
    ("engine",),  # plan, aggregate, results, chunked evaluation, merge, evaluate()
    ("training", "history", "analysis.judgments", "analysis.check"),
    ("spark",),  # the same engine on Spark partitions (judgments and check included)
    ("analysis.spread",),  # one measure under a grid of flavors (local or on Spark)
    ("analysis.explain", "analysis.diff", "analysis.identify", "analysis.estimate", "analysis.compare"),
    ("report",),  # the HTML report's model and charts
    ("render",),  # every text, table and notebook rendering
    ("project",),  # rankflavor.toml, gate, advisor
    ("trackers",),  # MLflow, Weights & Biases
    ("cli",),
    ("lightgbm", "xgboost", "torch", "__main__"),  # public faces and the -m entry
)

#: The public faces at the top of the package (``import rankflavor.lightgbm``) and the package's own files.
TOP_MODULES_LIMIT = 8
LINES_LIMIT = 500


def unit_of(module: str) -> str | None:
    """The layered unit of a dotted module name; None for the package root and for ``analysis``
    itself (a namespace: its ``__init__`` holds a docstring and imports nothing)."""
    parts = module.split(".")[1:]
    if not parts or parts == ["analysis"]:
        return None
    if parts[0] == "analysis" and len(parts) > 1:
        return "analysis." + parts[1]
    return parts[0]


def climbing(graph: dict[str, set[str]], layers: tuple[tuple[str, ...], ...]) -> list[str]:
    """``importer -> imported`` for each import that does not go down a layer (own unit excepted),
    and ``unit: no layer`` for a unit the table does not place."""
    floor = {unit: i for i, units in enumerate(layers) for unit in units}
    bad: list[str] = []
    for module in sorted(graph):
        a = unit_of(module)
        if a is None:
            continue
        if a not in floor:
            bad.append(f"{a}: no layer ({module})")
            continue
        for target in sorted(graph[module]):
            b = unit_of(target)
            if b is None or b == a:
                continue
            if b not in floor or floor[b] >= floor[a]:
                bad.append(f"{module} -> {target}")
    return bad


def test_every_import_goes_down_a_layer() -> None:
    graph = import_graph(PACKAGE, type_only=True)
    assert "rankflavor.engine.plan" in graph["rankflavor.engine.evaluate"]  # the graph was read
    assert climbing(graph, LAYERS) == []


def test_the_layer_check_sees_a_climb_a_sideways_import_and_an_unplaced_package() -> None:
    graph = {
        "rankflavor": {"rankflavor.cli.main"},  # the root: not checked
        "rankflavor.io.run": {"rankflavor.engine.plan", "rankflavor.io.tables", "rankflavor.base.threads"},
        "rankflavor.raters.rules": {"rankflavor.stats.multiple"},  # the same layer
        "rankflavor.analysis.spread.api": {"rankflavor.analysis.compare.result"},  # capabilities layered too
        "rankflavor.newthing.x": set(),
    }
    assert climbing(graph, LAYERS) == [
        "rankflavor.analysis.spread.api -> rankflavor.analysis.compare.result",
        "rankflavor.io.run -> rankflavor.engine.plan",
        "newthing: no layer (rankflavor.newthing.x)",
        "rankflavor.raters.rules -> rankflavor.stats.multiple",
    ]


def test_the_analysis_namespace_imports_nothing() -> None:
    assert import_graph(PACKAGE, type_only=True)["rankflavor.analysis"] == set()


def test_every_layered_unit_exists() -> None:
    units = {unit_of(m) for m in module_names(PACKAGE)} - {None}
    placed = {u for layer in LAYERS for u in layer}
    assert placed - units == set(), "layers name packages that are gone"


def test_at_most_eight_modules_at_the_top() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= TOP_MODULES_LIMIT, top


def test_no_module_is_over_500_lines() -> None:
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > LINES_LIMIT}
    assert long == {}


def private_imports(package: Path) -> list[str]:
    """``importer: name from module`` for each private name (``_x``, or a ``_x`` module) one unit
    imports from another's modules."""
    out = []
    for module, path in module_names(package).items():
        here = unit_of(module)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level or not (node.module or "").startswith("rankflavor"):
                continue
            there = unit_of(node.module or "")
            if there is None or there == here:
                continue
            private_module = any(p.startswith("_") and p != "_version" for p in (node.module or "").split("."))
            for alias in node.names:
                if private_module or (alias.name.startswith("_") and not alias.name.startswith("__")):
                    out.append(f"{module}: {alias.name} from {node.module}")
    return sorted(out)


def test_no_package_imports_another_packages_private_names(tmp_path: Path) -> None:
    assert private_imports(PACKAGE) == []
    pkg = tmp_path / "rankflavor"
    (pkg / "io").mkdir(parents=True)
    (pkg / "engine").mkdir()
    for name, text in {"__init__.py": "", "io/__init__.py": "", "engine/__init__.py": "",
                       "io/run.py": "from rankflavor.io.tables import _own\n",
                       "engine/plan.py": "from rankflavor.io.run import _hidden, public\n"}.items():
        (pkg / name).write_text(text)
    assert private_imports(pkg) == ["rankflavor.engine.plan: _hidden from rankflavor.io.run"]
