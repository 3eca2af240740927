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

from typing import TYPE_CHECKING, Any

from rankflavor._version import __version__ as __version__

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
    "evaluate": ("rankflavor.engine.evaluate", "evaluate"),
    "ndcg_score": ("rankflavor.training.arrays", "ndcg_score"),
    "dcg_score": ("rankflavor.training.arrays", "dcg_score"),
    "spread": ("rankflavor.analysis.spread.api", "spread"),
    "explain": ("rankflavor.analysis.explain.api", "explain"),
    "diff": ("rankflavor.analysis.diff.api", "diff"),
    "identify": ("rankflavor.analysis.identify", "identify"),
    "compare": ("rankflavor.analysis.compare", "compare"),
    "check": ("rankflavor.analysis.check", "check"),
    "estimate": ("rankflavor.analysis.estimate", "estimate"),
    "judge_agreement": ("rankflavor.analysis.estimate", "judge_agreement"),
    "Results": ("rankflavor.engine.results", "Results"),
    "judgments": ("rankflavor.analysis.judgments", "judgments"),
    "bounds": ("rankflavor.analysis.judgments", "bounds"),
    "Scale": ("rankflavor.presets.scales", "Scale"),
    "pool": ("rankflavor.analysis.judgments.pool", "pool"),
    "read_ratings": ("rankflavor.raters.files", "read_ratings"),
    "aggregate_ratings": ("rankflavor.raters", "aggregate_ratings"),
    "agreement": ("rankflavor.raters", "agreement"),
    "Flavor": ("rankflavor.flavor.flavor", "Flavor"),
    "KNOBS": ("rankflavor.flavor.flavor", "KNOBS"),
    "Measure": ("rankflavor.metrics.measure", "Measure"),
    "parse_measure": ("rankflavor.metrics.measure", "parse_measure"),
    "read_qrels": ("rankflavor.io.trec", "read_qrels"),
    "read_run": ("rankflavor.io.trec", "read_run"),
    "RankflavorError": ("rankflavor.errors", "RankflavorError"),
    "InputError": ("rankflavor.errors", "InputError"),
    "FlavorError": ("rankflavor.errors", "FlavorError"),
    "UsageError": ("rankflavor.errors", "UsageError"),
    "EvaluationError": ("rankflavor.errors", "EvaluationError"),
}

if TYPE_CHECKING:
    from rankflavor.analysis.check import check
    from rankflavor.analysis.compare import compare
    from rankflavor.analysis.diff.api import diff
    from rankflavor.analysis.estimate import estimate, judge_agreement
    from rankflavor.analysis.explain.api import explain
    from rankflavor.analysis.identify import identify
    from rankflavor.analysis.judgments.bounds import bounds
    from rankflavor.analysis.judgments.coverage import judgments
    from rankflavor.analysis.judgments.pool import pool
    from rankflavor.analysis.spread.api import spread
    from rankflavor.engine.evaluate import evaluate
    from rankflavor.engine.results import Results
    from rankflavor.errors import EvaluationError, FlavorError, InputError, RankflavorError, UsageError
    from rankflavor.flavor.flavor import KNOBS, Flavor
    from rankflavor.io.trec import read_qrels, read_run
    from rankflavor.metrics.measure import Measure, parse_measure
    from rankflavor.presets.scales import Scale
    from rankflavor.raters import aggregate_ratings, agreement
    from rankflavor.raters.files import read_ratings
    from rankflavor.training.arrays import dcg_score, ndcg_score


# The notebook views of the result objects (``_repr_html_``, ``plot()``), registered with
# rankflavor.base.display; the module loads its renderers only when a notebook asks.
from rankflavor.render import notebook as _notebook  # noqa: E402,F401

#: Modules reachable as attributes without an import of their own (``rankflavor.lightgbm.eval_metric``,
#: ``rankflavor.mlflow.log(results)``); each imports its library only when used, if at all.
_SUBMODULES = {
    "lightgbm": "rankflavor.lightgbm",
    "xgboost": "rankflavor.xgboost",
    "torch": "rankflavor.torch",
    "mlflow": "rankflavor.trackers.mlflow",
    "wandb": "rankflavor.trackers.wandb",
}


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(_SUBMODULES[name])
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rankflavor' has no attribute {name!r}")
