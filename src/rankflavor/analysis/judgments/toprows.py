"""The top rows of each query under a measure's ordering, with the judged state at each rank.

Coverage reads only the top ``depth`` ranks of each query (the bounds rank every row exactly:
:mod:`.scope`). When the tie rule reads no grade (docno or input order), they come from two
rankings the plan keeps anyway: the judged rows with their exact ranks (what the zero-imputed
measure's kernel reads) and the top-``depth`` prefix (:meth:`rankflavor.order.Ranker.prefix`);
the ranks no judged row holds are the unjudged documents', filled in prefix order. Which
unjudged document of a tie group reaching rank ``depth`` fills a free rank may then differ from
the tie rule's, as on the ranker's ``exact=False`` path: no count changes, since every unjudged
document counts alike. Otherwise (grade-dependent or averaged ties, the whole run) every row is
ranked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankflavor.base.kernels import rank_within
from rankflavor.engine.plan import Evaluation, check_duplicates
from rankflavor.metrics.measure import Measure
from rankflavor.order import Needs, Ordering, Ranked

#: Above this many (query, rank) cells the free ranks are not laid out as a grid: rank every row.
_GRID_CELLS = 50_000_000


@dataclass(frozen=True)
class Top:
    """Rows sorted by (query code, rank): ``row`` indexes the aligned run, ``judged`` is the usable
    judgment flag, ``score`` the score ordered by (None when only ranks are known)."""

    q: np.ndarray
    rank: np.ndarray
    row: np.ndarray
    judged: np.ndarray
    score: np.ndarray | None
    ordering: Ordering


def full_ranking(plan: Evaluation, measure: Measure) -> Ranked:
    """Every ranked row of ``measure``'s ordering (the judged state at each rank is exact)."""
    ranked = plan.ranker(str(measure.flavor.duplicates)).ranked(Ordering.of(measure.flavor), Needs())
    check_duplicates(ranked)
    return ranked


def top_rows(plan: Evaluation, measure: Measure, depth: int | None) -> Top:
    """The top ``depth`` rows of each query (every row for None) under ``measure``'s ordering."""
    ordering = Ordering.of(measure.flavor)
    if depth is not None and not ordering.by_grade and not ordering.averaged:
        fast = _from_prefix(plan, measure, ordering, depth)
        if fast is not None:
            return fast
    ranked = full_ranking(plan, measure)
    assert ranked.row is not None  # a full ranking names its rows
    sel = np.ones(len(ranked.q), dtype=bool) if depth is None else ranked.rank <= depth
    idx = np.flatnonzero(sel)
    return Top(ranked.q[idx], ranked.rank[idx], ranked.row[idx], ranked.judged[idx], ranked.score[idx], ordering)


def _from_prefix(plan: Evaluation, measure: Measure, ordering: Ordering, depth: int) -> Top | None:
    ranker = plan.ranker(str(measure.flavor.duplicates))
    judged = ranker.ranked(ordering, Needs(judged_only=True))
    pre = ranker.ranked(ordering, Needs(top_rows=depth))
    check_duplicates(pre)
    nq = len(judged.n_ret)
    if judged.row is None or pre.row is None or nq * depth > _GRID_CELLS:
        return None
    n = np.minimum(judged.n_ret, depth)
    fixed = np.flatnonzero(judged.rank <= depth)
    fq, fr = judged.q[fixed].astype(np.int64), judged.rank[fixed]
    occupied = np.zeros((nq, depth), dtype=bool)
    occupied[fq, fr - 1] = True
    free = (np.arange(depth) < n[:, None]) & ~occupied
    free_q, free_pos = np.nonzero(free)
    need = free.sum(axis=1)
    cand = np.flatnonzero(~pre.pooled)
    cq = pre.q[cand].astype(np.int64)
    cand = cand[rank_within(cq) <= need[cq]] if len(cand) else cand
    if len(cand) != len(free_q):
        return None  # (cannot happen with a consistent prefix; rank every row rather than guess)
    q = np.concatenate([fq, free_q])
    rank = np.concatenate([fr, free_pos + 1])
    order = np.lexsort((rank, q))
    return Top(
        q[order], rank[order], np.concatenate([judged.row[fixed], pre.row[cand]])[order],
        np.concatenate([judged.judged[fixed], np.zeros(len(cand), dtype=bool)])[order], None, ordering,
    )


__all__ = ["Top", "full_ranking", "top_rows"]
