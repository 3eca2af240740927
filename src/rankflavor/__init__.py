"""rankflavor: offline search-relevance evaluation where every number names its flavor.

Public API (imported lazily so ``import rankflavor`` stays cheap)::

    evaluate(qrels, run, metrics, preset=None, **knobs) -> Results
    Flavor, Measure, parse_measure, KNOBS
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "KNOBS",
    "EvaluationError",
    "Flavor",
    "FlavorError",
    "InputError",
    "Measure",
    "RankflavorError",
    "Results",
    "UsageError",
    "evaluate",
    "parse_measure",
    "read_qrels",
    "read_run",
]

_LAZY = {
    "evaluate": ("rankflavor.evaluate", "evaluate"),
    "Results": ("rankflavor.results", "Results"),
    "Flavor": ("rankflavor.flavor", "Flavor"),
    "KNOBS": ("rankflavor.flavor", "KNOBS"),
    "Measure": ("rankflavor.measure", "Measure"),
    "parse_measure": ("rankflavor.measure", "parse_measure"),
    "read_qrels": ("rankflavor.io.trec", "read_qrels"),
    "read_run": ("rankflavor.io.trec", "read_run"),
    "RankflavorError": ("rankflavor.errors", "RankflavorError"),
    "InputError": ("rankflavor.errors", "InputError"),
    "FlavorError": ("rankflavor.errors", "FlavorError"),
    "UsageError": ("rankflavor.errors", "UsageError"),
    "EvaluationError": ("rankflavor.errors", "EvaluationError"),
}

if TYPE_CHECKING:
    from .errors import EvaluationError, FlavorError, InputError, RankflavorError, UsageError
    from .evaluate import evaluate
    from .flavor import KNOBS, Flavor
    from .io.trec import read_qrels, read_run
    from .measure import Measure, parse_measure
    from .results import Results


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rankflavor' has no attribute {name!r}")
