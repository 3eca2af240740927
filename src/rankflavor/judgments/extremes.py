r"""The exact least and greatest value of each bounded metric over every grading of a query's holes.

The value of a query under a grading is the kernel's value with the ``empty`` policy applied (a
grading that leaves nothing to find scores the policy's value: 0 under ``empty=zero``, 1 under
``one``). Each metric below is reduced to a few gradings, one of which attains each end; they
are computed on the query's scope (:mod:`.families`) and the caller checks the gradings found
with the engine (:mod:`.regrade`). The per-hole *level* is what a hole contributes through its
grade (:func:`.families.level`).

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

import numpy as np

from ..errors import EvaluationError
from .families import check_monotone, gain, level, values
from .ratio import Extreme, emptiness as ndcg_emptiness, ndcg_batch
from .scope import QueryScope, Rules

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
    if rules.kind == "ndcg":
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
    if can_empty and can_find or can_empty != zero_imputed:
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


#: The metrics whose value never falls as one hole's level rises (module docstring).
MONOTONE = ("dcg", "RBP", "P", "RR", "ERR")


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


def extremes(rules: Rules, scope: QueryScope) -> Extremes:
    """The exact least and greatest value of ``rules.measure`` on ``scope`` (module docstring)."""
    return extremes_of(rules, [scope])[0]


def extremes_of(rules: Rules, scopes: Sequence[QueryScope]) -> list[Extremes]:
    """:func:`extremes` of many scopes (NDCG's searched together, :func:`.ratio.ndcg_batch`)."""
    for scope in scopes:
        check_monotone(rules, scope)
    if rules.kind == "ndcg":
        return [_ndcg(rules, found) for found in ndcg_batch(rules, scopes)]
    if rules.kind == "AP":
        return [_average_precision(rules, scope) for scope in scopes]
    return [_monotone(rules, scope) for scope in scopes]


__all__ = ["MONOTONE", "Extremes", "candidates", "check_policy", "empty_value", "emptiness", "extremes", "extremes_of", "settle"]
