"""The sort of scores over a fixed layout of query blocks, made once and used for many scorings.

A learning-to-rank validation set is the same groups at every boosting iteration: only the
scores change. :class:`BlockSort` lays the rows out once as a matrix of one query block per row
(padded to the longest block), so each scoring is a sort of short rows instead of a sort of the
whole run: the permutation :func:`~rankflavor.order.layout.by_query_and_score` gives (rows by
query code, score descending, equal scores in file order), found faster, or only its first rows
of each block. The tie rules are then applied by :mod:`rankflavor.order.ties` as on every other
path. :class:`BlockRanker` makes :class:`~rankflavor.order.Ranked` lists of it, of every row or
of the rows down to the deepest rank the measures read.

Examples
--------
>>> import numpy as np
>>> sort = BlockSort(np.array([0, 3]), np.array([3, 2]))
>>> sort(np.array([0.1, 0.5, 0.1, 2.0, 3.0])).tolist()   # ties (rows 0 and 2) in file order
[1, 0, 2, 4, 3]
>>> sort(np.array([0.1, 0.5, 0.1, 2.0, 3.0]), top=2).tolist()
[1, 0, 4, 3]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from rankflavor.base.kernels import rank_within
from rankflavor.order import grades, ties
from rankflavor.order.layout import Scores
from rankflavor.order.ranked import Ranked, SharedWork
from rankflavor.order.strategy import Ordering

if TYPE_CHECKING:
    from rankflavor.align import Aligned

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]

_MAX = np.int64(np.iinfo(np.int64).max)


class BlockSort:
    """Rows by block and score descending, equal scores in file order, for scores of rows laid
    out in query blocks (``starts``, ``lengths``: consecutive, in query-code order, none empty).

    Callable on the scores of every row (float64 or float32; finite: a NaN has no place in an
    order, the caller refuses it). A call is one sort of integer keys, a block to a matrix row:
    each score's bits turned into an integer that orders as the score does, its lowest ``bits``
    replaced by the row's place in its block, so equal scores come out in file order with no
    stable sort. A float32 key keeps every bit of its score. A float64 key loses the lowest
    ``bits``: two scores of one block that differ only there (within ~1e-14 of each other) share
    their key's score part, and only the blocks where that happens are sorted again, stably, on
    the scores themselves.
    """

    def __init__(self, starts: Ints, lengths: Ints) -> None:
        self.starts = np.asarray(starts, dtype=np.int64)
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.n = int(self.lengths.sum())
        self.width = int(self.lengths.max(initial=0))
        self.bits = max(1, (self.width - 1).bit_length())  # enough for every place in a block
        self.place = np.arange(self.width, dtype=np.int64)
        n_blocks = len(self.lengths)
        # equal blocks are a reshape; otherwise each row's cell in the padded matrix
        self.equal = n_blocks > 0 and bool((self.lengths == self.width).all())
        if not self.equal:
            block = np.repeat(np.arange(n_blocks), self.lengths)
            self.cell = block * self.width + (np.arange(self.n) - self.starts[block])
        self._real: dict[int, Flags] = {}
        self._buffers: dict[str, npt.NDArray[Any]] = {}

    def __call__(self, score: Scores, top: int | None = None, reverse: bool = False) -> Ints:
        """The rows, block after block, each block's highest score first; with ``top``, only
        the first ``min(top, length)`` of each block; with ``reverse``, equal scores in reverse
        file order."""
        if not len(self.lengths):
            return np.zeros(0, dtype=np.int64)
        keys, exact = self._keys(score, reverse)
        keys.sort(axis=1)
        width = self.width if top is None else min(top, self.width)
        if not exact:
            self._sort_again(keys, score, width, reverse)
        places = self._places(keys[:, :width], reverse)
        places += self.starts[:, None]  # a block's rows are consecutive from its first
        if self.equal:
            rows: Ints = places.ravel()
            return rows
        if width not in self._real:  # places holding a row of the block, not padding
            self._real[width] = self.place[:width] < self.lengths[:, None]
        return places[self._real[width]]

    def _places(self, keys: Ints, reverse: bool) -> Ints:
        """The place in its block of the row each key holds (reversed places under ``reverse``)."""
        places: Ints = keys & ((1 << self.bits) - 1)
        if reverse:
            np.subtract(self.width - 1, places, out=places)
        return places

    def _keys(self, score: Scores, reverse: bool) -> tuple[Ints, bool]:
        """The [blocks x width] keys (padding after every row), and whether they keep every
        bit of the scores. Made in this sort's own buffers: a fresh 8-byte array per row at
        every call costs as much again in page faults as the arithmetic on it."""
        mono = self._buffer("mono", np.int64, self.n)
        if score.dtype == np.float32:
            key32 = np.subtract(np.float32(0.0), score, out=self._buffer("key32", np.float32, self.n))
            bits32 = key32.view(np.int32)  # (-0.0 became 0.0: equal scores, equal keys)
            sign32 = np.right_shift(bits32, 31, out=self._buffer("sign32", np.int32, self.n))
            sign32 &= 0x7FFFFFFF
            sign32 ^= bits32  # negatives: magnitude reversed, so the integers order as the scores
            mono[...] = sign32
            mono <<= self.bits
            exact = True
        else:
            key = np.subtract(0.0, score, out=self._buffer("key", np.float64, self.n))
            bits64 = key.view(np.int64)
            np.right_shift(bits64, 63, out=mono)
            mono &= _MAX
            mono ^= bits64
            mono &= ~np.int64((1 << self.bits) - 1)  # room for the place
            exact = False
        n_blocks = len(self.lengths)
        if self.equal:
            keys = mono.reshape(n_blocks, self.width)
        else:
            padded = self._buffer("padded", np.int64, n_blocks * self.width)
            padded.fill(_MAX)  # above every finite score's key
            padded[self.cell] = mono
            keys = padded.reshape(n_blocks, self.width)
        keys |= self.place[::-1] if reverse else self.place
        return keys, exact

    def _buffer(self, name: str, dtype: type, size: int) -> npt.NDArray[Any]:
        """This sort's buffer ``name``, made at first use (a call uses each buffer once, and a
        sort is called from one thread at a time: a training loop's)."""
        if name not in self._buffers:
            self._buffers[name] = np.empty(size, dtype=dtype)
        return self._buffers[name]

    def _sort_again(self, keys: Ints, score: Scores, width: int, reverse: bool) -> None:
        """Sort again, on the float64 scores, the blocks where two rows whose keys share their
        score part differ in score, in a run of shared parts that reaches the first ``width``
        places."""
        cols = min(width + 1, self.width)
        near = self._near(keys[:, :cols])
        block, at = np.nonzero(near)
        if not len(block):
            return
        longer = np.flatnonzero(near[:, -1]) if cols < self.width else block[:0]
        if len(longer):  # a run reaching the last place looked at may go on past it
            more, more_at = np.nonzero(self._near(keys[longer, cols - 1:], longer, cols - 1))
            block, at = np.concatenate([block, longer[more]]), np.concatenate([at, more_at + cols - 1])
        first = score[self.starts[block] + self._places(keys[block, at], reverse)]
        second = score[self.starts[block] + self._places(keys[block, at + 1], reverse)]
        again = np.unique(block[first != second])
        if not len(again):
            return
        cells = self.starts[again, None] + self.place
        real = self.place < self.lengths[again, None]
        values = np.where(real, -score[np.minimum(cells, self.n - 1)], np.inf)
        if reverse:  # sorted from the last place: reversed places, as the keys hold them
            values = values[:, ::-1]
        keys[again] = np.argsort(values, axis=1, kind="stable")  # places (below every mask bit)

    def _near(self, keys: Ints, blocks: Ints | None = None, first: int = 0) -> Flags:
        """Of each pair of neighbouring places (of sorted ``keys`` from place ``first`` on),
        whether their keys share the score part."""
        part = keys >> self.bits
        near: Flags = part[:, 1:] == part[:, :-1]
        if not self.equal:  # padding shares its key with padding
            lengths = self.lengths if blocks is None else self.lengths[blocks]
            near &= self.place[first + 1:first + keys.shape[1]] < lengths[:, None]
        return near


class BlockRanker:
    """Rankings of one alignment whose rows are fixed query blocks (every row judged, blocks in
    query-code order), for scores given again and again: what does not depend on the scores
    (each row's grade under an ordering's grade policies, the usable judgments, ranks within
    blocks, rows per query) is made once per ordering; a call sorts (:class:`BlockSort`), lets the
    tie rule reorder the tied rows (:mod:`rankflavor.order.ties`, as :class:`~rankflavor.order.Ranker`
    does) and gathers. Where the caller says each block's docnos ascend in byte order along its
    rows (``docnos_in_file_order``: the zero-padded positions of :func:`rankflavor.training.arrays.ndcg_score`'s
    tables), ``docno_asc`` is file order and ``docno_desc`` its reverse: the sort itself then puts
    ties in the rule's order. Orderings that remove rows (``depth``, ``unjudged=condensed``,
    ``self_hits=drop``) are not taken (:meth:`takes`): the :class:`~rankflavor.order.Ranker` ranks those.
    """

    def __init__(self, aligned: Aligned, block_sort: BlockSort, shared: SharedWork,
                 docnos_in_file_order: bool = False) -> None:
        self.aligned = aligned
        self.block_sort = block_sort
        self.shared = shared
        self.q = aligned.run_q
        self.n_ret = np.bincount(self.q, minlength=aligned.n_queries)
        self.rank = rank_within(self.q, self.n_ret)
        self._n_fractional = grades.count_fractional(aligned.qrels_grade)
        self._fixed: dict[Ordering, tuple[Any, ...]] = {}
        self._tops: dict[int, tuple[Flags, Ints, Ints]] = {}
        #: docnos ascend (byte order, ``strcmp``) along the rows of every block
        self.docnos_in_file_order = docnos_in_file_order

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

    def ranked(self, score: Floats, ordering: Ordering, to_rank: int | None = None) -> Ranked:
        """Every row ranked under ``ordering`` by ``score`` (one per aligned row); with
        ``to_rank``, only the rows ranked at or above it (:attr:`Ranked.to_rank`: for kernels
        that read no row below, :meth:`MetricSpec.deepest_rank <rankflavor.metrics.MetricSpec.deepest_rank>`)."""
        grade, judged, pooled, jq, jgrade = self._of(ordering)
        dtype = ordering.score_dtype
        at: Scores = score if dtype == "float64" else score.astype(dtype)
        if to_rank is not None and to_rank >= self.block_sort.width:
            to_rank = None  # every row is that high
        q, rank = self.q, self.rank
        sorted_by = self._sorted_ties(ordering.tie_rule)
        if sorted_by is not None:  # the sort's own order is the rule's: nothing to reorder
            order = self.block_sort(at, to_rank, reverse=sorted_by == "reverse")
            if to_rank is not None:
                _, q, rank = self._top(to_rank)
        else:  # (tied_rows reads no score of the alignment)
            order = self.block_sort(at)
            tied = ties.tied_rows(order, self.q, at, self.aligned, exact_rows=False)
            order = ties.break_ties(order, tied, grade, ordering.tie_rule)
            if to_rank is not None:  # cut after the tie rule: a tie group may straddle the rank
                keep, q, rank = self._top(to_rank)
                order = order[keep]
        return Ranked(
            aligned=self.aligned, q=q, rank=rank, grade=grade[order], judged=judged[order],
            pooled=pooled[order], score=at[order].astype(np.float64, copy=False), n_ret=self.n_ret, jq=jq,
            jgrade=jgrade, dropped_by_depth=0, dropped_unjudged=0, row=order, ordering=ordering, shared=self.shared,
            to_rank=to_rank,
        )

    def _sorted_ties(self, rule: str) -> str | None:
        """Whether the sort puts tied rows in the order of ``rule`` (in file order, or in reverse);
        None: the tie rule reorders them. File order is a rule without keys; where docnos ascend
        along the rows, docno order is file order too (:data:`~rankflavor.order.ties.TIE_TABLE`)."""
        keys = ties.TIE_TABLE[rule].keys
        if not keys or (keys == (ties.DOCNO_ASC,) and self.docnos_in_file_order):
            return "file"
        return "reverse" if keys == (ties.DOCNO_DESC,) and self.docnos_in_file_order else None

    def _top(self, to_rank: int) -> tuple[Flags, Ints, Ints]:
        """Of the ranked rows, those at or above ``to_rank``: which, their queries and ranks."""
        if to_rank not in self._tops:
            keep = self.rank <= to_rank
            self._tops[to_rank] = (keep, self.q[keep], self.rank[keep])
        return self._tops[to_rank]


__all__ = ["BlockRanker", "BlockSort"]
