"""Collection settings for the whole checkout (``tests/`` and the doctests under ``src/``).

A module's doctests that import an optional dependency (torch: the ``torch`` extra, which a plain
machine may leave out to avoid PyTorch's CUDA build) are skipped, saying why, when it is not
installed, as the tests of that dependency skip (``pytest.importorskip``).
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import pytest

#: Module file -> the optional package its doctests import.
OPTIONAL_DOCTESTS = {"rankflavor/training/torch.py": "torch"}


def _installed(name: str) -> bool:
    if name in sys.modules:
        return sys.modules[name] is not None
    return importlib.util.find_spec(name) is not None


def pytest_collection_modifyitems(config: Any, items: list[pytest.Item]) -> None:
    for item in items:
        if not isinstance(item, pytest.DoctestItem):
            continue
        path = str(item.path).replace("\\", "/")
        for module, package in OPTIONAL_DOCTESTS.items():
            if path.endswith(module) and not _installed(package):
                item.add_marker(pytest.mark.skip(reason=f"{package} is not installed (the `{package}` extra; "
                                                        "README: Set-up)"))
