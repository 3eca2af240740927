"""Pure NumPy kernels: segment reductions, runs and ranks within segments. No I/O, no sorting of runs,
no policy, no flavor (the flavor's gains and discounts are :mod:`rankflavor.metrics.gains`).

Segment sums use ``np.bincount``, which adds in array order; rows arrive sorted by rank, so each
query's sum is accumulated rank by rank exactly as trec_eval's C loops do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray


def segment_sum(codes: NDArray[np.integer[Any]], weights: NDArray[np.floating[Any]] | None, n: int) -> NDArray[np.float64]:
    """Sum ``weights`` per code (count when ``weights`` is None) into an array of length ``n``.

    >>> segment_sum(np.array([2, 0, 2]), np.array([0.5, 1.0, 0.25]), 3).tolist()
    [1.0, 0.0, 0.75]
    >>> segment_sum(np.array([2, 0, 2]), None, 4).tolist()
    [1.0, 0.0, 2.0, 0.0]
    """
    if weights is None:
        return np.bincount(codes, minlength=n).astype(np.float64)
    return cast("NDArray[np.float64]", np.bincount(codes, weights=weights, minlength=n))  # float64 with weights


#: Slots :func:`running_sums` adds per NumPy call: its memory is a few arrays of this length.
RUNNING_CHUNK = 1 << 20


def running_sums(term: Callable[[NDArray[np.float64]], NDArray[np.float64]], ends: NDArray[np.integer[Any]],
                 decreasing: bool = False, chunk: int = RUNNING_CHUNK) -> NDArray[np.float64]:
    """``sum(term(i) for i in 1..e)`` for each ``e`` in ``ends``, added one slot at a time in slot
    order, with memory bounded by ``chunk`` slots whatever the largest end.

    The sums are bit for bit those of ``np.cumsum(term(np.arange(1, n + 1)))`` read at ``ends``:
    each chunk's first term takes the running total before its cumulative sum, so every
    addition is the one a single cumulative sum makes. With ``decreasing`` (the terms never
    grow), the sum stops where adding a term no longer changes it: rounding to nearest is
    monotone, so no smaller term changes it either, and every later end reads that value.

    >>> ends = np.array([3, 0, 5])
    >>> running_sums(lambda i: 1.0 / i, ends, chunk=2).tolist() == np.concatenate(
    ...     [[0.0], np.cumsum(1.0 / np.arange(1.0, 6.0))])[ends].tolist()
    True
    """
    ends = np.asarray(ends, dtype=np.int64)
    out = np.zeros(len(ends), dtype=np.float64)
    todo = np.argsort(ends, kind="stable")
    todo = todo[ends[todo] > 0]
    total, start, at = 0.0, 1, 0  # the sum of slots < start; next end to fill: todo[at]
    last = int(ends.max(initial=0))
    while at < len(todo):
        stop = min(start + chunk, last + 1)
        t = np.asarray(term(np.arange(start, stop, dtype=np.float64)), dtype=np.float64)
        t[0] += total
        c = np.cumsum(t)
        while at < len(todo) and ends[todo[at]] < stop:
            out[todo[at]] = c[ends[todo[at]] - start]
            at += 1
        settled = decreasing and len(c) > 1 and c[-1] == c[-2]
        total, start = float(c[-1]), stop
        if settled:
            out[todo[at:]] = total
            break
    return out


def distinct(values: NDArray[Any]) -> NDArray[Any]:
    """Sorted distinct values (``np.unique`` without its import of ``numpy.ma`` on first use).

    >>> distinct(np.array([3, 1, 3, 2])).tolist()
    [1, 2, 3]
    """
    s = np.sort(values)
    if len(s) < 2:
        return s
    return s[np.concatenate([[True], s[1:] != s[:-1]])]


def run_starts(values: NDArray[Any], change: NDArray[np.bool_] | None = None) -> NDArray[np.int64]:
    """First row of each run of equal ``values``. ``change`` is ``values[1:] != values[:-1]``
    if already made.

    >>> run_starts(np.array([7, 7, 2, 7])).tolist()
    [0, 2, 3]
    """
    if change is None:
        change = values[1:] != values[:-1]
    return np.flatnonzero(np.concatenate([[True], change])) if len(values) else np.zeros(0, dtype=np.int64)


def block_starts(values: NDArray[Any], change: NDArray[np.bool_] | None = None) -> NDArray[np.int64] | None:
    """:func:`run_starts`, or None when a value comes back after another (its rows are not one
    block).

    >>> block_starts(np.array([7, 7, 2, 5, 5])).tolist()
    [0, 2, 3]
    >>> block_starts(np.array([7, 2, 7])) is None
    True
    """
    starts = run_starts(values, change)
    return starts if len(distinct(values[starts])) == len(starts) else None


def rises_inside(score: NDArray[np.floating[Any]], starts: NDArray[np.int64]) -> bool:
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


def ranges(starts: NDArray[np.integer[Any]], lengths: NDArray[np.integer[Any]]) -> NDArray[np.int64]:
    """Concatenated ``arange(start, start + length)`` for each pair.

    >>> ranges(np.array([5, 0]), np.array([2, 3])).tolist()
    [5, 6, 0, 1, 2]
    """
    ends = np.cumsum(lengths)
    return np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - lengths - starts, lengths)


def rank_within(q_sorted: NDArray[np.integer[Any]], counts: NDArray[np.integer[Any]] | None = None) -> NDArray[np.int64]:
    """1-based position of each row inside its (contiguous) query segment.

    ``counts`` (rows per query code, ``np.bincount(q_sorted)``) may be given when the segments
    are in ascending code order; positions then come from the segment starts directly.

    >>> rank_within(np.array([4, 4, 4, 1, 1])).tolist()
    [1, 2, 3, 1, 2]
    >>> rank_within(np.array([0, 0, 2]), counts=np.array([2, 0, 1])).tolist()
    [1, 2, 1]
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


def place_within(query: NDArray[np.integer[Any]]) -> NDArray[np.int64]:
    """0-based place of each row among the rows of its query, in row order (a query's rows need
    not be consecutive).

    >>> place_within(np.array([1, 0, 1, 1, 0])).tolist()
    [0, 0, 1, 2, 1]
    """
    by_query = np.argsort(query, kind="stable")
    place = np.empty(len(query), dtype=np.int64)
    place[by_query] = rank_within(query[by_query]) - 1
    return place


def cumulative_in_segment(q_sorted: NDArray[np.integer[Any]], flags: NDArray[np.integer[Any]]) -> NDArray[np.int64]:
    """Running count of ``flags`` within each query segment, inclusive of the current row.

    >>> cumulative_in_segment(np.array([0, 0, 0, 1, 1]), np.array([1, 0, 1, 1, 1])).tolist()
    [1, 1, 2, 1, 2]
    """
    c = np.cumsum(flags, dtype=np.int64)
    n = len(q_sorted)
    if n == 0:
        return c
    first = np.ones(n, dtype=bool)
    first[1:] = q_sorted[1:] != q_sorted[:-1]
    before = np.where(first, c - flags, 0)
    base = np.maximum.accumulate(np.where(first, before, -1))
    return c - base


def segment_starts(q_grouped: NDArray[np.integer[Any]], n: int) -> NDArray[np.int64]:
    """Index of each query code's first row (``len(q_grouped)`` for a code without rows); the rows
    of one query are contiguous, the queries in any order.

    >>> segment_starts(np.array([2, 2, 0, 0, 0]), 4).tolist()
    [2, 5, 0, 5]
    """
    start = np.full(n, len(q_grouped), dtype=np.int64)
    if len(q_grouped):
        first = np.ones(len(q_grouped), dtype=bool)
        first[1:] = q_grouped[1:] != q_grouped[:-1]
        start[q_grouped[first]] = np.flatnonzero(first)
    return start


def segment_cumsum(q_grouped: NDArray[np.integer[Any]], values: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
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


def segment_suffix_max(q_grouped: NDArray[np.integer[Any]], values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Maximum of ``values`` from each row to the end of its query segment (exact: no float offsets).

    >>> segment_suffix_max(np.array([0, 0, 0, 1, 1]), np.array([0.5, 0.9, 0.2, 0.1, 0.3])).tolist()
    [0.9, 0.9, 0.2, 0.3, 0.3]
    """
    m = len(values)
    if m == 0:
        return np.asarray(values, dtype=np.float64).copy()
    levels, code = np.unique(values, return_inverse=True)
    q_rev = q_grouped[::-1]
    new_seg = np.ones(m, dtype=bool)
    new_seg[1:] = q_rev[1:] != q_rev[:-1]
    seg_rev = np.cumsum(new_seg)  # increases along the reversed rows, so a max never leaks back
    stride = len(levels) + 1
    key = np.maximum.accumulate(seg_rev * stride + code[::-1])
    return levels[key - seg_rev * stride][::-1]  # type: ignore[no-any-return]


def first_rank(q: NDArray[np.integer[Any]], rank: NDArray[np.integer[Any]], flags: NDArray[np.bool_],
               n: int) -> NDArray[np.int64]:
    """Rank of the first flagged row per query (rows sorted by rank); 0 where none.

    >>> first_rank(np.array([0, 0, 0, 2]), np.array([1, 2, 3, 1]), np.array([False, True, True, False]), 3).tolist()
    [2, 0, 0]
    """
    out = np.zeros(n, dtype=np.int64)
    idx = np.flatnonzero(flags)
    if len(idx):
        qs = q[idx]
        first = np.ones(len(idx), dtype=bool)
        first[1:] = qs[1:] != qs[:-1]
        out[qs[first]] = rank[idx[first]]
    return out
