"""How much of a score is an artefact of missing judgments: per-query lower and upper bounds,
the zero-imputed value and the condensed value, each an ordinary measure evaluated by the normal
engine on (possibly transformed) inputs, so they hold on every backend by construction.

For a measure ``m`` with cutoff k (the whole run without one), per query:

* ``lower``: ``m`` with every unjudged document scored as grade 0 (``unjudged=zero``, no assumed
  grade);
* ``value``: ``m`` as given (the zero-imputed value under the default flavor);
* ``upper``: ``lower``'s measure on the judgments extended with every unjudged document of the
  run's top k at the scale's top grade G, the run cut to its top k rows (recall@K: K) and
  re-scored so that each row keeps the rank it had (the cut is checked: where the measure on it
  differs from the lower bound, as a local ideal reads the whole list, every row is kept): the imputed documents join the judgments, so a global
  ideal includes them, and the local and recall ideals (made of the run's own rows) hold them
  anyway: the upper bound is a real value of the measure, never a sum past 1 (Lu, Moffat,
  Culpepper 2016). NDCG under a growing ideal is not monotone in the imputed grades (flavor
  facts §5.6), so where "all unjudged = G" scores below the zero-imputed value the upper bound is
  that value: both are values of the measure under some grading, and the larger is reported;
* ``condensed``: ``m`` with unjudged documents removed before ranking (``unjudged=condensed``,
  Sakai 2007's nDCG′);
* for a metric that declares a residual (RBP, Moffat & Zobel 2008): ``upper = lower + residual``,
  the residual being the weight of the unjudged ranks and of the ranks past the run's end.

Under the grade-dependent tie rules (``pessimistic``, ``optimistic``) and ``averaged`` the rows
keep their scores, so an imputed document takes the place its tie rule gives it.

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

from ..aggregate import summarize
from ..align import Aligned
from ..columns import as_numpy, plain_strings, string_array, take, to_strings
from ..docnos import integer_docnos
from ..errors import EvaluationError, FlavorError, UsageError
from ..io.inputs import as_qrels, as_run
from ..measure import Measure
from ..order import Ordering
from ..plan import Evaluation, evaluate_tables
from ..results import MeasureResult
from ..tables import Qrels, Run
from .scale import Scale, scale_named
from .toprows import top_rows


def resolve(metrics: str | Measure | Iterable[str | Measure], scale: Scale | None) -> list[Measure]:
    """The measures, under ``scale`` when one is declared."""
    from ..measure import parse_measure

    items = [metrics] if isinstance(metrics, (str, Measure)) else list(metrics)
    if not items:
        raise UsageError("metrics: give at least one measure, e.g. metrics=['ndcg@10']")
    if scale is not None:
        return [scale.measure(m) for m in items]
    return [m if isinstance(m, Measure) else parse_measure(m) for m in items]


def top_grade(measure: Measure, scale: Scale | None) -> float:
    """G for the upper bound: the scale's, else the measure's ``max_grade``; never the data's."""
    if scale is not None:
        return scale.top
    if measure.flavor.top_grade is not None:
        return measure.flavor.top_grade
    raise FlavorError(
        f"the upper bound of {measure.name} needs the top grade G of the label scale: pass scale= "
        "(trec_dl, msmarco, beir, ecommerce or a Scale) or set max_grade; G is never taken from the data"
    )


def zero_imputed(measure: Measure) -> Measure:
    """``measure`` with unjudged documents as grade 0 (the lower bound's measure)."""
    return measure.with_knobs(unjudged="zero", unjudged_grade="none")


@dataclass(frozen=True)
class Imputation:
    """The transformed inputs of one measure's upper bound (kept for :meth:`Bounds.document_gaps`).

    ``run`` holds the rows the measure reads (top ``depth`` of each query, whole tie groups where
    the tie rule reads them) of the queries with an unjudged document in the top k; ``pair_*``
    those documents (query, doc, rank).
    """

    run: Run
    pair_query: np.ndarray
    pair_doc: np.ndarray
    pair_rank: np.ndarray
    grade: float
    #: The judgments of the queries with an imputed document.
    qrels: Qrels
    #: Some imputed document carries a label already (a negative one: pooled, not judged).
    labelled: bool = False


def docnos_of(aligned: Aligned, rows: np.ndarray) -> pa.Array:
    """The docnos of aligned run ``rows``; canonical integer docnos are written from their values,
    so a big run's strings (which scoring never builds) are not made for a few rows."""
    if aligned.doc_value_offset is not None:
        return integer_docnos((aligned.run_doc[rows].astype(np.int64) + aligned.doc_value_offset,))
    return take(aligned.run_doc_strings, aligned.input_rows(rows).astype(np.int64))


def _imputation(plan: Evaluation, measure: Measure, grade: float, whole: bool = False) -> Imputation:
    """The unjudged (query, doc, rank) of the top k and the inputs of the upper bound, for the
    queries holding one: the run cut and re-scored, the judgments of those queries (module doc)."""
    k = measure.k
    depth = None if k is None or whole else max(k, measure.flavor.recall_depth or 0)
    ordering = Ordering.of(measure.flavor)
    keep_scores = ordering.averaged or ordering.by_grade
    top = top_rows(plan, measure, depth, tie_groups=keep_scores)
    aligned = plan.aligned(str(measure.flavor.duplicates))
    imputed = (top.rank <= (k if k is not None else np.inf)) & ~top.judged & aligned.in_qrels[top.q]
    has_pair = np.zeros(aligned.n_queries, dtype=bool)
    has_pair[top.q[imputed]] = True
    rows = np.flatnonzero(has_pair[top.q])  # the other queries' upper bound is their lower bound
    ids = aligned.query_ids[top.q[rows]].astype(str)
    docs = docnos_of(aligned, top.row[rows])
    if keep_scores:
        score = np.asarray(aligned.run_score[top.row[rows]], dtype=np.float64)
    else:  # each row keeps its rank, ties or not
        score = -top.rank[rows].astype(np.float64)
    run = Run(string_array(list(ids)), docs, score, source="bounds")
    pick = np.flatnonzero(imputed[rows])
    pair_rows = top.row[rows][pick]
    at = np.minimum(np.searchsorted(aligned.judged_row, pair_rows), max(len(aligned.judged_row) - 1, 0))
    labelled = bool(len(aligned.judged_row)) and bool((aligned.judged_row[at] == pair_rows).any())
    query_ids = aligned.query_ids[has_pair].astype(str)
    return Imputation(run, ids[pick], np.asarray(to_strings(take(docs, pick)), dtype=object), top.rank[rows][pick],
                      grade, qrels_of(plan.qrels, query_ids), labelled)


def qrels_of(qrels: Qrels, queries: np.ndarray) -> Qrels:
    """The judgments of ``queries`` (line numbers kept)."""
    qq = _string(qrels.query)
    keep = as_numpy(pc.is_in(qq, value_set=string_array(list(queries))))
    idx = np.flatnonzero(keep)
    lines = qrels.lines_of(idx)
    return Qrels(take(qq, idx), take(_string(qrels.doc), idx), np.asarray(qrels.grade, dtype=np.float64)[idx],
                 source=qrels.source, lines=None if lines is None else np.asarray(lines), from_file=False,
                 raters=qrels.raters)


def _string(a: pa.Array | pa.ChunkedArray) -> pa.Array:
    a = plain_strings(a)
    return a.cast(pa.string()) if not pa.types.is_string(a.type) else a


def pair_keys(query: pa.Array, doc: pa.Array) -> pa.Array:
    """``query + "\\x1f" + doc`` per row (the separator an array: a Python scalar in a compute call
    would import pandas)."""
    sep = string_array(["\x1f"] * len(query))
    return pc.binary_join_element_wise(query, doc, sep)


def extend_qrels(qrels: Qrels, query: np.ndarray, doc: np.ndarray, grade: float | np.ndarray,
                 replace: bool = True) -> Qrels:
    """``qrels`` with the (query, doc) pairs given at ``grade``; with ``replace``, a pair already
    there (a negative label: pooled, not judged) is replaced."""
    qq, dd = _string(qrels.query), _string(qrels.doc)
    g = np.asarray(qrels.grade, dtype=np.float64)
    lines = qrels.lines_of(np.arange(len(g)))
    if len(query) and replace:
        new_key = string_array([f"{a}\x1f{b}" for a, b in zip(query, doc, strict=True)])
        old_key = pair_keys(qq, dd)
        stay = ~as_numpy(pc.is_in(old_key, value_set=new_key))
        if not stay.all():
            idx = np.flatnonzero(stay)
            qq, dd, g = take(qq, idx), take(dd, idx), g[stay]
            lines = None if lines is None else lines[stay]
    n = len(query)
    grades = np.broadcast_to(np.asarray(grade, dtype=np.float64), (n,))
    return Qrels(
        pa.concat_arrays([qq, string_array([str(x) for x in query])]),
        pa.concat_arrays([dd, string_array([str(x) for x in doc])]),
        np.concatenate([g, grades]),
        source=qrels.source,
        lines=None if lines is None else np.concatenate([lines, np.zeros(n, dtype=lines.dtype)]),
        from_file=qrels.from_file,
        raters=qrels.raters,
    )


def _by_query(result: MeasureResult, queries: np.ndarray) -> np.ndarray:
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
class MeasureBounds:
    """One measure's bounds, per query (rows of the zero-imputed result, in query order).

    Attributes
    ----------
    measure : the measure as given (under the scale); ``lower_measure`` the zero-imputed one.
    queries, status : as :class:`~rankflavor.results.MeasureResult` of the lower bound.
    lower, value, upper, condensed : per-query values; ``*_mean`` their summaries by the
        metric's rule over the lower bound's rows.
    grade : the grade G imputed for the upper bound (None for a residual metric).
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
    imputation: Imputation | None = field(default=None, repr=False)

    @property
    def gap(self) -> np.ndarray:
        """``upper - lower`` per query."""
        return self.upper - self.lower

    def overlaps(self, other: MeasureBounds) -> bool:
        """The mean intervals [lower, upper] of two runs overlap: the judgments do not decide."""
        return bool(self.lower_mean <= other.upper_mean and other.lower_mean <= self.upper_mean)

    def to_dict(self) -> dict[str, Any]:
        def f(x: float) -> float | None:
            return None if not np.isfinite(x) else float(x)

        return {
            "measure": str(self.measure),
            "lower": f(self.lower_mean), "value": f(self.value_mean), "upper": f(self.upper_mean),
            "condensed": f(self.condensed_mean),
            "imputed_grade": self.grade,
            "per_query": {
                str(q): {"lower": f(lo), "value": f(v), "upper": f(up), "condensed": f(c)}
                for q, lo, v, up, c in zip(self.queries, self.lower, self.value, self.upper, self.condensed, strict=True)
            },
        }


def _reads_same(qrels: Qrels, run: Run, measure: Measure, lower: MeasureResult) -> bool:
    """The cut, re-scored run gives ``measure`` the values the whole run gave (``lower``): it holds
    every row the measure reads. Checked rather than assumed, for every metric and flavor."""
    cut = evaluate_tables(qrels, run, [measure], whole=False)[0]
    mine = _by_query(lower, cut.queries)
    theirs = np.asarray(cut.values, dtype=np.float64)
    return bool(np.allclose(theirs, mine, rtol=0.0, atol=1e-12, equal_nan=True))


def measure_bounds(plan: Evaluation, measure: Measure, scale: Scale | None) -> MeasureBounds:
    """The bounds of one ``measure`` on the plan's run, sharing its alignment and rankings."""
    lower_m = zero_imputed(measure)
    cond_m = measure.with_knobs(unjudged="condensed", unjudged_grade="none")
    lower = plan.evaluate(lower_m)
    value = lower if measure == lower_m else plan.evaluate(measure)
    cond = plan.evaluate(cond_m)
    queries = lower.queries
    lo = np.asarray(lower.values, dtype=np.float64)
    spec = measure.spec
    imputation = None
    grade: float | None
    if spec.residual is not None:
        grade = None
        resid = plan.evaluate(Measure(spec.residual, lower_m.k, lower_m.flavor))
        up = lo + _by_query(resid, queries)
    else:
        grade = top_grade(measure, scale)
        imputation = _imputation(plan, lower_m, grade)
        if len(imputation.pair_query) and not _reads_same(imputation.qrels, imputation.run, lower_m, lower):
            # The measure reads rows below its cutoff (a local ideal): keep every row.
            imputation = _imputation(plan, lower_m, grade, whole=True)
        if len(imputation.pair_query):
            q_up = extend_qrels(imputation.qrels, imputation.pair_query, imputation.pair_doc, grade,
                                replace=imputation.labelled)
            upper = evaluate_tables(q_up, imputation.run, [lower_m], whole=False)[0]
            # Not monotone in the imputed grades (the ideal grows): report the larger value.
            up = np.fmax(_by_query(upper, queries), lo)
        else:
            up = lo.copy()
    val = _by_query(value, queries)
    con = _by_query(cond, queries)

    def mean(v: np.ndarray) -> float:
        return summarize(lower_m, v, lower.status, plan.aligned(str(measure.flavor.duplicates)).qrels_grade)[0]

    return MeasureBounds(measure, lower_m, queries, lower.status, lo, val, up, con,
                         lower.summary, value.summary, mean(up), cond.summary, grade, imputation)


@dataclass(frozen=True)
class Bounds:
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

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run, "scale": None if self.scale is None else self.scale.name,
                "measures": [b.to_dict() for b in self.measures]}

    def document_gaps(self, measure: int | str = 0) -> list[tuple[str, str, str, float]]:
        """Per unjudged document of a top k: ``(query, doc, run, gap)``, how much judging it
        shrinks this run's interval of ``measure`` (index or name; default the first) on that
        query, whatever grade it gets. Sorted by gap, largest first.

        The rule: judging the document non-relevant lowers the upper bound to the measure with
        every other unjudged top-k document of the query at G and this one at 0 (``if_zero``);
        judging it G raises the lower bound to the measure with only this one at G (``if_top``).
        ``gap`` is the smaller of the two, floored at 0: the shrink the judgment guarantees. Each
        value is the measure itself on transformed judgments (one evaluation of pseudo-queries,
        one per document and side). :meth:`document_table` gives both sides, for every measure.
        A metric bounded by its residual (RBP) has no rows: a judgment moves its residual by the
        document's own weight, (1 - p) p^(rank - 1).
        """
        name = self[measure].measure.name if isinstance(measure, str) else self.measures[measure].measure.name
        return [(q, d, self.run, g) for q, d, m, _, _, _, g in self.document_table() if m == name]

    def document_table(self) -> list[tuple[str, str, str, int, float, float, float]]:
        """Rows ``(query, doc, measure, rank, if_zero, if_top, gap)`` (see :meth:`document_gaps`)."""
        out: list[tuple[str, str, str, int, float, float, float]] = []
        for b in self.measures:
            out.extend(_document_rows(b))
        out.sort(key=lambda r: (-r[6], r[0], r[3]))
        return out


def _groups(ids: np.ndarray) -> dict[str, np.ndarray]:
    """``{id: the positions holding it}``, ascending, in one sort."""
    if not len(ids):
        return {}
    keys, inverse = np.unique(ids.astype(str), return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    ends = np.cumsum(np.bincount(inverse, minlength=len(keys)))
    return {str(k): part for k, part in zip(keys, np.split(order, ends[:-1]), strict=True)}


def _document_rows(b: MeasureBounds) -> list[tuple[str, str, str, int, float, float, float]]:
    imp = b.imputation
    if imp is None or not len(imp.pair_query):
        return []
    qrels = imp.qrels
    pq, pdoc = imp.pair_query, imp.pair_doc
    n = len(pq)
    # Pseudo-queries "z<i>" (pair i at 0, the query's other pairs at G) and "t<i>" (pair i alone at G).
    run_q = np.asarray(to_strings(imp.run.query), dtype=object)
    run_doc = np.asarray(to_strings(imp.run.doc), dtype=object)
    qq = np.asarray(to_strings(_string(qrels.query)), dtype=object)
    qd = np.asarray(to_strings(_string(qrels.doc)), dtype=object)
    qg = np.asarray(qrels.grade, dtype=np.float64)
    by_q_run, by_q_qrels, pairs_of = _groups(run_q), _groups(qq), _groups(pq)
    rq: list[str] = []
    rd: list[Any] = []
    rs: list[np.ndarray] = []
    jq: list[str] = []
    jd: list[Any] = []
    jg: list[np.ndarray] = []
    for i in range(n):
        q = pq[i]
        rows = by_q_run[q]
        own = by_q_qrels.get(q, np.zeros(0, dtype=np.int64))
        mine = pairs_of[q]
        imputed = {pdoc[j] for j in mine}
        base = [r for r in own if qd[r] not in imputed]
        for side in ("z", "t"):
            pid = f"{side}{i}"
            rq.extend([pid] * len(rows))
            rd.extend(run_doc[rows])
            rs.append(imp.run.score[rows])
            jq.extend([pid] * len(base))
            jd.extend(qd[base])
            jg.append(qg[base])
            at_g = [j for j in mine if j != i] if side == "z" else [i]
            jq.extend([pid] * len(at_g))
            jd.extend(pdoc[at_g])
            jg.append(np.full(len(at_g), imp.grade))
    run = Run(string_array(rq), string_array([str(x) for x in rd]), np.concatenate(rs), source="bounds")
    judged = Qrels(string_array(jq), string_array([str(x) for x in jd]), np.concatenate(jg), source="bounds")
    res = evaluate_tables(judged, run, [b.lower_measure], whole=False)[0]
    vals = dict(zip(map(str, res.queries), np.asarray(res.values, dtype=np.float64), strict=True))
    where = {str(q): j for j, q in enumerate(b.queries)}
    out = []
    for i in range(n):
        j = where[pq[i]]
        if_zero = float(b.upper[j] - vals.get(f"z{i}", np.nan))
        if_top = float(vals.get(f"t{i}", np.nan) - b.lower[j])
        out.append((str(pq[i]), str(pdoc[i]), b.measure.name, int(imp.pair_rank[i]), if_zero, if_top,
                    max(0.0, min(if_zero, if_top))))
    return out


def bounds(
    qrels: Any,
    run: Any,
    metrics: str | Measure | Iterable[str | Measure] = ("ndcg@10",),
    scale: str | Scale | None = None,
) -> Bounds:
    """Lower and upper bounds of each measure under the run's unjudged documents, with the
    zero-imputed (as given) and condensed values, per query and as summaries.

    Parameters
    ----------
    qrels, run : paths, dicts or DataFrames, as :func:`rankflavor.evaluate` takes.
    metrics : canonical measures (``"ndcg@10"``, ``"P@10"``, ``"AP@100"``, ``"RR"``, ``"RBP@100"``).
    scale : the label scale (``trec_dl``, ``msmarco``, ``beir``, ``ecommerce`` or a
        :class:`Scale`): its knobs apply to every measure, its top grade G is imputed for the
        upper bound and every judgment must be on it. Without one, each measure's ``max_grade``
        gives G.

    Returns
    -------
    Bounds
        See the module docstring for each bound's rule.
    """
    sc = scale_named(scale)
    q_table = as_qrels(qrels)
    if sc is not None:
        sc.check(q_table)
    measures = resolve(metrics, sc)
    return bounds_of_tables(q_table, as_run(run), measures, sc)


def bounds_of_tables(qrels: Qrels, run: Run, measures: Sequence[Measure], scale: Scale | None,
                     plan: Evaluation | None = None) -> Bounds:
    """:func:`bounds` on tables already read (and checked against the scale)."""
    own = plan is None
    plan = plan or Evaluation(qrels, run)
    try:
        matched(plan, measures, run)
        return Bounds(run.source, [measure_bounds(plan, m, scale) for m in measures], qrels, scale)
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


__all__ = ["Bounds", "Imputation", "MeasureBounds", "bounds", "bounds_of_tables", "docnos_of", "extend_qrels",
           "interval_text", "matched", "pair_keys", "resolve", "top_grade", "zero_imputed"]
