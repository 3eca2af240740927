"""What judging one document would do to the exact interval: per unjudged document in scope and
per grade g of the scale, the query's interval with the document judged g (the exact extremes
over the other unjudged documents, :mod:`.extremes`), and from those the shrink the judgment
guarantees whatever g is.

With width W = upper - lower now and W_g after judging the document g (its interval lies inside
the present one: fixing a document only removes gradings), the guaranteed shrink is
min_g (W - W_g) >= 0. ``if_zero`` = upper - upper_g at the least grade of the scale and
``if_top`` = lower_G - lower are the two one-sided moves the old rule named.

Examples
--------
>>> from rankflavor.analysis.judgments import bounds
>>> b = bounds({"q": {"a": 3}}, {"q": {"a": 0.9, "u": 0.8}}, "P@2", scale="trec_dl")
>>> [(q, d, r, round(z, 2), round(t, 2), round(g, 2)) for q, d, _, r, z, t, g in b.document_table()]
[('q', 'u', 2, 0.5, 0.5, 0.5)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rankflavor.analysis.judgments.extremes import Extremes, extremes
from rankflavor.analysis.judgments.scope import QueryScope, Rules

if TYPE_CHECKING:
    from rankflavor.analysis.judgments.bounds import MeasureBounds


def per_grade(rules: Rules, scope: QueryScope, hole: int) -> list[Extremes]:
    """The query's extremes with hole number ``hole`` judged each grade of S (in order)."""
    return [extremes(rules, scope.fixed(hole, float(g))) for g in rules.grades]


def shrink(now: Extremes, after: list[Extremes]) -> np.ndarray:
    """W - W_g per grade (an undefined width, every value NaN, counts as 0)."""
    w = np.nan_to_num(now.width)
    return np.array([w - np.nan_to_num(a.width) for a in after])


def document_rows(b: MeasureBounds) -> list[tuple[str, str, str, int, float, float, float]]:
    """``(query, doc, measure, rank, if_zero, if_top, gap)`` per unjudged document in scope of
    ``b`` (module docstring)."""
    if b.detail is None:
        return []
    rules = b.detail.scopes.rules
    out = []
    for _, scope, found in b.detail.found:
        now = found if found is not None else extremes(rules, scope)
        ranks = scope.hole_rows + 1
        for h in range(scope.n_holes):
            after = per_grade(rules, scope, h)
            cut = shrink(now, after)
            out.append((scope.qid, scope.hole_docs[h], b.measure.name, int(ranks[h]),
                        float(np.nan_to_num(now.upper - after[0].upper)),
                        float(np.nan_to_num(after[-1].lower - now.lower)), float(cut.min())))
    return out


__all__ = ["document_rows", "per_grade", "shrink"]
