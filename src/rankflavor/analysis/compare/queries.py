"""Align the systems' per-query values by query id (never by position), under a query-set policy.

``error`` (default): every system must have answered the same queries; otherwise the error names
how many queries each side lacks and a few of their ids. ``intersection``: keep the queries every
system answered. ``union-zero``: keep every query any system answered, scoring 0 where a system
did not answer it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rankflavor.analysis.compare.scores import RunScores
from rankflavor.errors import EvaluationError, UsageError

POLICIES = ("error", "intersection", "union-zero")


@dataclass(frozen=True)
class Aligned:
    """Values of every system on one set of queries.

    Attributes
    ----------
    queries : the query ids, in byte order.
    matrix : systems x queries.
    dropped : queries left out (answered by some system but not by all), under ``intersection``.
    zero_filled : (system, query) cells scored 0 because the system did not answer, under ``union-zero``.
    """

    queries: np.ndarray
    matrix: np.ndarray
    dropped: int = 0
    zero_filled: int = 0


def check_policy(policy: str) -> str:
    if policy not in POLICIES:
        raise UsageError(f"queries: expected one of {', '.join(POLICIES)}, received {policy!r}")
    return policy


def align_queries(scores: Sequence[RunScores], names: Sequence[str], policy: str = "error") -> Aligned:
    """Put every system's values on common query ids under ``policy`` (see the module doc)."""
    check_policy(policy)
    sets = [s.queries for s in scores]
    union = sets[0]
    common = sets[0]
    for qs in sets[1:]:
        union = np.union1d(union, qs)
        common = np.intersect1d(common, qs)
    if len(union) != len(common) and policy == "error":
        parts = []
        for name, qs in zip(names, sets, strict=True):
            lacks = np.setdiff1d(union, qs)
            if len(lacks):
                few = ", ".join(map(str, lacks[:5])) + ("..." if len(lacks) > 5 else "")
                parts.append(f"{name} lacks {len(lacks)} ({few})")
        raise EvaluationError(
            f"the systems answered different queries: {len(union)} in all, {len(common)} in every system; "
            + "; ".join(parts) + ". Choose queries='intersection' (--queries intersection) to compare on the "
            "common ones, or 'union-zero' to score a missing query 0")
    keep = common if policy != "union-zero" else union
    if len(keep) == 0:
        raise EvaluationError("the systems share no query: nothing to compare")
    matrix = np.zeros((len(scores), len(keep)), dtype=np.float64)
    filled = 0
    for i, s in enumerate(scores):
        pos = np.searchsorted(keep, s.queries)
        inside = pos < len(keep)
        inside[inside] = keep[pos[inside]] == s.queries[inside]
        matrix[i, pos[inside]] = s.values[inside]
        filled += len(keep) - int(inside.sum())
    return Aligned(keep, matrix, dropped=len(union) - len(keep), zero_filled=filled)


__all__ = ["POLICIES", "Aligned", "align_queries", "check_policy"]
