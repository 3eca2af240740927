"""THE one place that orders an alignment's rows: one :class:`Ranker` per alignment.

The ranker sorts by query, then score descending at the ordering's precision, then the tie rule
(:mod:`rankflavor.order.ties`); ``depth`` keeps the top N per query, then ``unjudged=condensed``
removes unjudged rows and closes up the ranks (trec_eval applies ``-M`` before ``-J``). It keeps
every piece of work orderings share (scores at a precision, the sort by score, the tied rows and
their docno order, the order under each rule) and the rankings themselves, by :class:`Ordering`.

It picks the cheapest rows that give a kernel exactly what it reads (:meth:`Ranker.ranked`):

* the judged rows alone (:meth:`Ranker.judged`) when the run is in rank order: a row's rank is
  then its offset in its query's block, and only ties mixing judgments move a judged row;
* the top ``k`` of each query, whole tie groups, plus the judged rows below (:meth:`Ranker.prefix`);
* else every row (:meth:`Ranker.rank`), where a tie group of equal judgments keeps its file
  order (``exact=False``): every metric reads only the grade and judged state at each rank,
  which no order of such a group changes, so only which document sits where may differ.

Examples
--------
>>> from rankflavor.align import align
>>> from rankflavor.io.inputs import as_qrels, as_run
>>> aligned = align(as_qrels({"q": {"a": 1, "c": 2}}), as_run({"q": {"a": 0.5, "b": 0.5, "c": 0.9}}))
>>> ranker = Ranker(aligned)
>>> r = ranker.rank(Ordering(ties="docno_desc"))
>>> [str(aligned.query_ids[q]) for q in r.q], r.rank.tolist(), r.grade.tolist()
(['q', 'q', 'q'], [1, 2, 3], [2.0, 0.0, 1.0])
>>> ranker.rank(Ordering(ties="docno_asc")).grade.tolist()
[2.0, 1.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from rankflavor.base.kernels import ranges, rank_within
from rankflavor.io.columns import as_numpy, from_numpy, plain_strings, string_array
from rankflavor.order import grades, ties
from rankflavor.order.layout import Layout, Rounded, Scores, by_query_and_score, equal_score_end, find_layout
from rankflavor.order.ranked import Ranked, SharedWork
from rankflavor.order.strategy import SCORE_DTYPES, Needs, Ordering

if TYPE_CHECKING:
    from rankflavor.align import Aligned

Ints = npt.NDArray[np.int64]


class Ranker:
    """Rankings of one alignment, under any :class:`Ordering`, sharing their work.

    Parameters
    ----------
    aligned : the alignment to rank.
    shared : work on the judgments to start from, e.g. that of a ranker of the same alignment
        with other scores (:mod:`rankflavor.training.rescore`); a new one when None.
    block_sort : the rows by query code and score, ties in file order, of scores over a fixed
        layout of query blocks (:class:`~rankflavor.order.blocks.BlockSort`), in place of the
        general sort; None for the general sort.

    Attributes
    ----------
    shared : work on the judgments that every ranking (and kernel) of this alignment shares.
    """

    def __init__(self, aligned: Aligned, *, shared: SharedWork | None = None,
                 block_sort: Callable[[Scores], Ints] | None = None) -> None:
        self.aligned = aligned
        self.shared = SharedWork() if shared is None else shared
        self._block_sort = block_sort
        self._n_fractional: int | None = None
        self._scores: dict[str, tuple[Scores, Layout | None]] = {}
        self._base: dict[str, tuple[Ints, bool]] = {}
        self._tied: dict[tuple[str, bool], ties.TiedRows | None] = {}
        self._orders: dict[tuple[str, str, bool], Ints] = {}
        self._self_hit: npt.NDArray[np.bool_] | None = None
        self._rankings: dict[Hashable, Ranked] = {}

    # -- the path a kernel's needs allow ---------------------------------------------------------

    def ranked(self, ordering: Ordering, needs: Needs | None = None) -> Ranked:
        """The ranking a kernel with ``needs`` (default: every row) reads under ``ordering``:
        only the judged rows when it reads no more, the top-k prefix when that suffices, else
        every row; kept for every measure with the same ordering and needs. Values equal those
        on :meth:`rank` exactly."""
        needs = needs or Needs()
        if not needs.run and self.aligned.counts.run_duplicates_kept:
            # Of the judgments alone: the run's duplicates change nothing it reads.
            return self._kept(("unchecked", ordering), lambda: self.rank(ordering, exact=False, duplicates=False))
        top = needs.top_rows
        if top is not None and ("full", ordering) not in self._rankings:
            return self._kept(("top", top, ordering), lambda: self.prefix(ordering, top) or self._full(ordering))
        if needs.judged_only:
            if ("full", ordering) in self._rankings:
                return self._kept(("judged", ordering), lambda: self._full(ordering).judged_rows)
            return self._kept(("judged", ordering),
                              lambda: self.judged(ordering) or self._full(ordering).judged_rows)
        return self._full(ordering)

    def forget_rankings(self) -> None:
        """Drop the rankings kept (several arrays of the run's length each); the work orderings
        share (score sorts, tied rows) stays."""
        self._rankings.clear()

    def _full(self, ordering: Ordering) -> Ranked:
        return self._kept(("full", ordering), lambda: self.rank(ordering, exact=False))

    def _kept(self, key: Hashable, build: Callable[[], Ranked]) -> Ranked:
        if key not in self._rankings:
            self._rankings[key] = build()
        return self._rankings[key]

    # -- every row ---------------------------------------------------------------------------------

    def rank(self, ordering: Ordering, *, exact: bool = True, duplicates: bool = True) -> Ranked:
        """Every row of the alignment ranked under ``ordering`` (not kept: see :meth:`ranked`).

        Parameters
        ----------
        exact : each rank holds the document the tie rule puts there; False lets a tie group of
            equal judgments keep its file order (same values, fewer docno comparisons).
        duplicates : report in :attr:`Ranked.kept_rows` the rows of scored queries (those in the
            qrels, or any under ``run_only=include``) that survive the depth cut, when alignment
            left run duplicates in place (``duplicates=error`` refuses a pair there, as trec_eval
            checks after its ``-M`` cut); False for rankings that only explain what was dropped.
        """
        aligned = self.aligned
        self._check(ordering)
        grade, judged, pooled = grades.row_grades(aligned.run_grade, ordering, self._truncates(ordering))
        jq, jgrade = grades.judgments(aligned, ordering, self._truncates(ordering))
        check = duplicates and bool(aligned.counts.run_duplicates_kept)
        if check:
            exact = True  # which rows of a tie group the depth cut keeps decides the refusal

        q = aligned.run_q
        prec = ordering.precision
        score, _ = self._scored(prec)
        base, base_identity = self._base_order(prec)
        # (file order needs no tied rows found: their docno comparisons would go unused)
        tied = self._tied_rows(prec, exact) if ordering.reorders_ties else None
        if ordering.by_grade:  # depends on the grades (negatives policy): not shared
            order = ties.break_ties(base, tied, grade, ordering.tie_rule)
        else:
            key = (prec, ordering.tie_rule, exact)
            if key not in self._orders:
                self._orders[key] = ties.break_ties(base, tied, grade, ordering.tie_rule)
            order = self._orders[key]
        if ordering.self_hits == "drop":
            # BEIR ignore_identical_ids: a document named like its query leaves the ranking first.
            order = order[~self._self_hits()[order]]

        # Most runs arrive in rank order: then ``order`` is the identity and nothing is gathered.
        identity = base_identity and order is base
        q_s = q if identity else q[order]
        score_s = score if identity else score[order]
        keep: npt.NDArray[np.bool_] | None = None
        n_ret = np.bincount(q_s, minlength=aligned.n_queries)
        ranks = rank_within(q_s, n_ret)
        dropped_depth = 0
        depth = ordering.depth
        if depth is not None and len(ranks) and int(n_ret.max()) > depth:
            keep = ranks <= depth
            dropped_depth = int(len(keep) - np.count_nonzero(keep))
        kept_rows: Ints | None = None
        if check:
            # After the depth cut and before condensing, as trec_eval checks; of the queries that are
            # scored (trec_eval never looks at a run-only query's rows).
            kept_rows = order if keep is None else order[keep]
            if ordering.run_only != "include":
                kept_rows = kept_rows[aligned.in_qrels[q[kept_rows]]]
        dropped_unjudged = 0
        if ordering.condensed:
            j = judged if identity else judged[order]
            unjudged = ~j if keep is None else keep & ~j
            dropped_unjudged = int(np.count_nonzero(unjudged))
            keep = j if keep is None else keep & j
        if keep is not None and not keep.all():
            order = order[keep]
            q_s = q_s[keep]
            score_s = score_s[keep]
            n_ret = np.bincount(q_s, minlength=aligned.n_queries)
            ranks = rank_within(q_s, n_ret)
            identity = False

        return Ranked(
            aligned=aligned, q=q_s, rank=ranks,
            grade=grade if identity else grade[order],
            judged=judged if identity else judged[order],
            pooled=pooled if identity else pooled[order],
            score=score_s.astype(np.float64, copy=False), n_ret=n_ret, jq=jq, jgrade=jgrade,
            dropped_by_depth=dropped_depth, dropped_unjudged=dropped_unjudged, row=order,
            ordering=ordering, shared=self.shared, kept_rows=kept_rows,
        )

    # -- the judged rows of a run in rank order ----------------------------------------------------

    def judged(self, ordering: Ordering) -> Ranked | None:
        """``rank(ordering).judged_rows`` without ranking every row; None when the run is not
        in rank order (grouped by query, scores descending), drops self-hits or holds run
        duplicates left in place (use :meth:`rank`).

        Only ties can move a judged row of a run in rank order: inside a run of equal scores
        mixing different judgments, the tie rule orders that run's rows (docno comparisons for
        those rows alone). Everything else reads the judged rows, a few percent of a run.
        """
        aligned = self.aligned
        if ordering.self_hits != "keep" or aligned.counts.run_duplicates_kept:
            return None  # (duplicates: which the depth cut keeps, among every row, decides)
        self._check(ordering)
        score, layout = self._gathered(ordering.precision)
        if layout is None:
            return None
        jr = aligned.judged_row
        grade, judged, _ = grades.row_grades(aligned.judged_grade, ordering, self._truncates(ordering))
        block = np.searchsorted(layout.starts, jr, side="right") - 1
        position = jr.copy()
        if ordering.reorders_ties and len(jr):
            ties.retie_judged(aligned, score, layout, block, grade, ordering.tie_rule, position)
        rank = position - layout.starts[block] + 1
        q = layout.codes[block]
        n_ret = np.zeros(aligned.n_queries, dtype=np.int64)
        n_ret[layout.codes] = layout.lengths
        keep = np.ones(len(jr), dtype=bool)
        dropped_depth = dropped_unjudged = 0
        depth = ordering.depth
        if depth is not None:
            keep = rank <= depth
            dropped_depth = int(np.maximum(n_ret - depth, 0).sum())
            n_ret = np.minimum(n_ret, depth)
        if ordering.condensed:
            keep &= judged
            kept_before = int(n_ret.sum())
            n_ret = np.bincount(q[keep], minlength=aligned.n_queries)
            dropped_unjudged = kept_before - int(n_ret.sum())
        by_rank = np.flatnonzero(keep)
        by_rank = by_rank[np.argsort(q[by_rank].astype(np.int64) * (int(rank.max(initial=0)) + 1) + rank[by_rank],
                                     kind="stable")]
        q, rank = q[by_rank], rank[by_rank]
        if ordering.condensed:  # ranks close up over the removed rows
            rank = rank_within(q, n_ret)
        jq, jgrade = grades.judgments(aligned, ordering, self._truncates(ordering))
        rows = jr[by_rank]
        return Ranked(
            aligned=aligned, q=q, rank=rank, grade=grade[by_rank], judged=judged[by_rank],
            pooled=np.ones(len(rows), dtype=bool), score=score[rows].astype(np.float64, copy=False),
            n_ret=n_ret, jq=jq, jgrade=jgrade, dropped_by_depth=dropped_depth, dropped_unjudged=dropped_unjudged,
            row=rows, judged_only=True, ordering=ordering, shared=self.shared,
        )

    # -- the top k of each query and the judged rows below ---------------------------------------

    def prefix(self, ordering: Ordering, k: int) -> Ranked | None:
        """The rows of :meth:`rank` a ``top_rows`` kernel reads: every row of each query down to
        rank ``k`` and on to the end of the tie group holding rank ``k``, then the judged rows
        below it. None when :meth:`judged` would be, when unjudged rows are condensed away (the
        top ``k`` then depends on them) or under a depth limit (which rows of a tie group it
        cuts, the tie rule decides).

        Inside the top tie groups the rows keep their file order: a ``top_rows`` kernel reads a
        tie group's rows as a set (``ties=averaged``). The judged rows below take the ranks
        :meth:`judged` gives them.
        """
        if ordering.condensed or ordering.depth is not None:
            return None
        judged = self.judged(ordering)
        if judged is None or judged.row is None:
            return None
        aligned = self.aligned
        score, layout = self._gathered(ordering.precision)
        assert layout is not None  # judged() checked it
        lengths = layout.lengths
        last = layout.starts + np.minimum(lengths, k) - 1
        end = equal_score_end(score, last, last, layout.starts + lengths - 1, left=False) + 1
        top_len = end - layout.starts  # per block; no block is empty
        rows = ranges(layout.starts, top_len)
        block = np.repeat(np.arange(len(top_len)), top_len)
        prefix_len = np.zeros(aligned.n_queries, dtype=np.int64)
        prefix_len[layout.codes] = top_len
        below = judged.rank > prefix_len[judged.q]
        raw = np.full(len(rows), np.nan)
        at = np.minimum(np.searchsorted(aligned.judged_row, rows), max(len(aligned.judged_row) - 1, 0))
        if len(aligned.judged_row):
            hit = aligned.judged_row[at] == rows
            raw[hit] = aligned.judged_grade[at[hit]]
        grade, is_judged, pooled = grades.row_grades(raw, ordering, self._truncates(ordering))
        q = np.concatenate([layout.codes[block], judged.q[below]])
        rank = np.concatenate([rows - layout.starts[block] + 1, judged.rank[below]])
        by_rank = np.argsort(q.astype(np.int64) * (int(rank.max(initial=0)) + 1) + rank, kind="stable")
        all_rows = np.concatenate([rows, judged.row[below]])[by_rank]
        return replace(
            judged,
            q=q[by_rank],
            rank=rank[by_rank],
            grade=np.concatenate([grade, judged.grade[below]])[by_rank],
            judged=np.concatenate([is_judged, judged.judged[below]])[by_rank],
            pooled=np.concatenate([pooled, judged.pooled[below]])[by_rank],
            score=score[all_rows].astype(np.float64, copy=False),
            row=all_rows,
            judged_only=False,
        )

    # -- work shared by orderings ------------------------------------------------------------------

    def _check(self, ordering: Ordering) -> None:
        grades.check_grade_policies(self.aligned, ordering, self._fractional())

    def _fractional(self) -> int:
        """How many judgments have a fractional grade (counted once)."""
        if self._n_fractional is None:
            self._n_fractional = grades.count_fractional(self.aligned.qrels_grade)
        return self._n_fractional

    def _truncates(self, ordering: Ordering) -> bool:
        return grades.truncates(ordering, self._fractional())

    def _scored(self, precision: str) -> tuple[Scores, Layout | None]:
        """Scores at ``precision`` (float32 scores stay float32: order and ties compare alike, at
        half the memory) and the run's query blocks if it is in rank order."""
        if precision not in self._scores:
            aligned = self.aligned
            score: Scores = aligned.run_score.astype(SCORE_DTYPES[precision], copy=False)
            # (rounding to float32 makes no score rise that did not)
            self._scores[precision] = (score, find_layout(aligned.run_q, score, aligned.query_starts,
                                                          aligned.scores_descend))
        return self._scores[precision]

    def _gathered(self, precision: str) -> tuple[Scores | Rounded, Layout | None]:
        """:meth:`_scored` for code that only gathers scores at rows. A run in rank order at
        float64 is in rank order at float32 too (rounding keeps order), so its layout is read
        at float64 and its scores rounded where gathered."""
        if SCORE_DTYPES[precision] != "float32" or precision in self._scores:
            return self._scored(precision)
        layout = self._scored("float64")[1]
        return (Rounded(self.aligned.run_score), layout) if layout is not None else self._scored(precision)

    def _base_order(self, precision: str) -> tuple[Ints, bool]:
        """Rows by query code and score, ties in file order; and whether that is the identity."""
        if precision not in self._base:
            score, layout = self._scored(precision)
            base: Ints | None
            if self._block_sort is not None and layout is None:
                base = self._block_sort(score)
            else:
                base = by_query_and_score(self.aligned.run_q, score, layout)
            self._base[precision] = (np.arange(len(self.aligned.run_q)), True) if base is None else (base, False)
        return self._base[precision]

    def _tied_rows(self, precision: str, exact: bool) -> ties.TiedRows | None:
        if (precision, exact) not in self._tied:
            base, identity = self._base_order(precision)
            score, _ = self._scored(precision)
            self._tied[precision, exact] = ties.tied_rows(base, self.aligned.run_q, score, self.aligned, exact,
                                                          identity)
        return self._tied[precision, exact]

    def _self_hits(self) -> npt.NDArray[np.bool_]:
        """Per aligned run row: is the docno the same string as its query id?"""
        if self._self_hit is None:
            import pyarrow.compute as pc

            aligned = self.aligned
            docs = plain_strings(aligned.run_doc_strings).take(from_numpy(aligned.run_row))
            queries = string_array(aligned.query_ids.tolist()).take(from_numpy(aligned.run_q))
            same = pc.equal(pc.cast(docs, pa.string()), queries)
            if isinstance(same, pa.ChunkedArray):
                same = same.combine_chunks()
            self._self_hit = as_numpy(pc.and_kleene(same, pc.is_valid(same)))  # null -> False (fill_null(False) imports pandas)
        return self._self_hit
