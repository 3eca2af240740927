"""Each bounded metric on a query scope, under many gradings of its holes at once.

A grading gives every hole a grade of S; :func:`placed` puts the grades on the positions (a
grade-ordered tie group is sorted again: ``pessimistic`` lowest grade first, ``optimistic``
highest first, as :func:`rankflavor.order.ties.tie_order` orders it; equal grades are equal in
every metric, so which of them comes first does not matter). :func:`values` then computes the
metric row by row with the kernel's formula (module :mod:`rankflavor.metrics`):

* ``dcg``/``ndcg``: sum of gain / discount over the ranks <= k (the DCG only: the ideal is the
  caller's), RBP: (1 - p) sum of gain / gain(G) p^(rank - 1); under ``ties=averaged`` each row
  earns its tie group's mean gain, so a row weighs the mean of its group's discounts;
* ``P``, ``AP``, ``RR`` on relevance (grade >= rel), R counting every usable judgment;
* ``ERR``: sum of R_r / r prod_{i<r} (1 - R_i), R(g) = gain(g) / (gain(G) + 1) (Chapelle et al.).

:func:`level` is what each hole contributes through its grade, in the order the extremes use:
gain (ndcg, dcg, RBP), relevance (P, AP, RR), stopping probability (ERR).
"""

from __future__ import annotations

import numpy as np

from .. import kernels as K
from ..errors import FlavorError
from ..metrics.err import stopping_probability
from ..metrics.rbp import persistence
from .scope import QueryScope, Rules

Floats = np.ndarray


def gain(rules: Rules, grades: Floats) -> Floats:
    """gain(g) under the measure's gain knob (a judged document's)."""
    g = np.asarray(grades, dtype=np.float64)
    return K.gain(g.ravel(), np.ones(g.size, dtype=bool), rules.measure.flavor).reshape(g.shape)


def level(rules: Rules, grades: Floats) -> Floats:
    """What a document of each grade contributes: gain, relevance (0/1) or stopping probability."""
    g = np.asarray(grades, dtype=np.float64)
    if rules.bound.level == "relevance":
        return (g >= rules.measure.flavor.rel_threshold).astype(np.float64)
    if rules.bound.level == "stop":
        stop = stopping_probability(rules.measure)(g.ravel(), np.ones(g.size, dtype=bool)).reshape(g.shape)
        bad = (stop < 0) | (stop >= 1)
        if bad.any():
            raise FlavorError(f"{rules.measure.name}: grade {float(g[bad].ravel()[0]):g} has stopping probability "
                              f"{float(stop[bad].ravel()[0]):g}, outside [0, 1)")
        return np.asarray(stop, dtype=np.float64)
    return gain(rules, g)


def check_monotone(rules: Rules, scope: QueryScope) -> None:
    """Under a grade-ordered tie rule, refuse a level that falls as the grade rises where a tie
    group holds a hole and another document: the order inside the group is then not the order of
    what its documents contribute, and the exchange arguments of :mod:`.extremes` do not hold."""
    if not rules.tie:
        return
    holes = scope.hole_rows
    shared = [gid for gid in K.distinct(scope.group[holes]).tolist() if (scope.group == gid).sum() > 1]
    if not shared:
        return
    around = scope.grade[np.isin(scope.group, shared)]
    g = K.distinct(np.concatenate([rules.grades, around[~np.isnan(around)]]))
    if (np.diff(level(rules, g)) < 0).any():
        raise FlavorError(
            f"{rules.measure.name}: on query {scope.qid} ties={rules.measure.flavor.ties} orders a tie group holding an "
            "unjudged document by grade, and under this gain a higher grade contributes less; the bound is not "
            "derived for it (use a gain that rises with the grade, or another tie rule)"
        )


def placed(rules: Rules, scope: QueryScope, gradings: Floats) -> Floats:
    """Grades at every position under each grading (tie groups re-ordered by a grade-ordered rule)."""
    out = scope.filled(gradings)
    if rules.tie:
        assert scope.unjudged is not None
        for gid in K.distinct(scope.group[scope.unjudged]).tolist():
            cols = np.flatnonzero(scope.group == gid)
            if len(cols) > 1:
                block = np.sort(out[:, cols], axis=1)
                out[:, cols] = block if rules.tie == "asc" else block[:, ::-1]
    return out


def in_cut(rules: Rules, scope: QueryScope) -> np.ndarray:
    """Positions a cut metric counts: kept by the depth cut and ranked <= k."""
    return scope.kept & (scope.rank <= rules.cut)


def discounts(rules: Rules, scope: QueryScope) -> Floats:
    """Per position, the weight a gain there gets in the DCG (1 / denominator) or RBP ((1 - p)
    p^(rank - 1) / gain(G)); 0 beyond the cut; under ``ties=averaged``, the mean of its tie
    group's weights (the group's mean gain is spread over them)."""
    rank = scope.rank
    if rules.bound.value == "scaled_gain":
        p = persistence(rules.measure)
        w = (1.0 - p) * np.power(p, rank - 1.0) / top_gain(rules)
    else:
        w = rules.reciprocal_discounts(len(rank))[rank]
    w = np.where(in_cut(rules, scope), w, 0.0)
    if rules.averaged:
        kept = scope.kept
        sums = np.bincount(scope.group[kept], weights=w[kept])
        sizes = np.bincount(scope.group[kept])
        w = np.where(kept, (sums / np.maximum(sizes, 1))[scope.group], 0.0)
    return w


def top_gain(rules: Rules) -> float:
    """RBP's gain(G) (1 under gain=binary), as :func:`rankflavor.metrics.rbp.top_gain` reads it."""
    f = rules.measure.flavor
    if f.gain == "binary":
        return 1.0
    top = f.top_grade
    if top is None:
        raise FlavorError(f"{rules.measure.name} scales gains by the top grade G: set max_grade or declare a scale")
    return float(gain(rules, np.array([top]))[0])


def numerator(rules: Rules, scope: QueryScope, gradings: Floats) -> Floats:
    """DCG (ndcg, dcg) or RBP of each grading."""
    grades = placed(rules, scope, gradings)
    return np.asarray(gain(rules, grades) @ discounts(rules, scope), dtype=np.float64)


def values(rules: Rules, scope: QueryScope, gradings: Floats) -> tuple[Floats, np.ndarray]:
    """The kernel's value and empty flag of each grading, for P, AP, RR, ERR, dcg and RBP (ndcg's
    ratio is :mod:`.extremes`' own)."""
    gradings = np.atleast_2d(np.asarray(gradings, dtype=np.float64))
    n = len(gradings)
    formula = rules.bound.value
    if formula in ("discounted_gain", "scaled_gain"):
        return numerator(rules, scope, gradings), np.zeros(n, dtype=bool)
    grades = placed(rules, scope, gradings)
    lv = level(rules, grades)
    counted = in_cut(rules, scope)
    rank = scope.rank.astype(np.float64)
    positive = (level(rules, scope.judgments) > 0).sum() + (level(rules, gradings) > 0).sum(axis=1)
    empty = positive == 0
    if formula == "cascade":
        reach = np.cumprod(1.0 - lv, axis=1) / (1.0 - lv)
        return (lv * reach / rank * counted).sum(axis=1), empty
    rel = (lv > 0) & counted
    if formula == "precision":
        found = rel.sum(axis=1).astype(np.float64)
        k = rules.k
        if k is None:
            return found / max(scope.n_ret, 1), empty
        if str(rules.measure.flavor.p_divisor) == "hits":
            return found / max(min(scope.n_ret, k), 1), empty
        return found / k, empty
    if formula == "average_precision":
        cum = np.cumsum(lv > 0, axis=1)
        total = (rel * cum / rank).sum(axis=1)
        return np.where(positive > 0, total / np.maximum(positive, 1), 0.0), empty
    first = np.where(rel.any(axis=1), np.argmax(rel, axis=1) + 1.0, np.inf)  # RR
    return 1.0 / first, empty


__all__ = ["check_monotone", "discounts", "gain", "in_cut", "level", "numerator", "placed", "top_gain", "values"]
