"""The list of equivalent mutants (bench/mutation_equivalent*.toml) names code that exists.

An entry names a survivor by module path and function; when code moves or is rewritten, an entry
left behind matches nothing, and the equivalent mutant it stood for would fail the next mutation
run as a "missing test" (the house move left 24 such entries). Each entry's path must match a
module of src/, and its function a function, method or class of it (``<module>``: module-level code).
"""

from __future__ import annotations

import ast
import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def defined(module: Path) -> set[str]:
    """Names a survivor's ``function`` can take in ``module``: functions, classes, Class.method."""
    tree = ast.parse(module.read_text())
    names = {"<module>"}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            names |= {f"{node.name}.{n.name}" for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return names


def test_every_equivalent_mutant_names_existing_code() -> None:
    files = [ROOT / "bench" / "mutation_equivalent.toml", *sorted((ROOT / "bench" / "mutation_equivalent").glob("*.toml"))]
    stale = []
    count = 0
    for file in files:
        for entry in tomllib.loads(file.read_text()).get("mutant", []):
            count += 1
            modules = sorted((ROOT / "src").glob(entry["path"]))
            if not modules:
                stale.append(f"{file.name}: {entry['path']}: no such module")
                continue
            function = entry.get("function")
            if function is not None and not any(fnmatch.fnmatch(n, function) for m in modules for n in defined(m)):
                stale.append(f"{file.name}: {entry['path']}: no {function}")
    assert count > 100  # the list was read
    assert stale == []
