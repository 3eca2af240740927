"""THE one place that orders documents: score, then the tie rule; emits ranks and tie groups.

Every metric reads a :class:`Ranked` built here. Measures that share the ordering knobs
(negatives, unjudged, ties, precision, depth) share one :class:`Ranked`, so many metrics and
cutoffs cost one sort.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .align import Aligned
from .errors import InputError
from .flavor import Flavor

ORDER_KNOBS = ("negatives", "unjudged", "ties", "precision", "depth")


@dataclass(frozen=True)
class Ranked:
    """Run rows sorted by (query, rank), with what every kernel needs.

    Attributes
    ----------
    q : query code per row.
    rank : 1-based rank per row within its query.
    grade : judged grade per row, 0 where the row is not judged.
    judged : the row has a usable judgment (negatives count as unjudged unless negatives=zero).
    pooled : the row's document appears in the qrels at all (any grade).
    tie_group : id of the run of equal scores a row belongs to (increasing; never shared across queries).
    n_ret : rows per query code.
    jq, jgrade : usable judgments (query code, grade) of every query, for ideals and R.
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

    score = aligned.run_score
    if flavor.precision == "float32":
        score = score.astype(np.float32).astype(np.float64)
    q = aligned.run_q
    ties = flavor.ties
    if ties in ("docno_desc", "averaged"):
        tie_key = -aligned.run_doc
    elif ties == "docno_asc":
        tie_key = aligned.run_doc
    elif ties == "input_order":
        tie_key = aligned.run_row
    elif ties == "pessimistic":
        tie_key = grade  # lowest grade first; lexsort keys below break remaining ties by file order
    else:  # optimistic
        tie_key = -grade
    if ties in ("pessimistic", "optimistic"):
        order = np.lexsort((aligned.run_row, tie_key, -score, q))
    else:
        order = np.lexsort((tie_key, -score, q))

    q_s = q[order]
    score_s = score[order]
    keep = np.ones(len(order), dtype=bool)
    starts = _segment_starts(q_s)
    position = np.arange(len(order)) - starts
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
        starts = _segment_starts(q_s)
        position = np.arange(len(order)) - starts

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
    )


def _segment_starts(q_sorted: np.ndarray) -> np.ndarray:
    """For each row of a query-sorted array, the index of its query's first row."""
    n = len(q_sorted)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    first = np.ones(n, dtype=bool)
    first[1:] = q_sorted[1:] != q_sorted[:-1]
    idx = np.where(first, np.arange(n), 0)
    return np.maximum.accumulate(idx)
