"""THE one place that orders documents: score, then the tie rule; emits ranks and tie groups.

Every metric reads a :class:`Ranked` built here. Measures that share the ordering knobs
(negatives, unjudged, ties, precision, depth) share one :class:`Ranked`, so many metrics and
cutoffs cost one sort.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from . import arrow_ops
from .align import Aligned, refuse_kept_duplicates
from .columns import as_numpy, from_numpy, plain_strings, string_array, take
from .errors import InputError
from .flavor import Flavor
from .kernels import block_starts, distinct, ranges, rank_within, rises_inside
from .order_cache import memo_of  # temporary: replaced by the Ranker's caches

if TYPE_CHECKING:
    from .measure import Measure

#: The knobs a ranking reads (measures agreeing on them share one); ``run_only`` says which
#: queries' duplicates it refuses (see :func:`rank`).
ORDER_KNOBS = ("negatives", "unjudged", "ties", "precision", "depth", "self_hits", "fractional", "run_only")


@dataclass(frozen=True)
class Ranked:
    """Run rows sorted by (query, rank), with what every kernel needs.

    Attributes
    ----------
    q : query code per row; rows are sorted by (query code, rank).
    rank : 1-based rank per row within its query.
    grade : judged grade per row, 0 where the row is not judged.
    judged : the row has a usable judgment (negatives count as unjudged unless negatives=zero).
    pooled : the row's document appears in the qrels at all (any grade).
    score : the score each row was ordered by (at the flavor's precision).
    tie_group : id of the run of equal scores a row belongs to (increasing; never shared across
        queries); computed on first use.
    n_ret : rows per query code.
    jq, jgrade : usable judgments (query code, grade) of every query, for ideals and R.
    row : index of each ranked row in the aligned run arrays (which document sits at each rank),
        for per-document explanations; None when built elsewhere.
    """

    aligned: Aligned
    q: np.ndarray
    rank: np.ndarray
    grade: np.ndarray
    judged: np.ndarray
    pooled: np.ndarray
    score: np.ndarray
    n_ret: np.ndarray
    jq: np.ndarray
    jgrade: np.ndarray
    dropped_by_depth: int
    dropped_unjudged: int
    row: np.ndarray | None = None
    #: Only the rows with a judgment (see :attr:`judged_rows`); ranks and ``n_ret`` are the full list's.
    judged_only: bool = False

    @property
    def n_queries(self) -> int:
        return self.aligned.n_queries

    @property
    def judged_rows(self) -> Ranked:
        """The rows whose document has a judgment (any grade), with their ranks in the full list.

        Kernels that read nothing else of an unjudged row (``MetricSpec.judged_only``) run on
        this: a few percent of a typical run.
        """
        # Not cached on a judged-only list: a reference to itself would be a cycle, and the
        # alignment it holds (hundreds of MB on a big run) would live until the next full
        # collection instead of being freed when the caller lets go.
        return self if self.judged_only else self._judged_subset

    @cached_property
    def _judged_subset(self) -> Ranked:
        idx = np.flatnonzero(self.pooled)
        return replace(
            self, q=self.q[idx], rank=self.rank[idx], grade=self.grade[idx], judged=self.judged[idx],
            pooled=self.pooled[idx], score=self.score[idx], row=None if self.row is None else self.row[idx],
            judged_only=True,
        )

    @cached_property
    def tie_group(self) -> np.ndarray:
        if self.judged_only:
            raise ValueError("tie groups need every ranked row, not only the judged ones")
        q, score = self.q, self.score
        new_group = np.ones(len(q), dtype=bool)
        if len(q) > 1:
            new_group[1:] = (q[1:] != q[:-1]) | (score[1:] != score[:-1])
        return np.cumsum(new_group) - 1

    @property
    def max_len(self) -> int:
        return int(self.n_ret.max()) if len(self.n_ret) else 0


def order_key(flavor: Flavor) -> tuple[str, ...]:
    return tuple(getattr(flavor, k) for k in ORDER_KNOBS)


def rank(aligned: Aligned, flavor: Flavor, exact_rows: bool = True, refuse_duplicates: bool = True) -> Ranked:
    """Sort the aligned run under ``flavor``'s ordering knobs and assign ranks.

    Order: query code, score descending (compared at ``precision``), then the ``ties`` rule.
    ``depth`` keeps the top N per query, then ``unjudged=condensed`` removes unjudged rows and
    closes up the ranks (trec_eval applies -M before -J).

    With ``exact_rows=False`` a run of equal scores whose rows all have the same judgment keeps
    its file order instead of docno order: every metric reads only the grade and judged state at
    each rank, which no order of such a run changes, so the values are identical; only
    ``Ranked.row`` (which document sits where, for explanations) may differ. On runs with many
    ties among unjudged documents this skips nearly all docno comparisons.

    Run duplicates that ``duplicates=error`` left in place are refused here when two rows of a
    pair survive the depth cut (:func:`~rankflavor.align.refuse_kept_duplicates`), in a query
    that is scored (one in the qrels, or any under ``run_only=include``);
    ``refuse_duplicates=False`` ranks them anyway (explanations of what a ranking dropped).
    """
    _check_grade_policies(aligned, flavor)
    grade, judged, pooled = _grades(aligned.run_grade, flavor, _truncates(aligned, flavor))
    jq, jgrade = _judgments(aligned, flavor)
    if refuse_duplicates and aligned.counts.run_duplicates_kept:
        exact_rows = True  # which rows of a tie group the depth cut keeps decides the refusal

    q = aligned.run_q
    # The score sort and the docno ranks of tied rows depend only on the precision: computed
    # once per alignment and shared by every tie rule, depth, condensing and measure.
    memo = memo_of(aligned)
    prec = flavor.precision
    score, layout = _scored(aligned, prec)
    if ("base", prec) not in memo:
        base = _by_query_and_score(q, score, layout)
        memo["base_identity", prec] = base is None
        memo["base", prec] = np.arange(len(q)) if base is None else base
    base = memo["base", prec]
    base_identity = memo["base_identity", prec]
    ties_key = ("ties", prec, exact_rows)
    if ties_key not in memo:
        memo[ties_key] = _tied_rows(base, q, score, aligned, exact_rows, base_identity)
    tied = memo[ties_key]
    if flavor.ties in ("pessimistic", "optimistic"):  # depends on the grades (negatives policy)
        order = _break_ties(base, tied, grade, flavor.ties)
    else:
        rule = "docno_desc" if flavor.ties == "averaged" else flavor.ties  # averaged orders like docno_desc
        if ("order", prec, rule, exact_rows) not in memo:
            memo["order", prec, rule, exact_rows] = _break_ties(base, tied, grade, rule)
        order = memo["order", prec, rule, exact_rows]
    if flavor.self_hits == "drop":
        # BEIR ignore_identical_ids: a document named like its query leaves the ranking first.
        order = order[~_self_hits(aligned)[order]]

    # Most runs arrive in rank order: then ``order`` is the identity and nothing is gathered.
    identity = base_identity and order is base
    q_s = q if identity else q[order]
    score_s = score if identity else score[order]
    keep: np.ndarray | None = None
    n_ret = np.bincount(q_s, minlength=aligned.n_queries)
    ranks = rank_within(q_s, n_ret)
    dropped_depth = 0
    depth = flavor.depth_limit
    if depth is not None and len(ranks) and int(n_ret.max()) > depth:
        keep = ranks <= depth
        dropped_depth = int(len(keep) - np.count_nonzero(keep))
    if refuse_duplicates and aligned.counts.run_duplicates_kept:
        # After the depth cut and before condensing, as trec_eval checks; of the queries that are
        # scored (trec_eval never looks at a run-only query's rows).
        kept = order if keep is None else order[keep]
        if flavor.run_only != "include":
            kept = kept[aligned.in_qrels[q[kept]]]
        refuse_kept_duplicates(aligned, kept, depth)
    dropped_unjudged = 0
    if flavor.unjudged == "condensed":
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
        aligned=aligned,
        q=q_s,
        rank=ranks,
        grade=grade if identity else grade[order],
        judged=judged if identity else judged[order],
        pooled=pooled if identity else pooled[order],
        score=score_s.astype(np.float64, copy=False),
        n_ret=n_ret,
        jq=jq,
        jgrade=jgrade,
        dropped_by_depth=dropped_depth,
        dropped_unjudged=dropped_unjudged,
        row=order,
    )


def ranked_for(aligned: Aligned, measure: Measure, cache: dict[tuple[str, ...], Ranked]) -> Ranked:
    """The ranking ``measure``'s kernel reads, shared through ``cache`` by every measure with the
    same ordering knobs: only the judged rows when the metric reads no more (from
    :func:`rank_judged`, or from a full ranking already made), else the full ranking."""
    key = order_key(measure.flavor)
    if not measure.spec.reads_run and aligned.counts.run_duplicates_kept:
        # Of the judgments alone: the run's duplicates change nothing it reads.
        if ("unchecked", *key) not in cache:
            cache["unchecked", *key] = rank(aligned, measure.flavor, exact_rows=False, refuse_duplicates=False)
        return cache["unchecked", *key]
    top = measure.spec.reads_top_rows(measure)
    if top is not None and ("full", *key) not in cache:
        top_key = ("top", str(top), *key)
        if top_key not in cache:
            cache[top_key] = rank_prefix(aligned, measure.flavor, top) or _full(aligned, measure.flavor, cache)
        return cache[top_key]
    if measure.spec.reads_judged_only(measure):
        if ("judged", *key) not in cache:
            if ("full", *key) in cache:
                cache["judged", *key] = cache["full", *key].judged_rows
            else:
                fast = rank_judged(aligned, measure.flavor)
                cache["judged", *key] = fast if fast is not None else _full(aligned, measure.flavor, cache).judged_rows
        return cache["judged", *key]
    return _full(aligned, measure.flavor, cache)


def _full(aligned: Aligned, flavor: Flavor, cache: dict[tuple[str, ...], Ranked]) -> Ranked:
    key = ("full", *order_key(flavor))
    if key not in cache:
        cache[key] = rank(aligned, flavor, exact_rows=False)
    return cache[key]


def rank_judged(aligned: Aligned, flavor: Flavor) -> Ranked | None:
    """``rank(aligned, flavor).judged_rows`` without ranking every row; None when the run is not
    in rank order (grouped by query, scores descending), drops self-hits or holds run duplicates
    left in place (use :func:`rank`).

    In a run in rank order a row's rank is its offset in its query's block. Only ties can move
    a judged row: inside a run of equal scores mixing different judgments, the tie rule orders
    that run's rows (docno comparisons for those rows alone). Everything else reads the judged
    rows, a few percent of a typical run.
    """
    if flavor.self_hits != "keep" or aligned.counts.run_duplicates_kept:
        return None  # (duplicates: :func:`rank` refuses those its depth cut keeps, among every row)
    _check_grade_policies(aligned, flavor)
    score, layout = _gathered(aligned, flavor.precision)
    if layout is None:
        return None
    jr = aligned.judged_row
    grade, judged, _ = _grades(aligned.judged_grade, flavor, _truncates(aligned, flavor))
    block = np.searchsorted(layout.starts, jr, side="right") - 1
    position = jr.copy()
    rule = "docno_desc" if flavor.ties == "averaged" else flavor.ties
    if rule != "input_order" and len(jr):
        _retie(aligned, score, layout, jr, block, grade, rule, position)
    rank = position - layout.starts[block] + 1
    q = layout.codes[block]
    n_ret = np.zeros(aligned.n_queries, dtype=np.int64)
    n_ret[layout.codes] = layout.lengths
    keep = np.ones(len(jr), dtype=bool)
    dropped_depth = dropped_unjudged = 0
    depth = flavor.depth_limit
    if depth is not None:
        keep = rank <= depth
        dropped_depth = int(np.maximum(n_ret - depth, 0).sum())
        n_ret = np.minimum(n_ret, depth)
    if flavor.unjudged == "condensed":
        keep &= judged
        kept_before = int(n_ret.sum())
        n_ret = np.bincount(q[keep], minlength=aligned.n_queries)
        dropped_unjudged = kept_before - int(n_ret.sum())
    by_rank = np.flatnonzero(keep)
    by_rank = by_rank[np.argsort(q[by_rank].astype(np.int64) * (int(rank.max(initial=0)) + 1) + rank[by_rank], kind="stable")]
    q, rank = q[by_rank], rank[by_rank]
    if flavor.unjudged == "condensed":  # ranks close up over the removed rows
        rank = rank_within(q, n_ret)
    jq, jgrade = _judgments(aligned, flavor)
    rows = jr[by_rank]
    return Ranked(
        aligned=aligned,
        q=q,
        rank=rank,
        grade=grade[by_rank],
        judged=judged[by_rank],
        pooled=np.ones(len(rows), dtype=bool),
        score=score[rows].astype(np.float64, copy=False),
        n_ret=n_ret,
        jq=jq,
        jgrade=jgrade,
        dropped_by_depth=dropped_depth,
        dropped_unjudged=dropped_unjudged,
        row=rows,
        judged_only=True,
    )


def rank_prefix(aligned: Aligned, flavor: Flavor, k: int) -> Ranked | None:
    """The rows of :func:`rank` a ``top_rows`` measure reads: every row of each query down to
    rank ``k`` and on to the end of the tie group holding rank ``k``, then the judged rows
    below it. None when :func:`rank_judged` would be (the run is not in rank order, ...), when
    unjudged rows are condensed away (the top ``k`` then depends on them) or under a depth
    limit (which rows of a tie group it cuts, the tie rule decides).

    Inside the top tie groups the rows keep their file order: a ``top_rows`` measure reads a
    tie group's rows as a set (``ties=averaged``). The judged rows below take the ranks
    :func:`rank_judged` gives them.
    """
    if flavor.unjudged == "condensed" or flavor.depth_limit is not None:
        return None  # the tie rule decides which rows of a group cut by the depth stay
    judged = rank_judged(aligned, flavor)
    if judged is None or judged.row is None:
        return None
    score, layout = _gathered(aligned, flavor.precision)
    assert layout is not None  # rank_judged checked it
    lengths = layout.lengths
    last = layout.starts + np.minimum(lengths, k) - 1
    end = _equal_score_end(score, last, last, layout.starts + lengths - 1, left=False) + 1
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
    grade, is_judged, pooled = _grades(raw, flavor, _truncates(aligned, flavor))
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


def _retie(aligned: Aligned, score: np.ndarray | _Rounded, layout: _Layout, jr: np.ndarray, block: np.ndarray,
           grade: np.ndarray, rule: str, position: np.ndarray) -> None:
    """Move the judged rows ``jr`` (ascending, in query blocks ``block`` of ``layout``; ``grade``
    under the flavor) to their positions after the tie rule orders every run of equal scores
    that mixes judgments; in place."""
    q = aligned.run_q
    n = len(q)
    prev_tied = np.zeros(len(jr), dtype=bool)
    next_tied = np.zeros(len(jr), dtype=bool)
    has_prev, has_next = jr > 0, jr < n - 1
    p, nx = jr[has_prev], jr[has_next]
    prev_tied[has_prev] = (q[p] == q[p - 1]) & (score[p] == score[p - 1])
    next_tied[has_next] = (q[nx] == q[nx + 1]) & (score[nx] == score[nx + 1])
    tied = prev_tied | next_tied
    if not tied.any():
        return
    # The tie group of each tied judged row: its block's rows of equal score, found by bisection
    # (scores descend in a block), so no pass over every row of the run.
    rows_tied, block_tied = jr[tied], block[tied]
    block_start = layout.starts[block_tied]
    first = _equal_score_end(score, rows_tied, block_start, rows_tied, left=True)
    last = _equal_score_end(score, rows_tied, rows_tied, block_start + layout.lengths[block_tied] - 1, left=False)
    new_group = np.concatenate([[True], first[1:] != first[:-1]])  # ``first`` ascends with the rows
    a, b = first[new_group], last[new_group] + 1
    # A group mixes judgments if it holds an unjudged row or judged rows of different grades.
    lo, hi = np.searchsorted(jr, a), np.searchsorted(jr, b)
    raw = aligned.judged_grade
    member = np.repeat(np.arange(len(a)), hi - lo)
    differs = np.zeros(len(a), dtype=bool)
    differs[member[raw[ranges(lo, hi - lo)] != raw[lo][member]]] = True
    mixed = ((hi - lo) < (b - a)) | differs
    if not mixed.any():
        return
    a, b = a[mixed], b[mixed]
    group_of = np.repeat(np.arange(len(a)), b - a)
    rows = ranges(a, b - a)
    at = np.minimum(np.searchsorted(jr, rows), len(jr) - 1)
    is_judged = jr[at] == rows
    row_grade = np.where(is_judged, grade[at], 0.0)
    by_docno = _docno_byte_order(aligned, rows)
    docno_rank = np.empty(len(rows), dtype=np.int64)
    docno_rank[by_docno] = np.arange(len(rows))
    local = _tie_order(group_of, docno_rank, row_grade, rule)
    # The row rows[local[k]] takes the place of rows[k].
    new_place = np.empty(len(rows), dtype=np.int64)
    new_place[local] = rows
    position[at[is_judged]] = new_place[is_judged]


def _equal_score_end(score: np.ndarray | _Rounded, rows: np.ndarray, lo: np.ndarray, hi: np.ndarray, left: bool) -> np.ndarray:
    """Per row, the first (``left``) or last row in [lo, hi] whose score equals the row's own,
    where scores descend from lo to hi and the row lies in that range. Vectorised bisection."""
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


def _check_grade_policies(aligned: Aligned, flavor: Flavor) -> None:
    """The grade policies that refuse input: fractional=error, negatives=error."""
    if flavor.fractional == "error" and _fractional_grades(aligned):
        raise InputError(aligned.qrels_source, None, fractional_error(_fractional_grades(aligned)))
    if flavor.negatives == "error":
        # Truncated, -0.5 is a 0 (as trec_eval's atol reads it), not a negative grade.
        jgrade_all = np.trunc(aligned.qrels_grade) if _truncates(aligned, flavor) else aligned.qrels_grade
        negatives = int((jgrade_all < 0).sum())
        if negatives:
            raise InputError(aligned.qrels_source, None, negatives_error(negatives))


def fractional_error(n: int) -> str:
    """The message of ``fractional=error`` refusing ``n`` judgments (the Spark engine's too)."""
    return (f"{n} judgment(s) have a grade that is not a whole number and the flavor says fractional=error "
            "(pytrec_eval and ir_measures reject them); use fractional=truncate (trec_eval) or fractional=keep")


def negatives_error(n: int) -> str:
    """The message of ``negatives=error`` refusing ``n`` judgments (the Spark engine's too)."""
    return (f"{n} judgment(s) have a negative grade and the flavor says negatives=error; "
            "use negatives=unjudged (trec_eval) or negatives=zero")


def _fractional_grades(aligned: Aligned) -> int:
    """How many judgments have a grade with a fractional part (counted once per alignment)."""
    if "fractional_grades" not in memo_of(aligned):
        g = aligned.qrels_grade  # every grade a row can have
        memo_of(aligned)["fractional_grades"] = int((g != np.trunc(g)).sum())
    return int(memo_of(aligned)["fractional_grades"])


def _truncates(aligned: Aligned, flavor: Flavor) -> bool:
    """Does ``fractional=truncate`` change any grade? (Not of whole grades: no pass over the rows.)"""
    return flavor.fractional == "truncate" and _fractional_grades(aligned) > 0


def _grades(grade_raw: np.ndarray, flavor: Flavor, truncate: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(grade, judged, pooled) of rows with raw grades ``grade_raw`` (NaN: not in the qrels)
    under the fractional policy (``truncate``: :func:`_truncates`) and the negatives policy: a
    negative grade counts as unjudged, or as grade 0."""
    pooled = ~np.isnan(grade_raw)
    if truncate:  # toward zero: -0.5 becomes a judged 0 (not -0), as atol reads it
        grade_raw = np.trunc(grade_raw) + 0.0
    if flavor.negatives == "zero":
        return np.where(pooled, np.maximum(np.nan_to_num(grade_raw), 0.0), 0.0), pooled, pooled
    judged = pooled & ~(grade_raw < 0)
    return np.where(judged, grade_raw, 0.0), judged, pooled


def _judgments(aligned: Aligned, flavor: Flavor) -> tuple[np.ndarray, np.ndarray]:
    """Query codes and grades of the usable judgments (for ideals and R)."""
    jgrade_all = aligned.qrels_grade
    if _truncates(aligned, flavor):
        jgrade_all = np.trunc(jgrade_all) + 0.0
    if flavor.negatives == "zero":
        return aligned.qrels_q, np.maximum(jgrade_all, 0.0)
    usable = jgrade_all >= 0
    return aligned.qrels_q[usable], jgrade_all[usable]


class _Rounded:
    """float64 scores read at float32 precision where they are gathered: ranking a run that is
    in rank order reads a few rows' scores, so no float32 copy of every score is made."""

    def __init__(self, scores: np.ndarray) -> None:
        self.scores = scores

    def __getitem__(self, rows: np.ndarray) -> np.ndarray:
        return self.scores[rows].astype(np.float32)


def _gathered(aligned: Aligned, precision: str) -> tuple[np.ndarray | _Rounded, _Layout | None]:
    """:func:`_scored` for code that only gathers scores at rows. A run in rank order at float64
    is in rank order at float32 too (rounding keeps order), so its layout is read at float64."""
    memo = memo_of(aligned)
    if precision != "float32" or ("score", precision) in memo:
        return _scored(aligned, precision)
    if ("layout", "float64") not in memo:
        memo["layout", "float64"] = _layout(aligned.run_q, aligned.run_score, aligned.query_starts,
                                            aligned.scores_descend)
    layout = memo["layout", "float64"]
    return (_Rounded(aligned.run_score), layout) if layout is not None else _scored(aligned, precision)


def _scored(aligned: Aligned, precision: str) -> tuple[np.ndarray, _Layout | None]:
    """Scores at ``precision`` (float32 scores stay float32) and the run's query blocks if it is
    in rank order; computed once per alignment and shared by every ordering (tie rules, depths,
    condensing, measures)."""
    memo = memo_of(aligned)
    if ("score", precision) not in memo:
        score = aligned.run_score
        if precision == "float32":
            # Kept in float32: order and ties compare alike, at half the memory of float64.
            score = score.astype(np.float32)
        memo["score", precision] = score
        # (rounding to float32 makes no score rise that did not)
        memo["layout", precision] = _layout(aligned.run_q, score, aligned.query_starts, aligned.scores_descend)
    return memo["score", precision], memo["layout", precision]


def _by_query_and_score(q: np.ndarray, score: np.ndarray, layout: _Layout | None) -> np.ndarray | None:
    """Rows grouped by query code, score descending, equal scores in file order; None when the
    rows are in that order already.

    Most runs arrive grouped by query and sorted by score: checking that in O(n) replaces the
    sort, and query blocks out of code order are moved whole.
    """
    if layout is not None:
        return _blocks_in_code_order(layout)
    if len(q) == 0:
        return None
    by_score = np.argsort(-score, kind="stable")
    small = q.astype(np.uint16) if q.max(initial=0) < 1 << 16 else q  # 16-bit keys take numpy's radix sort
    return by_score[np.argsort(small[by_score], kind="stable")]


@dataclass(frozen=True)
class _Layout:
    """A run grouped by query with scores descending in each query: its query blocks."""

    starts: np.ndarray  # first row of each block, ascending
    lengths: np.ndarray
    codes: np.ndarray  # query code of each block


def _layout(q: np.ndarray, score: np.ndarray, starts: np.ndarray | None = None, descend: bool = False) -> _Layout | None:
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
    return _Layout(starts, np.diff(np.append(starts, n)), q[starts])


def _blocks_in_code_order(layout: _Layout) -> np.ndarray | None:
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


def _tied_rows(
    order: np.ndarray, q: np.ndarray, score: np.ndarray, aligned: Aligned, exact_rows: bool = True,
    identity: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Positions (in ``order``) of rows that share their query and score with a neighbour, their
    tie-group number, and the byte-order rank of their docno among all tied rows.

    Only tied rows need a docno comparison (trec_eval's ``strcmp``), so only their strings are
    sorted; without ``exact_rows`` only the tie groups whose rows differ in judgment. None when
    nothing needs ordering.
    """
    if len(order) < 2:
        return None
    qs = q if identity else q[order]
    ss = score if identity else score[order]
    same = (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])
    if not same.any():
        return None
    group_of_row = np.cumsum(np.concatenate([[True], ~same]))
    if exact_rows:
        tied = np.zeros(len(order), dtype=bool)
        tied[1:] |= same
        tied[:-1] |= same
    else:
        g = aligned.run_grade if identity else aligned.run_grade[order]
        g = np.where(np.isnan(g), np.inf, g)  # unjudged is its own value (grades are finite)
        mixed = same & (g[1:] != g[:-1])
        if not mixed.any():
            return None
        mixed_group = np.zeros(int(group_of_row[-1]) + 1, dtype=bool)
        mixed_group[group_of_row[1:][mixed]] = True
        tied = mixed_group[group_of_row]
    pos = np.flatnonzero(tied)
    group = group_of_row[pos]
    by_docno = _docno_byte_order(aligned, order[pos])
    docno_rank = np.empty(len(pos), dtype=np.int64)
    docno_rank[by_docno] = np.arange(len(pos))
    return pos, group, docno_rank


_POW10 = 10 ** np.arange(1, 19, dtype=np.int64)


def _docno_byte_order(aligned: Aligned, rows: np.ndarray) -> np.ndarray:
    """Argsort of the docnos of ``rows`` in byte order (``strcmp``).

    Canonical integer docnos skip the strings: right-padding the digits with zeros to a common
    width, then breaking equal pads by length, orders them exactly as their text ("1" < "10" <
    "100" < "11" < "2").
    """
    offset = aligned.doc_value_offset
    if offset is not None and len(rows):
        value = aligned.run_doc[rows] + offset
        digits = np.searchsorted(_POW10, value, side="right") + 1
        width = int(digits.max())
        if width <= 16:
            padded = value * 10 ** (width - digits)
            return np.argsort(padded * 32 + digits)  # keys are distinct within a query
    return as_numpy(arrow_ops.sort_indices(take(aligned.run_doc_strings, aligned.input_rows(rows))))


def _break_ties(
    order: np.ndarray, tied: tuple[np.ndarray, np.ndarray, np.ndarray] | None, grade: np.ndarray, ties: str
) -> np.ndarray:
    """Reorder rows inside each run of equal scores by the tie rule; file order stays otherwise.

    Every rule but ``input_order`` ends in docno order, so no result depends on the line order
    of the run: ``averaged`` (only NDCG/DCG average gains; P@k, AP, Judged@k need an order) and
    equal grades under ``pessimistic``/``optimistic`` (a judged grade 0 and an unjudged document
    differ for Judged@k) use docno descending.
    """
    if ties == "input_order" or tied is None:
        return order
    pos, group, docno_rank = tied
    rows = order[pos]
    out = order.copy()
    out[pos] = rows[_tie_order(group, docno_rank, grade[rows], ties)]
    return out


def _tie_order(group: np.ndarray, docno_rank: np.ndarray, grade: np.ndarray, ties: str) -> np.ndarray:
    """Permutation ordering tied rows (given in rank order, with their tie group, docno rank
    and grade) by group, then by the tie rule."""
    n = len(group)
    key = docno_rank if ties == "docno_asc" else n - 1 - docno_rank
    if ties in ("pessimistic", "optimistic"):  # lowest (highest) grade first, then docno descending
        levels = distinct(grade)
        level = np.searchsorted(levels, grade)
        if ties == "optimistic":
            level = len(levels) - 1 - level
        if float(n) ** 2 * len(levels) < 2.0**62:  # one int64 key beats a three-key lexsort
            return np.argsort((group * len(levels) + level) * n + key)
        return np.lexsort((key, level, group))
    return np.argsort(group * n + key)  # one int64 key; distinct keys: any sort is exact


def _self_hits(aligned: Aligned) -> np.ndarray:
    """Per aligned run row: is the docno the same string as its query id?"""
    import pyarrow.compute as pc

    docs = plain_strings(aligned.run_doc_strings).take(from_numpy(aligned.run_row))
    queries = string_array(aligned.query_ids.tolist()).take(from_numpy(aligned.run_q))
    same = pc.equal(pc.cast(docs, pa.string()), queries)
    if isinstance(same, pa.ChunkedArray):
        same = same.combine_chunks()
    return as_numpy(same.fill_null(False))
