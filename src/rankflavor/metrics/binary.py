"""Binary-relevance metrics with trec_eval 9.0.8 semantics (relevant iff judged grade >= rel).

References: trec_eval ``m_P.c``, ``m_recall.c``, ``m_map.c``, ``m_map_cut.c``, ``m_recip_rank.c``,
``m_Rprec.c``, ``m_bpref.c`` (C. Buckley, E. Voorhees, "Retrieval evaluation with incomplete
information", SIGIR 2004), ``m_success.c``; ir_measures ``Judged@k``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import kernels as K
from .registry import INPUT_KNOBS, MetricSpec, register

BINARY_KNOBS = ("rel", *INPUT_KNOBS)


def _relevant(r, measure):  # type: ignore[no-untyped-def]
    t = measure.flavor.rel_threshold
    rel = r.judged & (r.grade >= t)
    n = r.n_queries
    R = K.segment_sum(r.jq, (r.jgrade >= t).astype(np.float64), n)
    return rel, R


def _in_cut(r, measure) -> np.ndarray:  # type: ignore[no-untyped-def]
    return np.ones(len(r.q), dtype=bool) if measure.k is None else r.rank <= measure.k


def precision(r, measure):  # type: ignore[no-untyped-def]
    rel, R = _relevant(r, measure)
    hits = K.segment_sum(r.q, (rel & _in_cut(r, measure)).astype(np.float64), r.n_queries)
    if measure.k is None:  # whole list: relevant retrieved / retrieved (trec_eval set_P)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(r.n_ret > 0, hits / np.maximum(r.n_ret, 1), 0.0), R == 0
    if measure.flavor.p_divisor == "hits":  # Quepid, Elasticsearch: divide by what was shown
        shown = np.minimum(r.n_ret, measure.k)
        return np.where(shown > 0, hits / np.maximum(shown, 1), 0.0), R == 0
    return hits / measure.k, R == 0


def recall(r, measure):  # type: ignore[no-untyped-def]
    rel, R = _relevant(r, measure)
    hits = K.segment_sum(r.q, (rel & _in_cut(r, measure)).astype(np.float64), r.n_queries)
    return np.where(R > 0, hits / np.maximum(R, 1), 0.0), R == 0


def average_precision(r, measure):  # type: ignore[no-untyped-def]
    rel, R = _relevant(r, measure)
    cum = K.cumulative_in_segment(r.q, rel.astype(np.int64))
    pick = rel & _in_cut(r, measure)
    total = K.segment_sum(r.q[pick], cum[pick] / r.rank[pick], r.n_queries)
    return np.where(R > 0, total / np.maximum(R, 1), 0.0), R == 0


def reciprocal_rank(r, measure):  # type: ignore[no-untyped-def]
    rel, R = _relevant(r, measure)
    first = K.first_rank(r.q, r.rank, rel & _in_cut(r, measure), r.n_queries)
    return np.where(first > 0, 1.0 / np.maximum(first, 1), 0.0), R == 0


def r_precision(r, measure):  # type: ignore[no-untyped-def]
    rel, R = _relevant(r, measure)
    hits = K.segment_sum(r.q, (rel & (r.rank <= R[r.q])).astype(np.float64), r.n_queries)
    return np.where(R > 0, hits / np.maximum(R, 1), 0.0), R == 0


def bpref(r, measure):  # type: ignore[no-untyped-def]
    t = measure.flavor.rel_threshold
    rel, R = _relevant(r, measure)
    n = r.n_queries
    N = K.segment_sum(r.jq, (r.jgrade < t).astype(np.float64), n)
    in_cut = _in_cut(r, measure)
    nonrel = r.judged & ~rel & in_cut
    nonrel_above = K.cumulative_in_segment(r.q, nonrel.astype(np.int64)) - nonrel
    pick = rel & in_cut
    qq = r.q[pick]
    above = nonrel_above[pick].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(above > 0, 1.0 - np.minimum(above, R[qq]) / np.minimum(N[qq], R[qq]), 1.0)
    total = K.segment_sum(qq, term, n)
    return np.where(R > 0, total / np.maximum(R, 1), 0.0), R == 0


def success(r, measure):  # type: ignore[no-untyped-def]
    rel, R = _relevant(r, measure)
    hits = K.segment_sum(r.q, (rel & _in_cut(r, measure)).astype(np.float64), r.n_queries)
    return (hits > 0).astype(np.float64), R == 0


def judged(r, measure):  # type: ignore[no-untyped-def]
    in_cut = _in_cut(r, measure)
    hits = K.segment_sum(r.q, (r.pooled & in_cut).astype(np.float64), r.n_queries)
    shown = r.n_ret.astype(np.float64) if measure.k is None else np.minimum(r.n_ret, measure.k).astype(np.float64)
    return np.where(shown > 0, hits / np.maximum(shown, 1), 0.0), np.zeros(r.n_queries, dtype=bool)


for spec in (
    MetricSpec("P", ("p_divisor", *BINARY_KNOBS), precision, aliases=("precision", "p"),
               doc="Precision: relevant in the top k / k (short lists padded with non-relevant)."),
    MetricSpec("recall", BINARY_KNOBS, recall, aliases=("R",), doc="Recall: relevant in the top k / R."),
    MetricSpec("AP", BINARY_KNOBS, average_precision, aliases=("map", "map_cut"),
               doc="Average precision; AP@k sums ranks <= k, still divided by R (trec_eval map_cut)."),
    MetricSpec("RR", BINARY_KNOBS, reciprocal_rank, aliases=("recip_rank", "mrr"),
               doc="Reciprocal rank of the first relevant document (within k), 0 if none."),
    MetricSpec("Rprec", BINARY_KNOBS, r_precision, cutoff="none", aliases=("R-prec", "rprec"),
               doc="Precision at rank R (R = number of relevant judgments)."),
    MetricSpec("bpref", BINARY_KNOBS, bpref, doc="Binary preference, trec_eval's min(N, R) form."),
    MetricSpec("success", BINARY_KNOBS, success, aliases=("hit_rate",), doc="1 if any relevant document in the top k."),
    MetricSpec("judged", tuple(x for x in INPUT_KNOBS if x != "unjudged"), judged, uses_empty=False,
               doc="Judged@k: documents with any judgment in the top k / min(k, retrieved)."),
):
    register(replace(spec, judged_only=True))
