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

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from rankflavor.base import kernels as K
from rankflavor.flavor.flavor import format_number
from rankflavor.metrics.gains import discount_denominators, discounts, gain
from rankflavor.metrics.registry import INPUT_KNOBS, Breakdown, IdealList, MetricSpec, register

if TYPE_CHECKING:
    from rankflavor.flavor.flavor import Flavor
    from rankflavor.metrics.measure import Measure
    from rankflavor.order import GainFn, Ranked

Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]

#: ``value_of(grade, judged)``: what a candidate of an ideal list holds (NDCG: its gain).
ValueFn = Callable[[Floats, Flags], Floats]


def gain_of(measure: Measure) -> GainFn:
    """The gain rule of ``measure``: ``gain_fn(grade, judged, pooled)`` of ranked rows, for
    :meth:`Ranked.gains <rankflavor.order.Ranked.gains>` (which averages it over tie groups when
    the ordering says so).

    Under ``unjudged_grade`` (Elasticsearch ``unknown_doc_rating``) a document absent from the
    qrels earns that grade's gain, in the DCG only (the ideals never see it).

    >>> from rankflavor.metrics.measure import parse_measure
    >>> fn = gain_of(parse_measure("dcg@3[gain=exp2,unjudged_grade=1]"))
    >>> fn(np.array([2.0, 0.0]), np.array([True, False]), np.array([True, False])).tolist()
    [3.0, 1.0]
    """
    f = measure.flavor
    assumed = f.assumed_grade
    g_assumed = None if assumed is None else gain(np.array([assumed]), np.array([True]), f)[0]

    def gain_fn(grade: Floats, judged: Flags, pooled: Flags) -> Floats:
        g: Floats = gain(grade, judged, f)
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


#: Where each kind of ideal (the ``ideal`` knob's :attr:`~rankflavor.flavor.flavor.TypedKnobs.ideal_kind`)
#: takes its list from, sorted (values > 0 only, largest first) unless said:
#:
#: * ``judgments``: every usable judgment of the query, retrieved or not (trec_eval);
#: * ``rows``: the ranked rows, after depth and condensing (scikit-learn, LightGBM);
#: * ``top_rows``: the ranked rows down to rank K (``recall@K``);
#: * ``top_grade``: the top grade's value in every slot (the cut's slots; uncut, one per ranked row);
#: * ``judgments_as_supplied``: every usable judgment in :func:`as_supplied_order`, unsorted, a
#:   zero keeping its slot (Spark's relevance triples).
#:
#: The NDCG and nERR kernels build their ideals by it, and :mod:`rankflavor.torch` maps it.
IDEAL_SOURCES: dict[str, str] = {
    "global": "judgments", "local": "rows", "recall": "top_rows", "max": "top_grade",
    "as_supplied": "judgments_as_supplied",
}

#: Where the ``ideal_cut`` knob cuts the ideal list: (at the cutoff k, at the rows ranked); the
#: list keeps as many slots as the smallest of those that apply (all: none applies, or no k).
IDEAL_CUTS: dict[str, tuple[bool, bool]] = {"none": (False, False), "k": (True, False), "hits": (True, True)}


def ideal_cut(r: Ranked, measure: Measure) -> Floats:
    """Per query, how many ideal slots count (:data:`IDEAL_CUTS`): all (``ideal_cut=none``),
    ``k``, or ``min(k, hits)`` (``ideal_cut=hits``: what the ranking retrieved)."""
    at_k, at_hits = IDEAL_CUTS[measure.flavor.ideal_cut]
    limit = float(measure.k) if at_k and measure.k is not None else np.inf
    if at_hits:
        return np.minimum(limit, r.n_ret.astype(np.float64))
    return np.full(r.n_queries, limit)


def as_supplied_order(r: Ranked) -> npt.NDArray[np.int64]:
    """The usable judgments (``r.jq``, ``r.jgrade``) in the order ``ideal=as_supplied`` lists
    them: grouped by query, each query's in docno order (:attr:`Aligned.qrels_docno_order
    <rankflavor.align.Aligned.qrels_docno_order>`), never sorted by grade.

    Spark's ``RankingMetrics.ndcgAt`` with relevance triples sums its "ideal" over the label array
    in the order the caller built it; the docno order is what a caller building it from a TREC
    qrels file as NIST distributes it (sorted by query, then docno) passes, and it does not
    depend on the order the lines were read in. Judgments whose docnos are not known (labelled
    groups) keep the order they were given in.
    """
    from rankflavor.order import grades

    a = r.aligned
    order = None if a is None else a.qrels_docno_order
    if order is None:
        return np.argsort(r.jq, kind="stable")
    place = np.empty(len(order), dtype=np.int64)
    place[order] = np.arange(len(order))
    truncate = grades.truncates(r.ordering, grades.count_fractional(a.qrels_grade))
    usable = grades.usable_judgments(a, r.ordering, truncate)  # r.jq is a.qrels_q[usable]
    return np.argsort(place[usable], kind="stable")


def top_value(measure: Measure, value_of: ValueFn) -> float:
    """``value_of`` the top grade (``max_grade``), which ``ideal=max`` puts in every slot; a
    :class:`~rankflavor.errors.FlavorError` when the flavor names none."""
    top = measure.flavor.top_grade
    if top is None:
        from rankflavor.errors import FlavorError

        raise FlavorError("ideal=max needs the top grade of the label scale: set max_grade=G")
    return float(value_of(np.array([top]), np.array([True]))[0])


def ideal_list(r: Ranked, measure: Measure, value_of: ValueFn | None = None,
               shared_key: Hashable | None = None) -> IdealList:
    """The ideal list of every query under the ``ideal`` and ``ideal_cut`` knobs
    (:data:`IDEAL_SOURCES`, :func:`ideal_cut`): what the NDCG kernel divides by, and what
    :func:`rankflavor.analysis.explain.api.explain` shows.

    Parameters
    ----------
    value_of : the value of a candidate (default: its gain under the flavor); nERR passes its
        stopping probability.
    shared_key : a key under which the sorted judgment lists are shared by every ranking of the
        alignment (``r.shared``), when they depend on no more than it says.
    """
    f = measure.flavor
    build = _BUILDERS[IDEAL_SOURCES[f.ideal_kind]]
    return build(r, measure, value_of or _gain_value(f), ideal_cut(r, measure), shared_key)


#: The most slots ``ideal=max`` may fill when the kernels sum its discounts (:func:`top_grade_sums`):
#: cut at k, its list has k slots whatever the run holds, and the sum of k discounts has no closed
#: form for log2. Up to this many are added in chunks of :data:`~rankflavor.base.kernels.RUNNING_CHUNK`
#: (about two seconds at the limit; memory bounded); beyond it, a :class:`~rankflavor.errors.FlavorError`
#: naming the limit. nERR's ideal needs none: its terms vanish (:mod:`rankflavor.metrics.err`).
MAX_SUMMED_SLOTS = 1 << 27

#: The most slots of ``ideal=max`` a listed ideal (:func:`ideal_list`, what explain shows slot by slot) holds.
MAX_LISTED_SLOTS = 1 << 20


def _too_many_slots(measure: Measure, slots: int, limit: int, what: str) -> None:
    if slots > limit:
        from rankflavor.errors import FlavorError

        where = "no cutoff: one per document retrieved" if measure.k is None else (
            f"ideal_cut={measure.flavor.ideal_cut} at k={measure.k:,}")
        raise FlavorError(
            f"{measure.name}: ideal=max puts the top grade in every one of its {slots:,} slots ({where}), more "
            f"than the {limit:,} {what}; use a cutoff of at most {limit:,}"
            + ("" if measure.k is None else ", or ideal_cut=hits (the slots the run retrieved)"))


def top_grade_sums(measure: Measure, value: float, slots: npt.NDArray[np.int64]) -> Floats:
    """Per query, the ideal DCG of ``value`` (the top grade's gain, or its contribution) in each of
    its ``slots``: ``sum(value / discount(i) for i in 1..slots)``, added slot by slot as the
    segment sum of the listed ideal adds them (bit for bit: tests/analysis/explain/test_explain.py), in chunks so
    memory stays bounded when k exceeds every list (:func:`~rankflavor.base.kernels.running_sums`);
    refused above :data:`MAX_SUMMED_SLOTS`."""
    f = measure.flavor
    _too_many_slots(measure, int(slots.max(initial=0)), MAX_SUMMED_SLOTS,
                    "slots its ideal DCG is summed over (rankflavor.metrics.ndcg.MAX_SUMMED_SLOTS)")
    return K.running_sums(lambda i: value / discounts(f, i), slots)


def _top_grade(r: Ranked, measure: Measure, value_of: ValueFn, cut: Floats, _: Any) -> IdealList:
    value = top_value(measure, value_of)
    slots = top_grade_slots(r, cut)
    _too_many_slots(measure, int(slots.max(initial=0)), MAX_LISTED_SLOTS,
                    "slots its listed ideal holds (rankflavor.metrics.ndcg.MAX_LISTED_SLOTS)")
    q = np.repeat(np.arange(r.n_queries), slots)
    return IdealList(q, K.rank_within(q, slots), np.full(len(q), value), np.ones(len(q), dtype=bool),
                     np.full(len(q), -1, dtype=np.int64), "none")


def top_grade_slots(r: Ranked, cut: Floats) -> npt.NDArray[np.int64]:
    """Slots of the ``top_grade`` ideal per query: the cut (k, or min(k, hits)); uncut, one per
    retrieved document."""
    slots: npt.NDArray[np.int64] = np.where(np.isinf(cut), r.n_ret, cut).astype(np.int64)
    return slots


def _as_supplied(r: Ranked, measure: Measure, value_of: ValueFn, cut: Floats, _: Any) -> IdealList:
    index = as_supplied_order(r)
    q = r.jq[index]
    slot = K.rank_within(q)
    value = value_of(r.jgrade[index], np.ones(len(index), dtype=bool))
    return IdealList(q, slot, value, slot <= cut[q], index.astype(np.int64, copy=False), "judgments")


def _judgments(r: Ranked, measure: Measure, value_of: ValueFn, cut: Floats, shared_key: Hashable | None) -> IdealList:
    def build() -> Sorted:
        return _sorted(r.jq, value_of(r.jgrade, np.ones(len(r.jgrade), dtype=bool)))

    q, value, slot, index = build() if shared_key is None else r.shared.get(shared_key, build)
    return IdealList(q, slot, value, slot <= cut[q], index, "judgments")


def _rows(r: Ranked, measure: Measure, value_of: ValueFn, cut: Floats, _: Any) -> IdealList:
    if IDEAL_SOURCES[measure.flavor.ideal_kind] == "rows":
        q, value, slot, at = _sorted(r.q, value_of(r.grade, r.judged))
        return IdealList(q, slot, value, slot <= cut[q], at, "rows")
    pick = np.flatnonzero(r.rank <= (measure.flavor.recall_depth or 0))
    q, value, slot, at = _sorted(r.q[pick], value_of(r.grade[pick], r.judged[pick]))
    return IdealList(q, slot, value, slot <= cut[q], pick[at], "rows")


#: Each query's values > 0 sorted: (query code, value, 1-based slot, candidate index), grouped by query.
Sorted = tuple[npt.NDArray[np.integer], Floats, npt.NDArray[np.int64], npt.NDArray[np.int64]]

_BUILDERS: dict[str, Callable[[Ranked, Measure, ValueFn, Floats, Any], IdealList]] = {
    "judgments": _judgments, "rows": _rows, "top_rows": _rows, "top_grade": _top_grade,
    "judgments_as_supplied": _as_supplied,
}


def _sorted(q: npt.NDArray[np.integer], value: Floats) -> Sorted:
    """Each query's values > 0, largest first (equal values in candidate order): query code,
    value, 1-based slot and the candidate's index, grouped by query."""
    positive = np.flatnonzero(value > 0)
    order = positive[np.lexsort((-value[positive], q[positive]))]
    q = q[order]
    return q, value[order], K.rank_within(q), order


def _gain_value(f: Flavor) -> ValueFn:
    def value_of(grade: Floats, judged: Flags) -> Floats:
        out: Floats = gain(grade, judged, f)
        return out

    return value_of


def _check_scale(r: Ranked, measure: Measure) -> None:
    """Reject a judgment above ``max_grade`` (gdeval dies on grades > 4 rather than score them)."""
    top = measure.flavor.top_grade
    if top is not None and len(r.jgrade) and float(r.jgrade.max()) > top:
        from rankflavor.errors import InputError

        raise InputError(r.aligned.qrels_source, None,
                         above_scale(measure, int((r.jgrade > top).sum()), float(r.jgrade.max())))


def above_scale(measure: Measure, n: int, largest: float) -> str:
    """The message refusing ``n`` judgments above ``max_grade`` (the largest ``largest``)."""
    return (f"{n} judgment(s) have a grade above max_grade={format_number(measure.flavor.top_grade or 0.0)} "
            f"(largest {format_number(largest)}); {measure.name} rejects them as its tool does. "
            "Raise max_grade or remap the grades")


def dcg_kernel(r: Ranked, measure: Measure) -> tuple[Floats, Flags]:
    """DCG@k per query; no query is empty."""
    _check_scale(r, measure)
    denom = discount_denominators(measure.flavor, max(r.max_len, 1))
    dcg = _dcg(r, measure, denom)
    return dcg, np.zeros(r.n_queries, dtype=bool)


#: Knobs the global ideal depends on (with the cutoff): it reads the judgments only, so flavors
#: that differ in ordering knobs (ties, depth, ...) share it.
_IDEAL_KNOBS = ("gain", "discount", "ideal_cut", "max_grade", "min_grade", "rel", "negatives", "fractional")


def idcg(r: Ranked, measure: Measure) -> Floats:
    """IDCG per query: the counted slots of :func:`ideal_list`, each gain / discount, summed in
    slot order. The global ideal is shared through ``r.shared`` by every ranking of the
    alignment: its sorted lists by the knobs the gains depend on, the IDCG by those and the
    cutoff (unless cut at what each ranking retrieved)."""
    f = measure.flavor
    source = IDEAL_SOURCES[f.ideal_kind]
    if source == "top_grade":
        # The same sums without the list of every query's slots: one running sum of the top
        # gain's contributions, slot by slot as the list's segment sum adds them, read at each
        # query's last slot (explain's list of them equals it bit for bit: tests/analysis/explain/test_explain.py).
        return top_grade_sums(measure, top_value(measure, _gain_value(f)), top_grade_slots(r, ideal_cut(r, measure)))
    lists_key = None
    if source == "judgments":
        lists_key = ("ndcg.ideal_lists", *(str(getattr(f, knob)) for knob in _IDEAL_KNOBS
                                           if knob not in ("discount", "ideal_cut")))

    def compute() -> Floats:
        lst = ideal_list(r, measure, shared_key=lists_key)
        q, slot = lst.q[lst.counted], lst.slot[lst.counted]
        denom = discount_denominators(f, int(slot.max(initial=1)))
        return K.segment_sum(q, lst.value[lst.counted] / denom[slot], r.n_queries)

    _, at_hits = IDEAL_CUTS[f.ideal_cut]
    if lists_key is None or at_hits:  # cut at what this ranking retrieved: not shared
        return compute()
    return r.shared.get(("ndcg.global_ideal", measure.k, *(str(getattr(f, knob)) for knob in _IDEAL_KNOBS)), compute)


def ndcg_kernel(r: Ranked, measure: Measure) -> tuple[Floats, Flags]:
    """NDCG@k per query, and which queries have nothing to find (IDCG = 0)."""
    _check_scale(r, measure)
    denom = discount_denominators(measure.flavor, max(r.max_len, 1))
    dcg = _dcg(r, measure, denom)
    ideal = idcg(r, measure)
    empty = ideal <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(empty, 0.0, dcg / np.where(empty, 1.0, ideal))
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
        breakdown=Breakdown(gain_of, ideal_cut, ideal_list),
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
