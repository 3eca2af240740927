"""THE one place that orders documents: score, then the tie rule; emits ranks and tie groups.

Every metric reads a :class:`Ranked` built here. Measures that share the ordering knobs
(negatives, unjudged, ties, precision, depth) share one :class:`Ranked`, so many metrics and
cutoffs cost one sort.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .align import Aligned
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
    tie_group : id of the run of equal scores a row belongs to (increasing; never shared across queries).
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
    tie_group: np.ndarray
    n_ret: np.ndarray
    jq: np.ndarray
    jgrade: np.ndarray
    dropped_by_depth: int
    dropped_unjudged: int
    row: np.ndarray | None = None

    @property
    def n_queries(self) -> int:
        return self.aligned.n_queries

    @property
    def max_len(self) -> int:
        return int(self.n_ret.max()) if len(self.n_ret) else 0


def order_key(flavor: Flavor) -> tuple[str, ...]:
    return tuple(getattr(flavor, k) for k in ORDER_KNOBS)


def rank(aligned: Aligned, flavor: Flavor) -> Ranked:
    """Sort the aligned run under ``flavor``'s ordering knobs and assign ranks.

    Order: query code, score descending (compared at ``precision``), then the ``ties`` rule.
    ``depth`` keeps the top N per query, then ``unjudged=condensed`` removes unjudged rows and
    closes up the ranks (trec_eval applies -M before -J).
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
    if ("score", flavor.precision) not in memo:
        score = aligned.run_score
        if flavor.precision == "float32":
            score = score.astype(np.float32).astype(np.float64)
        base = _by_query_and_score(q, score)
        memo["score", flavor.precision] = score
        memo["base", flavor.precision] = base
        memo["ties", flavor.precision] = _tied_rows(base, q, score, aligned)
    score = memo["score", flavor.precision]
    if flavor.ties in ("pessimistic", "optimistic"):  # depends on the grades (negatives policy)
        order = _break_ties(memo["base", flavor.precision], memo["ties", flavor.precision], grade, flavor.ties)
    else:
        rule = "docno_desc" if flavor.ties == "averaged" else flavor.ties  # averaged orders like docno_desc
        if ("order", flavor.precision, rule) not in memo:
            memo["order", flavor.precision, rule] = _break_ties(
                memo["base", flavor.precision], memo["ties", flavor.precision], grade, rule
            )
        order = memo["order", flavor.precision, rule]
    if flavor.self_hits == "drop":
        # BEIR ignore_identical_ids: a document named like its query leaves the ranking first.
        order = order[~_self_hits(aligned)[order]]

    q_s = q[order]
    score_s = score[order]
    keep = np.ones(len(order), dtype=bool)
    position = rank_within(q_s) - 1
    dropped_depth = 0
    depth = flavor.depth_limit
    if depth is not None:
        keep &= position < depth
        dropped_depth = int((~keep).sum())
    dropped_unjudged = 0
    if flavor.unjudged == "condensed":
        j = judged[order]
        dropped_unjudged = int((keep & ~j).sum())
        keep &= j
    if not keep.all():
        order = order[keep]
        q_s = q_s[keep]
        score_s = score_s[keep]
        position = rank_within(q_s) - 1

    new_group = np.ones(len(order), dtype=bool)
    if len(order) > 1:
        new_group[1:] = (q_s[1:] != q_s[:-1]) | (score_s[1:] != score_s[:-1])
    tie_group = np.cumsum(new_group) - 1

    return Ranked(
        aligned=aligned,
        q=q_s,
        rank=position + 1,
        grade=grade[order],
        judged=judged[order],
        pooled=pooled[order],
        tie_group=tie_group,
        n_ret=np.bincount(q_s, minlength=aligned.n_queries),
        jq=jq,
        jgrade=jgrade,
        dropped_by_depth=dropped_depth,
        dropped_unjudged=dropped_unjudged,
        row=order,
    )


def _by_query_and_score(q: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Rows grouped by query, score descending, equal scores in file order.

    Most runs arrive grouped by query and sorted by score; checking that in O(n) replaces the sort.
    The result is sorted by query code (kernels may search segments by code).
    """
    n = len(q)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    change = q[1:] != q[:-1]
    grouped = int(change.sum()) + 1 == int((np.bincount(q) > 0).sum())
    if grouped and not ((score[1:] > score[:-1]) & ~change).any():
        return _segments_in_code_order(np.arange(n, dtype=np.int64), q)
    by_score = np.argsort(-score, kind="stable")
    small = q.astype(np.uint16) if q.max(initial=0) < 1 << 16 else q  # 16-bit keys take numpy's radix sort
    return by_score[np.argsort(small[by_score], kind="stable")]


def _segments_in_code_order(order: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Move whole query segments into query-code order: an O(n) gather, not a sort.

    Runs are usually grouped by query but not in byte order of the query ids; kernels may rely
    on rows being sorted by query code.
    """
    qs = q[order]
    starts = np.flatnonzero(np.concatenate([[True], qs[1:] != qs[:-1]]))
    codes = qs[starts]
    if not (codes[1:] < codes[:-1]).any():
        return order
    lengths = np.diff(np.append(starts, len(order)))
    perm = np.argsort(codes, kind="stable")
    new_lengths = lengths[perm]
    new_starts = np.cumsum(new_lengths) - new_lengths
    idx = np.arange(len(order)) - np.repeat(new_starts - starts[perm], new_lengths)
    return order[idx]


def _tied_rows(
    order: np.ndarray, q: np.ndarray, score: np.ndarray, aligned: Aligned
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Positions (in ``order``) of rows that share their query and score with a neighbour, their
    tie-group number, and the byte-order rank of their docno among all tied rows.

    Only tied rows need a docno comparison (trec_eval's ``strcmp``), so only their strings are
    sorted. None when nothing is tied.
    """
    if len(order) < 2:
        return None
    qs, ss = q[order], score[order]
    same = (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])
    if not same.any():
        return None
    tied = np.zeros(len(order), dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    pos = np.flatnonzero(tied)
    group = np.cumsum(np.concatenate([[True], ~same]))[pos]
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
    strings = aligned.run_doc_strings.take(pa.array(aligned.run_row[rows]))
    return pc.sort_indices(strings).to_numpy()


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
    docs = aligned.run_doc_strings.take(pa.array(aligned.run_row))
    queries = pa.array(aligned.query_ids.tolist(), type=pa.string()).take(pa.array(aligned.run_q))
    same = pc.equal(pc.cast(docs, pa.string()), queries)
    if isinstance(same, pa.ChunkedArray):
        same = same.combine_chunks()
    return np.asarray(same.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
