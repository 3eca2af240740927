"""How much of a score is an artefact of missing judgments: per query, the exact least and
greatest value of the measure over every grading of the unjudged documents it reads, with the
value as given and the condensed value.

For a measure ``m`` (cutoff k; the whole run without one), per query:

* ``value``: ``m`` as given (zero-imputed under the default flavor; ``unjudged_grade`` and
  ``unjudged=condensed`` change it, and may put it outside the interval, which is that of the
  measure with every unjudged document in scope graded);
* ``lower`` / ``upper``: the least / greatest value of the zero-imputed measure ``m0``
  (``unjudged=zero``) over every assignment of the scale's grades S to the unjudged documents in
  scope: those among the rows ``m0`` reads in its top k (:mod:`.scope`: the top min(k, depth),
  the top K of a recall@K ideal, every row for a local ideal, whole tie groups where the tie rule
  reads grades or averages gains). Each is exact (:mod:`.extremes` proves each metric: ndcg in
  every ideal, gain, discount and tie flavor, dcg, P, AP, RR, ERR, RBP; others are refused,
  naming why) and is the measure's value, computed by the engine, on a grading that attains it
  (:mod:`.regrade`). Not covered: documents ranked below the scope, unjudged documents no run
  retrieved (both could still lower a global-ideal NDCG, and AP, once judged relevant) and grades
  off the scale;
* ``condensed``: ``m`` with unjudged documents removed before ranking (Sakai 2007's nDCG');
* RBP also keeps its Moffat & Zobel residual (``residual``): the weight of the unjudged ranks and
  of the ranks past the run's end (d = min(k, retrieved)), so ``lower + residual`` bounds RBP
  over every grading of those too. Under the usual gains (grade 0 gains nothing, no grade more
  than G) the in-scope interval is [lower, lower + the unjudged ranks' weight], and the two upper
  ends differ by p^d, the weight of the ranks past the run.

The mean interval is the mean of the per-query extremes: queries are graded independently, and an
``empty`` policy that would take a query in or out of the mean with its grading is refused.

Examples
--------
>>> qrels = {"q1": {"a": 3, "b": 1}}
>>> run = {"q1": {"a": 0.9, "x": 0.8, "b": 0.7}}
>>> b = bounds(qrels, run, "ndcg@3", scale="trec_dl")
>>> r = b["ndcg@3"]
>>> [round(float(v), 4) for v in (r.lower[0], r.value[0], r.upper[0], r.condensed[0])]
[0.9639, 0.9639, 1.0, 1.0]
>>> q, doc, run_name, gap = b.document_gaps()[0]
>>> q, doc, round(gap, 4)
('q1', 'x', 0.0361)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankflavor.analysis.judgments.extremes import Extremes, candidates, check_policy, extremes_of
from rankflavor.analysis.judgments.families import gain, level
from rankflavor.analysis.judgments.regrade import confirmed, engine_values
from rankflavor.analysis.judgments.result import Bounds, Detail, MeasureBounds, covers, interval_text, scope_text
from rankflavor.analysis.judgments.scope import QueryScope, Rules, docnos_of, scale_grades, scopes
from rankflavor.engine.aggregate import summarize
from rankflavor.engine.plan import Evaluation
from rankflavor.engine.results import MeasureResult
from rankflavor.errors import EvaluationError, UsageError
from rankflavor.io.columns import string_array
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.io.tables import Qrels, Run
from rankflavor.metrics.measure import Measure
from rankflavor.order import Ranked
from rankflavor.presets.irds import scale_for
from rankflavor.presets.scales import Scale


def resolve(metrics: str | Measure | Iterable[str | Measure], scale: Scale | None) -> list[Measure]:
    """The measures, under ``scale`` when one is declared."""
    from rankflavor.metrics.measure import parse_measure

    items = [metrics] if isinstance(metrics, (str, Measure)) else list(metrics)
    if not items:
        raise UsageError("metrics: give at least one measure, e.g. metrics=['ndcg@10']")
    if scale is not None:
        return [scale.measure(m) for m in items]
    return [m if isinstance(m, Measure) else parse_measure(m) for m in items]


def zero_imputed(measure: Measure) -> Measure:
    """``measure`` with unjudged documents as grade 0 (the measure the interval is of)."""
    return measure.with_knobs(unjudged="zero", unjudged_grade="none")


def pair_keys(query: pa.Array, doc: pa.Array) -> pa.Array:
    """``len(query) + "\\x1f" + query + "\\x1f" + doc`` per row: one key per (query, doc) pair, and
    two pairs never share one, whatever characters the ids hold (the length says where the query
    ends; a separator alone would let ``("a\\x1fb", "c")`` pass for ``("a", "b\\x1fc")``). The
    separator is an array: a Python scalar in a compute call would import pandas."""
    sep = string_array(["\x1f"] * len(query))
    length = pc.cast(pc.utf8_length(query), pa.string())
    return pc.binary_join_element_wise(length, query, doc, sep)


def values_at(result: MeasureResult, queries: np.ndarray) -> np.ndarray:
    """``result``'s values at ``queries`` (NaN where it has no row)."""
    index = {str(q): i for i, q in enumerate(result.queries)}
    vals = np.asarray(result.values, dtype=np.float64)
    out = np.full(len(queries), np.nan)
    for j, q in enumerate(queries):
        i = index.get(str(q))
        if i is not None:
            out[j] = vals[i]
    return out


@dataclass
class _Pending:
    """One measure between its evaluations and its engine-checked extremes."""

    measure: Measure
    lower_m: Measure
    grades: np.ndarray
    lower: MeasureResult
    value: MeasureResult
    cond: MeasureResult
    detail: Detail
    picks: list[tuple[QueryScope, np.ndarray]]
    #: Per pick: its row, whether it is a candidate for the lower end, for the upper end, and
    #: the value derived for it (NaN: chosen without one).
    roles: list[tuple[int, bool, bool, float]]
    #: Per pick, its value when known without the engine (NaN: ask it).
    known: np.ndarray


def _pending(plan: Evaluation, measure: Measure, scale: Scale | None, rankings: dict[object, Ranked]) -> _Pending:
    """Evaluate ``measure`` (zero-imputed, as given, condensed) and find the gradings at its ends."""
    lower_m = zero_imputed(measure)
    rules = Rules.of(lower_m, scale_grades(lower_m, None if scale is None else scale.grades))
    lower = plan.evaluate(lower_m)
    value = lower if measure == lower_m else plan.evaluate(measure)
    cond = plan.evaluate(measure.with_knobs(unjudged="condensed", unjudged_grade="none"))
    found_scopes = scopes(plan, rules, rankings)
    where = {str(q): j for j, q in enumerate(lower.queries)}
    found: list[tuple[int, QueryScope, Extremes | None]] = []
    picks: list[tuple[QueryScope, np.ndarray]] = []
    roles: list[tuple[int, bool, bool, float]] = []
    rows: list[tuple[int, QueryScope]] = []
    for scope in found_scopes.scopes:
        check_policy(rules, scope)
        j = where.get(scope.qid)
        if j is not None:
            rows.append((j, scope))
    if rules.bound.search == "monotone":
        for j, scope in rows:
            for grading in candidates(rules, scope):
                picks.append((scope, grading))
                roles.append((j, True, True, np.nan))
            found.append((j, scope, None))
    else:
        for (j, scope), e in zip(rows, extremes_of(rules, [s for _, s in rows]), strict=True):
            picks += [(scope, e.lower_grading), (scope, e.upper_grading)]
            # (each end is the least / greatest engine value of both: where every grading scores
            # alike, the engine may put the lower end's grading an ulp above the upper end's)
            roles += [(j, True, True, e.lower), (j, True, True, e.upper)]
            found.append((j, scope, e))
    return _Pending(measure, lower_m, rules.grades, lower, value, cond, Detail(found_scopes, found), picks, roles,
                    _as_zero_imputed(rules, lower, picks, roles))


def _as_zero_imputed(rules: Rules, lower: MeasureResult, picks: list[tuple[QueryScope, np.ndarray]],
                     roles: list[tuple[int, bool, bool, float]]) -> np.ndarray:
    """Per pick, the zero-imputed value where its grading is every hole at grade 0, grade 0
    contributes nothing (no gain, not relevant, no stopping probability) and the measure does not
    count the judged documents (P's ``p_divisor=judged`` counts a hole judged 0, not an unjudged
    one): the measure then reads exactly what it reads of unjudged documents, so the engine need
    not score it again. NaN elsewhere."""
    known = np.full(len(picks), np.nan)
    if rules.measure.flavor.p_divisor == "judged":
        return known
    zero = np.zeros(1)
    if not (rules.grades == 0).any() or level(rules, zero)[0] != 0 or gain(rules, zero)[0] != 0:
        return known
    values = np.asarray(lower.values, dtype=np.float64)
    for i, ((_, grading), (j, *_)) in enumerate(zip(picks, roles, strict=True)):
        if not grading.any():
            known[i] = values[j]
    return known


def _finished(plan: Evaluation, p: _Pending, got: np.ndarray) -> MeasureBounds:
    """The bounds of a pending measure, from the engine's values on its picks."""
    confirmed(got, np.array([r[3] for r in p.roles], dtype=np.float64), p.detail.scopes, p.picks)
    lo = np.asarray(p.lower.values, dtype=np.float64).copy()
    up = lo.copy()
    ends: dict[int, tuple[list[float], list[float]]] = {}
    for (j, low, high, _), v in zip(p.roles, got.tolist(), strict=True):
        pair = ends.setdefault(j, ([], []))
        if low:
            pair[0].append(v)
        if high:
            pair[1].append(v)
    for j, (lows, highs) in ends.items():
        lo[j], up[j] = _least(lows, min), _least(highs, max)
    queries = p.lower.queries
    judged = plan.aligned(str(p.measure.flavor.duplicates)).qrels_grade

    def mean(v: np.ndarray) -> float:
        return summarize(p.lower_m, v, p.lower.status, judged)[0]

    residual = residual_mean = None
    spec = p.measure.spec
    if spec.residual is not None:
        resid = plan.evaluate(Measure(spec.residual, p.lower_m.k, p.lower_m.flavor))
        residual = values_at(resid, queries)
        residual_mean = mean(residual)
    # (the evaluated measure: the one given, with the sources knob its judgments' labels give it)
    return MeasureBounds(p.value.measure, p.lower.measure, queries, p.lower.status, lo, values_at(p.value, queries), up,
                         values_at(p.cond, queries), mean(lo), p.value.summary, mean(up), p.cond.summary,
                         float(p.grades.max()), p.detail, tuple(float(g) for g in p.grades), residual, residual_mean)


def _least(values: list[float], pick: Any) -> float:
    """``pick`` (min or max) of the values that are numbers; NaN when none is (``empty=nan``)."""
    numbers = [v for v in values if not np.isnan(v)]
    return float(pick(numbers)) if numbers else float("nan")


def check_bounded(measures: Sequence[Measure]) -> None:
    """Refuse, before any work, a measure whose interval is not derived (FlavorError naming why)."""
    for m in measures:
        Rules.of(zero_imputed(m), np.zeros(1))


def measures_bounds(plan: Evaluation, measures: Sequence[Measure], scale: Scale | None) -> list[MeasureBounds]:
    """The bounds of each measure on the plan's run: the gradings at each end found per measure,
    then scored by the engine in one evaluation (:mod:`.regrade`)."""
    check_bounded(measures)
    rankings: dict[object, Ranked] = {}
    pending = [_pending(plan, m, scale, rankings) for m in measures]
    asked = [np.flatnonzero(np.isnan(p.known)) for p in pending]
    got = engine_values(plan, [(p.detail.scopes, [p.picks[i] for i in a]) for p, a in zip(pending, asked, strict=True)])
    out = []
    for p, a, g in zip(pending, asked, got, strict=True):
        values = p.known.copy()
        values[a] = g
        out.append(_finished(plan, p, values))
    return out


def bounds(
    qrels: Any,
    run: Any,
    metrics: str | Measure | Iterable[str | Measure] = ("ndcg@10",),
    scale: str | Scale | None = None,
) -> Bounds:
    """Exact lower and upper bounds of each measure over every grading of the run's unjudged
    documents in scope, with the value as given and the condensed value, per query and as means.

    Parameters
    ----------
    qrels, run : paths, dicts or DataFrames, as :func:`rankflavor.evaluate` takes.
    metrics : canonical measures of ndcg, dcg, P, AP, RR, ERR or RBP (``"ndcg@10"``, ``"P@10"``,
        ``"AP@100"``, ``"RR"``, ``"ERR@20"``, ``"RBP@100"``); another metric is refused.
    scale : the label scale (``trec_dl``, ``msmarco``, ``beir``, ``ecommerce`` or a
        :class:`Scale`): its knobs apply to every measure, the interval ranges over its grades and
        every judgment must be on it. Without one, each measure's ``max_grade`` G gives the
        grades 0, 1, ..., G.

    Returns
    -------
    Bounds
        See the module docstring for what each number is.

    Raises
    ------
    FlavorError
        For a metric or flavor whose bound is not derived (the message names why), or no grades.
    EvaluationError
        Where the ``empty`` policy would move a query in or out of the mean with the grading.
    """
    sc = scale_for(scale, qrels)  # named, or an ir_datasets dataset's documented grades
    measures = resolve(metrics, sc)
    check_bounded(measures)
    q_table = as_qrels(qrels)
    if sc is not None:
        sc.check(q_table)
    return bounds_of_tables(q_table, as_run(run), measures, sc)


def bounds_of_tables(qrels: Qrels, run: Run, measures: Sequence[Measure], scale: Scale | None,
                     plan: Evaluation | None = None) -> Bounds:
    """:func:`bounds` on tables already read (and checked against the scale)."""
    own = plan is None
    plan = plan or Evaluation(qrels, run)
    try:
        matched(plan, measures, run)
        return Bounds(run.source, measures_bounds(plan, measures, scale), qrels, scale)
    finally:
        if own:
            plan.close()


def matched(plan: Evaluation, measures: Sequence[Measure], run: Run) -> None:
    """Align once, naming the run file when it shares no query with the judgments."""
    policy = str(measures[0].flavor.duplicates) if measures else "error"
    try:
        plan.aligned(policy)
        plan.require_common(measures)
    except EvaluationError as exc:
        if "no query is both" in str(exc):
            raise EvaluationError(f"{run.source}: {exc}") from None
        raise


__all__ = [
    "Bounds",
    "Detail",
    "MeasureBounds",
    "bounds",
    "bounds_of_tables",
    "check_bounded",
    "covers",
    "docnos_of",
    "interval_text",
    "matched",
    "measures_bounds",
    "pair_keys",
    "resolve",
    "scope_text",
    "zero_imputed",
]
