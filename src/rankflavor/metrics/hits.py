"""Hits and F1 at a cutoff, as ranx defines them (relevant iff judged grade >= rel).

References
----------
AmenRa/ranx 0.3.21 ``ranx/metrics/hits.py`` (relevant documents in the top k; no k: in the whole
run), ``ranx/metrics/f1.py`` (harmonic mean of P@k = hits / k and R@k = hits / R, 0 when both are
0; without k, k is the number retrieved); C. J. van Rijsbergen, *Information Retrieval*, 2nd ed.,
1979, ch. 7 (F).

The examples share one query: ``a`` (grade 2), ``b`` (0), ``c`` (1) and ``e`` (unjudged)
retrieved in that order, ``d`` (1) not retrieved, so R = 3 at ``rel=1``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rankflavor.metrics.common import hits, in_cut, relevant
from rankflavor.metrics.registry import INPUT_KNOBS, MetricSpec, register

if TYPE_CHECKING:
    from rankflavor.metrics.measure import Measure
    from rankflavor.order import Ranked

Result = tuple[NDArray[np.float64], NDArray[np.bool_]]


def hit_count(r: Ranked, measure: Measure) -> Result:
    """Relevant documents in the top k (all retrieved without k).

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels, run = {"q": {"a": 2, "b": 0, "c": 1, "d": 1}}, {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "e": 0.6}}
    >>> [m.mean for m in evaluate(qrels, run, ["hits@1", "hits@3", "hits", "hits[rel=2]"])]
    [1.0, 2.0, 2.0, 1.0]
    """
    rel, R = relevant(r, measure)
    return hits(r, rel & in_cut(r, measure)), R == 0


def f1(r: Ranked, measure: Measure) -> Result:
    """2 P R / (P + R) with P = hits / k and R = hits / (relevant judgments); 0 when both are 0.

    Without k, P divides by the number retrieved (ranx: ``k = len(run)``).

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels, run = {"q": {"a": 2, "b": 0, "c": 1, "d": 1}}, {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "e": 0.6}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["F1@1", "F1@2", "F1"])]   # 2PR/(P+R): P=1,R=1/3; ...
    [0.5, 0.4, 0.5714]
    """
    rel, R = relevant(r, measure)
    found = hits(r, rel & in_cut(r, measure))
    k = r.n_ret.astype(np.float64) if measure.k is None else np.full(r.n_queries, float(measure.k))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(k > 0, found / np.maximum(k, 1), 0.0)
        rc = np.where(R > 0, found / np.maximum(R, 1), 0.0)
        # as ranx writes it, 2 (P R) / (P + R), for the same rounding
        value = np.where(p + rc > 0, 2 * ((p * rc) / (p + rc)), 0.0)
    return value, R == 0


for spec in (
    MetricSpec("hits", ("rel", *INPUT_KNOBS), hit_count,
               doc="Relevant documents in the top k (ranx hits@k); the mean is the mean count."),
    MetricSpec("F1", ("rel", *INPUT_KNOBS), f1, aliases=("f1",),
               doc="F1@k: harmonic mean of P@k and recall@k, 0 when both are 0 (ranx f1@k)."),
):
    register(replace(spec, judged_only=True))
