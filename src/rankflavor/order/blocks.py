"""The sort of scores over a fixed layout of query blocks, made once and used for many scorings.

A learning-to-rank validation set is the same groups at every boosting iteration: only the
scores change. :class:`BlockSort` lays the rows out once as a matrix of one query block per row
(padded to the longest block), so each scoring is a sort of short rows instead of a sort of the
whole run: the permutation :func:`~rankflavor.order.layout.by_query_and_score` gives (rows by
query code, score descending, equal scores in file order), found faster. The tie rules are then
applied by :mod:`rankflavor.order.ties` as on every other path.

Examples
--------
>>> import numpy as np
>>> sort = BlockSort(np.array([0, 3]), np.array([3, 2]))
>>> sort(np.array([0.1, 0.5, 0.1, 2.0, 3.0])).tolist()   # ties (rows 0 and 2) in file order
[1, 0, 2, 4, 3]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..kernels import rank_within
from . import grades, ties
from .layout import Scores
from .ranked import Ranked, SharedWork
from .strategy import Ordering

if TYPE_CHECKING:
    from ..align import Aligned

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


class BlockSort:
    """Rows by block and score descending, equal scores in file order, for scores of rows laid
    out in query blocks (``starts``, ``lengths``: consecutive, in query-code order, none empty).

    Callable on the scores of every row (any float dtype; finite: a NaN has no place in an order,
    the caller refuses it). Each call sorts every block without keeping ties in order (on scores
    rounded to float32), then sorts again, stably and at full precision, only the blocks in which
    two rounded scores are equal.
    """

    def __init__(self, starts: Ints, lengths: Ints) -> None:
        self.starts = np.asarray(starts, dtype=np.int64)
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.n = int(self.lengths.sum())
        self.width = int(self.lengths.max(initial=0))
        n_blocks = len(self.lengths)
        # equal blocks are a reshape; otherwise each row's cell in the padded matrix
        self.equal = n_blocks > 0 and bool((self.lengths == self.width).all())
        if not self.equal:
            block = np.repeat(np.arange(n_blocks), self.lengths)
            self.cell = block * self.width + (np.arange(self.n) - self.starts[block])
            self.real = np.zeros(n_blocks * self.width, dtype=bool)
            self.real[self.cell] = True
            # place j > 0 of a block holds one of its rows (padding sorts last)
            self.inner = np.arange(1, self.width)[None, :] < self.lengths[:, None]

    def __call__(self, score: Scores) -> Ints:
        n_blocks = len(self.lengths)
        if n_blocks == 0:
            return np.zeros(0, dtype=np.int64)
        key: npt.NDArray[np.floating]
        if self.equal:
            key = (-score).reshape(n_blocks, self.width)
        else:
            padded = np.full(n_blocks * self.width, np.inf, dtype=score.dtype)
            padded[self.cell] = -score
            key = padded.reshape(n_blocks, self.width)
        # Sorted as float32 first (a third of the time): rounding keeps order, so where no two
        # rounded scores of a block are equal the order is the float64 one; the blocks where two
        # are equal (a tie, or scores float32 cannot tell apart) are sorted again below.
        with np.errstate(over="ignore"):  # (beyond float32's range: infinities, equal, sorted again)
            rough = key.astype(np.float32) if key.dtype == np.float64 else key
        order = np.argsort(rough, axis=1)
        flat = order + (np.arange(n_blocks) * self.width)[:, None]  # cell of each place
        ordered = rough.ravel()[flat]
        same = ordered[:, 1:] == ordered[:, :-1]
        if not self.equal:
            same &= self.inner  # padding ties with padding: no matter
        tied = same.any(axis=1)
        if tied.any():
            flat[tied] = np.argsort(key[tied], axis=1, kind="stable") + (np.flatnonzero(tied) * self.width)[:, None]
        if self.equal:
            rows: Ints = flat.ravel()
            return rows
        places = flat.ravel()
        keep = self.real[places]
        # cell -> row: a block's cells hold its rows in order, from the block's first row
        block = places[keep] // self.width
        rows = places[keep] - block * self.width + self.starts[block]
        return rows




class BlockRanker:
    """Rankings of one alignment whose rows are fixed query blocks (every row judged, blocks in
    query-code order), for scores given again and again: what does not depend on the scores
    (each row's grade under an ordering's grade policies, the usable judgments, ranks within
    blocks, rows per query) is made once per ordering; a call sorts (:class:`BlockSort`), lets the
    tie rule reorder the tied rows (:mod:`rankflavor.order.ties`, as :class:`~rankflavor.order.Ranker`
    does) and gathers. Orderings that remove rows (``depth``, ``unjudged=condensed``,
    ``self_hits=drop``) are not taken (:meth:`takes`): the :class:`~rankflavor.order.Ranker` ranks those.
    """

    def __init__(self, aligned: Aligned, block_sort: BlockSort, shared: SharedWork) -> None:
        self.aligned = aligned
        self.block_sort = block_sort
        self.shared = shared
        self.q = aligned.run_q
        self.n_ret = np.bincount(self.q, minlength=aligned.n_queries)
        self.rank = rank_within(self.q, self.n_ret)
        self._n_fractional = grades.count_fractional(aligned.qrels_grade)
        self._fixed: dict[Ordering, tuple[Any, ...]] = {}

    @staticmethod
    def takes(ordering: Ordering) -> bool:
        return ordering.depth is None and not ordering.condensed and ordering.self_hits == "keep"

    def _of(self, ordering: Ordering) -> tuple[Any, ...]:
        if ordering not in self._fixed:
            grades.check_grade_policies(self.aligned, ordering, self._n_fractional)
            truncate = grades.truncates(ordering, self._n_fractional)
            self._fixed[ordering] = (*grades.row_grades(self.aligned.run_grade, ordering, truncate),
                                     *grades.judgments(self.aligned, ordering, truncate))
        return self._fixed[ordering]

    def ranked(self, score: Floats, ordering: Ordering) -> Ranked:
        """Every row ranked under ``ordering`` by ``score`` (one per aligned row)."""
        grade, judged, pooled, jq, jgrade = self._of(ordering)
        at: Scores = score.astype(np.float32) if ordering.precision == "float32" else score
        order = self.block_sort(at)
        if ordering.tie_rule != "input_order":  # (tied_rows reads no score of the alignment)
            tied = ties.tied_rows(order, self.q, at, self.aligned, exact_rows=False)
            order = ties.break_ties(order, tied, grade, ordering.tie_rule)
        return Ranked(
            aligned=self.aligned, q=self.q, rank=self.rank, grade=grade[order], judged=judged[order],
            pooled=pooled[order], score=at[order].astype(np.float64, copy=False), n_ret=self.n_ret, jq=jq,
            jgrade=jgrade, dropped_by_depth=0, dropped_unjudged=0, row=order, ordering=ordering, shared=self.shared,
        )


__all__ = ["BlockRanker", "BlockSort"]
