r"""The exact least and greatest value of each bounded metric over every grading of a query's holes.

The value of a query under a grading is the kernel's value with the ``empty`` policy applied (a
grading that leaves nothing to find scores the policy's value: 0 under ``empty=zero``, 1 under
``one``). Each metric below is reduced to a few gradings, one of which attains each end
(:class:`rankflavor.metrics.bounded.Bound` says which reduction a metric takes); the gradings
are scored by the metric's own kernel (:mod:`.families`), AP's and NDCG's searches use sums the
docstrings derive, and the caller scores the gradings found with the engine on the real rows
and checks that they agree (:mod:`.regrade`). The per-hole *level* is what a hole contributes
through its grade (:func:`.families.level`).

**ndcg**: :mod:`.ratio` (an exact search over multisets of the holes' gains: rearrangement,
exchange and Dinkelbach's method).

**dcg, RBP**: the value is :math:`C + \sum_h w_h\,g(a_h)` with weights :math:`w_h \ge 0` (the
discount, or (1 - p) p^(rank - 1) / gain(G), at the hole's rank; under ``ties=averaged`` the mean
of its tie group's), non-decreasing in each hole's gain; inside a grade-ordered tie group the
group's part is the least or greatest pairing of its gains with its weights, non-decreasing in
each gain too. So the greatest value gives every hole the greatest gain of S, the least the least.

**P, RR, ERR** (monotone): raising one hole's level (relevance; ERR's stopping probability) never
lowers the value. P counts relevant rows in the top k. RR is 1 / the first relevant rank. ERR:
with :math:`T = \sum_r \frac{R_r}{r}\prod_{i<r}(1-R_i)`,
:math:`\partial T / \partial R_j = \prod_{i<j}(1-R_i)\,[\frac1j - \sum_{r>j}\frac{R_r}{r}
\prod_{j<i<r}(1-R_i)]`, and the bracketed sum is at most :math:`\frac1{j+1}` (an expected
reciprocal rank below j), so the derivative is >= 0. A grade-ordered tie group sorts its levels,
and raising one level of a multiset raises its sorted sequence position by position, so
monotonicity holds there too. The greatest value gives every hole the greatest level; so does
the least with the least level, except where that grading leaves nothing to find: the least over
the gradings that leave something (R > 0) gives one hole the least positive level and the others
the least level (any such grading lies above one of those), so each hole is tried alone.

**AP**: :math:`\mathrm{AP} = \frac1R \sum_{\text{relevant } r \le k} \frac{\#\{\text{relevant}
\le r\}}{r}` with R = R0 + m for m relevant holes, so AP is not monotone (a relevant hole raises
R). For a fixed m, moving relevance from a hole at rank b to a hole at rank a < b changes the sum
by :math:`c_a(\frac1a - \frac1b) + \sum_{\text{relevant } a<r<b} (\frac1r - \frac1b) \ge 0`
(:math:`c_a` the relevant rows up to a after the move), so the greatest sum makes the m earliest
holes relevant and the least the m latest (a grade-ordered tie group holds its relevant rows at
its end or start, and moving one between groups moves it up or down the ranking the same way).
Every m is tried.

The mean interval is the mean of these per-query extremes: holes of different queries are graded
independently, and the queries in the mean do not depend on the grading (a measure whose ``empty``
policy drops or blanks a query is refused where the grading decides whether the query has anything
to find).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankflavor.analysis.judgments.families import check_monotone, gain, level, values
from rankflavor.analysis.judgments.ratio import Extreme, ndcg_batch
from rankflavor.analysis.judgments.ratio import emptiness as ndcg_emptiness
from rankflavor.analysis.judgments.scope import QueryScope, Rules
from rankflavor.errors import EvaluationError

Floats = np.ndarray


@dataclass(frozen=True)
class Extremes:
    """Both ends for one query: values (``empty`` policy applied) and gradings attaining them."""

    lower: float
    upper: float
    lower_grading: np.ndarray
    upper_grading: np.ndarray

    @property
    def width(self) -> float:
        return self.upper - self.lower


def empty_value(rules: Rules) -> float:
    """The value the ``empty`` policy gives a query with nothing to find (NaN: none, or left out)."""
    return {"zero": 0.0, "one": 1.0}.get(str(rules.measure.flavor.empty), float("nan"))


def settle(rules: Rules, vals: Floats, empty: np.ndarray) -> Floats:
    """Values with the ``empty`` policy applied (for a metric that has one)."""
    if not rules.measure.spec.uses_empty:
        return vals
    return np.where(empty, empty_value(rules), vals)


def emptiness(rules: Rules, scope: QueryScope) -> tuple[bool, bool, bool]:
    """(some grading leaves nothing to find, some grading leaves something, the zero-imputed value
    has nothing to find)."""
    if not rules.measure.spec.uses_empty:
        return False, True, False
    if rules.bound.search == "ratio":
        return ndcg_emptiness(rules, scope)
    base = not (level(rules, scope.judgments) > 0).any()
    lv = level(rules, rules.grades)
    n = scope.n_holes
    return base and (n == 0 or bool((lv <= 0).any())), (not base) or (n > 0 and bool((lv > 0).any())), base


def check_policy(rules: Rules, scope: QueryScope) -> None:
    """Refuse an ``empty`` policy that drops or blanks a query (skip, nan, error) where the grading
    decides whether the query has anything to find: the mean's queries would depend on it."""
    if str(rules.measure.flavor.empty) in ("zero", "one"):
        return
    can_empty, can_find, zero_imputed = emptiness(rules, scope)
    if (can_empty and can_find) or can_empty != zero_imputed:
        raise EvaluationError(
            f"{rules.measure.name}: on query {scope.qid} whether anything is relevant depends on how its unjudged "
            f"documents are graded, and empty={rules.measure.flavor.empty} would take the query out of the mean "
            "for some gradings, so no interval of the mean is defined; use empty=zero or empty=one"
        )


def _ends(rules: Rules, scope: QueryScope, low: Floats, high: Floats) -> Extremes:
    """The least value over the gradings ``low`` and the greatest over ``high``."""
    both = settle(rules, *values(rules, scope, low if low is high else np.vstack([low, high])))
    lo, hi = (both, both) if low is high else (both[: len(low)], both[len(low):])
    i = int(np.argmin(lo)) if not np.isnan(lo).all() else 0
    j = int(np.argmax(hi)) if not np.isnan(hi).all() else 0
    return Extremes(float(lo[i]), float(hi[j]), low[i], high[j])


def candidates(rules: Rules, scope: QueryScope) -> np.ndarray:
    """Gradings among which a monotone metric attains both ends (module docstring): every hole
    at the greatest level, every hole at the least, and, where the least leaves nothing to find
    and something could be found, each hole alone at the least positive level."""
    check_monotone(rules, scope)
    grades = rules.grades
    lv = level(rules, grades)
    n = scope.n_holes
    top, bottom = grades[int(np.argmax(lv))], grades[int(np.argmin(lv))]
    cands = np.vstack([np.full(n, top), np.full(n, bottom)])
    can_empty, can_find, _ = emptiness(rules, scope)
    if can_empty and can_find:
        least = grades[lv > 0][int(np.argmin(lv[lv > 0]))]
        singles = np.full((n, n), bottom)
        np.fill_diagonal(singles, least)
        cands = np.vstack([cands, singles])
    return cands


def _monotone(rules: Rules, scope: QueryScope) -> Extremes:
    cands = candidates(rules, scope)
    return _ends(rules, scope, cands, cands)


def _average_precision(rules: Rules, scope: QueryScope) -> Extremes:
    """AP's ends on one scope: every count m of relevant holes, the m earliest for the greatest
    value and the m latest for the least (module docstring), each scored in full."""
    grades = rules.grades
    lv = level(rules, grades)
    n = scope.n_holes
    top, bottom = grades[int(np.argmax(lv))], grades[int(np.argmin(lv))]
    lo_m = 0 if lv.min() <= 0 else n
    hi_m = n if lv.max() > 0 else 0
    m = np.arange(lo_m, hi_m + 1)[:, None]
    place = np.arange(n)[None, :]
    earliest = np.where(place < m, top, bottom).astype(np.float64)
    latest = np.where(place >= n - m, top, bottom).astype(np.float64)
    return _ends(rules, scope, latest, earliest)


def _average_precision_batch(rules: Rules, scopes: Sequence[QueryScope]) -> list[Extremes]:
    """:func:`_average_precision` of many scopes whose holes hold no shared grade-ordered tie
    group, in closed form: with the holes at ranks a_1 < ... < a_n, making a_i relevant after the
    i - 1 before it adds (JR(a_i) + i) / a_i + S(a_i) to the sum (its own precision, and 1/r to
    each judged relevant row r below it), and making a_i relevant before the ones after it adds
    (JR(a_i) + 1) / a_i + S(a_i) + sum_{j>i} 1/a_j; JR counts the judged relevant rows above,
    S sums 1/r over the judged relevant rows below."""
    q = len(scopes)
    if not q:
        return []
    grades = rules.grades
    lv = level(rules, grades)
    top, bottom = grades[int(np.argmax(lv))], grades[int(np.argmin(lv))]
    lengths = np.array([len(s.grade) for s in scopes], dtype=np.int64)
    seg = np.repeat(np.arange(q), lengths)
    start = np.cumsum(lengths) - lengths
    grade = np.concatenate([s.grade for s in scopes])
    rank = np.arange(len(grade)) - start[seg] + 1
    hole = np.isnan(grade)
    filled = np.where(hole, bottom, grade)
    if rules.tie:  # (a group that held a hole, judged since, is ordered by grade again)
        offsets = np.cumsum([0] + [int(s.group.max(initial=-1)) + 1 for s in scopes])
        group = np.concatenate([s.group for s in scopes]) + np.repeat(offsets[:-1], lengths)
        filled = filled[np.lexsort((filled if rules.tie == "asc" else -filled, group))]  # (holes: groups of one)
    counted = np.concatenate([s.kept for s in scopes]) & (rank <= rules.cut)
    rel = (level(rules, filled) > 0) & counted & ~hole
    total = np.cumsum(rel)
    cum = total - (total - rel)[start][seg]  # relevant rows up to each, per query
    inv = np.where(rel, 1.0 / rank, 0.0)
    inv_total = np.cumsum(inv)
    after = np.bincount(seg, weights=inv, minlength=q)[seg] - (inv_total - (inv_total - inv)[start][seg])
    n0 = np.asarray(np.bincount(seg, weights=np.where(rel, cum / rank, 0.0), minlength=q), dtype=np.float64)
    r0 = np.array([int((level(rules, s.judgments) > 0).sum()) for s in scopes], dtype=np.float64)
    at = np.flatnonzero(hole)
    h_seg = seg[at]
    n = np.bincount(h_seg, minlength=q)
    first = (np.cumsum(n) - n)[h_seg]
    i = np.arange(len(at)) - first  # 0-based, in rank order
    a = rank[at].astype(np.float64)
    width = int(n.max(initial=0)) + 1
    early_step = (cum[at] + i + 1) / a + after[at]
    inv_h = np.cumsum(1.0 / a)
    up_to = inv_h - inv_h[first] + 1.0 / a[first] if len(a) else inv_h  # sum of 1/a_j, j <= i
    below = np.bincount(h_seg, weights=1.0 / a, minlength=q)[h_seg] - up_to
    late_step = (cum[at] + 1) / a + after[at] + below
    early = np.zeros((q, width))
    early[h_seg, i + 1] = early_step
    early = n0[:, None] + np.cumsum(early, axis=1)  # m earliest relevant
    late = np.zeros((q, width))
    late[h_seg, n[h_seg] - i] = late_step
    late = n0[:, None] + np.cumsum(late, axis=1)  # m latest relevant
    m = np.arange(width)[None, :]
    lo_m = np.where(lv.min() <= 0, 0, n)[:, None]
    hi_m = np.where(lv.max() > 0, n, 0)[:, None]
    ok = (m >= lo_m) & (m <= hi_m)
    r = r0[:, None] + m
    policy = empty_value(rules)
    with np.errstate(divide="ignore", invalid="ignore"):
        high = np.where(r > 0, early / r, policy)
        low = np.where(r > 0, late / r, policy)
    high_at = _arg(np.where(ok, high, np.nan), np.nanargmax)
    low_at = _arg(np.where(ok, low, np.nan), np.nanargmin)
    out = []
    for j, s in enumerate(scopes):
        place = np.arange(s.n_holes)
        mh, ml = int(high_at[j]), int(low_at[j])
        out.append(Extremes(float(low[j, ml]), float(high[j, mh]),
                            np.where(place >= s.n_holes - ml, top, bottom).astype(np.float64),
                            np.where(place < mh, top, bottom).astype(np.float64)))
    return out


def _arg(values: Floats, pick: Any) -> np.ndarray:
    """``pick`` (nanargmax / nanargmin) per row; 0 for a row of NaN only (``empty=nan``)."""
    blank = np.isnan(values).all(axis=1)
    out = np.zeros(len(values), dtype=np.int64)
    if (~blank).any():
        out[~blank] = pick(values[~blank], axis=1)
    return out


def _ndcg(rules: Rules, found: tuple[Extreme, Extreme, bool]) -> Extremes:
    """Both ends of NDCG: the searched ones, or the ``empty`` policy's value where a grading
    leaving nothing to find scores beyond them."""
    low, high, can_empty = found
    policy = empty_value(rules)

    def settled(e: Extreme, maximize: bool) -> tuple[float, np.ndarray]:
        if e.value is None:
            return policy, e.grading
        if can_empty and ((policy > e.value) if maximize else (policy < e.value)):
            return policy, _empty_grading(rules, len(e.grading))
        return e.value, e.grading

    lo, lo_g = settled(low, False)
    hi, hi_g = settled(high, True)
    return Extremes(lo, hi, lo_g, hi_g)


def _empty_grading(rules: Rules, n: int) -> np.ndarray:
    """A grading that leaves nothing to find: every hole at the least gain of S."""
    return np.full(n, rules.grades[int(np.argmin(gain(rules, rules.grades)))])


def _shares_group(rules: Rules, scope: QueryScope) -> bool:
    """A grade-ordered tie group holds a hole and another row (the hole has no fixed rank)."""
    if not rules.tie:
        return False
    size = np.bincount(scope.group)
    return bool((size[scope.group[scope.hole_rows]] > 1).any())


def extremes(rules: Rules, scope: QueryScope) -> Extremes:
    """The exact least and greatest value of ``rules.measure`` on ``scope`` (module docstring)."""
    return extremes_of(rules, [scope])[0]


def extremes_of(rules: Rules, scopes: Sequence[QueryScope]) -> list[Extremes]:
    """:func:`extremes` of many scopes (NDCG's searched together, :func:`.ratio.ndcg_batch`)."""
    for scope in scopes:
        check_monotone(rules, scope)
    if rules.bound.search == "ratio":
        return [_ndcg(rules, found) for found in ndcg_batch(rules, scopes)]
    if rules.bound.search == "relevant_count":
        shared = [_shares_group(rules, scope) for scope in scopes]
        batch = _average_precision_batch(rules, [s for s, x in zip(scopes, shared, strict=True) if not x]) \
            if not all(shared) else []
        found = iter(batch)
        return [_average_precision(rules, s) if x else next(found) for s, x in zip(scopes, shared, strict=True)]
    return [_monotone(rules, scope) for scope in scopes]


__all__ = ["Extremes", "candidates", "check_policy", "emptiness", "empty_value", "extremes", "extremes_of", "settle"]
