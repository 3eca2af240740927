"""Counts (trec_eval num_ret, num_rel, num_rel_ret); their summary is a sum, not a mean.

References
----------
trec_eval 9.0.8 ``m_num_ret.c``, ``m_num_rel.c`` (under ``-c`` the summary counts every qrels
line with rel > 0, whatever ``-l``), ``m_num_rel_ret.c``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rankflavor.base import kernels as K
from rankflavor.metrics import summary
from rankflavor.metrics.common import no_empty
from rankflavor.metrics.registry import INPUT_KNOBS, MetricSpec, Values, register

if TYPE_CHECKING:
    from rankflavor.metrics.measure import Measure
    from rankflavor.order import Ranked


def num_ret(r: Ranked, measure: Measure) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Rows retrieved per query (after depth and condensing).

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> evaluate({"q": {"a": 2, "b": 0}}, {"q": {"a": 0.9, "b": 0.5, "c": 0.1}}, "num_ret")[0].per_query()
    {'q': 3.0}
    """
    return r.n_ret.astype(np.float64), no_empty(r)


def num_rel(r: Ranked, measure: Measure) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Judgments with grade >= rel per query, retrieved or not.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 3}}
    >>> [m.mean for m in evaluate(qrels, {"q": {"a": 0.9, "b": 0.5}}, ["num_rel", "num_rel[rel=2]"])]
    [3.0, 2.0]
    """
    t = measure.flavor.rel_threshold
    return K.segment_sum(r.jq, (r.jgrade >= t).astype(np.float64), r.n_queries), no_empty(r)


def num_rel_ret(r: Ranked, measure: Measure) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Retrieved rows judged with grade >= rel per query.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 3}}
    >>> evaluate(qrels, {"q": {"a": 0.9, "b": 0.5, "c": 0.1}}, "num_rel_ret")[0].mean
    2.0
    """
    t = measure.flavor.rel_threshold
    rel = r.judged & (r.grade >= t)
    return K.segment_sum(r.q, rel.astype(np.float64), r.n_queries), no_empty(r)


def num_rel_summary(measure: Measure, values: Values, computed: NDArray[np.bool_], missing: NDArray[np.bool_],
                    judgments: NDArray[np.float64]) -> tuple[float, int]:
    """The sum of the per-query counts, or under ``total=qrels_positive`` the number of usable
    judgments with a positive grade (trec_eval ``-c``: every qrels line with rel > 0, queries
    missing from the run included, whatever ``rel``)."""
    if measure.flavor.total == "qrels_positive":
        grades = np.trunc(judgments) if measure.flavor.fractional == "truncate" else judgments
        return float((grades > 0).sum()), len(values)
    return summary.total(values.astype(np.float64, copy=False), computed, missing)


for spec in (
    MetricSpec("num_ret", INPUT_KNOBS, num_ret, cutoff="none", summary="sum", uses_empty=False,
               doc="Documents retrieved (after depth and condensing)."),
    MetricSpec("num_rel", ("rel", "negatives", "fractional", "duplicates", "missing", "total", "raters"), num_rel, cutoff="none",
               summary="sum", summary_rule=num_rel_summary, uses_empty=False, reads_run=False,
               doc="Relevant judgments (grade >= rel)."),
    MetricSpec("num_rel_ret", ("rel", *INPUT_KNOBS), num_rel_ret, cutoff="none", summary="sum", uses_empty=False,
               doc="Relevant documents retrieved."),
):
    register(replace(spec, judged_only=True))
