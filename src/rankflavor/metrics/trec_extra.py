"""The rest of trec_eval 9.0.8's ``all_trec`` measures, with its exact per-query semantics.

Every kernel works on whole arrays (segment reductions over the rank-sorted rows of
:class:`~rankflavor.order.Ranked`); the few loops run over a measure's parameters or over rank
positions, never over queries or documents. Where trec_eval accumulates floating-point sums rank by
rank, the same order is kept (:func:`rankflavor.base.kernels.segment_cumsum`), so values agree bit for
bit. The gain measures (binG, G, ndcg_rel, Rndcg) are in :mod:`rankflavor.metrics.trec_gain`;
every measure of this family is registered here, in trec_eval's order.

The examples share one query: ``a`` (grade 2), ``e`` (pooled, grade -1: unjudged), ``b`` (0),
``c`` (1) and ``f`` (not pooled) retrieved in that order, ``d`` (1) not retrieved, so R = 3.

Relevance levels of a retrieved row, as ``form_res_rels.c`` assigns them: *relevant* (judged,
grade >= rel), *non-relevant* (judged, grade < rel), *unjudged* (in the qrels with a negative
grade: pooled but not judged) and *not pooled* (absent from the qrels).

References
----------
trec_eval 9.0.8 (usnistgov/trec_eval, tag v9.0.8): ``m_gm_map.c``, ``m_gm_bpref.c``,
``meas_avg.c`` (geometric mean, ``MIN_GEO_MEAN``), ``m_iprec_at_recall.c``, ``m_11pt_avg.c``,
``m_Rprec_mult.c``, ``m_infap.c``, ``m_utility.c``, ``m_binG.c``, ``m_G.c``, ``m_ndcg_rel.c``,
``m_Rndcg.c``, ``m_rel_P.c``, ``m_set_P.c``, ``m_set_rel_P.c``, ``m_set_recall.c``, ``m_set_map.c``,
``m_set_F.c``, ``m_num_nonrel_judged_ret.c``, ``m_relstring.c``.

E. Yilmaz, J. A. Aslam. "Estimating average precision with incomplete and imperfect judgments".
CIKM 2006 (infAP). S. Robertson. "On GMAP". CIKM 2006. C. J. van Rijsbergen. *Information
Retrieval*, 2nd ed., 1979 (F measure).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rankflavor.base import kernels as K
from rankflavor.metrics import binary
from rankflavor.metrics.common import hits, no_empty, params, relevant, shared
from rankflavor.metrics.registry import INPUT_KNOBS, MetricSpec, register
from rankflavor.metrics.trec_gain import bin_g, g_measure, ndcg_rel, r_ndcg

if TYPE_CHECKING:
    from rankflavor.metrics.measure import Measure
    from rankflavor.order import Ranked

BINARY_KNOBS = ("rel", *INPUT_KNOBS)
PARAM_KNOBS = ("param", "rel", *INPUT_KNOBS)

#: trec_eval's default recall levels of iprec_at_recall and 11pt_avg.
ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: trec_eval's default multiples of R for Rprec_mult.
R_MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
#: trec_eval's default utility coefficients (a, b, c, d): +1 relevant retrieved, -1 non-relevant retrieved.
UTILITY_DEFAULT = (1.0, -1.0, 0.0, 0.0)
#: ``INFAP_EPSILON`` of ``trec_eval.h``.
INFAP_EPSILON = 0.00001

#: (values, empty) per query code.
Result = tuple[NDArray[np.float64], NDArray[np.bool_]]

# ---------------------------------------------------------------------------------------------
# Interpolated precision (iprec_at_recall, 11pt_avg) and Rprec_mult.


def _rank_cutoff(level: float, R: NDArray[np.float64]) -> NDArray[np.float64]:
    """trec_eval's ``(long) (level * num_rel + 0.9)``: a recall level or multiple of R as a count."""
    return np.trunc(level * R + 0.9)


class _Interpolated:
    """Per query: relevant rows in rank order and the interpolated precision at each of them.

    ``at(c)`` is trec_eval's value for a cutoff of ``c`` relevant documents: 0 when c exceeds the
    relevant retrieved, the max precision at or after the c-th relevant document otherwise; c <= 0
    takes the value left after the whole list (max over all relevant ranks; 0, or NaN when nothing
    was retrieved, if no relevant document was).
    """

    def __init__(self, r: Ranked, rel: NDArray[np.bool_]) -> None:
        n = r.n_queries
        self.rq = r.q[rel]
        cum = K.cumulative_in_segment(r.q, rel.astype(np.int64))
        precision = cum[rel] / r.rank[rel].astype(np.float64)
        self.best_after = K.segment_suffix_max(self.rq, precision)
        self.start = K.segment_starts(self.rq, n)
        self.found = np.bincount(self.rq, minlength=n)
        with np.errstate(divide="ignore", invalid="ignore"):
            # trec_eval starts from num_rel_ret / num_ret: NaN when -J leaves nothing retrieved.
            self.final = np.where(self.found > 0, 0.0, self.found / r.n_ret.astype(np.float64))
        has = self.found > 0
        self.final[has] = self.best_after[self.start[has]]

    def at(self, cut: NDArray[np.float64]) -> NDArray[np.float64]:
        matched = (cut >= 1) & (cut <= self.found)
        out = np.where(cut > self.found, 0.0, self.final)
        idx = self.start[matched] + cut[matched].astype(np.int64) - 1
        out[matched] = self.best_after[idx]
        return out


def _interpolated(r: Ranked, measure: Measure, rel: NDArray[np.bool_]) -> _Interpolated:
    return shared(r, ("interpolated", measure.flavor.rel), lambda: _Interpolated(r, rel))


def iprec_at_recall(r: Ranked, measure: Measure) -> Result:
    """Interpolated precision at recall level ``param`` (rank cutoff ``(long)(param * R + 0.9)``).

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 1, "e": -1}}
    >>> run = {"q": {"a": 0.9, "e": 0.8, "b": 0.7, "c": 0.6, "f": 0.5}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["IPrec[param=0.5]", "IPrec[param=1]"])]
    [0.5, 0.0]
    """
    (level,) = params(measure, None, count=1)
    rel, R = relevant(r, measure)
    values = _interpolated(r, measure, rel).at(_rank_cutoff(level, R))
    return values, (R == 0) & ~np.isnan(values)  # trec_eval's NaN (-J, nothing left) is kept


def iprec_average(r: Ranked, measure: Measure) -> Result:
    """trec_eval 11pt_avg: mean interpolated precision over the recall levels, in the order given.

    trec_eval walks the levels from the last to the first while stepping up the ranking; a level
    out of order (not ascending) is never reached and takes the end-of-list value, as do all after
    it. The walk is replayed here level by level, vectorised over queries.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 1, "e": -1}}
    >>> run = {"q": {"a": 0.9, "e": 0.8, "b": 0.7, "c": 0.6, "f": 0.5}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["IPrec_avg", "IPrec_avg[param=(0,0.5)]"])]
    [0.5455, 0.75]
    """
    levels = params(measure, ELEVEN_POINTS)
    rel, R = relevant(r, measure)
    ip = _interpolated(r, measure, rel)
    n = r.n_queries
    total = np.zeros(n)
    skipping = np.ones(n, dtype=bool)  # levels above num_rel_ret at the end are skipped (add nothing)
    stuck = np.zeros(n, dtype=bool)
    current = ip.found.astype(np.float64)
    for level in reversed(levels):
        cut = _rank_cutoff(level, R)
        skipping &= cut > ip.found
        active = ~skipping
        reached = active & ~stuck & (cut >= 1) & (cut <= current)
        stuck |= active & ~reached
        total = np.where(active, total + np.where(reached, ip.at(cut), ip.final), total)
        current = np.where(reached, cut, current)
    values = total / len(levels)
    return values, (R == 0) & ~np.isnan(values)  # trec_eval's NaN (-J, nothing left) is kept


def rprec_mult(r: Ranked, measure: Measure) -> Result:
    """Precision at rank ``(long)(m * R + 0.9)`` (0 when that rank is 0).

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 1, "e": -1}}
    >>> run = {"q": {"a": 0.9, "e": 0.8, "b": 0.7, "c": 0.6, "f": 0.5}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["Rprec_mult[param=1]", "Rprec_mult[param=2]"])]
    [0.3333, 0.3333]
    """
    (multiple,) = params(measure, None, count=1)
    rel, R = relevant(r, measure)
    cut = _rank_cutoff(multiple, R)
    found = hits(r, rel, cut)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(cut >= 1, found / np.maximum(cut, 1.0), 0.0), R == 0


# ---------------------------------------------------------------------------------------------
# Incomplete-judgment and set measures.


def inf_ap(r: Ranked, measure: Measure) -> Result:
    """Inferred AP (``m_infap.c``): precision above each judged relevant document is estimated from
    the judged documents above it; documents outside the pool count as non-relevant, pooled but
    unjudged ones are left out.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 1, "e": -1}}
    >>> run = {"q": {"a": 0.9, "e": 0.8, "b": 0.7, "c": 0.6, "f": 0.5}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["infAP", "AP"])]
    [0.5417, 0.5]
    """
    rel, R = relevant(r, measure)
    nonrel = r.judged & ~rel
    unjudged = r.pooled & ~r.judged
    rel_above = (K.cumulative_in_segment(r.q, rel.astype(np.int64)) - 1)[rel]
    nonrel_above = K.cumulative_in_segment(r.q, nonrel.astype(np.int64))[rel]
    unjudged_above = K.cumulative_in_segment(r.q, unjudged.astype(np.int64))[rel]
    j = (r.rank[rel] - 1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        later = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rel_above + nonrel_above + unjudged_above) / j) * (
            (rel_above + INFAP_EPSILON) / ((rel_above + nonrel_above) + 2 * INFAP_EPSILON)
        )
    term = np.where(j == 0, 1.0, later)
    total = K.segment_sum(r.q[rel], term, r.n_queries)
    return np.where(R > 0, total / np.maximum(R, 1.0), total), R == 0


def utility(r: Ranked, measure: Measure) -> Result:
    """a*relevant retrieved + b*non-relevant retrieved + c*relevant missed + d*non-relevant missed.

    Like trec_eval without ``-N``, the collection size is 0, so d multiplies ``-(retrieved + R -
    relevant retrieved)``.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 1, "e": -1}}
    >>> run = {"q": {"a": 0.9, "e": 0.8, "b": 0.7, "c": 0.6, "f": 0.5}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["utility", "utility[param=(2,-1,0,0)]"])]
    [-1.0, 1.0]
    """
    a, b, c, d = params(measure, UTILITY_DEFAULT, count=4)
    rel, R = relevant(r, measure)
    found = hits(r, rel)
    ret = r.n_ret.astype(np.float64)
    return a * found + b * (ret - found) + c * (R - found) + d * (found - ret - R), no_empty(r)


def relative_precision(r: Ranked, measure: Measure) -> Result:
    """Relevant in the top k / min(k, R); without k, over the whole list (set_relative_P).

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 1, "e": -1}}
    >>> run = {"q": {"a": 0.9, "e": 0.8, "b": 0.7, "c": 0.6, "f": 0.5}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["relative_P@2", "relative_P"])]
    [0.5, 0.6667]
    """
    rel, R = relevant(r, measure)
    found = hits(r, rel, None if measure.k is None else np.full(r.n_queries, measure.k))
    size = r.n_ret.astype(np.float64) if measure.k is None else np.full(r.n_queries, float(measure.k))
    best = np.minimum(size, R)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((R > 0) & (size > 0), found / np.where(best > 0, best, 1.0), 0.0), R == 0


def set_average_precision(r: Ranked, measure: Measure) -> Result:
    """Unranked AP: relevant retrieved^2 / (retrieved * R) (``m_set_map.c``).

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 1, "e": -1}}
    >>> run = {"q": {"a": 0.9, "e": 0.8, "b": 0.7, "c": 0.6, "f": 0.5}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["set_AP"])]
    [0.2667]
    """
    rel, R = relevant(r, measure)
    found = hits(r, rel)
    ret = r.n_ret.astype(np.float64)
    ok = (ret > 0) & (R > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, (found * found) / np.where(ok, ret * R, 1.0), 0.0), R == 0


def f_measure(r: Ranked, measure: Measure) -> Result:
    """(x + 1) P R / (x P + R) over the retrieved set; x = beta^2, default 1 (``m_set_F.c``).

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 1, "e": -1}}
    >>> run = {"q": {"a": 0.9, "e": 0.8, "b": 0.7, "c": 0.6, "f": 0.5}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["F", "F[param=0.25]"])]
    [0.5, 0.4348]
    """
    x = params(measure, (1.0,))[0]
    rel, R = relevant(r, measure)
    found = hits(r, rel)
    ok = found > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        p = found / r.n_ret.astype(np.float64)
        rc = found / R
        value = (x + 1.0) * p * rc / (x * p + rc)
    return np.where(ok, value, 0.0), R == 0


def num_nonrel_judged_ret(r: Ranked, measure: Measure) -> Result:
    """Judged non-relevant (grade < rel) rows retrieved per query.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 1, "e": -1}}
    >>> run = {"q": {"a": 0.9, "e": 0.8, "b": 0.7, "c": 0.6, "f": 0.5}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["num_nonrel_judged_ret", "num_nonrel_judged_ret[rel=2]"])]
    [1.0, 2.0]
    """
    rel, _ = relevant(r, measure)
    return K.segment_sum(r.q, (r.judged & ~rel).astype(np.float64), r.n_queries), no_empty(r)


# ---------------------------------------------------------------------------------------------
# relstring: the relevance of the top documents as text.


def relstring(r: Ranked, measure: Measure) -> tuple[NDArray[np.object_], NDArray[np.bool_]]:
    """One character per top-k document: its grade 0-9, ``>`` above 9, ``-`` not pooled, ``.``
    pooled but unjudged (``m_relstring.c``). Without k, the whole list.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 1, "e": -1}}
    >>> run = {"q": {"a": 0.9, "e": 0.8, "b": 0.7, "c": 0.6, "f": 0.5}}
    >>> [m.per_query()["q"] for m in evaluate(qrels, run, ["relstring", "relstring@3"])]
    ['2.01-', '2.0']
    """
    n = r.n_queries
    width = min(measure.k or r.max_len, r.max_len)
    out = np.full(n, "", dtype=object)
    if width <= 0:
        return out, no_empty(r)
    grade = np.trunc(r.grade)
    chars = np.where(grade > 9, ord(">"), ord("0") + np.clip(grade, 0, 9).astype(np.int64))
    chars = np.where(r.judged, chars, np.where(r.pooled, ord("."), ord("-")))
    pick = r.rank <= width
    grid = np.zeros((n, width), dtype=np.uint8)
    grid[r.q[pick], r.rank[pick] - 1] = chars[pick]
    text = grid.view(f"S{width}").ravel()  # fixed-width bytes; trailing NULs of short lists drop
    out[:] = np.char.decode(text, "ascii")
    return out, no_empty(r)


# ---------------------------------------------------------------------------------------------

for spec in (
    MetricSpec("GMAP", BINARY_KNOBS, binary.average_precision, summary="geometric", aliases=("gm_map", "gm_ap"),
               doc="AP per query; summary is the geometric mean with AP floored at 1e-5 (trec_eval gm_map).",
               judged_only=True),
    MetricSpec("gm_bpref", BINARY_KNOBS, binary.bpref, summary="geometric",
               doc="bpref per query; summary is the geometric mean with bpref floored at 1e-5.", judged_only=True),
    MetricSpec("IPrec", PARAM_KNOBS, iprec_at_recall, cutoff="none", aliases=("iprec_at_recall",),
               doc="Interpolated precision at recall level param (rank cutoff (long)(param*R+0.9), trec_eval 9.0.8)."),
    MetricSpec("IPrec_avg", PARAM_KNOBS, iprec_average, cutoff="none", aliases=("ipavg",),
               doc="Mean interpolated precision over the recall levels in param (default the 11 points; "
               "trec_eval 11pt_avg)."),
    MetricSpec("Rprec_mult", PARAM_KNOBS, rprec_mult, cutoff="none", aliases=("rprec_mult",),
               doc="Precision at rank (long)(param*R+0.9), param a multiple of R."),
    MetricSpec("infAP", BINARY_KNOBS, inf_ap, cutoff="none", aliases=("infap",),
               doc="Inferred AP (Yilmaz-Aslam): pooled-but-unjudged (negative grade) documents left out."),
    MetricSpec("utility", PARAM_KNOBS, utility, cutoff="none", uses_empty=False,
               doc="Set utility a*rel_ret + b*nonrel_ret + c*rel_missed + d*nonrel_missed, param=(a,b,c,d), "
               "default (1,-1,0,0); collection size 0."),
    MetricSpec("binG", BINARY_KNOBS, bin_g, cutoff="none", aliases=("bing",),
               doc="Mean over relevant documents of 1/log2(2 + non-relevant above) (trec_eval binG)."),
    MetricSpec("G", ("gain", *INPUT_KNOBS), g_measure, cutoff="none", uses_ideal=True,
               doc="trec_eval G: gain/log2(2 + ideal cost - gain so far), normalised by total ideal gain."),
    MetricSpec("ndcg_rel", ("gain", *INPUT_KNOBS), ndcg_rel, cutoff="none", uses_ideal=True,
               doc="NDCG averaged over the positive-gain documents (trec_eval ndcg_rel)."),
    MetricSpec("Rndcg", ("gain", "rel", *INPUT_KNOBS), r_ndcg, cutoff="none", aliases=("rndcg",), uses_ideal=True,
               doc="NDCG averaged at the ranks where the ideal gain drops (trec_eval Rndcg); 0 when R = 0."),
    MetricSpec("relative_P", BINARY_KNOBS, relative_precision, aliases=("relative_precision",),
               doc="Relevant in the top k / min(k, R); without k over the whole list (set_relative_P)."),
    MetricSpec("set_AP", BINARY_KNOBS, set_average_precision, cutoff="none", aliases=("set_map",),
               doc="Unranked AP of the retrieved set: rel_ret^2 / (retrieved * R) (trec_eval set_map)."),
    MetricSpec("F", PARAM_KNOBS, f_measure, cutoff="none", aliases=("set_F",),
               doc="F of the retrieved set: (x+1)PR/(xP+R), x = beta^2 = param (default 1) (trec_eval set_F)."),
    MetricSpec("num_nonrel_judged_ret", BINARY_KNOBS, num_nonrel_judged_ret, cutoff="none", summary="sum",
               uses_empty=False, doc="Judged non-relevant documents retrieved."),
    MetricSpec("relstring", INPUT_KNOBS, relstring, summary="none", uses_empty=False,
               doc="Grades of the top k documents as text (0-9, > above 9, - not pooled, . unjudged); per query only."),
):
    register(spec)
