"""Coverage of the runs' top k by the judgments, the pool-bias warning, and each run's bounds.

:func:`judgments` reads the judgments once, then per run makes one
:class:`~rankflavor.engine.plan.Evaluation`: its ranking of the first measure's ordering gives the
coverage (judged@k, the unjudged documents of the top k and their ranks), and the same plan
evaluates the bounds (:mod:`rankflavor.analysis.judgments.bounds`), so coverage and bounds share one
read, one alignment and one sort.

The pool-bias rule
------------------
For each run, ``unjudged@k`` is the share of its top k (``min(k, retrieved)`` documents) that has
no usable judgment, averaged over the queries it is evaluated on. A run is named when its mean
exceeds the median of the *other* runs' means by at least :data:`BIAS_MARGIN` (one unjudged
document more in every second top 10) **and** is at least :data:`BIAS_RATIO` times that median. Such a run retrieves documents the
judgment pool never saw, so its zero-imputed score is biased low against the others (Buckley,
Dimmick, Soboroff, Voorhees, "Bias and the limits of pooling", SIGIR 2006); read its bounds.

Examples
--------
>>> qrels = {"q1": {"a": 3, "b": 0, "c": 2}}
>>> runs = {"pooled": {"q1": {"a": 0.9, "b": 0.8, "c": 0.7}},
...         "novel": {"q1": {"x": 0.9, "y": 0.8, "a": 0.7}}}
>>> cov = judgments(qrels, runs, ["ndcg@3"], scale="trec_dl")
>>> [(r.name, round(r.mean_unjudged, 3)) for r in cov.runs]
[('pooled', 0.0), ('novel', 0.667)]
>>> cov.pool_bias
['novel']
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankflavor.analysis.judgments.bounds import (
    Bounds,
    MeasureBounds,
    bounds_of_tables,
    check_bounded,
    docnos_of,
    matched,
    pair_keys,
    resolve,
    zero_imputed,
)
from rankflavor.analysis.judgments.filled import Filled, base_kind, filled
from rankflavor.analysis.judgments.result import bounds_rows, table_of_bounds
from rankflavor.analysis.judgments.toprows import top_rows
from rankflavor.base.display import Shown
from rankflavor.base.frames import ALL, Frames, number_or_null
from rankflavor.base.threads import in_background
from rankflavor.engine.plan import Evaluation
from rankflavor.errors import UsageError
from rankflavor.flavor.flavor import format_number
from rankflavor.io.columns import as_numpy, plain_strings, string_array, take, to_strings
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.io.tables import Qrels, Run
from rankflavor.metrics.measure import Measure
from rankflavor.presets.irds import scale_for
from rankflavor.presets.scales import Scale

#: A run is named by the pool-bias warning when its mean unjudged@k exceeds the median of the
#: other runs' by at least this share of the top k ...
BIAS_MARGIN = 0.05
#: ... and is at least this many times that median.
BIAS_RATIO = 2.0

BIAS_RULE = (
    f"a run is named when its mean unjudged@k exceeds the median of the other runs' by >= {BIAS_MARGIN:g} "
    f"(of the top k) and is >= {BIAS_RATIO:g}x that median"
)


@dataclass(frozen=True)
class RunCoverage:
    """One run's coverage, per query (the queries both in the run and in the judgments).

    Attributes
    ----------
    name : the run's name (file name, or the key it was given under).
    k : the cutoff the coverage is measured at (None: the whole run).
    queries : query ids, in byte order.
    shown : documents in the top k per query, ``min(k, retrieved)``.
    unjudged : unjudged documents among them; ``unjudged_ranks`` their ranks.
    judged_at_k : ``(shown - unjudged) / shown``.
    top_grades : grade histogram of the judged documents in the top k (all queries).
    bounds : the run's :class:`~rankflavor.analysis.judgments.Bounds`.
    """

    name: str
    k: int | None
    queries: np.ndarray
    shown: np.ndarray
    unjudged: np.ndarray
    unjudged_ranks: list[list[int]]
    top_grades: dict[str, int]
    bounds: Bounds = field(repr=False)

    @property
    def judged_at_k(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.shown > 0, 1.0 - self.unjudged / np.maximum(self.shown, 1), 1.0)

    @property
    def mean_unjudged(self) -> float:
        """Mean over queries of the unjudged share of the top k."""
        return float(np.mean(1.0 - self.judged_at_k)) if len(self.queries) else 0.0

    @property
    def mean_judged(self) -> float:
        return 1.0 - self.mean_unjudged

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.name, "k": self.k,
            "judged_at_k": self.mean_judged, "unjudged_at_k": self.mean_unjudged,
            "unjudged_in_top_k": int(self.unjudged.sum()),
            "top_k_grades": self.top_grades,
            "bounds": [b.to_dict() for b in self.bounds],
            "per_query": {
                str(q): {"judged_at_k": float(j), "unjudged": int(u), "unjudged_ranks": ranks}
                for q, j, u, ranks in zip(self.queries, self.judged_at_k, self.unjudged, self.unjudged_ranks,
                                          strict=True)
            },
        }


@dataclass(frozen=True)
class Coverage(Frames, Shown):
    """What :func:`judgments` returns.

    Attributes
    ----------
    qrels : the judgments' source; ``scale`` the declared scale (or None); ``rel`` the relevance
        threshold used below.
    measures : the measures bounded (under the scale).
    grades : histogram of every judgment's grade.
    no_relevant : judged queries with no document of grade >= rel.
    never_retrieved : per query, the relevant documents that no run retrieved (at any depth).
    runs : one :class:`RunCoverage` per run, in the order given.
    pool_bias : the runs the pool-bias warning names (:data:`BIAS_RULE`).
    undecided : per measure (its canonical flavor string), ``{run: [runs whose mean interval overlaps it]}``.
    filled : when the judgments name several source kinds, the same bounds on the base kind's labels
        alone beside these (:mod:`rankflavor.analysis.judgments.filled`); None otherwise.
    """

    qrels: str
    scale: Scale | None
    rel: float
    measures: list[Measure]
    grades: dict[str, int]
    no_relevant: list[str]
    never_retrieved: dict[str, list[str]]
    runs: list[RunCoverage]
    pool_bias: list[str]
    undecided: dict[str, dict[str, list[str]]]
    filled: Filled | None = None

    @property
    def rule(self) -> str:
        return BIAS_RULE

    def run(self, name: str) -> RunCoverage:
        for r in self.runs:
            if r.name == name:
                return r
        raise KeyError(name)

    def to_arrow(self, per_query: bool = False) -> pa.Table:
        """Every run's bounds beside its coverage of the top k as an Arrow table (:func:`rankflavor.base.frames.coverage_table`); ``to_pandas``/``to_polars`` convert it."""
        return coverage_table(self, per_query)

    def to_dict(self) -> dict[str, Any]:
        return {
            "qrels": self.qrels,
            "scale": None if self.scale is None else self.scale.name,
            "rel": self.rel,
            "grades": self.grades,
            "queries_with_no_relevant": self.no_relevant,
            "relevant_never_retrieved": {"count": sum(map(len, self.never_retrieved.values())),
                                         "per_query": self.never_retrieved},
            "pool_bias": {"runs": self.pool_bias, "rule": BIAS_RULE},
            "undecided": self.undecided,
            "runs": [r.to_dict() for r in self.runs],
            **({} if self.filled is None else {"filled": self.filled.to_dict()}),
        }


def run_name(run: Any, key: str | None, table: Any) -> str:
    """A run's name in the report: its key, else a path's last part (a directory of part files by
    its own name), else the table's (:class:`~rankflavor.io.tables.Run` or Spark's) tag or source."""
    if key is not None:
        return key
    if isinstance(run, (str, os.PathLike)):
        return os.path.basename(os.fspath(run).rstrip("/"))
    return str(table.tag or table.source)


def _keys(query: Any, doc: Any) -> pa.Array:
    return pair_keys(_strings(query), _strings(doc))


def coverage_of(plan: Evaluation, measure: Measure) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[list[int]],
                                                          dict[str, int], pa.Array]:
    """Per evaluated query: ids, shown, unjudged count and ranks; top-k grade histogram; and the
    (query, doc) keys of every judged run row (for the relevant documents no run retrieved)."""
    lower = zero_imputed(measure)
    top = top_rows(plan, lower, measure.k)
    aligned = plan.aligned(str(measure.flavor.duplicates))
    evaluated = aligned.evaluated
    codes = np.flatnonzero(evaluated)
    n = aligned.n_queries
    shown = np.bincount(top.q, minlength=n)
    miss = ~top.judged
    unjudged = np.bincount(top.q[miss], minlength=n)
    at = np.flatnonzero(miss & evaluated[top.q])
    ranks: dict[int, list[int]] = {}
    for qc, rk in zip(top.q[at].tolist(), top.rank[at].tolist(), strict=True):
        ranks.setdefault(qc, []).append(int(rk))
    hit = top.judged & evaluated[top.q]
    grade = ranked_grades(aligned, top.row[hit])
    values, counts = np.unique(grade, return_counts=True)
    hist = {format_number(float(v)): int(c) for v, c in zip(values, counts, strict=True)}
    hist["unjudged"] = int(unjudged[codes].sum())
    jr = aligned.judged_row
    keys = _keys(string_array(list(aligned.query_ids[aligned.run_q[jr]].astype(str))),
                 docnos_of(aligned, jr))
    return (aligned.query_ids[codes], shown[codes], unjudged[codes], [sorted(ranks.get(int(c), [])) for c in codes],
            hist, keys)


def pool_bias(means: Mapping[str, float]) -> list[str]:
    """The runs :data:`BIAS_RULE` names, from each run's mean unjudged@k.

    >>> pool_bias({"bm25": 0.01, "rm3": 0.03, "dense": 0.25})
    ['dense']
    >>> pool_bias({"a": 0.3})   # nothing to compare with
    []
    """
    out = []
    for name, u in means.items():
        others = [v for n, v in means.items() if n != name]
        if not others:
            continue
        base = float(np.median(others))
        if u - base >= BIAS_MARGIN and u >= BIAS_RATIO * base:
            out.append(name)
    return out


def undecided(runs: list[RunCoverage]) -> dict[str, dict[str, list[str]]]:
    """Per measure (keyed by its canonical flavor string: two flavors of one metric are two
    measures), each run whose mean interval overlaps another run's, with those runs."""
    out: dict[str, dict[str, list[str]]] = {}
    if len(runs) < 2:
        return out
    for i, m in enumerate(runs[0].bounds.measures):
        label = str(m.measure)
        found: dict[str, list[str]] = {}
        for r in runs:
            mine: MeasureBounds = r.bounds.measures[i]
            over = [o.name for o in runs if o is not r and mine.overlaps(o.bounds.measures[i])]
            if over:
                found[r.name] = over
        out[label] = found
    return out


def judgments(
    qrels: Any,
    runs: Any,
    metrics: str | Measure | Iterable[str | Measure] = ("ndcg@10",),
    scale: str | Scale | None = None,
    rel: float | None = None,
) -> Coverage:
    """Coverage of each run's top k by the judgments, with bounds on each measure.

    Parameters
    ----------
    qrels : path, dict or DataFrame (read once).
    runs : one run, a list of runs (paths, dicts, DataFrames), or ``{name: run}``.
    metrics : the measures to bound; the first one's cutoff (and ordering) is the coverage's k.
    scale : label scale name or :class:`~rankflavor.analysis.judgments.Scale`; every grade must be on it.
    rel : relevance threshold for "relevant" below (default: the scale's, else 1).

    Returns
    -------
    Coverage
        Per run and per query judged@k, the unjudged documents of the top k and their ranks;
        the grade histogram; queries with nothing relevant; relevant documents no run
        retrieved; the pool-bias warning (:data:`BIAS_RULE`); the bounds and which runs the
        judgments leave undecided. :func:`rankflavor.spark.judgments_spark` gives the same
        from Spark.
    """
    sc, measures, threshold = judged_measures(qrels, metrics, scale, rel)
    # The judgments are read on a thread of their own while the first run is read (as evaluate does).
    q_reading = in_background(as_qrels, qrels) if isinstance(qrels, (str, os.PathLike)) else None
    named = named_runs(runs)
    first = as_run(named[0][1])
    q_table = q_reading.result() if q_reading is not None else as_qrels(qrels)
    if sc is not None:
        sc.check(q_table)
    out: list[RunCoverage] = []
    retrieved: list[pa.Array] = []
    tables: dict[str, Run] = {}  # each run as read, for the bounds on one source kind's labels alone
    for i, (key, run) in enumerate(named):
        r_table = first if i == 0 else as_run(run)
        plan = Evaluation(q_table, r_table)
        try:
            matched(plan, measures, r_table)
            ids, shown, unj, ranks, hist, keys = coverage_of(plan, measures[0])
            b = bounds_of_tables(q_table, r_table, measures, sc, plan=plan)
        finally:
            plan.close()
        retrieved.append(keys)
        name = run_name(run, key, r_table)
        if any(r.name == name for r in out):  # (two runs read from dicts, or two files of one name)
            name = f"{name}#{i + 1}"
        out.append(RunCoverage(name, measures[0].k, ids, shown, unj, ranks, hist, b))
        tables[name] = r_table
    grades, no_rel, never = judgment_facts(q_table, threshold, retrieved)
    fill = None
    found = base_kind(q_table)
    if found is not None:  # several source kinds: the same bounds on the base kind's labels alone
        from rankflavor.io.labels.select import select_labels

        before = judgments(select_labels(q_table, found[0]), tables, measures, scale=sc, rel=threshold)
        fill = filled(*found, before.runs, out)
    return Coverage(q_table.source, sc, threshold, measures, grades, no_rel, never, out,
                    pool_bias({r.name: r.mean_unjudged for r in out}), undecided(out), fill)


def judged_measures(qrels: Any, metrics: str | Measure | Iterable[str | Measure], scale: str | Scale | None,
                    rel: float | None) -> tuple[Scale | None, list[Measure], float]:
    """What :func:`judgments` settles before reading a row: the scale (named, or an ir_datasets
    dataset's documented grades), the measures under it (a measure whose interval is not derived
    refused by name) and the relevance threshold (``rel``, else the scale's, else 1)."""
    sc = scale_for(scale, qrels)
    measures = resolve(metrics, sc)
    check_bounded(measures)
    return sc, measures, float(rel) if rel is not None else (sc.rel if sc is not None else 1.0)


def named_runs(runs: Any) -> list[tuple[str | None, Any]]:
    """``runs`` as ``(name or None, run)``: one run, a list of them, or ``{name: run}``."""
    if isinstance(runs, Mapping) and not _is_run_dict(runs):
        named: list[tuple[str | None, Any]] = [(str(k), v) for k, v in runs.items()]
    elif isinstance(runs, (str, os.PathLike, Run, Mapping)) or hasattr(runs, "columns"):
        named = [(None, runs)]
    else:
        named = [(None, v) for v in runs]
    if not named:
        raise UsageError("runs: give at least one run")
    return named


def _is_run_dict(obj: Any) -> bool:
    """``{query: {doc: score}}`` (one run), as opposed to ``{name: run}``."""
    if not isinstance(obj, Mapping) or not obj:
        return False
    first = next(iter(obj.values()))
    return isinstance(first, Mapping) and bool(first) and not isinstance(next(iter(first.values())), Mapping)


def judgment_facts(qrels: Qrels, rel: float, retrieved: list[pa.Array]) -> tuple[dict[str, int], list[str],
                                                                                  dict[str, list[str]]]:
    grade = np.asarray(qrels.grade, dtype=np.float64)
    values, counts = np.unique(grade, return_counts=True)
    hist = {format_number(float(v)): int(c) for v, c in zip(values, counts, strict=True)}
    query = _strings(qrels.query)
    is_rel = grade >= rel
    rel_rows = np.flatnonzero(is_rel)
    all_q = pc.unique(query)
    with_rel = pc.unique(take(query, rel_rows))
    no_rel = sorted(to_strings(all_q.filter(pc.invert(pc.is_in(all_q, value_set=with_rel)))))
    rel_q, rel_d = take(query, rel_rows), take(_strings(qrels.doc), rel_rows)
    keys = pair_keys(rel_q, rel_d)
    seen = np.zeros(len(rel_rows), dtype=bool)
    for k in retrieved:
        seen |= as_numpy(pc.is_in(keys, value_set=k))
    unseen = np.flatnonzero(~seen)
    never: dict[str, list[str]] = {}
    for q, d in zip(to_strings(take(rel_q, unseen)), to_strings(take(rel_d, unseen)), strict=True):
        never.setdefault(str(q), []).append(str(d))
    return hist, no_rel, {q: sorted(d) for q, d in sorted(never.items())}


def _strings(a: Any) -> pa.Array:
    a = plain_strings(a)
    return a if pa.types.is_string(a.type) else a.cast(pa.string())


def ranked_grades(aligned: Any, rows: np.ndarray) -> np.ndarray:
    """The judged grades of aligned run ``rows`` (for the top-k histogram)."""
    at = np.searchsorted(aligned.judged_row, rows)
    return np.asarray(aligned.judged_grade[at], dtype=np.float64)


def coverage_table(cov: Coverage, per_query: bool = False) -> pa.Table:
    """Every run's bounds (as :func:`bounds_table`) beside its coverage of the top k.

    Summary rows carry the run's mean ``judged_at_k``, its ``unjudged`` documents in the top k
    and ``pool_bias`` (named by the pool-bias rule); per-query rows that query's judged@k and
    unjudged count (null where the run does not retrieve the query).

    When the judgments mix label sources and a base kind applies (``cov.filled``, as in the JSON's
    ``filled``), summary rows also carry the same bounds on the base kind's labels alone:
    ``base_kind, base_lower, base_upper, base_unjudged, base_queries`` (null on per-query rows);
    the row's own ``lower``/``upper``/``unjudged`` are those with every label chosen."""
    rows: list[tuple[Any, ...]] = []
    judged: list[float | None] = []
    unjudged: list[int | None] = []
    k: list[int | None] = []
    bias: list[bool] = []
    base: dict[str, tuple[str, list[Any]]] = {}
    if cov.filled is not None:
        base = {n: (kind, []) for n, kind in (("base_kind", "str"), ("base_lower", "f64"), ("base_upper", "f64"),
                                               ("base_unjudged", "i64"), ("base_queries", "i64"))}
        fill = {(f.run, m.measure): (f, m) for f in cov.filled.runs for m in f.measures}
    for r in cov.runs:
        per = {str(q): (float(j), int(u)) for q, j, u in zip(r.queries, r.judged_at_k, r.unjudged, strict=True)}
        for row in bounds_rows(r.name, r.bounds, per_query):
            rows.append(row)
            got = (r.mean_judged, int(r.unjudged.sum())) if row[3] == ALL else per.get(row[3], (None, None))
            judged.append(got[0])
            unjudged.append(got[1])
            k.append(r.k)
            bias.append(r.name in cov.pool_bias)
            if base:
                f, m = fill[(r.name, row[2])] if row[3] == ALL else (None, None)
                values = (None, None, None, None, None) if f is None or m is None else (
                    cov.filled.base, number_or_null(m.before[0]), number_or_null(m.before[1]), f.holes_before, f.queries_before)  # type: ignore[union-attr]
                for column, value in zip(base.values(), values, strict=True):
                    column[1].append(value)
    return table_of_bounds(rows, {"k": ("i64", k), "judged_at_k": ("f64", judged), "unjudged": ("i64", unjudged),
                                "pool_bias": ("bool", bias), **base})


__all__ = ["BIAS_MARGIN", "BIAS_RATIO", "BIAS_RULE", "Coverage", "RunCoverage", "coverage_of", "judged_measures", "judgment_facts", "judgments", "named_runs", "pool_bias", "run_name", "undecided"]
