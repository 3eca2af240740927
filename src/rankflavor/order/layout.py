"""A run's rows by score: whether it is in rank order already, and the sort when it is not.

Most runs arrive grouped by query with scores descending: then a check in O(n) replaces the
sort, and the ranker's fast paths read a few rows instead of all (:class:`Layout`).

Examples
--------
>>> import numpy as np
>>> q = np.array([1, 1, 0, 0], dtype=np.int32)
>>> layout = find_layout(q, np.array([3.0, 2.0, 5.0, 5.0]))
>>> layout.starts.tolist(), layout.lengths.tolist(), layout.codes.tolist()
([0, 2], [2, 2], [1, 0])
>>> blocks_in_code_order(layout).tolist()  # query 0's block moves first, whole
[2, 3, 0, 1]
>>> find_layout(q, np.array([2.0, 3.0, 5.0, 5.0])) is None  # a score rises inside query 1
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rankflavor.base.kernels import block_starts, rises_inside

Ints = npt.NDArray[np.int64]
Scores = npt.NDArray[np.floating]


@dataclass(frozen=True)
class Layout:
    """A run grouped by query with scores descending in each query: its query blocks.

    Attributes
    ----------
    starts : first row of each block, ascending.
    lengths : rows per block (none is empty).
    codes : query code of each block.
    """

    starts: Ints
    lengths: Ints
    codes: npt.NDArray[np.integer]


class Rounded:
    """float64 scores read at float32 precision where they are gathered: ranking a run that is
    in rank order reads a few rows' scores, so no float32 copy of every score is made."""

    def __init__(self, scores: Scores) -> None:
        self.scores = scores

    def __getitem__(self, rows: npt.NDArray[np.integer]) -> npt.NDArray[np.float32]:
        return self.scores[rows].astype(np.float32)


def find_layout(q: npt.NDArray[np.integer], score: Scores, starts: Ints | None = None,
                descend: bool = False) -> Layout | None:
    """The run's query blocks when it is in rank order (grouped by query, scores descending);
    None otherwise. Two O(n) comparisons instead of a sort; one when the blocks' ``starts`` are
    known (:attr:`Aligned.query_starts`), none when it is also known that no score rises inside
    a block (``descend``: :attr:`Aligned.scores_descend`)."""
    n = len(q)
    if n == 0:
        return None
    if starts is None:
        change = q[1:] != q[:-1]
        if ((score[1:] > score[:-1]) & ~change).any():
            return None
        starts = block_starts(q, change)
        if starts is None:
            return None  # a query comes back after another one
    elif not descend and rises_inside(score, starts):
        return None
    return Layout(starts, np.diff(np.append(starts, n)), q[starts])


def blocks_in_code_order(layout: Layout) -> Ints | None:
    """The permutation moving whole query blocks into code order (an O(n) gather, not a sort);
    None when they are in code order already."""
    codes, starts, lengths = layout.codes, layout.starts, layout.lengths
    if not (codes[1:] < codes[:-1]).any():
        return None
    perm = np.argsort(codes)
    new_lengths = lengths[perm]
    new_starts = np.cumsum(new_lengths) - new_lengths
    shift = np.repeat(new_starts - starts[perm], new_lengths)
    return np.subtract(np.arange(int(lengths.sum())), shift, out=shift)


def by_query_and_score(q: npt.NDArray[np.integer], score: Scores, layout: Layout | None) -> Ints | None:
    """Rows grouped by query code, score descending, equal scores in file order; None when the
    rows are in that order already (a run in rank order, its blocks in code order)."""
    if layout is not None:
        return blocks_in_code_order(layout)
    if len(q) == 0:
        return None
    by_score = np.argsort(-score, kind="stable")
    small = q.astype(np.uint16) if q.max(initial=0) < 1 << 16 else q  # 16-bit keys take numpy's radix sort
    return by_score[np.argsort(small[by_score], kind="stable")]


def equal_score_end(score: Scores | Rounded, rows: Ints, lo: Ints, hi: Ints, left: bool) -> Ints:
    """Per row, the first (``left``) or last row in [lo, hi] whose score equals the row's own,
    where scores descend from lo to hi and the row lies in that range. Vectorised bisection.

    >>> s = np.array([3.0, 2.0, 2.0, 2.0, 1.0])
    >>> rows, lo, hi = np.array([2]), np.array([0]), np.array([4])
    >>> int(equal_score_end(s, rows, lo, rows, True)[0]), int(equal_score_end(s, rows, rows, hi, False)[0])
    (1, 3)
    """
    target = score[rows]
    lo, hi = lo.copy(), hi.copy()
    while (open_ := lo < hi).any():
        lo_o, hi_o = lo[open_], hi[open_]
        if left:  # first i with score[i] <= target
            mid = (lo_o + hi_o) // 2
            ok = score[mid] <= target[open_]
            hi[open_] = np.where(ok, mid, hi_o)
            lo[open_] = np.where(ok, lo_o, mid + 1)
        else:  # last i with score[i] >= target
            mid = (lo_o + hi_o + 1) // 2
            ok = score[mid] >= target[open_]
            lo[open_] = np.where(ok, mid, lo_o)
            hi[open_] = np.where(ok, hi_o, mid - 1)
    return lo
