"""rankflavor: offline search-relevance evaluation where every number names its flavor.

Public API (imported lazily so ``import rankflavor`` stays cheap)::

    evaluate(qrels, run, metrics, preset=None, **knobs) -> Results
    ndcg_score(y_true, y_score, k=None, preset="sklearn", ...) -> float   (scikit-learn style arrays)
    spread(qrels, runs, measure="ndcg@10", grid=None, presets=True) -> Spread
    explain(qrels, run, query, measure="ndcg@10") -> Explanation
    diff(qrels, run, a, b) -> Diff
    identify(qrels, run, value=None, measure="ndcg@10", per_query=None) -> Identification
    judgments(qrels, runs, metrics=["ndcg@10"], scale=None) -> Coverage
    bounds(qrels, run, metrics, scale=None) -> Bounds
    pool(runs, depth=10, qrels=None, budget=None, scale=None) -> Pool
    read_ratings(path) -> Ratings; aggregate_ratings(ratings, rule) -> Qrels; agreement(ratings) -> Agreement
    compare(qrels, runs, metrics, baseline=None, tests=..., correction=..., flavors=None) -> Comparison
    check(qrels, runs=(), qrels_format=None, run_format=None, scale=None) -> CheckReport
    estimate(human_qrels, llm_qrels, runs, measure="ndcg@10", alpha=0.1, lam=None) -> Estimates   (PPI++)
    judge_agreement(human_qrels, judge_qrels, runs=(), measure="ndcg@10") -> JudgeAgreement
    Scale, Flavor, Measure, parse_measure, KNOBS
"""

from __future__ import annotations

import sys
import types
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
    "Scale",
    "UsageError",
    "aggregate_ratings",
    "agreement",
    "bounds",
    "check",
    "compare",
    "dcg_score",
    "diff",
    "estimate",
    "evaluate",
    "explain",
    "identify",
    "judge_agreement",
    "judgments",
    "ndcg_score",
    "parse_measure",
    "pool",
    "read_qrels",
    "read_ratings",
    "read_run",
    "spread",
]

_LAZY = {
    "evaluate": ("rankflavor.evaluate", "evaluate"),
    "ndcg_score": ("rankflavor.arrays", "ndcg_score"),
    "dcg_score": ("rankflavor.arrays", "dcg_score"),
    "spread": ("rankflavor.spread", "spread"),
    "explain": ("rankflavor.explain", "explain"),
    "diff": ("rankflavor.attribution", "diff"),
    "identify": ("rankflavor.identify", "identify"),
    "compare": ("rankflavor.compare", "compare"),
    "check": ("rankflavor.check", "check"),
    "estimate": ("rankflavor.estimate", "estimate"),
    "judge_agreement": ("rankflavor.estimate", "judge_agreement"),
    "Results": ("rankflavor.results", "Results"),
    "judgments": ("rankflavor.judgments", "judgments"),
    "bounds": ("rankflavor.judgments", "bounds"),
    "Scale": ("rankflavor.judgments", "Scale"),
    "pool": ("rankflavor.pool", "pool"),
    "read_ratings": ("rankflavor.io.raters", "read_ratings"),
    "aggregate_ratings": ("rankflavor.raters", "aggregate_ratings"),
    "agreement": ("rankflavor.raters", "agreement"),
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
    from .arrays import dcg_score, ndcg_score
    from .attribution import diff
    from .check import check
    from .compare import compare
    from .errors import EvaluationError, FlavorError, InputError, RankflavorError, UsageError
    from .estimate import estimate, judge_agreement
    from .evaluate import evaluate
    from .explain import explain
    from .flavor import KNOBS, Flavor
    from .identify import identify
    from .io.raters import read_ratings
    from .io.trec import read_qrels, read_run
    from .judgments.bounds import bounds
    from .judgments.coverage import judgments
    from .judgments.scale import Scale
    from .measure import Measure, parse_measure
    from .pool import pool
    from .raters import aggregate_ratings, agreement
    from .results import Results
    from .spread import spread


class _Package(types.ModuleType):
    """Keep ``rankflavor.evaluate`` (and ``spread``, ``explain``) the function once the same-named
    submodule is imported: the import system binds a submodule onto its package with setattr,
    which would otherwise replace the lazily exported function by the module."""

    def __setattr__(self, name: str, value: Any) -> None:
        target = _LAZY.get(name)
        if target and isinstance(value, types.ModuleType) and value.__name__ == target[0]:
            value = getattr(value, target[1])
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

# The notebook views of the result objects (``_repr_html_``, ``plot()``), registered with
# rankflavor.display; the module loads its renderers only when a notebook asks.
from . import notebook as _notebook  # noqa: E402,F401

#: Submodules reachable as attributes without an import of their own (``rankflavor.lightgbm.eval_metric``);
#: each imports its library only when used, if at all.
_SUBMODULES = ("lightgbm", "xgboost", "torch")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rankflavor' has no attribute {name!r}")
