"""Rules of the test suite itself, read from its source (``ast``).

``conftest.shared_path`` skips the calling test when ``../shared/data`` is absent; called at a
module's top level it runs at collection, where a skip is an error that stops the whole run (as
``tests/engine/test_eval_scale_raters.py`` once did in a clone without the data).
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]  # tests/, whose folders mirror src/rankflavor/


def top_level_calls(tree: ast.Module, name: str) -> list[int]:
    """Lines of the calls to ``name`` that run when the module is imported (not inside a
    function, a lambda or a class's method)."""
    found: list[int] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
            found.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def test_no_module_reads_the_shared_data_at_import() -> None:
    offenders = {path.name: lines for path in sorted(TESTS.rglob("*.py"))
                 if (lines := top_level_calls(ast.parse(path.read_text()), "shared_path"))}
    assert not offenders, f"shared_path called at import (call it inside the test): {offenders}"


def test_only_conftest_spells_the_shared_data_path() -> None:
    # One place builds ../shared/data (conftest.SHARED); a module that builds its own skips by
    # its own rules, or not at all (tests/render/test_render_terminal.py once failed without the data).
    spelled = {path.name for path in sorted(TESTS.rglob("*.py")) if path.name not in ("conftest.py", Path(__file__).name)
               and any(isinstance(node, ast.Constant) and node.value == "shared"
                       for node in ast.walk(ast.parse(path.read_text())))}
    assert not spelled, f"use conftest.SHARED or shared_path: {sorted(spelled)}"


def test_the_rule_sees_a_top_level_call() -> None:
    tree = ast.parse("X = shared_path('a')\ndef f():\n    return shared_path('b')\n")
    assert top_level_calls(tree, "shared_path") == [1]
