"""Each bounded metric on a query scope, under many gradings of its holes at once, by the
metric's own kernel.

A grading gives every hole a grade of S; :func:`placed` puts the grades on the positions (a
grade-ordered tie group is sorted again: ``pessimistic`` lowest grade first, ``optimistic``
highest first, as :func:`rankflavor.order.ties.tie_order` orders it; equal grades are equal in
every metric, so which of them comes first does not matter). :func:`synthetic` lays the gradings
out as a :class:`~rankflavor.order.Ranked` of one pseudo-query per grading (the scope's kept rows
in rank order, every one judged, tie groups kept for ``ties=averaged``, the query's judgments
with the graded holes for R and the ideals, the query's number of rows), and :func:`values`
scores it with the measure's kernel (``MetricSpec.compute``), so nothing here computes a metric.

:func:`level` is what each hole contributes through its grade, in the order the extremes use
(:class:`rankflavor.metrics.bounded.Bound`): gain, relevance (grade >= rel) or ERR's stopping
probability.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from rankflavor.analysis.judgments.scope import QueryScope, Rules
from rankflavor.base import kernels as K
from rankflavor.errors import FlavorError
from rankflavor.metrics import gains
from rankflavor.metrics.err import stopping_probability
from rankflavor.metrics.measure import Measure
from rankflavor.order import Ranked

Floats = np.ndarray


def gain(rules: Rules, grades: Floats) -> Floats:
    """gain(g) under the measure's gain knob (a judged document's)."""
    g = np.asarray(grades, dtype=np.float64)
    return gains.gain(g.ravel(), np.ones(g.size, dtype=bool), rules.measure.flavor).reshape(g.shape)


def level(rules: Rules, grades: Floats) -> Floats:
    """What a document of each grade contributes: gain, relevance (0/1) or stopping probability."""
    g = np.asarray(grades, dtype=np.float64)
    if rules.bound.level == "relevance":
        return (g >= rules.measure.flavor.rel_threshold).astype(np.float64)
    if rules.bound.level == "stop":  # (a table giving a grade R outside [0, 1) is refused by the kernel)
        stop = stopping_probability(rules.measure)(g.ravel(), np.ones(g.size, dtype=bool))
        return np.asarray(stop, dtype=np.float64).reshape(g.shape)
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


def synthetic(rules: Rules, scope: QueryScope, gradings: Floats) -> Ranked:
    """One pseudo-query per grading of ``scope`` (module docstring): the rows a kernel reads."""
    gradings = np.atleast_2d(np.asarray(gradings, dtype=np.float64))
    n = len(gradings)
    kept = scope.kept
    grades = placed(rules, scope, gradings)[:, kept]
    width = grades.shape[1]
    judged = np.concatenate([np.broadcast_to(scope.judgments, (n, len(scope.judgments))), gradings], axis=1)
    return ranking(rules, np.full(n, width, dtype=np.int64), grades.ravel(), np.tile(scope.group[kept], n),
                   np.full(n, scope.n_ret, dtype=np.int64), np.repeat(np.arange(n), judged.shape[1]), judged.ravel())


def ranking(rules: Rules, lengths: np.ndarray, grade: Floats, group: np.ndarray, n_ret: np.ndarray,
            jq: np.ndarray, jgrade: Floats) -> Ranked:
    """A :class:`~rankflavor.order.Ranked` of pseudo-queries with ``lengths`` rows each (grades,
    tie-group ids and number of rows retrieved given), every row judged, and the judgments
    ``jq``, ``jgrade`` (pseudo-query code and grade)."""
    q = np.repeat(np.arange(len(lengths)), lengths)
    rank = np.arange(len(q)) - np.repeat(np.cumsum(lengths) - lengths, lengths) + 1
    # Scores fall from one tie group to the next and are equal inside one (ties=averaged reads them).
    score = -(q * (len(q) + 1) + group).astype(np.float64)
    flags = np.ones(len(q), dtype=bool)
    return Ranked(aligned=cast(Any, None), q=q, rank=rank, grade=np.asarray(grade, dtype=np.float64), judged=flags,
                  pooled=flags, score=score, n_ret=n_ret, jq=np.asarray(jq, dtype=np.int64),
                  jgrade=np.asarray(jgrade, dtype=np.float64), dropped_by_depth=0, dropped_unjudged=0,
                  ordering=rules.ordering)


def values(rules: Rules, scope: QueryScope, gradings: Floats, measure: Measure | None = None) -> tuple[Floats, np.ndarray]:
    """The kernel's value and empty flag of ``measure`` (default the bounded one) under each
    grading of ``scope``."""
    m = measure or rules.measure
    vals, empty = m.spec.compute(synthetic(rules, scope, gradings), m)
    return np.asarray(vals, dtype=np.float64), np.asarray(empty, dtype=bool)


def numerator_measure(rules: Rules) -> Measure:
    """The metric whose kernel gives a ratio's numerator (NDCG's DCG), in the measure's flavor."""
    name = rules.bound.numerator
    assert name is not None  # (asked of a ratio only)
    return Measure(name, rules.measure.k, rules.measure.flavor)


def numerator(rules: Rules, scope: QueryScope, gradings: Floats) -> Floats:
    """A ratio's numerator (NDCG's DCG) under each grading of ``scope``, by its kernel."""
    return values(rules, scope, gradings, numerator_measure(rules))[0]


__all__ = ["check_monotone", "gain", "level", "numerator", "numerator_measure", "placed", "ranking", "synthetic",
           "values"]
