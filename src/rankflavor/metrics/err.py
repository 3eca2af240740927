"""Expected reciprocal rank (cascade user model) and its normalised form nERR.

References
----------
O. Chapelle, D. Metzler, Y. Zhang, P. Grinspan. "Expected reciprocal rank for graded relevance".
CIKM 2009. R(g) = (2^g - 1) / 2^G; ERR@k = sum_{r<=k} (1/r) R_r prod_{i<r} (1 - R_i).
gdeval.pl 1.2a (``$MAX_JUDGMENT = 4``), Quepid ``err@10.js`` (G = 3), Elasticsearch
``ExpectedReciprocalRank.java`` (``maximum_relevance``, ``unknown_doc_rating``), NTCIREVAL
(mpkato/pyNTCIREVAL ``metrics/grade_metric.py``: ``_err_grade`` = gain / (max gain + 1)).

The top grade G is the scale's (``max_grade``, or a declared :class:`~rankflavor.analysis.judgments.Scale`),
never the data's: gdeval fixes 4, Quepid 3. Unjudged documents stop no one (R = 0), unless
``unjudged_grade`` gives them a grade (Elasticsearch ``unknown_doc_rating``: the DCG-only grade of
a document the request has no rating for; ERR has no ideal, so it is simply that grade's R).

Two stopping rules, one meaning of the ``gain`` knob
----------------------------------------------------
``gain`` always maps a grade to its gain, as for NDCG and RBP. ERR's stopping probability is a
gain divided by the top gain plus one, and the two metric names differ in which gain:

- ``ERR`` and ``nERR`` are Chapelle's ERR: R(g) = (2^g - 1) / 2^G, the exp2 gain fixed by the
  definition. They do not read ``gain`` (``ERR[gain=...]`` is refused: it would not change them).
  gdeval, Quepid, Elasticsearch and ir_measures compute this one.
- ``ERR_gain`` and ``nERR_gain`` take R(g) = gain(g) / (gain(G) + 1) under the ``gain`` knob:
  ``linear`` gives g / (G + 1), ``exp2`` gives Chapelle's R, a table ``{g: v}`` gives
  v(g) / (v(G) + 1) (NTCIREVAL's ERR and nERR with its ``-g`` gains: level L's gain over the last
  level's gain plus one), ``binary`` gives 1/2 to a document with grade >= ``rel`` (the gain of G
  is 1; G is not read). A grade absent from a table keeps gain g, as in NDCG. A table that makes
  some R negative, or >= 1 (a gain above v(G)), is refused.

nERR@k divides ERR@k by the ERR@k of the ideal ordering, the same ``ideal`` and ``ideal_cut``
knobs as NDCG: ``global`` (every usable judgment of the query, sorted by R), ``local`` (the
retrieved list re-sorted), ``recall@K`` (the top K retrieved re-sorted), ``max`` (R(G) in every
slot), ``as_supplied`` (the judgments in docno order, unsorted by grade, as NDCG's Spark-triples ideal: nERR
can then exceed 1). The ideal list is cut at k (``ideal_cut=k``), at min(k, hits) or not at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rankflavor.base import kernels as K
from rankflavor.errors import FlavorError
from rankflavor.flavor.flavor import format_number
from rankflavor.metrics.gains import gain
from rankflavor.metrics.ndcg import IDEAL_SOURCES, ideal_cut, ideal_list, top_grade_slots, top_value
from rankflavor.metrics.registry import INPUT_KNOBS, MetricSpec, register

if TYPE_CHECKING:
    from rankflavor.flavor.flavor import Flavor
    from rankflavor.metrics.measure import Measure
    from rankflavor.order import Ranked

Floats = NDArray[np.float64]
Result = tuple[Floats, NDArray[np.bool_]]


StopFn = Callable[[Floats, NDArray[np.bool_]], Floats]


def _by_gain(measure: Measure) -> bool:
    """Whether ``measure`` stops by its ``gain`` knob (ERR_gain, nERR_gain) or by Chapelle's rule."""
    return measure.spec.name.endswith("_gain")


def stopping_probability(measure: Measure) -> StopFn:
    """``R(grade, judged)`` of ``measure``, 0 where unjudged: Chapelle's (2^g - 1) / 2^G for ERR
    and nERR, gain(g) / (gain(G) + 1) under the ``gain`` knob for ERR_gain and nERR_gain.

    >>> from rankflavor.metrics.measure import parse_measure
    >>> g, j = np.array([0.0, 1, 2, 3]), np.ones(4, bool)
    >>> stopping_probability(parse_measure("ERR[max_grade=3]"))(g, j).tolist()
    [0.0, 0.125, 0.375, 0.875]
    >>> stopping_probability(parse_measure("ERR_gain[max_grade=3]"))(g, j).tolist()  # linear: g / (G + 1)
    [0.0, 0.25, 0.5, 0.75]
    >>> stopping_probability(parse_measure("ERR_gain[max_grade=3,gain={1:1,2:4,3:9}]"))(g, j).tolist()
    [0.0, 0.1, 0.4, 0.9]
    """
    f = measure.flavor
    by_gain = _by_gain(measure)
    if by_gain and f.gain_kind == "binary":
        def binary(grade: Floats, judged: NDArray[np.bool_]) -> Floats:
            out: Floats = 0.5 * gain(grade, judged, f)
            return out

        return binary
    top = f.top_grade
    if top is None:
        raise FlavorError(
            f"{measure.name} needs the top grade G of the label scale: set max_grade (gdeval uses 4, Quepid 3)"
        )
    if by_gain:
        g_top = float(gain(np.array([top]), np.array([True]), f)[0])
        if g_top < 0:
            raise FlavorError(f"{measure.name}: the top grade max_grade={format_number(top)} has a negative gain")

        def by_table(grade: Floats, judged: NDArray[np.bool_]) -> Floats:
            out: Floats = gain(grade, judged, f) / (g_top + 1.0)
            return out

        return by_table

    def chapelle(grade: Floats, judged: NDArray[np.bool_]) -> Floats:
        out: Floats = np.where(judged, (np.exp2(np.maximum(grade, 0.0)) - 1.0) / np.exp2(top), 0.0)
        return out

    return chapelle


def _checked(measure: Measure, grade: Floats, stop: Floats) -> Floats:
    """Refuse a grade above G, or a gain table that leaves R outside [0, 1)."""
    top = measure.flavor.top_grade
    binary = _by_gain(measure) and measure.flavor.gain_kind == "binary"
    if top is not None and not binary and len(grade) and grade.max() > top:
        raise FlavorError(f"{measure.name}: a grade {grade.max():g} exceeds max_grade={top:g}")
    bad = (stop < 0) | (stop >= 1)
    if bad.any():
        g = float(grade[bad][0])
        raise FlavorError(
            f"{measure.name}: grade {format_number(g)} has stopping probability {float(stop[bad][0]):g}, outside "
            "[0, 1): R(g) = gain(g) / (gain(G) + 1) needs 0 <= gain(g) <= gain(G)"
        )
    return stop


def _cascade(q: NDArray[np.integer], stop: Floats, rank: NDArray[np.integer] | Floats, n: int) -> Floats:
    """Sum over each query's rows (grouped, in rank order) of R_r / r * prod_{i<r} (1 - R_i)."""
    # Probability of reaching each row: product of (1 - R) above it, as exp of a per-query
    # running sum of logs (never log 0: R < 1).
    log_continue = np.log1p(-stop)
    reach = np.exp(K.segment_cumsum(q, log_continue) - log_continue)
    return K.segment_sum(q, stop * reach / rank, n)


def _top_rows(r: Ranked, measure: Measure) -> NDArray[np.int64]:
    return np.flatnonzero(r.rank <= measure.k) if measure.k is not None else np.arange(len(r.q))


def _err(r: Ranked, measure: Measure, stop_fn: StopFn) -> Floats:
    rows = _top_rows(r, measure)
    judged = r.judged[rows]
    grade = np.where(judged, r.grade[rows], 0.0)
    stop = stop_fn(r.grade[rows], judged)
    assumed = measure.flavor.assumed_grade
    if assumed is not None:  # a document without any judgment takes the assumed grade (ES unknown_doc_rating)
        unrated = ~r.pooled[rows]
        grade = np.where(unrated, assumed, grade)
        stop = np.where(unrated, stop_fn(np.array([assumed]), np.array([True]))[0], stop)
    return _cascade(r.q[rows], _checked(measure, grade, stop), r.rank[rows], r.n_queries)


def err_kernel(r: Ranked, measure: Measure) -> Result:
    """ERR@k per query; empty where nothing can stop the user: no usable judgment with R > 0 and,
    under ``unjudged_grade``, no unjudged document in the top k that its grade makes stop.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels, run = {"q": {"a": 3, "b": 0, "c": 1}}, {"q": {"a": 0.9, "b": 0.8, "c": 0.7}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["ERR@3[max_grade=3]", "ERR@3[max_grade=4]",
    ...                                                  "ERR_gain@3[max_grade=3]"])]
    [0.8802, 0.4492, 0.7708]
    """
    stop_fn = stopping_probability(measure)
    values = _err(r, measure, stop_fn)
    stop_judged = stop_fn(r.jgrade, np.ones(len(r.jgrade), dtype=bool))
    # Every judgment is checked against the scale, retrieved or not, as NDCG, nERR and RBP check
    # them: otherwise the same judgments would be refused beside one run and accepted beside another.
    _checked(measure, r.jgrade, stop_judged)
    positive = K.segment_sum(r.jq, (stop_judged > 0).astype(np.float64), r.n_queries)
    assumed = measure.flavor.assumed_grade
    if assumed is not None and stop_fn(np.array([assumed]), np.array([True]))[0] > 0:
        rows = _top_rows(r, measure)
        positive = positive + K.segment_sum(r.q[rows], (~r.pooled[rows]).astype(np.float64), r.n_queries)
    return values, positive == 0


def _ideal_err(r: Ranked, measure: Measure, stop_fn: StopFn) -> Floats:
    """ERR of each query's ideal list under the ``ideal`` and ``ideal_cut`` knobs: NDCG's
    :func:`~rankflavor.metrics.ndcg.ideal_list` of the stopping probabilities."""
    f = measure.flavor
    if IDEAL_SOURCES[f.ideal_kind] == "top_grade":
        # binary: a relevant document in every slot (R = 1/2), whatever rel is
        binary = _by_gain(measure) and f.gain_kind == "binary"
        r_top = 0.5 if binary else top_value(measure, stop_fn)
        # k slots whatever the run holds (k may be 2**53): the terms shrink, so the running sum
        # stops where they no longer change it (kernels.running_sums), bit for bit the full sum.
        slots = top_grade_slots(r, ideal_cut(r, measure))
        return K.running_sums(lambda i: r_top * np.power(1.0 - r_top, i - 1.0) / i, slots, decreasing=True)
    lst = ideal_list(r, measure, stop_fn)
    return _cascade(lst.q[lst.counted], lst.value[lst.counted], lst.slot[lst.counted], r.n_queries)


def nerr_kernel(r: Ranked, measure: Measure) -> Result:
    """nERR@k per query: ERR@k over the ERR@k of the ideal ordering; empty where that is 0.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels, run = {"q": {"a": 3, "b": 0, "c": 1}}, {"q": {"c": 0.9, "b": 0.8, "a": 0.7}}
    >>> round(evaluate(qrels, run, "nERR@3[max_grade=3]")[0].mean, 4)  # (1/8 + 7/8 * 7/8 / 3) / (7/8 + 1/8 * 1/8 / 2)
    0.4307
    """
    stop_fn = stopping_probability(measure)
    # The ideal may hold any usable judgment, retrieved or not: each is checked as a ranked row is
    # (a grade above G, or a table's R >= 1, made the ideal's cascade NaN without a word).
    _checked(measure, r.jgrade, stop_fn(r.jgrade, np.ones(len(r.jgrade), dtype=bool)))
    values = _err(r, measure, stop_fn)
    ideal = _ideal_err(r, measure, stop_fn)
    empty = ideal <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(empty, 0.0, values / np.where(empty, 1.0, ideal)), empty


def _needs_top(f: Flavor) -> bool:
    return f.gain_kind != "binary"


def _always(f: Flavor) -> bool:
    return True


def _judged_only(measure: Measure) -> bool:
    """Unjudged rows have R = 0 unless an assumed grade gives them one: then every row counts."""
    return measure.flavor.assumed_grade is None


_GAIN_WHEN = (("rel", lambda f: f.gain_kind == "binary"), ("max_grade", _needs_top))
_CHAPELLE = "Chapelle's R(g) = (2^g-1)/2^G; needs max_grade"

register(
    MetricSpec(
        "ERR",
        ("max_grade", "unjudged_grade", *INPUT_KNOBS),
        err_kernel,
        aliases=("err",),
        doc=f"Expected reciprocal rank (Chapelle et al. 2009), {_CHAPELLE} (gain is not read: ERR_gain "
            "stops by the gain knob).",
        judged_only=_judged_only,
        top_grade_when=_always,
        hints=(("gain", "ERR is Chapelle's (2^g-1)/2^G whatever the gain knob says; for a stopping "
                "probability gain(g)/(gain(G)+1) under a gain, write ERR_gain (e.g. ERR_gain@10[gain=linear])"),),
    )
)
register(
    MetricSpec(
        "nERR",
        ("max_grade", "ideal", "ideal_cut", *INPUT_KNOBS),
        nerr_kernel,
        aliases=("nerr", "nerr_cut"),
        doc=f"ERR@k over the ERR@k of the ideal ordering (ideal, ideal_cut as NDCG), {_CHAPELLE}.",
        judged_only=True,  # the local and recall ideals are made of judged rows too (R > 0)
        uses_ideal=True,
        top_grade_when=_always,
        hints=(("gain", "nERR is Chapelle's (2^g-1)/2^G whatever the gain knob says; for a stopping "
                "probability gain(g)/(gain(G)+1) under a gain, write nERR_gain"),),
    )
)
register(
    MetricSpec(
        "ERR_gain",
        ("gain", "max_grade", "rel", "unjudged_grade", *INPUT_KNOBS),
        err_kernel,
        aliases=("err_gain",),
        doc="ERR with R(g) = gain(g)/(gain(G)+1) under the gain knob (linear: g/(G+1); NTCIREVAL's ERR "
            "with -g gains as a table); needs max_grade unless gain=binary.",
        judged_only=_judged_only,
        knob_when=_GAIN_WHEN,
        top_grade_when=_needs_top,
    )
)
register(
    MetricSpec(
        "nERR_gain",
        ("gain", "max_grade", "rel", "ideal", "ideal_cut", *INPUT_KNOBS),
        nerr_kernel,
        aliases=("nerr_gain",),
        doc="nERR with ERR_gain's stopping probability (NTCIREVAL's nERR@l with -g gains).",
        judged_only=True,
        uses_ideal=True,
        knob_when=_GAIN_WHEN,
        top_grade_when=_needs_top,
    )
)
