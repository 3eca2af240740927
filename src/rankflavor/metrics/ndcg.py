"""DCG and NDCG over every flavor axis.

References
----------
K. Järvelin, J. Kekäläinen. "Cumulated gain-based evaluation of IR techniques". ACM TOIS 20(4), 2002.
F. McSherry, M. Najork. "Computing IR performance measures efficiently in the presence of tied
scores". ECIR 2008 (``ties=averaged``).
trec_eval 9.0.8 ``m_ndcg.c`` / ``m_ndcg_cut.c`` (global ideal, positive gains only).
Elasticsearch ``DiscountedCumulativeGain.java`` (``unknown_doc_rating``: DCG only); Spark
``RankingMetrics.ndcgAt`` (relevance triples: unsorted ideal); gdeval.pl (grades > 4 rejected).
"""

from __future__ import annotations

import numpy as np

from .. import kernels as K
from ..flavor import format_number
from .registry import INPUT_KNOBS, Breakdown, MetricSpec, register


def _row_gains(r, measure, rows: np.ndarray | None = None, average: bool = True) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Gain of every ranked row, or of ``rows`` only (then not averaged over tie groups, which
    needs whole groups: see :func:`_averaged_gains`)."""
    pick = (lambda a: a) if rows is None else (lambda a: a[rows])
    g = K.gain(pick(r.grade), pick(r.judged), measure.flavor)
    assumed = measure.flavor.assumed_grade
    if assumed is not None:
        # Elasticsearch unknown_doc_rating: documents absent from the qrels earn this grade's gain
        # in the DCG only (the ideals below never see it).
        g_assumed = K.gain(np.array([assumed]), np.array([True]), measure.flavor)[0]
        g = np.where(pick(r.pooled), g, g_assumed)
    if measure.flavor.ties == "averaged" and average and len(g):
        if rows is not None:
            raise ValueError("averaged ties need the gains of whole tie groups")
        # McSherry-Najork: every row of a tie group earns the group's mean gain.
        sums = np.bincount(r.tie_group, weights=g)
        sizes = np.bincount(r.tie_group)
        g = (sums / sizes)[r.tie_group]
    return g


def _averaged_gains(r, measure, top: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Mean gain of the tie group of each row in ``top``, summing only the groups that reach
    into ``top`` (in row order, as over the whole list: the same sums bit for bit)."""
    tie_group = r.tie_group  # non-decreasing along the rows
    groups = K.distinct(tie_group[top])
    start = np.searchsorted(tie_group, groups, side="left")
    size = np.searchsorted(tie_group, groups, side="right") - start
    g = _row_gains(r, measure, K.ranges(start, size), average=False)
    mean = np.bincount(np.repeat(np.arange(len(groups)), size), weights=g, minlength=len(groups)) / size
    return mean[np.searchsorted(groups, tie_group[top])]


def _dcg(r, measure, denom) -> np.ndarray:  # type: ignore[no-untyped-def]
    if measure.k is not None:
        # Only the top k rows count: gains for them alone (a large run has ~100x more rows).
        top = np.flatnonzero(r.rank <= measure.k)
        if measure.flavor.ties == "averaged" and len(top):
            g = _averaged_gains(r, measure, top)
        else:
            g = _row_gains(r, measure, top)
        return K.segment_sum(r.q[top], g / denom[r.rank[top]], r.n_queries)
    g = _row_gains(r, measure)
    mask = np.ones(len(g), dtype=bool) if measure.k is None else r.rank <= measure.k
    return K.segment_sum(r.q[mask], g[mask] / denom[r.rank[mask]], r.n_queries)


def _ideal_cut(r, measure) -> np.ndarray:  # type: ignore[no-untyped-def]
    f = measure.flavor
    n = r.n_queries
    if f.ideal_cut == "none":
        return np.full(n, np.inf)
    limit = np.inf if measure.k is None else float(measure.k)
    if f.ideal_cut == "hits":
        return np.minimum(limit, r.n_ret.astype(np.float64))
    return np.full(n, limit)


def _check_scale(r, measure) -> None:  # type: ignore[no-untyped-def]
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


def dcg_kernel(r, measure):  # type: ignore[no-untyped-def]
    _check_scale(r, measure)
    denom = K.discount_denominators(measure.flavor, max(r.max_len, 1))
    dcg = _dcg(r, measure, denom)
    return dcg, np.zeros(r.n_queries, dtype=bool)


#: Knobs the global ideal depends on (with the cutoff): it reads the judgments only, so flavors
#: that differ in ordering knobs (ties, depth, ...) share it.
_IDEAL_KNOBS = ("gain", "discount", "ideal_cut", "max_grade", "min_grade", "rel", "negatives", "fractional")


def _global_ideal(r, measure, cut: np.ndarray, denom: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    f = measure.flavor
    memo = r.aligned.memo
    key = ("global_ideal", measure.k, *(getattr(f, knob) for knob in _IDEAL_KNOBS))
    if f.ideal_cut == "hits" or key not in memo:  # "hits" cuts at what this ranking retrieved
        # The sorted ideal lists depend on the gains alone: every cutoff and discount shares them.
        lists_key = ("ideal_lists", *(getattr(f, knob) for knob in _IDEAL_KNOBS if knob not in ("discount", "ideal_cut")))
        if lists_key not in memo:
            memo[lists_key] = K.ideal_lists(r.jq, K.gain(r.jgrade, np.ones(len(r.jgrade), dtype=bool), f))
        idcg = K.ideal_dcg_of(memo[lists_key], cut, denom, r.n_queries)
        if f.ideal_cut == "hits":
            return idcg
        memo[key] = idcg
    return memo[key]


def ndcg_kernel(r, measure):  # type: ignore[no-untyped-def]
    f = measure.flavor
    n = r.n_queries
    _check_scale(r, measure)
    cut = _ideal_cut(r, measure)
    longest = max(r.max_len, int(np.bincount(r.jq, minlength=n).max()) if len(r.jq) else 0, 1)
    longest = max(longest, f.recall_depth or 0, measure.k or 0)
    denom = K.discount_denominators(f, longest)
    dcg = _dcg(r, measure, denom)
    if f.ideal == "global":
        idcg = _global_ideal(r, measure, cut, denom)
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
        # Spark triples: the judgments in file order, unsorted; every judgment keeps its slot.
        by_query = np.argsort(r.jq, kind="stable")
        jq = r.jq[by_query]
        jg = K.gain(r.jgrade[by_query], np.ones(len(jq), dtype=bool), f)
        slot = K.rank_within(jq)
        keep = slot <= cut[jq]
        idcg = K.segment_sum(jq[keep], jg[keep] / denom[slot[keep]], n)
    else:
        g = K.gain(r.grade, r.judged, f)
        pick = np.ones(len(g), dtype=bool) if f.ideal == "local" else r.rank <= (f.recall_depth or 0)
        idcg = K.ideal_dcg(r.q[pick], g[pick], cut, denom, n)
    empty = idcg <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(empty, 0.0, dcg / np.where(empty, 1.0, idcg))
    return values, empty


def _judged_only(measure) -> bool:  # type: ignore[no-untyped-def]
    """Unjudged rows gain nothing unless they earn an assumed grade; averaged ties need whole groups."""
    return measure.flavor.assumed_grade is None and measure.flavor.ties != "averaged"


def _top_rows(measure) -> int | None:  # type: ignore[no-untyped-def]
    """DCG@k with averaged ties reads unjudged rows only in the tie groups reaching rank k (their
    sizes); the ideals read judged rows. Not the recall ideal: it reads ranks below k, which the
    order inside a tie group decides."""
    f = measure.flavor
    if measure.k is None or f.ties != "averaged" or str(getattr(f, "ideal", "global")).startswith("recall"):
        return None
    return int(measure.k)


register(
    MetricSpec(
        "ndcg",
        ("gain", "discount", "ideal", "ideal_cut", "max_grade", "min_grade", "unjudged_grade", "rel", *INPUT_KNOBS),
        ndcg_kernel,
        aliases=("nDCG", "ndcg_cut"),
        doc="Normalised discounted cumulative gain: DCG@k / IDCG under the ideal and ideal_cut knobs.",
        judged_only=_judged_only,
        top_rows=_top_rows,
        uses_ideal=True,
        knob_when=(("rel", lambda f: f.gain == "binary"),),  # rel sets only binary gain's threshold
        breakdown=Breakdown(_row_gains, _ideal_cut),
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
        knob_when=(("rel", lambda f: f.gain == "binary"),),  # rel sets only binary gain's threshold
        breakdown=Breakdown(_row_gains),
    )
)
