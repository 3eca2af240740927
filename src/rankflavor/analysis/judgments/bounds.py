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
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankflavor.analysis.judgments.extremes import Extremes, candidates, check_policy, extremes_of
from rankflavor.analysis.judgments.families import gain, level
from rankflavor.analysis.judgments.regrade import confirmed, engine_values
from rankflavor.analysis.judgments.scope import QueryScope, Rules, ScopeSet, docnos_of, scale_grades, scopes
from rankflavor.base.display import Shown
from rankflavor.base.frames import Frames
from rankflavor.engine.aggregate import summarize
from rankflavor.engine.plan import Evaluation
from rankflavor.engine.results import MeasureResult
from rankflavor.errors import EvaluationError, UsageError
from rankflavor.flavor.flavor import format_number
from rankflavor.io.columns import string_array
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.io.tables import Qrels, Run
from rankflavor.metrics.bounded import bound_of
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


@dataclass(frozen=True)
class Detail:
    """What the bounds of one measure were derived from (kept for :meth:`Bounds.document_table`):
    the scopes of the queries with unjudged documents, each with its row in the per-query arrays
    and its extremes (None where the gradings were chosen without computing them: a monotone
    metric's)."""

    scopes: ScopeSet
    found: list[tuple[int, QueryScope, Extremes | None]]


@dataclass(frozen=True)
class MeasureBounds:
    """One measure's bounds, per query (rows of the zero-imputed result, in query order).

    Attributes
    ----------
    measure : the measure as given (under the scale), with the ``sources`` knob when its labels are
        of several kinds; ``lower_measure`` the zero-imputed one.
    queries, status : as :class:`~rankflavor.engine.results.MeasureResult` of the zero-imputed measure.
    lower, value, upper, condensed : per-query values; ``*_mean`` their summaries by the
        metric's rule over those rows.
    grade : the top grade G of the scale; ``grades`` every grade S the interval ranges over.
    residual : RBP's Moffat & Zobel residual per query (None for other metrics), ``residual_mean``
        its mean: ``lower + residual`` also covers the ranks past the run's end.
    """

    measure: Measure
    lower_measure: Measure
    queries: np.ndarray
    status: np.ndarray
    lower: np.ndarray
    value: np.ndarray
    upper: np.ndarray
    condensed: np.ndarray
    lower_mean: float
    value_mean: float
    upper_mean: float
    condensed_mean: float
    grade: float | None
    detail: Detail | None = field(default=None, repr=False)
    grades: tuple[float, ...] = ()
    residual: np.ndarray | None = None
    residual_mean: float | None = None

    @property
    def gap(self) -> np.ndarray:
        """``upper - lower`` per query: the width of each query's interval."""
        return self.upper - self.lower

    def overlaps(self, other: MeasureBounds) -> bool:
        """The mean intervals [lower, upper] of two runs overlap: the judgments do not decide."""
        return bool(self.lower_mean <= other.upper_mean and other.lower_mean <= self.upper_mean)

    def to_dict(self) -> dict[str, Any]:
        def f(x: float | None) -> float | None:
            return None if x is None or not np.isfinite(x) else float(x)

        out: dict[str, Any] = {
            "measure": str(self.measure),
            "lower": f(self.lower_mean), "value": f(self.value_mean), "upper": f(self.upper_mean),
            "condensed": f(self.condensed_mean),
            "grades": list(self.grades),
            "covers": covers(self),
        }
        if self.residual is not None:
            out["residual"] = f(self.residual_mean)
        rows = zip(self.queries, self.lower, self.value, self.upper, self.condensed, strict=True)
        out["per_query"] = {str(q): {"lower": f(lo), "value": f(v), "upper": f(up), "condensed": f(c)}
                            for q, lo, v, up, c in rows}
        if self.residual is not None:
            for q, r in zip(self.queries, self.residual, strict=True):
                out["per_query"][str(q)]["residual"] = f(r)
        return out


def scope_text(measure: Measure) -> str:
    """Which rows of each query the interval grades, in words (:mod:`.scope`)."""
    f = measure.flavor
    depth = f.depth_limit
    bound = bound_of(measure.spec)
    ideal = str(f.ideal_kind) if bound is not None and bound.ideal else ""
    k = measure.k
    if ideal == "recall" and k is not None:
        k = max(k, f.recall_depth or 0)
    whole = k is None or ideal == "local"
    if k is None or ideal == "local":
        text = "the whole ranking" if depth is None else f"the top {depth} (depth={depth})"
    else:
        text = f"the top {k if depth is None else min(k, depth)}"
    grouped = str(f.ties) in ("pessimistic", "optimistic") or (
        str(f.ties) == "averaged" and bound is not None and bound.averages)
    if grouped and not (whole and depth is None):
        text += " and the rest of the tie group at its end"
    return text


def covers(b: MeasureBounds) -> str:
    """What the interval covers and what it does not, in one sentence."""
    grades = ",".join(format_number(g) for g in b.grades)
    return (f"every grading of the unjudged documents in {scope_text(b.lower_measure)} with the grades {{{grades}}}; "
            "not covered: unjudged documents ranked below that or never retrieved, and grades off the scale")


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


@dataclass(frozen=True)
class Bounds(Frames, Shown):
    """What :func:`bounds` returns: one :class:`MeasureBounds` per measure, for one run."""

    run: str
    measures: list[MeasureBounds]
    qrels: Qrels = field(repr=False)
    scale: Scale | None = None

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.measures)

    def __len__(self) -> int:
        return len(self.measures)

    def __getitem__(self, key: int | str) -> MeasureBounds:
        if isinstance(key, int):
            return self.measures[key]
        for b in self.measures:
            if key in (b.measure.name, str(b.measure), b.measure.display):
                return b
        raise KeyError(key)

    def to_arrow(self, per_query: bool = False) -> pa.Table:
        """Each measure's interval (``per_query``: each query's too) as an Arrow table (:func:`rankflavor.base.frames.bounds_table`); ``to_pandas``/``to_polars`` convert it."""
        from rankflavor.base.frames import bounds_table

        return bounds_table(self, per_query)

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run, "scale": None if self.scale is None else self.scale.name,
                "measures": [b.to_dict() for b in self.measures]}

    def document_gaps(self, measure: int | str = 0) -> list[tuple[str, str, str, float]]:
        """Per unjudged document in scope: ``(query, doc, run, gap)``, how much judging it is sure
        to shrink this run's interval of ``measure`` (index or name; default the first) on that
        query, whatever grade of the scale it gets (:meth:`document_table` says how). Sorted by
        gap, largest first; the mean interval shrinks by gap / (queries in the mean)."""
        name = self[measure].measure.name if isinstance(measure, str) else self.measures[measure].measure.name
        return [(q, d, self.run, g) for q, d, m, _, _, _, g in self.document_table() if m == name]

    def document_table(self) -> list[tuple[str, str, str, int, float, float, float]]:
        """Rows ``(query, doc, measure, rank, if_zero, if_top, gap)`` for every unjudged document in
        scope of every measure, sorted by gap (largest first), then query and rank.

        With the document judged g, the query's interval is the exact one over the other
        unjudged documents (:func:`rankflavor.analysis.judgments.gaps.document_rows`): ``if_zero`` is how
        much the upper bound falls when g is the scale's least grade, ``if_top`` how much the
        lower bound rises when g is G, and ``gap`` the least, over every grade g of the scale, of
        (width now - width after): the shrink the judgment guarantees.
        """
        from rankflavor.analysis.judgments.gaps import document_rows

        out: list[tuple[str, str, str, int, float, float, float]] = []
        for b in self.measures:
            out.extend(document_rows(b))
        out.sort(key=lambda r: (-r[6], r[0], r[3], r[2]))
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


def interval_text(b: MeasureBounds) -> str:
    """``0.5235 [0.5235, 0.5838]``: the value with its interval."""
    return f"{b.value_mean:.4f} [{b.lower_mean:.4f}, {b.upper_mean:.4f}]"


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
