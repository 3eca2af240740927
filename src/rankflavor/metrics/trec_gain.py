"""trec_eval 9.0.8's gain measures: binG, G, ndcg_rel, Rndcg, with its exact per-query semantics.

Sums are accumulated rank by rank in trec_eval's order (:func:`rankflavor.base.kernels.segment_cumsum`),
so values agree bit for bit. The examples share the query of :mod:`rankflavor.metrics.trec_extra`:
``a`` (grade 2), ``e`` (grade -1: unjudged), ``b`` (0), ``c`` (1) and ``f`` (not pooled) retrieved
in that order, ``d`` (1) not retrieved.

References
----------
trec_eval 9.0.8 (usnistgov/trec_eval, tag v9.0.8): ``m_binG.c``, ``m_G.c``, ``m_ndcg_rel.c``,
``m_Rndcg.c``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from rankflavor.base import kernels as K
from rankflavor.flavor.flavor import Flavor
from rankflavor.metrics.common import relevant, shared
from rankflavor.metrics.gains import discount_denominators, gain

if TYPE_CHECKING:
    from rankflavor.metrics.measure import Measure
    from rankflavor.order import Ranked

_LOG2_DISCOUNT = Flavor(discount="log2")

#: (values, empty) per query code.
Result = tuple[NDArray[np.float64], NDArray[np.bool_]]


def bin_g(r: Ranked, measure: Measure) -> Result:
    """Mean over relevant documents of 1 / log2(2 + non-relevant documents above it).

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 1, "e": -1}}
    >>> run = {"q": {"a": 0.9, "e": 0.8, "b": 0.7, "c": 0.6, "f": 0.5}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["binG", "binG[rel=2]"])]
    [0.5, 1.0]
    """
    rel, R = relevant(r, measure)
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
        self.row = gain(r.grade, r.judged, flavor)
        jg = gain(r.jgrade, np.ones(len(r.jgrade), dtype=bool), flavor)
        order = np.lexsort((-jg, r.jq))
        self.iq, self.ig = r.jq[order], jg[order]
        self.istart = K.segment_starts(self.iq, n)
        self.icount = np.bincount(self.iq, minlength=n)
        positive = self.ig > 0  # sorted best first, so the positive gains lead each query
        self.pq, self.pg = self.iq[positive], self.ig[positive]
        self.pstart = K.segment_starts(self.pq, n)
        self.n_pos = np.bincount(self.pq, minlength=n)
        longest = max(r.max_len, int(self.icount.max()) if len(self.icount) else 0, 1)
        self.denom = discount_denominators(_LOG2_DISCOUNT, longest + 1)

    def cumulative_dcg(self, r: Ranked) -> NDArray[np.float64]:
        """DCG through each row (trec_eval adds only non-zero gains; adding 0 changes nothing)."""
        return K.segment_cumsum(r.q, self.row / self.denom[r.rank])

    def cumulative_idcg(self) -> NDArray[np.float64]:
        """Ideal DCG through each positive ideal slot."""
        slot = np.arange(len(self.pq)) - self.pstart[self.pq] + 1
        return K.segment_cumsum(self.pq, self.pg / self.denom[slot])


def _gain_lists(r: Ranked, measure: Measure) -> _GainLists:
    """The :class:`_GainLists` of ``r`` under the measure's gain, shared by G, ndcg_rel, Rndcg."""
    return shared(r, ("gains", measure.flavor.gain, measure.flavor.rel), lambda: _GainLists(r, measure.flavor))


def g_measure(r: Ranked, measure: Measure) -> Result:
    """trec_eval G: gain / log2(2 + ideal cost so far - gain so far), normalised by the ideal gain.

    The cost of rank i is the ideal gain at i, at least 1 (``min_cost``), and 1 past the ideal list.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 1, "e": -1}}
    >>> run = {"q": {"a": 0.9, "e": 0.8, "b": 0.7, "c": 0.6, "f": 0.5}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["G", "G[gain={1:1,2:3}]"])]
    [0.625, 0.7]
    """
    n = r.n_queries
    gl = _gain_lists(r, measure)
    slot = r.rank - 1
    inside = slot < gl.icount[r.q]
    ideal_here = np.zeros(len(r.q))
    ideal_here[inside] = gl.ig[gl.istart[r.q[inside]] + slot[inside]]
    cost = K.segment_cumsum(r.q, np.maximum(ideal_here, 1.0))
    gained = K.segment_cumsum(r.q, gl.row)
    nz = gl.row != 0
    term = gl.row[nz] / np.log2((2.0 + cost[nz]) - gained[nz])
    results = K.segment_sum(r.q[nz], term, n)
    ideal = K.segment_sum(gl.pq, gl.pg, n)
    empty = ideal <= 0
    return np.where(empty, 0.0, results / np.where(empty, 1.0, ideal)), empty


def _at(cumulative: NDArray[np.float64], start: NDArray[np.int64], depth: NDArray[np.integer[Any]]) -> NDArray[np.float64]:
    """``cumulative`` through the first ``depth[q]`` entries of each query (0 for depth 0)."""
    ok = depth > 0
    out = np.zeros(len(depth))
    out[ok] = cumulative[start[ok] + depth[ok] - 1]
    return out


def ndcg_rel(r: Ranked, measure: Measure) -> Result:
    """trec_eval ndcg_rel: NDCG averaged over the documents with positive gain.

    A retrieved one contributes DCG / IDCG at its rank; each one not retrieved contributes the
    final DCG / IDCG. The ideal is cut at the number of positive gains.

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 1, "e": -1}}
    >>> run = {"q": {"a": 0.9, "e": 0.8, "b": 0.7, "c": 0.6, "f": 0.5}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["ndcg_rel", "ndcg_rel[gain={1:1,2:3}]"])]
    [0.8509, 0.887]
    """
    n = r.n_queries
    gl = _gain_lists(r, measure)
    dcg = gl.cumulative_dcg(r)
    idcg = gl.cumulative_idcg()
    at_rel = gl.row > 0
    qq = r.q[at_rel]
    depth = np.minimum(r.rank[at_rel], gl.n_pos[qq])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = dcg[at_rel] / idcg[gl.pstart[qq] + depth - 1]
    total = K.segment_sum(qq, ratio, n)
    found = np.bincount(qq, minlength=n)
    dcg_end = _at(dcg, K.segment_starts(r.q, n), r.n_ret)
    idcg_end = _at(idcg, gl.pstart, gl.n_pos)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = total + ((gl.n_pos - found) * dcg_end) / idcg_end
        value = np.where(total > 0, total / gl.n_pos, 0.0)
    return value, gl.n_pos == 0


def r_ndcg(r: Ranked, measure: Measure) -> Result:
    """trec_eval Rndcg: NDCG averaged at the R levels, the ranks where the ideal gain drops.

    Points: every ideal slot b (1-based count of slots before it) whose gain differs from the
    previous one, the end of the positive ideal gains, and the end of the retrieved list when it
    runs more than one past that end. Each is DCG@min(b, retrieved) / IDCG@b. A query with R > 0
    but no positive gain has no point: 0 / 0, NaN, as trec_eval prints it (``-nan``).

    Examples
    --------
    >>> from rankflavor import evaluate
    >>> qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 1, "e": -1}}
    >>> run = {"q": {"a": 0.9, "e": 0.8, "b": 0.7, "c": 0.6, "f": 0.5}}
    >>> [round(m.mean, 4) for m in evaluate(qrels, run, ["Rndcg", "Rndcg[gain={1:1,2:3}]"])]
    [0.805, 0.8522]
    """
    n = r.n_queries
    _, R = relevant(r, measure)
    gl = _gain_lists(r, measure)
    dcg = gl.cumulative_dcg(r)
    idcg = gl.cumulative_idcg()
    starts = K.segment_starts(r.q, n)
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
    # trec_eval returns 0 before any point when R = 0 (empty here); with R > 0 but no positive
    # ideal gain it takes no point and divides 0 by 0: NaN (printed -nan), which its mean sums.
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(R > 0, total / count, 0.0), R == 0
