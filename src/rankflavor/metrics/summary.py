"""How a metric's per-query values become one number: mean, geometric mean or sum.

Each rule takes the values of the rows that enter the summary, in query order, and two masks over
them: ``computed`` (the value is the metric's own, not one a policy wrote: ``empty=nan``,
``missing=zero``) and ``missing`` (the query is absent from the run and the missing policy scored
it). It returns the summary and how many rows entered it. A metric picks its rule by
``MetricSpec.summary``, or brings its own (:class:`~rankflavor.metrics.registry.MetricSpec`'s
``summary_rule``: trec_eval's ``num_rel``).

References
----------
trec_eval 9.0.8 ``meas_avg.c`` (sequential sums, the geometric mean's ``MIN_GEO_MEAN`` floor).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

#: Floor applied before the log of a geometric-mean summary: trec_eval's ``MIN_GEO_MEAN``
#: (``trec_eval.h``), so one zero does not zero the whole summary.
GEO_MEAN_FLOOR = 1e-5


def mean(values: NDArray[np.float64], computed: NDArray[np.bool_], missing: NDArray[np.bool_]) -> tuple[float, int]:
    """Mean over the rows; a NaN a policy wrote is left out, a NaN the metric computed is kept.

    The sum is sequential in query order (``np.cumsum``, unlike ``np.sum``, is not pairwise), as
    trec_eval accumulates, then one division.

    Examples
    --------
    >>> v = np.array([0.5, np.nan, 1.0])
    >>> mean(v, np.array([True, False, True]), np.zeros(3, bool))   # policy NaN: left out
    (0.75, 2)
    >>> mean(v, np.ones(3, bool), np.zeros(3, bool))[0]             # computed NaN: kept
    nan
    """
    kept = values[~(np.isnan(values) & ~computed)]
    n = len(kept)
    return (float(np.cumsum(kept)[-1] / n) if n else float("nan")), n


def geometric(values: NDArray[np.float64], computed: NDArray[np.bool_], missing: NDArray[np.bool_]) -> tuple[float, int]:
    """exp(mean(log(max(v, floor)))) over the rows, as trec_eval ``meas_avg.c`` computes it.

    trec_eval sums the logs of evaluated topics in topic order, then (``-c``) adds
    ``n_missing * log(floor)`` once, divides and exponentiates; the same order is kept here. A
    NaN among the computed rows counts as the floor (trec_eval's ``MAX(v, floor)`` is false for
    NaN), a NaN a policy wrote is left out.

    Examples
    --------
    >>> round(geometric(np.array([0.0, 0.1]), np.ones(2, bool), np.zeros(2, bool))[0], 6)
    0.001
    """
    evaluated = values[~missing & (computed | ~np.isnan(values))]
    n_missing = int(missing.sum())
    n = len(evaluated) + n_missing
    if n == 0:
        return float("nan"), 0
    logs = np.log(np.fmax(evaluated, GEO_MEAN_FLOOR))  # fmax: a NaN gives the floor
    total = float(np.cumsum(logs)[-1]) if len(logs) else 0.0
    if n_missing:
        total += n_missing * math.log(GEO_MEAN_FLOOR)
    return math.exp(total / n), n


def total(values: NDArray[np.float64], computed: NDArray[np.bool_], missing: NDArray[np.bool_]) -> tuple[float, int]:
    """Sum of the rows, NaNs left out (counts: trec_eval's num_* rows).

    Examples
    --------
    >>> total(np.array([3.0, np.nan, 4.0]), np.ones(3, bool), np.zeros(3, bool))
    (7.0, 3)
    """
    return float(np.nansum(values)), len(values)


def per_query_only(values: NDArray[np.generic], computed: NDArray[np.bool_], missing: NDArray[np.bool_]) -> tuple[float, int]:
    """No summary (NaN): per-query values that may be text (trec_eval relstring)."""
    return float("nan"), len(values)


#: The rule of each summary kind a :class:`~rankflavor.metrics.registry.MetricSpec` may declare.
RULES: dict[str, Callable[[NDArray[Any], NDArray[np.bool_], NDArray[np.bool_]], tuple[float, int]]] = {
    "mean": mean, "sum": total, "geometric": geometric, "none": per_query_only,
}

__all__ = ["GEO_MEAN_FLOOR", "RULES", "geometric", "mean", "per_query_only", "total"]
