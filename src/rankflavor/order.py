"""THE one place that orders documents: score, then the tie rule; emits ranks and tie groups.

Every metric reads a :class:`Ranked` built here. Measures that share the ordering knobs
(negatives, unjudged, ties, precision, depth) share one :class:`Ranked`, so many metrics and
cutoffs cost one sort.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .align import Aligned
from .columns import as_numpy, from_numpy, plain_strings, string_array
from .errors import InputError
from .flavor import Flavor
from .kernels import rank_within

ORDER_KNOBS = ("negatives", "unjudged", "ties", "precision", "depth", "self_hits")


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

    @cached_property
    def judged_rows(self) -> Ranked:
        """The rows whose document has a judgment (any grade), with their ranks in the full list.

        Kernels that read nothing else of an unjudged row (``MetricSpec.judged_only``) run on
        this: a few percent of a typical run.
        """
        if self.judged_only:
            return self
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


def rank(aligned: Aligned, flavor: Flavor, exact_rows: bool = True) -> Ranked:
    """Sort the aligned run under ``flavor``'s ordering knobs and assign ranks.

    Order: query code, score descending (compared at ``precision``), then the ``ties`` rule.
    ``depth`` keeps the top N per query, then ``unjudged=condensed`` removes unjudged rows and
    closes up the ranks (trec_eval applies -M before -J).

    With ``exact_rows=False`` a run of equal scores whose rows all have the same judgment keeps
    its file order instead of docno order: every metric reads only the grade and judged state at
    each rank, which no order of such a run changes, so the values are identical; only
    ``Ranked.row`` (which document sits where, for explanations) may differ. On runs with many
    ties among unjudged documents this skips nearly all docno comparisons.
    """
    grade_raw = aligned.run_grade
    pooled = ~np.isnan(grade_raw)
    negative = pooled & (grade_raw < 0)
    jgrade_all = aligned.qrels_grade
    if flavor.negatives == "error" and (jgrade_all < 0).any():
        raise InputError(
            aligned.qrels_source,
            None,
            f"{int((jgrade_all < 0).sum())} judgment(s) have a negative grade and the flavor says negatives=error; "
            "use negatives=unjudged (trec_eval) or negatives=zero",
        )
    if flavor.negatives == "zero":
        judged = pooled
        grade = np.where(pooled, np.maximum(np.nan_to_num(grade_raw), 0.0), 0.0)
        jmask = np.ones(len(jgrade_all), dtype=bool)
        jgrade = np.maximum(jgrade_all, 0.0)
    else:
        judged = pooled & ~negative
        grade = np.where(judged, grade_raw, 0.0)
        jmask = jgrade_all >= 0
        jgrade = jgrade_all[jmask]
    jq = aligned.qrels_q[jmask]

    q = aligned.run_q
    # The score sort and the docno ranks of tied rows depend only on the precision: computed
    # once per alignment and shared by every tie rule, depth, condensing and measure.
    memo = aligned.memo
    prec = flavor.precision
    if ("score", prec) not in memo:
        score = aligned.run_score
        if prec == "float32":
            score = score.astype(np.float32).astype(np.float64)
        memo["score", prec] = score
        memo["base", prec] = _by_query_and_score(q, score)
    score = memo["score", prec]
    base = memo["base", prec]
    if base is None:  # already in rank order
        base = memo["base", prec] = np.arange(len(q))
        memo["base_identity", prec] = True
    base_identity = memo.get(("base_identity", prec), False)
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
        score=score_s,
        n_ret=n_ret,
        jq=jq,
        jgrade=jgrade,
        dropped_by_depth=dropped_depth,
        dropped_unjudged=dropped_unjudged,
        row=order,
    )


def _by_query_and_score(q: np.ndarray, score: np.ndarray) -> np.ndarray | None:
    """Rows grouped by query code, score descending, equal scores in file order; None when the
    rows are in that order already.

    Most runs arrive grouped by query and sorted by score, and alignment has moved the query
    blocks into code order: checking that in O(n) replaces the sort.
    """
    n = len(q)
    if n == 0:
        return None
    same_q = q[1:] == q[:-1]
    if not (q[1:] < q[:-1]).any() and not ((score[1:] > score[:-1]) & same_q).any():
        return None
    by_score = np.argsort(-score, kind="stable")
    small = q.astype(np.uint16) if q.max(initial=0) < 1 << 16 else q  # 16-bit keys take numpy's radix sort
    return by_score[np.argsort(small[by_score], kind="stable")]


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
    strings = aligned.run_doc_strings.take(from_numpy(aligned.run_row[rows]))
    return as_numpy(pc.sort_indices(strings))


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
    key = docno_rank if ties == "docno_asc" else len(pos) - 1 - docno_rank
    if ties in ("pessimistic", "optimistic"):  # lowest (highest) grade first, then docno descending
        levels = np.unique(grade[rows])
        level = np.searchsorted(levels, grade[rows])
        if ties == "optimistic":
            level = len(levels) - 1 - level
        if float(len(pos)) ** 2 * len(levels) < 2.0**62:  # one int64 key beats a three-key lexsort
            local = np.argsort((group * len(levels) + level) * len(pos) + key)
        else:
            local = np.lexsort((key, level, group))
    else:  # one int64 key (group, then docno rank) sorts faster than a two-key lexsort
        local = np.argsort(group * len(pos) + key)  # distinct keys: any sort is exact
    out = order.copy()
    out[pos] = rows[local]
    return out


def _self_hits(aligned: Aligned) -> np.ndarray:
    """Per aligned run row: is the docno the same string as its query id?"""
    docs = plain_strings(aligned.run_doc_strings).take(from_numpy(aligned.run_row))
    queries = string_array(aligned.query_ids.tolist()).take(from_numpy(aligned.run_q))
    same = pc.equal(pc.cast(docs, pa.string()), queries)
    if isinstance(same, pa.ChunkedArray):
        same = same.combine_chunks()
    return as_numpy(same.fill_null(False))
