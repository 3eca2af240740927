"""Compatibility (Clarke, Vtyurina & Smucker 2020): rank-biased overlap with an ideal ranking.

References
----------
C. L. A. Clarke, A. Vtyurina, M. D. Smucker. "Assessing top-k preferences". ACM TOIS 39(3),
2021 (arXiv 2007.11682): compatibility = RBO(run, ideal) with persistence p, normalised by
RBO(ideal, ideal) for a finite ideal. ir_measures 0.4.3 ``providers/compat_provider.py``.

Definition, as ir_measures computes it
---------------------------------------
The ideal ranking holds the query's relevant judgments (grade >= ``rel``), by grade descending,
then by the run's score descending (an unretrieved document scores 0.0). With depth
D = max(retrieved, |ideal|), A_i and I_i the first i documents of the run and of the ideal,

    RBO = sum_{i<=D} p^(i-1) |A_i & I_i| / i  /  sum_{i<=D} p^(i-1)

and Compat = RBO / RBO(ideal, ideal) (when that is > 0). A document at run rank a and ideal rank
b is in the overlap from depth max(a, b) on, so the sum is one term per retrieved relevant
document.

``param`` = (p, normalise, strict): p (default 0.95), normalise 1 (default) or 0 (plain RBO);
strict 0 (default) orders relevant documents of equal grade and equal score in the ideal by their
run rank, and retrieved before unretrieved ones at score 0. ir_measures orders them by qrels file
order, which a ranking does not keep: strict = 1 (the ir_measures preset) refuses a query where
that order would change the value.

Examples
--------
>>> from rankflavor import evaluate
>>> qrels, run = {"q": {"a": 2, "b": 1}}, {"q": {"b": 0.9, "a": 0.8}}
>>> round(evaluate(qrels, run, "Compat[param=0.5]")[0].mean, 6)  # (0 + 0.5 * 2/2) / (1 + 0.5 * 2/2)
0.333333
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rankflavor.base import kernels as K
from rankflavor.errors import FlavorError
from rankflavor.flavor.flavor import format_number
from rankflavor.metrics.registry import INPUT_KNOBS, MetricSpec, register

if TYPE_CHECKING:
    from rankflavor.metrics.measure import Measure
    from rankflavor.order import Ranked

Floats = NDArray[np.float64]
Result = tuple[Floats, NDArray[np.bool_]]
DEFAULT_P = 0.95


def compat_params(measure: Measure) -> tuple[float, bool, bool]:
    """(p, normalise, strict) from the ``param`` knob."""
    values = measure.flavor.param_values or (DEFAULT_P,)
    if len(values) > 3 or not 0 <= values[0] <= 1 or any(v not in (0, 1) for v in values[1:]):
        raise FlavorError(
            f"{measure.name}: param is (p, normalise, strict) with 0 <= p <= 1 and normalise, strict 0 or 1, "
            f"received {measure.flavor.param}"
        )
    normalise = values[1] if len(values) > 1 else 1.0
    strict = values[2] if len(values) > 2 else 0.0
    return float(values[0]), bool(normalise), bool(strict)


def _ideal(r: Ranked, measure: Measure) -> tuple[NDArray[np.int64], Floats, Floats, Floats, NDArray[np.int64]]:
    """The ideal lists of every query, in order: (query, grade, score, run rank or inf, slot)."""
    t = measure.flavor.rel_threshold
    ret = np.flatnonzero(r.judged & (r.grade >= t))
    rel_j = r.jgrade >= t
    # Unretrieved relevant judgments per (query, grade): all of them minus the retrieved ones.
    keys_q = np.concatenate([r.jq[rel_j].astype(np.int64), r.q[ret].astype(np.int64)])
    keys_g = np.concatenate([r.jgrade[rel_j], r.grade[ret]])
    weight = np.concatenate([np.ones(int(rel_j.sum())), -np.ones(len(ret))])
    pairs, inverse = np.unique(np.stack([keys_q.astype(np.float64), keys_g]), axis=1, return_inverse=True)
    unretrieved = np.rint(np.bincount(inverse.ravel(), weights=weight, minlength=pairs.shape[1])).astype(np.int64)
    if (unretrieved < 0).any():
        raise FlavorError(f"{measure.name}: a retrieved relevant document has no judgment among the query's")
    q = np.concatenate([r.q[ret].astype(np.int64), np.repeat(pairs[0].astype(np.int64), unretrieved)])
    grade = np.concatenate([r.grade[ret], np.repeat(pairs[1], unretrieved)])
    score = np.concatenate([r.score[ret].astype(np.float64), np.zeros(int(unretrieved.sum()))])
    rank = np.concatenate([r.rank[ret].astype(np.float64), np.full(int(unretrieved.sum()), np.inf)])
    order = np.lexsort((rank, -score, -grade, q))
    q, grade, score, rank = q[order], grade[order], score[order], rank[order]
    return q, grade, score, rank, K.rank_within(q)


def _refuse_file_order_ties(measure: Measure, r: Ranked, q: NDArray[np.int64], grade: Floats, score: Floats,
                            rank: Floats, slot: NDArray[np.int64]) -> None:
    """Refuse a tie of grade and score in the ideal whose order (qrels file order in ir_measures)
    would change the value: unless every tied retrieved document sits at or below the group's last
    slot, or (no unretrieved one among them) at or above its first."""
    if len(q) < 2:
        return
    change = np.ones(len(q), dtype=bool)
    change[1:] = (q[1:] != q[:-1]) | (grade[1:] != grade[:-1]) | (score[1:] != score[:-1])
    starts = np.flatnonzero(change)
    size = np.diff(np.append(starts, len(q)))
    retrieved = np.isfinite(rank)
    min_a = np.minimum.reduceat(rank, starts)
    max_a = np.maximum.reduceat(np.where(retrieved, rank, -np.inf), starts)
    has_unret = np.minimum.reduceat(retrieved, starts) == 0
    b_first, b_last = slot[starts], slot[starts + size - 1]
    fine = (min_a >= b_last) | (~has_unret & (max_a <= b_first))
    bad = np.flatnonzero((size > 1) & ~fine)
    if len(bad):
        g = starts[bad[0]]
        raise FlavorError(
            f"{measure.name}: query {r.aligned.query_ids[q[g]] if r.aligned is not None else q[g]} has relevant "
            f"documents of equal grade {format_number(float(grade[g]))} and equal score {float(score[g])!r} whose "
            "order in the ideal changes the value; ir_measures orders them by qrels file order, which rankflavor "
            "does not keep (strict=1): break the tie in the scores, or use strict=0 (ties by run rank)"
        )


def compat_kernel(r: Ranked, measure: Measure) -> Result:
    """Compat per query; empty where the query has no relevant judgment."""
    p, normalise, strict = compat_params(measure)
    t = measure.flavor.rel_threshold
    n = r.n_queries
    q, grade, score, rank, slot = _ideal(r, measure)
    if strict:
        _refuse_file_order_ties(measure, r, q, grade, score, rank, slot)
    L = K.segment_sum(r.jq, (r.jgrade >= t).astype(np.float64), n).astype(np.int64)
    D = np.maximum(r.n_ret.astype(np.int64), L)
    longest = int(D.max()) if n else 0
    i = np.arange(1, longest + 1, dtype=np.float64)
    w = np.power(p, i - 1.0)
    S = np.concatenate([[0.0], np.cumsum(w / i)])  # S[m] = sum_{i<=m} p^(i-1) / i
    Z = np.concatenate([[0.0], np.cumsum(w)])  # Z[m] = sum_{i<=m} p^(i-1)
    found = np.isfinite(rank)
    m = np.maximum(rank[found], slot[found]).astype(np.int64)
    raw = K.segment_sum(q[found], S[D[q[found]]] - S[m - 1], n)
    best = Z[L] + L * (S[D] - S[L])
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(normalise & (best > 0), raw / np.where(best > 0, best, 1.0),
                         raw / np.where(D > 0, Z[D], 1.0))
    empty = L == 0
    return np.where(empty, 0.0, value), empty


register(
    MetricSpec(
        "Compat",
        ("param", "rel", *INPUT_KNOBS),
        compat_kernel,
        cutoff="none",
        aliases=("compatibility",),
        doc="Compatibility (Clarke et al. 2020): RBO of the run with the ideal ranking, p = param (default 0.95), "
            "normalised by the ideal's own RBO.",
        judged_only=True,  # reads the relevant rows, their ranks and scores, and n_ret
    )
)
