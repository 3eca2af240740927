"""The rest of trec_eval 9.0.8's ``all_trec`` measures, with its exact per-query semantics.

Every kernel works on whole arrays (segment reductions over the rank-sorted rows of
:class:`~rankflavor.order.Ranked`); the few loops run over a measure's parameters or over rank
positions, never over queries or documents. Where trec_eval accumulates floating-point sums rank by
rank, the same order is kept (:func:`segment_cumsum`), so values agree bit for bit.

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

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from .. import kernels as K
from ..errors import FlavorError
from ..flavor import Flavor
from . import binary
from .registry import INPUT_KNOBS, MetricSpec, register

if TYPE_CHECKING:
    from ..measure import Measure
    from ..order import Ranked

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

_LOG2_DISCOUNT = Flavor(discount="log2")

T = TypeVar("T")
#: Tables several measures share (11 iprec levels, the gain measures), per live ranking. Keyed by
#: object identity and checked against a weak reference, so a new ranking never sees old tables.
_SHARED: dict[tuple[Any, ...], tuple[weakref.ref[Any], Any]] = {}


def _shared(r: Ranked, key: tuple[Any, ...], build: Callable[[], T]) -> T:
    full = (id(r), *key)
    hit = _SHARED.get(full)
    if hit is not None and hit[0]() is r:
        return hit[1]  # type: ignore[no-any-return]
    value = build()
    _SHARED[full] = (weakref.ref(r), value)
    weakref.finalize(r, _SHARED.pop, full, None)
    return value

# ---------------------------------------------------------------------------------------------
# Segment helpers. Rows of one query are contiguous and in rank order; the queries themselves
# need not be in code order (``order.py`` keeps a run's own query order when it can).


def segment_starts(q_grouped: np.ndarray, n: int) -> np.ndarray:
    """Index of each query code's first row (``len(q_grouped)`` for a code without rows).

    >>> segment_starts(np.array([2, 2, 0, 0, 0]), 4).tolist()
    [2, 5, 0, 5]
    """
    start = np.full(n, len(q_grouped), dtype=np.int64)
    if len(q_grouped):
        first = np.ones(len(q_grouped), dtype=bool)
        first[1:] = q_grouped[1:] != q_grouped[:-1]
        start[q_grouped[first]] = np.flatnonzero(first)
    return start


def segment_cumsum(q_grouped: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Running sum of ``values`` within each query segment, added strictly in row order.

    ``np.cumsum`` over the whole array minus a per-segment base would round differently from
    trec_eval's per-topic ``+=``; here every segment is accumulated on its own: segments are
    bucketed by length (powers of two) and each bucket is a padded grid whose row-wise cumsum is
    sequential. Memory stays within twice the input; the loop runs over at most ~log2(longest)
    buckets.

    >>> segment_cumsum(np.array([0, 0, 1, 1, 1]), np.array([1.0, 2, 3, 4, 5])).tolist()
    [1.0, 3.0, 3.0, 7.0, 12.0]
    """
    m = len(values)
    vals = np.asarray(values, dtype=np.float64)
    out = np.empty(m)
    if m == 0:
        return out
    first = np.ones(m, dtype=bool)
    first[1:] = q_grouped[1:] != q_grouped[:-1]
    seg = np.cumsum(first) - 1
    pos = np.arange(m) - np.flatnonzero(first)[seg]
    length = np.bincount(seg)
    bucket = np.ceil(np.log2(length)).astype(np.int64)  # exact for powers of two
    local = np.empty(len(length), dtype=np.int64)  # a segment's row in its bucket's grid
    for b in np.unique(bucket):
        members = bucket == b
        local[members] = np.arange(int(members.sum()))
        rows = members[seg]
        grid = np.zeros((int(members.sum()), 1 << int(b)))
        grid[local[seg[rows]], pos[rows]] = vals[rows]
        np.cumsum(grid, axis=1, out=grid)
        out[rows] = grid[local[seg[rows]], pos[rows]]
    return out


def segment_suffix_max(q_grouped: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Maximum of ``values`` from each row to the end of its query segment (exact: no float offsets).

    >>> segment_suffix_max(np.array([0, 0, 0, 1, 1]), np.array([0.5, 0.9, 0.2, 0.1, 0.3])).tolist()
    [0.9, 0.9, 0.2, 0.3, 0.3]
    """
    m = len(values)
    if m == 0:
        return np.asarray(values, dtype=np.float64).copy()
    distinct, code = np.unique(values, return_inverse=True)
    q_rev = q_grouped[::-1]
    new_seg = np.ones(m, dtype=bool)
    new_seg[1:] = q_rev[1:] != q_rev[:-1]
    seg_rev = np.cumsum(new_seg)  # increases along the reversed rows, so a max never leaks back
    stride = len(distinct) + 1
    key = np.maximum.accumulate(seg_rev * stride + code[::-1])
    return distinct[key - seg_rev * stride][::-1]


def _relevant(r: Ranked, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """Relevant rows (judged, grade >= rel) and R per query code."""
    t = measure.flavor.rel_threshold
    rel = r.judged & (r.grade >= t)
    R = K.segment_sum(r.jq, (r.jgrade >= t).astype(np.float64), r.n_queries)
    return rel, R


def _hits(r: Ranked, rel: np.ndarray, cut: np.ndarray | None = None) -> np.ndarray:
    """Relevant rows per query, within rank ``cut[q]`` when given."""
    pick = rel if cut is None else rel & (r.rank <= cut[r.q])
    return K.segment_sum(r.q, pick.astype(np.float64), r.n_queries)


def _rank_cutoff(level: float, R: np.ndarray) -> np.ndarray:
    """trec_eval's ``(long) (level * num_rel + 0.9)``: a recall level or multiple of R as a count."""
    return np.trunc(level * R + 0.9)


def _params(measure: Measure, default: tuple[float, ...] | None, *, count: int | None = None) -> tuple[float, ...]:
    values = measure.flavor.param_values or default
    if values is None:
        raise FlavorError(f"metric '{measure.metric}' needs its parameter: set param=N, e.g. {measure.metric}[param=0.5]")
    if count is not None and len(values) != count:
        raise FlavorError(
            f"metric '{measure.metric}' takes {count} parameter value(s) in param, received {measure.flavor.param}"
        )
    return values


def _no_empty(r: Ranked) -> np.ndarray:
    return np.zeros(r.n_queries, dtype=bool)


# ---------------------------------------------------------------------------------------------
# Interpolated precision (iprec_at_recall, 11pt_avg) and Rprec_mult.


class _Interpolated:
    """Per query: relevant rows in rank order and the interpolated precision at each of them.

    ``at(c)`` is trec_eval's value for a cutoff of ``c`` relevant documents: 0 when c exceeds the
    relevant retrieved, the max precision at or after the c-th relevant document otherwise; c <= 0
    takes the value left after the whole list (max over all relevant ranks; 0, or NaN when nothing
    was retrieved, if no relevant document was).
    """

    def __init__(self, r: Ranked, rel: np.ndarray) -> None:
        n = r.n_queries
        self.rq = r.q[rel]
        cum = K.cumulative_in_segment(r.q, rel.astype(np.int64))
        precision = cum[rel] / r.rank[rel].astype(np.float64)
        self.best_after = segment_suffix_max(self.rq, precision)
        self.start = segment_starts(self.rq, n)
        self.found = np.bincount(self.rq, minlength=n)
        with np.errstate(divide="ignore", invalid="ignore"):
            # trec_eval starts from num_rel_ret / num_ret: NaN when -J leaves nothing retrieved.
            self.final = np.where(self.found > 0, 0.0, self.found / r.n_ret.astype(np.float64))
        has = self.found > 0
        self.final[has] = self.best_after[self.start[has]]

    def at(self, cut: np.ndarray) -> np.ndarray:
        matched = (cut >= 1) & (cut <= self.found)
        out = np.where(cut > self.found, 0.0, self.final)
        idx = self.start[matched] + cut[matched].astype(np.int64) - 1
        out[matched] = self.best_after[idx]
        return out


def _interpolated(r: Ranked, measure: Measure, rel: np.ndarray) -> _Interpolated:
    return _shared(r, ("interpolated", measure.flavor.rel), lambda: _Interpolated(r, rel))


def iprec_at_recall(r: Ranked, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    (level,) = _params(measure, None, count=1)
    rel, R = _relevant(r, measure)
    values = _interpolated(r, measure, rel).at(_rank_cutoff(level, R))
    return values, (R == 0) & ~np.isnan(values)  # trec_eval's NaN (-J, nothing left) is kept


def iprec_average(r: Ranked, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """trec_eval 11pt_avg: mean interpolated precision over the recall levels, in the order given.

    trec_eval walks the levels from the last to the first while stepping up the ranking; a level
    out of order (not ascending) is never reached and takes the end-of-list value, as do all after
    it. The walk is replayed here level by level, vectorised over queries.
    """
    levels = _params(measure, ELEVEN_POINTS)
    rel, R = _relevant(r, measure)
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


def rprec_mult(r: Ranked, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """Precision at rank ``(long)(m * R + 0.9)`` (0 when that rank is 0)."""
    (multiple,) = _params(measure, None, count=1)
    rel, R = _relevant(r, measure)
    cut = _rank_cutoff(multiple, R)
    hits = _hits(r, rel, cut)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(cut >= 1, hits / np.maximum(cut, 1.0), 0.0), R == 0


# ---------------------------------------------------------------------------------------------
# Incomplete-judgment and set measures.


def inf_ap(r: Ranked, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """Inferred AP (``m_infap.c``): precision above each judged relevant document is estimated from
    the judged documents above it; documents outside the pool count as non-relevant, pooled but
    unjudged ones are left out."""
    rel, R = _relevant(r, measure)
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


def utility(r: Ranked, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """a*relevant retrieved + b*non-relevant retrieved + c*relevant missed + d*non-relevant missed.

    Like trec_eval without ``-N``, the collection size is 0, so d multiplies ``-(retrieved + R -
    relevant retrieved)``.
    """
    a, b, c, d = _params(measure, UTILITY_DEFAULT, count=4)
    rel, R = _relevant(r, measure)
    found = _hits(r, rel)
    ret = r.n_ret.astype(np.float64)
    return a * found + b * (ret - found) + c * (R - found) + d * (found - ret - R), _no_empty(r)


def relative_precision(r: Ranked, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """Relevant in the top k / min(k, R); without k, over the whole list (set_relative_P)."""
    rel, R = _relevant(r, measure)
    found = _hits(r, rel, None if measure.k is None else np.full(r.n_queries, measure.k))
    size = r.n_ret.astype(np.float64) if measure.k is None else np.full(r.n_queries, float(measure.k))
    best = np.minimum(size, R)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((R > 0) & (size > 0), found / np.where(best > 0, best, 1.0), 0.0), R == 0


def set_average_precision(r: Ranked, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """Unranked AP: relevant retrieved^2 / (retrieved * R) (``m_set_map.c``)."""
    rel, R = _relevant(r, measure)
    found = _hits(r, rel)
    ret = r.n_ret.astype(np.float64)
    ok = (ret > 0) & (R > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, (found * found) / np.where(ok, ret * R, 1.0), 0.0), R == 0


def f_measure(r: Ranked, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """(x + 1) P R / (x P + R) over the retrieved set; x = beta^2, default 1 (``m_set_F.c``)."""
    x = _params(measure, (1.0,))[0]
    rel, R = _relevant(r, measure)
    found = _hits(r, rel)
    ok = found > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        p = found / r.n_ret.astype(np.float64)
        rc = found / R
        value = (x + 1.0) * p * rc / (x * p + rc)
    return np.where(ok, value, 0.0), R == 0


def num_nonrel_judged_ret(r: Ranked, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    rel, _ = _relevant(r, measure)
    return K.segment_sum(r.q, (r.judged & ~rel).astype(np.float64), r.n_queries), _no_empty(r)


# ---------------------------------------------------------------------------------------------
# Gain measures: binG, G, ndcg_rel, Rndcg.


def bin_g(r: Ranked, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """Mean over relevant documents of 1 / log2(2 + non-relevant documents above it)."""
    rel, R = _relevant(r, measure)
    cum = K.cumulative_in_segment(r.q, rel.astype(np.int64))
    term = 1.0 / np.log2((r.rank + 2 - cum)[rel].astype(np.float64))
    total = K.segment_sum(r.q[rel], term, r.n_queries)
    return np.where(R > 0, total / np.maximum(R, 1.0), 0.0), R == 0


class _GainLists:
    """Row gains, the ideal list (every usable judgment's gain, best first) and log2 discounts.

    Gains follow the ``gain`` knob (trec_eval: the grade, or a ``level=gain`` table); rows
    without a usable judgment gain 0, as trec_eval's ``get_gain`` gives unknown levels.
    """

    def __init__(self, r: Ranked, flavor: Flavor) -> None:
        n = r.n_queries
        self.row = K.gain(r.grade, r.judged, flavor)
        jg = K.gain(r.jgrade, np.ones(len(r.jgrade), dtype=bool), flavor)
        order = np.lexsort((-jg, r.jq))
        self.iq, self.ig = r.jq[order], jg[order]
        self.istart = segment_starts(self.iq, n)
        self.icount = np.bincount(self.iq, minlength=n)
        positive = self.ig > 0  # sorted best first, so the positive gains lead each query
        self.pq, self.pg = self.iq[positive], self.ig[positive]
        self.pstart = segment_starts(self.pq, n)
        self.n_pos = np.bincount(self.pq, minlength=n)
        longest = max(r.max_len, int(self.icount.max()) if len(self.icount) else 0, 1)
        self.denom = K.discount_denominators(_LOG2_DISCOUNT, longest + 1)

    def cumulative_dcg(self, r: Ranked) -> np.ndarray:
        """DCG through each row (trec_eval adds only non-zero gains; adding 0 changes nothing)."""
        return segment_cumsum(r.q, self.row / self.denom[r.rank])

    def cumulative_idcg(self) -> np.ndarray:
        """Ideal DCG through each positive ideal slot."""
        slot = np.arange(len(self.pq)) - self.pstart[self.pq] + 1
        return segment_cumsum(self.pq, self.pg / self.denom[slot])


def g_measure(r: Ranked, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """trec_eval G: gain / log2(2 + ideal cost so far - gain so far), normalised by the ideal gain.

    The cost of rank i is the ideal gain at i, at least 1 (``min_cost``), and 1 past the ideal list.
    """
    n = r.n_queries
    gl = _shared(r, ("gains", measure.flavor.gain, measure.flavor.rel), lambda: _GainLists(r, measure.flavor))
    slot = r.rank - 1
    inside = slot < gl.icount[r.q]
    ideal_here = np.zeros(len(r.q))
    ideal_here[inside] = gl.ig[gl.istart[r.q[inside]] + slot[inside]]
    cost = segment_cumsum(r.q, np.maximum(ideal_here, 1.0))
    gained = segment_cumsum(r.q, gl.row)
    nz = gl.row != 0
    term = gl.row[nz] / np.log2((2.0 + cost[nz]) - gained[nz])
    results = K.segment_sum(r.q[nz], term, n)
    ideal = K.segment_sum(gl.pq, gl.pg, n)
    empty = ideal <= 0
    return np.where(empty, 0.0, results / np.where(empty, 1.0, ideal)), empty


def _at(cumulative: np.ndarray, start: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """``cumulative`` through the first ``depth[q]`` entries of each query (0 for depth 0)."""
    ok = depth > 0
    out = np.zeros(len(depth))
    out[ok] = cumulative[start[ok] + depth[ok] - 1]
    return out


def ndcg_rel(r: Ranked, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """trec_eval ndcg_rel: NDCG averaged over the documents with positive gain.

    A retrieved one contributes DCG / IDCG at its rank; each one not retrieved contributes the
    final DCG / IDCG. The ideal is cut at the number of positive gains.
    """
    n = r.n_queries
    gl = _shared(r, ("gains", measure.flavor.gain, measure.flavor.rel), lambda: _GainLists(r, measure.flavor))
    dcg = gl.cumulative_dcg(r)
    idcg = gl.cumulative_idcg()
    at_rel = gl.row > 0
    qq = r.q[at_rel]
    depth = np.minimum(r.rank[at_rel], gl.n_pos[qq])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = dcg[at_rel] / idcg[gl.pstart[qq] + depth - 1]
    total = K.segment_sum(qq, ratio, n)
    found = np.bincount(qq, minlength=n)
    dcg_end = _at(dcg, segment_starts(r.q, n), r.n_ret)
    idcg_end = _at(idcg, gl.pstart, gl.n_pos)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = total + ((gl.n_pos - found) * dcg_end) / idcg_end
        value = np.where(total > 0, total / gl.n_pos, 0.0)
    return value, gl.n_pos == 0


def r_ndcg(r: Ranked, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """trec_eval Rndcg: NDCG averaged at the R levels, the ranks where the ideal gain drops.

    Points: every ideal slot b (1-based count of slots before it) whose gain differs from the
    previous one, the end of the positive ideal gains, and the end of the retrieved list when it
    runs more than one past that end. Each is DCG@min(b, retrieved) / IDCG@b.
    """
    n = r.n_queries
    _, R = _relevant(r, measure)
    gl = _shared(r, ("gains", measure.flavor.gain, measure.flavor.rel), lambda: _GainLists(r, measure.flavor))
    dcg = gl.cumulative_dcg(r)
    idcg = gl.cumulative_idcg()
    starts = segment_starts(r.q, n)
    slot = np.arange(len(gl.pq)) - gl.pstart[gl.pq]  # 0-based
    drop = np.zeros(len(gl.pq), dtype=bool)
    drop[1:] = (slot[1:] > 0) & (gl.pg[1:] != gl.pg[:-1])
    last = slot == gl.n_pos[gl.pq] - 1
    # A drop at slot s is the point b = s; the end of the positives is the point b = n_pos.
    point_q = np.concatenate([gl.pq[drop], gl.pq[last]])
    point_b = np.concatenate([slot[drop], slot[last] + 1])
    order = np.lexsort((point_b, point_q))
    point_q, point_b = point_q[order], point_b[order]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = _at(dcg, starts[point_q], np.minimum(point_b, r.n_ret[point_q])) / idcg[gl.pstart[point_q] + point_b - 1]
    tail = r.n_ret > gl.n_pos + 1
    tail &= gl.n_pos > 0
    tail_q = np.flatnonzero(tail)
    with np.errstate(divide="ignore", invalid="ignore"):
        tail_ratio = dcg[starts[tail_q] + r.n_ret[tail_q] - 1] / idcg[gl.pstart[tail_q] + gl.n_pos[tail_q] - 1]
    # Points of a query are added in rank order, the end-of-list point last (bincount keeps array order).
    total = K.segment_sum(np.concatenate([point_q, tail_q]), np.concatenate([ratios, tail_ratio]), n)
    count = np.bincount(point_q, minlength=n) + tail
    ok = (R > 0) & (count > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, total / np.where(ok, count, 1), 0.0), (R == 0) | (gl.n_pos == 0)


# ---------------------------------------------------------------------------------------------
# relstring: the relevance of the top documents as text.


def relstring(r: Ranked, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """One character per top-k document: its grade 0-9, ``>`` above 9, ``-`` not pooled, ``.``
    pooled but unjudged (``m_relstring.c``). Without k, the whole list."""
    n = r.n_queries
    width = min(measure.k or r.max_len, r.max_len)
    out = np.full(n, "", dtype=object)
    if width <= 0:
        return out, _no_empty(r)
    grade = np.trunc(r.grade)
    chars = np.where(grade > 9, ord(">"), ord("0") + np.clip(grade, 0, 9).astype(np.int64))
    chars = np.where(r.judged, chars, np.where(r.pooled, ord("."), ord("-")))
    pick = r.rank <= width
    grid = np.zeros((n, width), dtype=np.uint8)
    grid[r.q[pick], r.rank[pick] - 1] = chars[pick]
    text = grid.view(f"S{width}").ravel()  # fixed-width bytes; trailing NULs of short lists drop
    out[:] = np.char.decode(text, "ascii")
    return out, _no_empty(r)


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
    MetricSpec("G", ("gain", *INPUT_KNOBS), g_measure, cutoff="none",
               doc="trec_eval G: gain/log2(2 + ideal cost - gain so far), normalised by total ideal gain."),
    MetricSpec("ndcg_rel", ("gain", *INPUT_KNOBS), ndcg_rel, cutoff="none",
               doc="NDCG averaged over the positive-gain documents (trec_eval ndcg_rel)."),
    MetricSpec("Rndcg", ("gain", "rel", *INPUT_KNOBS), r_ndcg, cutoff="none", aliases=("rndcg",),
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
