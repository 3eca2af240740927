"""Pure NumPy kernels: gains, discounts and segment reductions. No I/O, no sorting of runs, no policy.

Segment sums use ``np.bincount``, which adds in array order; rows arrive sorted by rank, so each
query's sum is accumulated rank by rank exactly as trec_eval's C loops do.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # (annotations only: the readers use these kernels without importing flavors)
    from .flavor import Flavor


def segment_sum(codes: np.ndarray, weights: np.ndarray | None, n: int) -> np.ndarray:
    """Sum ``weights`` per code (count when ``weights`` is None) into an array of length ``n``."""
    if weights is None:
        return np.bincount(codes, minlength=n).astype(np.float64)
    return np.bincount(codes, weights=weights, minlength=n)


def gain(grade: np.ndarray, judged: np.ndarray, flavor: Flavor) -> np.ndarray:
    """Gain of each row under ``flavor.gain``; rows without a usable judgment gain 0.

    >>> import numpy as np
    >>> from rankflavor.flavor import Flavor
    >>> g = np.array([0.0, 1, 2, 3]); j = np.ones(4, bool)
    >>> gain(g, j, Flavor(gain="exp2")).tolist()
    [0.0, 1.0, 3.0, 7.0]
    >>> gain(g, j, Flavor(gain="{2:5}")).tolist()   # unlisted grades keep gain g
    [0.0, 1.0, 5.0, 3.0]
    >>> gain(g, j, Flavor(min_grade=2)).tolist()     # ranx -l2: grades below 2 gain nothing
    [0.0, 0.0, 2.0, 3.0]
    """
    kind = flavor.gain
    if kind == "linear":
        out = grade.astype(np.float64, copy=True)
    elif kind == "exp2":
        out = np.exp2(grade) - 1.0
    elif kind == "binary":
        out = (grade >= flavor.rel_threshold).astype(np.float64)
    else:
        out = grade.astype(np.float64, copy=True)
        table = flavor.gain_table or ()
        for g, v in table:
            out[grade == g] = v
    floor = flavor.grade_floor
    if floor is not None:  # ranx: grades below its level are dropped from DCG and IDCG alike
        out[grade < floor] = 0.0
    out[~judged] = 0.0
    return out


def discount_denominators(flavor: Flavor, n: int) -> np.ndarray:
    """Denominators d[i] for ranks i = 0..n (index 0 unused): contribution = gain / d[rank].

    Division (not multiplication by a reciprocal) keeps results bit-identical to trec_eval's
    ``gain / log2(i + 2)``.

    >>> from rankflavor.flavor import Flavor
    >>> discount_denominators(Flavor(discount="jk(2)"), 4)[1:].round(4).tolist()
    [1.0, 1.0, 1.585, 2.0]
    """
    ranks = np.arange(n + 1, dtype=np.float64)
    if flavor.discount == "log2":
        d = np.log2(ranks + 1.0)
    elif flavor.discount == "reciprocal":
        d = ranks.copy()
    else:
        base = flavor.jk_base or 2.0
        with np.errstate(divide="ignore"):
            d = np.where(ranks < base, 1.0, np.log(np.maximum(ranks, 1.0)) / math.log(base))
    d[0] = 1.0
    return d


def distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (``np.unique`` without its import of ``numpy.ma`` on first use).

    >>> distinct(np.array([3, 1, 3, 2])).tolist()
    [1, 2, 3]
    """
    s = np.sort(values)
    if len(s) < 2:
        return s
    return s[np.concatenate([[True], s[1:] != s[:-1]])]


def run_starts(values: np.ndarray, change: np.ndarray | None = None) -> np.ndarray:
    """First row of each run of equal ``values``. ``change`` is ``values[1:] != values[:-1]``
    if already made.

    >>> run_starts(np.array([7, 7, 2, 7])).tolist()
    [0, 2, 3]
    """
    if change is None:
        change = values[1:] != values[:-1]
    return np.flatnonzero(np.concatenate([[True], change])) if len(values) else np.zeros(0, dtype=np.int64)


def block_starts(values: np.ndarray, change: np.ndarray | None = None) -> np.ndarray | None:
    """:func:`run_starts`, or None when a value comes back after another (its rows are not one
    block).

    >>> block_starts(np.array([7, 7, 2, 5, 5])).tolist()
    [0, 2, 3]
    >>> block_starts(np.array([7, 2, 7])) is None
    True
    """
    starts = run_starts(values, change)
    return starts if len(distinct(values[starts])) == len(starts) else None


def rises_inside(score: np.ndarray, starts: np.ndarray) -> bool:
    """Does a score rise from a row to the next inside a run (``starts``: :func:`run_starts`)?
    From one run to the next it may.

    >>> rises_inside(np.array([3.0, 2, 5, 4]), np.array([0, 2]))
    False
    >>> rises_inside(np.array([3.0, 4, 5]), np.array([0, 2]))
    True
    """
    rises = score[1:] > score[:-1]
    rises[starts[1:] - 1] = False
    return bool(rises.any())


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(start, start + length)`` for each pair.

    >>> ranges(np.array([5, 0]), np.array([2, 3])).tolist()
    [5, 6, 0, 1, 2]
    """
    ends = np.cumsum(lengths)
    return np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - lengths - starts, lengths)


def rank_within(q_sorted: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    """1-based position of each row inside its (contiguous) query segment.

    ``counts`` (rows per query code, ``np.bincount(q_sorted)``) may be given when the segments
    are in ascending code order; positions then come from the segment starts directly.
    """
    n = len(q_sorted)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if counts is not None:
        counts = counts.astype(np.int64, copy=False)
        starts = np.cumsum(counts) - counts
        out = np.arange(1, n + 1, dtype=np.int64)
        out -= np.repeat(starts, counts)
        return out
    first = np.ones(n, dtype=bool)
    first[1:] = q_sorted[1:] != q_sorted[:-1]
    idx = np.where(first, np.arange(n), 0)
    return np.arange(n) - np.maximum.accumulate(idx) + 1


def cumulative_in_segment(q_sorted: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """Running count of ``flags`` within each query segment, inclusive of the current row."""
    c = np.cumsum(flags, dtype=np.int64)
    n = len(q_sorted)
    if n == 0:
        return c
    first = np.ones(n, dtype=bool)
    first[1:] = q_sorted[1:] != q_sorted[:-1]
    before = np.where(first, c - flags, 0)
    base = np.maximum.accumulate(np.where(first, before, -1))
    return c - base


def ideal_dcg(q: np.ndarray, gains: np.ndarray, cut: np.ndarray, denom: np.ndarray, n: int) -> np.ndarray:
    """DCG of each query's ideal list: its positive gains sorted descending, the first ``cut[q]`` kept.

    Parameters
    ----------
    q : query code of each candidate gain (any order).
    gains : candidate gains; only gains > 0 enter the ideal.
    cut : per query code, how many ideal slots count (``np.inf`` for all).
    denom : discount denominators from :func:`discount_denominators`, long enough for every slot.
    """
    return ideal_dcg_of(ideal_lists(q, gains), cut, denom, n)


def ideal_lists(q: np.ndarray, gains: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each query's positive gains sorted descending, as rows (query code, gain, 1-based slot)
    grouped by query: what every cutoff of :func:`ideal_dcg` shares."""
    positive = gains > 0
    q = q[positive]
    g = gains[positive]
    order = np.lexsort((-g, q))
    q, g = q[order], g[order]
    return q, g, rank_within(q)


def ideal_dcg_of(lists: tuple[np.ndarray, np.ndarray, np.ndarray], cut: np.ndarray, denom: np.ndarray,
                 n: int) -> np.ndarray:
    """:func:`ideal_dcg` of :func:`ideal_lists` already made."""
    q, g, r = lists
    keep = r <= cut[q]
    return segment_sum(q[keep], g[keep] / denom[r[keep]], n)


def first_rank(q: np.ndarray, rank: np.ndarray, flags: np.ndarray, n: int) -> np.ndarray:
    """Rank of the first flagged row per query (rows sorted by rank); 0 where none."""
    out = np.zeros(n, dtype=np.int64)
    idx = np.flatnonzero(flags)
    if len(idx):
        qs = q[idx]
        first = np.ones(len(idx), dtype=bool)
        first[1:] = qs[1:] != qs[:-1]
        out[qs[first]] = rank[idx[first]]
    return out
