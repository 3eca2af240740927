"""Array-style API with scikit-learn's conventions: ``ndcg_score(y_true, y_score, k=10)``.

The arrays become a qrels table (every candidate judged with its label) and a run table (every
candidate scored), one query per row of a 2-D array or per group of a 1-D array, and go through the
same engine as files (:func:`rankflavor.engine.plan.evaluate_tables`): one NDCG implementation, every
flavor knob and preset available. Candidates keep their column (or row) order, so
``ties=input_order`` means the order of the array, as in LightGBM and XGBoost.

References
----------
scikit-learn ``sklearn.metrics.ndcg_score`` / ``dcg_score`` (argument conventions: 2-D arrays, one
row per query, ``k``, ``sample_weight`` per query, ``ignore_ties``); LightGBM/XGBoost ``group``
(sizes of consecutive groups) and XGBoost ``qid`` (a query id per row).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rankflavor.base.kernels import place_within
from rankflavor.engine.plan import evaluate_tables
from rankflavor.errors import FlavorError, UsageError
from rankflavor.flavor.flavor import parse_knob_assignments
from rankflavor.io.columns import from_numpy, string_array
from rankflavor.io.tables import Qrels, Run
from rankflavor.metrics.measure import Measure, build_measure


def ndcg_score(
    y_true: Any,
    y_score: Any,
    k: int | None = None,
    *,
    preset: str | None = "sklearn",
    metric: str | None = None,
    group: Any = None,
    qid: Any = None,
    sample_weight: Any = None,
    ignore_ties: bool = False,
    per_query: bool = False,
    **knobs: Any,
) -> float | np.ndarray:
    """NDCG of scores against graded labels, one value per query, averaged.

    Parameters
    ----------
    y_true : array of shape (n_queries, n_candidates), or (n_rows,) with ``group`` or ``qid``
        Graded labels (any non-negative numbers under the default preset).
    y_score : array of the same shape
        Model scores; higher ranks first.
    k : int, optional
        Cutoff: only the top k of each query count (DCG@k / IDCG@k). None = the whole list, in
        every preset (XGBoost's bare ``ndcg`` is NDCG@32: ask for it with ``metric="ndcg"``).
    preset : str, default "sklearn"
        Tool whose NDCG to reproduce: ``sklearn``, ``torchmetrics``, ``lightgbm``, ``xgboost``,
        ``catboost``, ``ranklib`` (``rankflavor flavors --presets`` lists them all). None =
        rankflavor's defaults (trec_eval's flavor).
    metric : str, optional
        A metric name in the preset's own dialect instead of ``k``: ``"ndcg@10-"`` (XGBoost),
        ``"NDCG:top=5;type=Exp"`` (CatBoost), ``"ndcg@3(label_gain=0,1,3)"`` (LightGBM), or a
        canonical string ``"ndcg@10[gain=exp2]"``. It must name exactly one measure.
    group : array of int, optional
        For 1-D inputs: sizes of consecutive groups (LightGBM/XGBoost ``group``).
    qid : array, optional
        For 1-D inputs: the query of each row (XGBoost ``qid``); rows of one query need not be
        adjacent. Queries are reported in order of first appearance.
    sample_weight : array of shape (n_queries,), optional
        Weight of each query in the mean (``np.average``), as scikit-learn's ``sample_weight``.
    ignore_ties : bool, default False
        scikit-learn's flag: rank tied scores one after another, later column first (scikit-learn
        reverses ``np.argsort``), instead of averaging their gains. Only for presets that average
        ties (sklearn, torchmetrics).
    per_query : bool, default False
        Return the value of every query (NaN where ``empty=skip`` left a query out) instead of
        the mean.
    **knobs
        Flavor knobs overriding the preset (``gain="exp2"``, ``empty="one"``); see
        ``rankflavor flavors``.

    Returns
    -------
    float or ndarray
        The (weighted) mean over queries, or the per-query values when ``per_query=True``.

    Raises
    ------
    UsageError
        Shapes, group sizes, weights or arguments that do not fit together.
    FlavorError
        An unknown preset, knob or metric name.
    InputError
        Labels the preset rejects (negative labels under sklearn, labels above LightGBM's 30).

    Examples
    --------
    >>> y_true = [[3, 2, 3, 0, 1, 2]]
    >>> y_score = [[0.9, 0.8, 0.1, 0.7, 0.6, 0.3]]
    >>> round(ndcg_score(y_true, y_score), 6)                      # scikit-learn
    0.915119
    >>> round(ndcg_score(y_true, y_score, k=3, preset="lightgbm"), 6)
    0.688482
    >>> ndcg_score([3, 2, 0, 0, 0], [0.1, 0.2, 0.3, 0.2, 0.1], group=[3, 2], preset="lightgbm",
    ...            per_query=True).round(6).tolist()   # (3/log2(3) + 7/2) / (7 + 3/log2(3)); all-zero: 1
    [0.606423, 1.0]
    """
    return _score("ndcg", y_true, y_score, k, preset, metric, group, qid, sample_weight, ignore_ties, per_query, knobs)


def dcg_score(
    y_true: Any,
    y_score: Any,
    k: int | None = None,
    *,
    preset: str | None = "sklearn",
    metric: str | None = None,
    group: Any = None,
    qid: Any = None,
    sample_weight: Any = None,
    ignore_ties: bool = False,
    per_query: bool = False,
    log_base: float | None = None,
    **knobs: Any,
) -> float | np.ndarray:
    """DCG of scores against graded labels (not normalised); arguments as :func:`ndcg_score`.

    ``log_base`` is scikit-learn's: rank i is divided by log_b(i+1) (the ``discount=log(b)``
    knob; None keeps the preset's discount, log2 under scikit-learn's).

    Examples
    --------
    >>> round(dcg_score([[3, 2, 3, 0, 1, 2]], [[0.9, 0.8, 0.1, 0.7, 0.6, 0.3]], k=6), 6)
    6.534863
    >>> round(dcg_score([[3, 2, 3, 0, 1, 2]], [[0.9, 0.8, 0.1, 0.7, 0.6, 0.3]], log_base=10), 6)
    21.708346
    """
    if log_base is not None:
        from rankflavor.presets.ml import sklearn_log_base

        if "discount" in knobs:
            raise UsageError("give log_base or the discount knob, not both")
        knobs = {**knobs, **sklearn_log_base(f"dcg_score(log_base={log_base!r})", log_base)}
    return _score("dcg", y_true, y_score, k, preset, metric, group, qid, sample_weight, ignore_ties, per_query, knobs)


def _score(
    kind: str,
    y_true: Any,
    y_score: Any,
    k: int | None,
    preset: str | None,
    metric: str | None,
    group: Any,
    qid: Any,
    sample_weight: Any,
    ignore_ties: bool,
    per_query: bool,
    knobs: dict[str, Any],
) -> float | np.ndarray:
    labels, scores, query, n_queries = _rows(y_true, y_score, group, qid)
    measure = _measure(kind, k, preset, metric, ignore_ties, knobs)
    qrels, run = _tables(labels, scores, query, n_queries)
    result = evaluate_tables(qrels, run, [measure])[0]

    values = np.full(n_queries, np.nan)
    positions = np.array([int(q[1:]) for q in result.queries], dtype=np.int64)
    values[positions] = np.asarray(result.values, dtype=np.float64)
    if per_query:
        return values
    if sample_weight is None:
        return float(result.summary)
    weights = _weights(sample_weight, n_queries)
    counted = ~np.isnan(values)
    if not counted.any():
        return float("nan")
    if weights[counted].sum() <= 0:
        raise UsageError("sample_weight: the weights of the queries that count sum to 0; give some a positive weight")
    return float(np.average(values[counted], weights=weights[counted]))


def _rows(y_true: Any, y_score: Any, group: Any, qid: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Flatten the inputs to rows: label, score and query number (0..n_queries-1, in query order)."""
    labels = _finite(y_true, "y_true")
    scores = _finite(y_score, "y_score")
    if labels.shape != scores.shape:
        raise UsageError(f"y_true and y_score must have the same shape; received {labels.shape} and {scores.shape}")
    if group is not None and qid is not None:
        raise UsageError("give group (sizes of consecutive groups) or qid (a query per row), not both")
    if group is None and qid is None:
        if labels.ndim != 2:
            raise UsageError(
                f"y_true has {labels.ndim} dimension(s); expected a 2-D array (one row per query), or a 1-D "
                "array with group= (group sizes) or qid= (a query id per row)"
            )
        n_queries, n_docs = labels.shape
        if n_queries == 0 or n_docs == 0:
            raise UsageError(f"y_true must hold at least one query and one candidate; received shape {labels.shape}")
        query = np.repeat(np.arange(n_queries, dtype=np.int64), n_docs)
        return labels.ravel(), scores.ravel(), query, n_queries
    if labels.ndim != 1:
        raise UsageError(f"with group= or qid=, y_true must be 1-D (one row per candidate); received shape {labels.shape}")
    n = len(labels)
    if n == 0:
        raise UsageError("y_true is empty; expected at least one candidate")
    if group is not None:
        sizes = np.asarray(group)
        if sizes.ndim != 1 or not np.issubdtype(sizes.dtype, np.integer):
            raise UsageError(f"group must be a 1-D array of whole numbers (group sizes); received {sizes.dtype} of shape {sizes.shape}")
        if (sizes < 1).any():
            raise UsageError(f"group sizes must be >= 1; received {int(sizes.min())} at position {int(np.argmin(sizes))}")
        if int(sizes.sum()) != n:
            raise UsageError(f"group sizes must sum to the number of rows, {n}; they sum to {int(sizes.sum())}")
        return labels, scores, np.repeat(np.arange(len(sizes), dtype=np.int64), sizes), len(sizes)
    ids = np.asarray(qid)
    if ids.shape != (n,):
        raise UsageError(f"qid must hold one query id per row, shape ({n},); received shape {ids.shape}")
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    by_appearance = np.empty(len(first), dtype=np.int64)
    by_appearance[np.argsort(first, kind="stable")] = np.arange(len(first))
    return labels, scores, by_appearance[inverse.ravel()], len(first)


def _finite(values: Any, name: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise UsageError(f"{name} must be an array of numbers") from None
    finite = np.isfinite(array)
    if not finite.all():  # (the position is looked for only then: a training loop checks every call)
        bad = np.flatnonzero(~finite.ravel())
        where = np.unravel_index(int(bad[0]), array.shape)
        raise UsageError(f"{name} must be finite; {name}[{', '.join(map(str, where))}] is {float(array.ravel()[bad[0]])!r}")
    return array


def _weights(sample_weight: Any, n_queries: int) -> np.ndarray:
    weights = _finite(sample_weight, "sample_weight")
    if weights.shape != (n_queries,):
        raise UsageError(f"sample_weight must hold one weight per query, shape ({n_queries},); received shape {weights.shape}")
    if (weights < 0).any():
        raise UsageError(f"sample_weight must be >= 0; received {weights.min()!r}")
    return weights


def _measure(kind: str, k: int | None, preset: str | None, metric: str | None, ignore_ties: bool, knobs: dict[str, Any]) -> Measure:
    from rankflavor.presets import get_preset, resolve_measures
    from rankflavor.presets.ml import SKLEARN_IGNORE_TIES

    overrides = parse_knob_assignments([f"{name}={value}" for name, value in knobs.items()]) if knobs else {}
    chosen = get_preset(preset)
    if ignore_ties:
        if chosen.flavor.ties != "averaged":
            raise UsageError(
                f"ignore_ties: preset {chosen.name!r} does not average ties (it orders them by "
                f"ties={chosen.flavor.ties}); ignore_ties applies to presets that do (sklearn, torchmetrics)"
            )
        overrides.setdefault("ties", SKLEARN_IGNORE_TIES)
    if metric is not None:
        if k is not None:
            raise UsageError(f"give the cutoff in metric ({metric!r}) or as k, not both")
        measures, _ = resolve_measures([metric], chosen.name, overrides)
        if len(measures) != 1:
            raise UsageError(
                f"metric {metric!r} names {len(measures)} measures under preset {chosen.name!r}; name exactly one"
            )
        return measures[0]
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise UsageError(f"k must be a whole number >= 1 or None; received {k!r}")
    try:
        measure = build_measure(kind, None if k is None else int(k), chosen.flavor, overrides, {}, preset=chosen.name)
    except FlavorError as exc:
        raise FlavorError(f"{kind}_score: {exc}") from None
    return chosen.finalize(measure) if chosen.finalize else measure


def _tables(labels: np.ndarray, scores: np.ndarray, query: np.ndarray, n_queries: int) -> tuple[Qrels, Run]:
    """Qrels and run tables with ids whose byte order is the array order (zero-padded numbers)."""
    position = place_within(query)
    q_width = len(str(max(n_queries - 1, 0)))
    d_width = len(str(int(position.max(initial=0))))
    # string_array and from_numpy, not pa.array: that imports pandas when installed.
    query_names = string_array([f"q{i:0{q_width}d}" for i in range(n_queries)])
    doc_names = string_array([f"{j:0{d_width}d}" for j in range(int(position.max(initial=0)) + 1)])
    q = query_names.take(from_numpy(query.astype(np.int64, copy=False)))
    d = doc_names.take(from_numpy(position))
    return Qrels(q, d, labels.astype(np.float64), source="y_true"), Run(q, d, scores.astype(np.float64), source="y_score")


__all__ = ["dcg_score", "ndcg_score"]
