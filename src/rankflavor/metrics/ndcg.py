"""DCG and NDCG over every flavor axis.

References
----------
K. Järvelin, J. Kekäläinen. "Cumulated gain-based evaluation of IR techniques". ACM TOIS 20(4), 2002.
F. McSherry, M. Najork. "Computing IR performance measures efficiently in the presence of tied
scores". ECIR 2008 (``ties=averaged``).
trec_eval 9.0.8 ``m_ndcg.c`` / ``m_ndcg_cut.c`` (global ideal, positive gains only).
Elasticsearch ``DiscountedCumulativeGain.java`` (``unknown_doc_rating``: DCG only); Spark
``RankingMetrics.ndcgAt`` (relevance triples: unsorted ideal); gdeval.pl (grades > 4 rejected).

The kernels read ranked, tie-resolved gains (:meth:`rankflavor.order.Ranked.gains`): the tie
rule, depth and condensing are the ordering's, never read here.

Examples
--------
>>> import rankflavor
>>> qrels = {"q1": {"a": 2, "b": 1}}
>>> run = {"q1": {"b": 0.9, "a": 0.9, "x": 0.5}}
>>> [round(rankflavor.evaluate(qrels, run, f"ndcg@2[ties={t}]")[0].mean, 4) for t in ("docno_desc", "averaged")]
[0.8597, 0.9299]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .. import kernels as K
from ..flavor import format_number
from .registry import INPUT_KNOBS, Breakdown, MetricSpec, register

if TYPE_CHECKING:
    from ..measure import Measure
    from ..order import GainFn, Ranked

Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]


def gain_of(measure: Measure) -> GainFn:
    """The gain rule of ``measure``: ``gain_fn(grade, judged, pooled)`` of ranked rows, for
    :meth:`Ranked.gains <rankflavor.order.Ranked.gains>` (which averages it over tie groups when
    the ordering says so).

    Under ``unjudged_grade`` (Elasticsearch ``unknown_doc_rating``) a document absent from the
    qrels earns that grade's gain, in the DCG only (the ideals never see it).

    >>> from rankflavor.measure import parse_measure
    >>> fn = gain_of(parse_measure("dcg@3[gain=exp2,unjudged_grade=1]"))
    >>> fn(np.array([2.0, 0.0]), np.array([True, False]), np.array([True, False])).tolist()
    [3.0, 1.0]
    """
    f = measure.flavor
    assumed = f.assumed_grade
    g_assumed = None if assumed is None else K.gain(np.array([assumed]), np.array([True]), f)[0]

    def gain_fn(grade: Floats, judged: Flags, pooled: Flags) -> Floats:
        g: Floats = K.gain(grade, judged, f)
        if g_assumed is not None:
            g = np.where(pooled, g, g_assumed)
        return g

    return gain_fn


def _dcg(r: Ranked, measure: Measure, denom: Floats) -> Floats:
    gain_fn = gain_of(measure)
    if measure.k is not None and (r.to_rank is None or r.to_rank > measure.k):
        # Only the top k rows count: gains for them alone (a large run has many more rows than k).
        top = np.flatnonzero(r.rank <= measure.k)
        g = r.gains(gain_fn, top)
        return K.segment_sum(r.q[top], g / denom[r.rank[top]], r.n_queries)
    g = r.gains(gain_fn)
    return K.segment_sum(r.q, g / denom[r.rank], r.n_queries)


def ideal_cut(r: Ranked, measure: Measure) -> Floats:
    """Per query, how many ideal slots count: all (``ideal_cut=none``), ``k``, or ``min(k, hits)``
    (``ideal_cut=hits``: what the ranking retrieved)."""
    f = measure.flavor
    n = r.n_queries
    if f.ideal_cut == "none":
        return np.full(n, np.inf)
    limit = np.inf if measure.k is None else float(measure.k)
    if f.ideal_cut == "hits":
        return np.minimum(limit, r.n_ret.astype(np.float64))
    return np.full(n, limit)


def _check_scale(r: Ranked, measure: Measure) -> None:
    """Reject a judgment above ``max_grade`` (gdeval dies on grades > 4 rather than score them)."""
    top = measure.flavor.top_grade
    if top is not None and len(r.jgrade) and float(r.jgrade.max()) > top:
        from ..errors import InputError

        bad = int((r.jgrade > top).sum())
        raise InputError(
            r.aligned.qrels_source,
            None,
            f"{bad} judgment(s) have a grade above max_grade={format_number(top)} (largest "
            f"{format_number(float(r.jgrade.max()))}); {measure.name} rejects them as its tool does. "
            "Raise max_grade or remap the grades",
        )


def dcg_kernel(r: Ranked, measure: Measure) -> tuple[Floats, Flags]:
    """DCG@k per query; no query is empty."""
    _check_scale(r, measure)
    denom = K.discount_denominators(measure.flavor, max(r.max_len, 1))
    dcg = _dcg(r, measure, denom)
    return dcg, np.zeros(r.n_queries, dtype=bool)


#: Knobs the global ideal depends on (with the cutoff): it reads the judgments only, so flavors
#: that differ in ordering knobs (ties, depth, ...) share it.
_IDEAL_KNOBS = ("gain", "discount", "ideal_cut", "max_grade", "min_grade", "rel", "negatives", "fractional")


def _global_ideal(r: Ranked, measure: Measure, cut: Floats) -> Floats:
    """IDCG over every usable judgment of each query, shared through ``r.shared`` by every
    ranking of the alignment: the sorted ideal lists by the knobs the gains depend on, the IDCG
    by those and the cutoff."""
    f = measure.flavor
    knobs = tuple(str(getattr(f, knob)) for knob in _IDEAL_KNOBS)
    lists_key = ("ndcg.ideal_lists", *(v for knob, v in zip(_IDEAL_KNOBS, knobs, strict=True)
                                       if knob not in ("discount", "ideal_cut")))

    def idcg() -> Floats:
        # The sorted ideal lists depend on the gains alone: every cutoff and discount shares them.
        lists = r.shared.get(lists_key, lambda: K.ideal_lists(r.jq, K.gain(r.jgrade, np.ones(len(r.jgrade), dtype=bool), f)))
        denom = K.discount_denominators(f, int(lists[2].max(initial=0)))  # to the longest list's last slot
        out: Floats = K.ideal_dcg_of(lists, cut, denom, r.n_queries)
        return out

    if f.ideal_cut == "hits":  # cut at what this ranking retrieved: not shared
        return idcg()
    return r.shared.get(("ndcg.global_ideal", measure.k, *knobs), idcg)


def supplied_judgments(r: Ranked) -> tuple[npt.NDArray[np.integer], Floats]:
    """The usable judgments (query code, grade) in the order ``ideal=as_supplied`` reads them:
    grouped by query, each query's in docno order (:attr:`Aligned.qrels_docno_order
    <rankflavor.align.Aligned.qrels_docno_order>`), never sorted by grade.

    Spark's ``RankingMetrics.ndcgAt`` with relevance triples sums its "ideal" over the label array
    in the order the caller built it; the docno order is what a caller building it from a TREC
    qrels file as NIST distributes it (sorted by query, then docno) passes, and it does not
    depend on the order the lines were read in. Judgments whose docnos are not known (labelled
    groups) keep the order they were given in.
    """
    from dataclasses import replace

    from ..order import grades

    a = r.aligned
    order = None if a is None else a.qrels_docno_order
    if order is None:
        by_query = np.argsort(r.jq, kind="stable")
        return r.jq[by_query], r.jgrade[by_query]
    sorted_ = replace(a, qrels_q=a.qrels_q[order], qrels_grade=a.qrels_grade[order], qrels_doc=None)
    # truncating whole grades changes nothing, so truncate whenever the ordering says so
    return grades.judgments(sorted_, r.ordering, truncate=r.ordering.fractional == "truncate")


def ndcg_kernel(r: Ranked, measure: Measure) -> tuple[Floats, Flags]:
    """NDCG@k per query, and which queries have nothing to find (IDCG = 0)."""
    f = measure.flavor
    n = r.n_queries
    _check_scale(r, measure)
    cut = ideal_cut(r, measure)
    # Ranks of the list (the DCG; the local, recall and max ideals' slots): the ideals made of
    # the judgments make their own, as long as the longest list of judgments.
    denom = K.discount_denominators(f, max(r.max_len, f.recall_depth or 0, measure.k or 0, 1))
    dcg = _dcg(r, measure, denom)
    idcg: Floats
    if f.ideal == "global":
        idcg = _global_ideal(r, measure, cut)
    elif f.ideal == "max":
        top = f.top_grade
        if top is None:
            from ..errors import FlavorError

            raise FlavorError("ideal=max needs the top grade of the label scale: set max_grade=G")
        g_top = float(K.gain(np.array([top]), np.array([True]), f)[0])
        # Uncut: one slot per retrieved document; otherwise the cut (k, or min(k, hits)).
        slots = np.where(np.isinf(cut), r.n_ret, cut).astype(np.int64)
        cum = np.concatenate([[0.0], np.cumsum(g_top / denom[1:])])
        idcg = cum[slots]
    elif f.ideal == "as_supplied":
        # Spark triples: the judgments unsorted by grade, in docno order; every judgment keeps its slot.
        jq, jgrade = supplied_judgments(r)
        jg = K.gain(jgrade, np.ones(len(jq), dtype=bool), f)
        slot = K.rank_within(jq)
        keep = slot <= cut[jq]
        by_slot = K.discount_denominators(f, int(slot.max(initial=0)))  # a slot per judgment
        idcg = K.segment_sum(jq[keep], jg[keep] / by_slot[slot[keep]], n)
    else:
        g = K.gain(r.grade, r.judged, f)
        pick = np.ones(len(g), dtype=bool) if f.ideal == "local" else r.rank <= (f.recall_depth or 0)
        idcg = K.ideal_dcg(r.q[pick], g[pick], cut, denom, n)
    empty = idcg <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(empty, 0.0, dcg / np.where(empty, 1.0, idcg))
    return values, empty


def _judged_only(measure: Measure) -> bool:
    """Unjudged rows gain nothing unless they earn an assumed grade; averaged ties need whole groups."""
    return measure.flavor.assumed_grade is None and measure.flavor.ties != "averaged"


def _top_rows(measure: Measure) -> int | None:
    """DCG@k with averaged ties reads unjudged rows only in the tie groups reaching rank k (their
    sizes); the ideals read judged rows. Not the recall ideal: it reads ranks below k, which the
    order inside a tie group decides."""
    f = measure.flavor
    if measure.k is None or f.ties != "averaged" or str(getattr(f, "ideal", "global")).startswith("recall"):
        return None
    return int(measure.k)


def _reads_to(measure: Measure) -> int | None:
    """NDCG@k and DCG@k read no row below rank k, nor the recall ideal below its depth; the
    local ideal reads every row, averaged ties whole tie groups."""
    f = measure.flavor
    if measure.k is None or f.ties == "averaged" or getattr(f, "ideal", "global") == "local":
        return None
    return max(int(measure.k), f.recall_depth or 0)


register(
    MetricSpec(
        "ndcg",
        ("gain", "discount", "ideal", "ideal_cut", "max_grade", "min_grade", "unjudged_grade", "rel", *INPUT_KNOBS),
        ndcg_kernel,
        aliases=("nDCG", "ndcg_cut"),
        doc="Normalised discounted cumulative gain: DCG@k / IDCG under the ideal and ideal_cut knobs.",
        judged_only=_judged_only,
        top_rows=_top_rows,
        reads_to=_reads_to,
        uses_ideal=True,
        knob_when=(("rel", lambda f: f.gain == "binary"),),  # rel sets only binary gain's threshold
        breakdown=Breakdown(gain_of, ideal_cut),
        top_grade_when=lambda f: f.ideal == "max",
    )
)
register(
    MetricSpec(
        "dcg",
        ("gain", "discount", "max_grade", "min_grade", "unjudged_grade", "rel", *INPUT_KNOBS),
        dcg_kernel,
        doc="Discounted cumulative gain (not normalised).",
        uses_empty=False,
        judged_only=_judged_only,
        top_rows=_top_rows,
        reads_to=_reads_to,
        knob_when=(("rel", lambda f: f.gain == "binary"),),  # rel sets only binary gain's threshold
        breakdown=Breakdown(gain_of),
    )
)
