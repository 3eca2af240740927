"""Binary-relevance metrics with trec_eval 9.0.8 semantics (relevant iff judged grade >= rel).

The examples share one query: ``a`` (grade 2), ``b`` (0), ``c`` (1) and ``e`` (unjudged)
retrieved in that order, ``d`` (1) not retrieved, so R = 3 at ``rel=1``.

References: trec_eval ``m_P.c``, ``m_recall.c``, ``m_map.c``, ``m_map_cut.c``, ``m_recip_rank.c``,
``m_Rprec.c``, ``m_bpref.c`` (C. Buckley, E. Voorhees, "Retrieval evaluation with incomplete
information", SIGIR 2004), ``m_success.c``; ir_measures ``Judged@k``; AmenRa/ranx 0.3.21
``ranx/metrics/bpref.py`` (``bpref_ranx``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rankflavor.base import kernels as K
from rankflavor.errors import FlavorError
from rankflavor.metrics.common import hits, in_cut, relevant
from rankflavor.metrics.registry import INPUT_KNOBS, MetricSpec, register

if TYPE_CHECKING:
    from rankflavor.metrics.measure import Measure
    from rankflavor.order import Ranked

BINARY_KNOBS = ("rel", *INPUT_KNOBS)

#: (values, empty) per query code.
Result = tuple[NDArray[np.float64], NDArray[np.bool_]]


def relevant_set(r: Ranked, measure: Measure) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """Relevant rows and R under the ``relevant_set`` knob: R counts every relevant judgment
    (``qrels``), or only the relevant documents the ranking holds (``retrieved``: what a library
    that sees only the scored candidates counts, torchmetrics)."""
    rel, R = relevant(r, measure)
    if measure.flavor.relevant_set == "retrieved":
        R = hits(r, rel)
    return rel, R


def scored(r: Ranked, measure: Measure, rel: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """``rel`` without the rows whose score is not positive under ``nonpositive=nonrelevant``
    (torchmetrics: ``torch.where(preds > 0, target, 0)``); the rows keep their ranks."""
    if measure.flavor.nonpositive == "nonrelevant":
        if measure.flavor.order == "rank":  # scores are minus the ranks: every one <= 0
            raise FlavorError(f"{measure.name}: nonpositive=nonrelevant reads each document's score, and this run "
                              "has ranks only (order=rank); give a run with scores, or nonpositive=keep")
        return rel & (r.score > 0)
    return rel


def precision(r: Ranked, measure: Measure) -> Result:
    """Relevant in the top k / k; without k, relevant retrieved / retrieved (trec_eval set_P);
    under ``p_divisor=hits``, / min(k, retrieved); under ``p_divisor=judged``, / the judged
    documents in the top k (Elasticsearch ``ignore_unlabeled``).

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels, run = {"q": {"a": 2, "b": 0, "c": 1, "d": 1}}, {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "e": 0.6}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["P@3", "P@10", "P@10[p_divisor=hits]", "P@3[rel=2]",
    ...                                                  "P@10[p_divisor=judged]"])]
    [0.6667, 0.2, 0.5, 0.3333, 0.6667]
    """
    rel, R = relevant_set(r, measure)
    cut = in_cut(r, measure)
    found = hits(r, scored(r, measure, rel) & cut)
    if measure.flavor.p_divisor == "judged":  # Elasticsearch ignore_unlabeled: rated documents shown
        rated = hits(r, r.pooled & cut)
        return np.where(rated > 0, found / np.maximum(rated, 1), 0.0), R == 0
    if measure.k is None:  # whole list: relevant retrieved / retrieved (trec_eval set_P)
        return np.where(r.n_ret > 0, found / np.maximum(r.n_ret, 1), 0.0), R == 0
    if measure.flavor.p_divisor == "hits":  # Quepid, Elasticsearch: divide by what was shown
        shown = np.minimum(r.n_ret, measure.k)
        return np.where(shown > 0, found / np.maximum(shown, 1), 0.0), R == 0
    return found / measure.k, R == 0


def recall(r: Ranked, measure: Measure) -> Result:
    """Relevant in the top k / R.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels, run = {"q": {"a": 2, "b": 0, "c": 1, "d": 1}}, {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "e": 0.6}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["recall@1", "recall@10"])]
    [0.3333, 0.6667]
    """
    rel, R = relevant_set(r, measure)
    found = hits(r, scored(r, measure, rel) & in_cut(r, measure))
    return np.where(R > 0, found / np.maximum(R, 1), 0.0), R == 0


def average_precision(r: Ranked, measure: Measure) -> Result:
    """Sum of the precision at each relevant rank (within k) over the ``ap_divisor``: R (trec_eval
    map, map_cut), min(k, R) (NTCIREVAL AP@l, Spark meanAveragePrecisionAt), or the relevant
    documents found in the top k (torchmetrics).

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels, run = {"q": {"a": 2, "b": 0, "c": 1, "d": 1}}, {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "e": 0.6}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["AP", "AP@1", "AP@2[ap_divisor=min_k_relevant]",
    ...                                                  "AP@3[ap_divisor=found]"])]
    [0.5556, 0.3333, 0.5, 0.8333]
    """
    rel, R = relevant_set(r, measure)
    rel = scored(r, measure, rel)
    cum = K.cumulative_in_segment(r.q, rel.astype(np.int64))
    pick = rel & in_cut(r, measure)
    total = K.segment_sum(r.q[pick], cum[pick] / r.rank[pick], r.n_queries)
    how = measure.flavor.ap_divisor
    if how == "found":
        divisor = K.segment_sum(r.q[pick], np.ones(int(pick.sum())), r.n_queries)
    elif how == "min_k_relevant" and measure.k is not None:
        divisor = np.minimum(R, float(measure.k))
    else:
        divisor = R
    return np.where(divisor > 0, total / np.maximum(divisor, 1), 0.0), R == 0


def reciprocal_rank(r: Ranked, measure: Measure) -> Result:
    """1 / rank of the first relevant document (within k), 0 if none.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels, run = {"q": {"a": 2, "b": 0, "c": 1, "d": 1}}, {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "e": 0.6}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["RR", "RR[rel=3]"])]
    [1.0, 0.0]
    """
    rel, R = relevant_set(r, measure)
    first = K.first_rank(r.q, r.rank, scored(r, measure, rel) & in_cut(r, measure), r.n_queries)
    return np.where(first > 0, 1.0 / np.maximum(first, 1), 0.0), R == 0


def r_precision(r: Ranked, measure: Measure) -> Result:
    """Precision at rank R.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels, run = {"q": {"a": 2, "b": 0, "c": 1, "d": 1}}, {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "e": 0.6}}
    >>> round(evaluate(qrels, run, "Rprec")[0].mean, 4)   # a, b, c: 2 of R = 3
    0.6667
    """
    rel, R = relevant_set(r, measure)
    found = hits(r, rel & (r.rank <= R[r.q]))
    return np.where(R > 0, found / np.maximum(R, 1), 0.0), R == 0


def bpref(r: Ranked, measure: Measure) -> Result:
    """Mean over the R relevant of 1 - (judged non-relevant above it) / min(N, R), trec_eval's form.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels, run = {"q": {"a": 2, "b": 0, "c": 1, "d": 1}}, {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "e": 0.6}}
    >>> round(evaluate(qrels, run, "bpref")[0].mean, 4)   # a: 1, c: 1 - 1/1, d: not retrieved
    0.3333
    """
    return _bpref(r, measure, undefined_without_nonrelevant=False)


def bpref_ranx(r: Ranked, measure: Measure) -> Result:
    """Bpref as ranx 0.3.21 computes it (``ranx/metrics/bpref.py``): the trec_eval form, except that
    the term 1 - min(above, R) / min(N, R) is taken for every relevant retrieved document, also
    with nothing above it. A query with no judged non-relevant document (N = 0) and a relevant
    one retrieved is therefore 0 / 0, NaN (trec_eval: 1), and its NaN makes the mean NaN.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> run = {"q": {"a": 0.9, "x": 0.8, "b": 0.7}}
    >>> [evaluate({"q": {"a": 1, "b": 1}}, run, m)[0].mean for m in ("bpref", "bpref_ranx")]
    [1.0, nan]
    """
    return _bpref(r, measure, undefined_without_nonrelevant=True)


def _bpref(r: Ranked, measure: Measure, *, undefined_without_nonrelevant: bool) -> Result:
    t = measure.flavor.rel_threshold
    rel, R = relevant(r, measure)
    n = r.n_queries
    N = K.segment_sum(r.jq, (r.jgrade < t).astype(np.float64), n)
    cut = in_cut(r, measure)
    nonrel = r.judged & ~rel & cut
    nonrel_above = K.cumulative_in_segment(r.q, nonrel.astype(np.int64)) - nonrel
    pick = rel & cut
    qq = r.q[pick]
    above = nonrel_above[pick].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 - np.minimum(above, R[qq]) / np.minimum(N[qq], R[qq])
    if not undefined_without_nonrelevant:  # trec_eval: nothing above counts 1, even when N = 0
        term = np.where(above > 0, term, 1.0)
    total = K.segment_sum(qq, term, n)
    return np.where(R > 0, total / np.maximum(R, 1), 0.0), R == 0


def success(r: Ranked, measure: Measure) -> Result:
    """1 if any relevant document is in the top k, else 0.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels, run = {"q": {"a": 2, "b": 0, "c": 1, "d": 1}}, {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "e": 0.6}}
    >>> [m.mean for m in evaluate(qrels, run, ["success@1", "success@1[rel=2]", "success@2[rel=3]"])]
    [1.0, 1.0, 0.0]
    """
    rel, R = relevant_set(r, measure)
    found = hits(r, rel & in_cut(r, measure))
    return (found > 0).astype(np.float64), R == 0


def judged(r: Ranked, measure: Measure) -> Result:
    """Documents with any judgment in the top k / min(k, retrieved) (ir_measures Judged@k).

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels, run = {"q": {"a": 2, "b": 0, "c": 1, "d": 1}}, {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "e": 0.6}}
    >>> [m.mean for m in evaluate(qrels, run, ["judged@2", "judged@10"])]
    [1.0, 0.75]
    """
    cut = in_cut(r, measure)
    found = K.segment_sum(r.q, (r.pooled & cut).astype(np.float64), r.n_queries)
    shown = r.n_ret.astype(np.float64) if measure.k is None else np.minimum(r.n_ret, measure.k).astype(np.float64)
    return np.where(shown > 0, found / np.maximum(shown, 1), 0.0), np.zeros(r.n_queries, dtype=bool)


for spec in (
    MetricSpec("P", ("p_divisor", "relevant_set", "nonpositive", *BINARY_KNOBS), precision, aliases=("precision", "p"),
               doc="Precision: relevant in the top k / k (short lists padded with non-relevant)."),
    MetricSpec("recall", ("relevant_set", "nonpositive", *BINARY_KNOBS), recall, aliases=("R",),
               doc="Recall: relevant in the top k / R."),
    MetricSpec("AP", ("ap_divisor", "relevant_set", "nonpositive", *BINARY_KNOBS), average_precision,
               aliases=("map", "map_cut"),
               doc="Average precision; AP@k sums ranks <= k, still divided by R (trec_eval map_cut; ap_divisor)."),
    MetricSpec("RR", ("relevant_set", "nonpositive", *BINARY_KNOBS), reciprocal_rank, aliases=("recip_rank", "mrr"),
               doc="Reciprocal rank of the first relevant document (within k), 0 if none."),
    MetricSpec("Rprec", ("relevant_set", *BINARY_KNOBS), r_precision, cutoff="none", aliases=("R-prec", "rprec"),
               doc="Precision at rank R (R = number of relevant judgments)."),
    MetricSpec("bpref", BINARY_KNOBS, bpref, doc="Binary preference, trec_eval's min(N, R) form."),
    MetricSpec("bpref_ranx", BINARY_KNOBS, bpref_ranx, cutoff="none",
               doc="Bpref as ranx computes it: NaN for a query with no judged non-relevant document."),
    MetricSpec("success", ("relevant_set", *BINARY_KNOBS), success, aliases=("hit_rate",),
               doc="1 if any relevant document in the top k."),
    MetricSpec("judged", tuple(x for x in INPUT_KNOBS if x != "unjudged"), judged, uses_empty=False,
               doc="Judged@k: documents with any judgment in the top k / min(k, retrieved)."),
):
    register(replace(spec, judged_only=True))
