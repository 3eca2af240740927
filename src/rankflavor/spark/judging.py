"""``judgments`` on the Spark engine: coverage and bounds found in the Spark task that holds each
query, means and the pool-bias rule decided on the driver.

Everything :func:`rankflavor.judgments` reports of a query depends on that query's rows alone
(its top k, its unjudged documents, the gradings at each end of its interval), so one pass over
buckets of whole queries finds it with the local code: per run, the evaluations the bounds read
(zero-imputed, as given, condensed, RBP's residual) by the local engine's task
(:func:`rankflavor.spark.worker.evaluate_systems`, whose rows the driver merges as ``eval``'s
are, ``missing`` policy and errors included), and the per-query intervals and coverage by
:func:`rankflavor.analysis.judgments.bounds.measures_bounds` and
:func:`rankflavor.analysis.judgments.coverage.coverage_of` on the same bucket; the judgments' own facts
(grade histogram, queries with nothing relevant, relevant documents no run retrieved) by
:func:`rankflavor.analysis.judgments.coverage.judgment_facts` on the bucket's judgments and every run's
rows of them. The driver merges rows per query (byte order, as locally) and takes the means by
the metric's summary, as :func:`rankflavor.analysis.judgments.bounds.measures_bounds` does.

Not on this engine: the per-document detail behind :meth:`Bounds.document_table
<rankflavor.analysis.judgments.Bounds.document_table>` (it stays in the tasks: the table is empty), and
judgments of several label source kinds (the Spark reader reads none).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankflavor.analysis.judgments.bounds import Bounds, MeasureBounds, measures_bounds, values_at, zero_imputed
from rankflavor.analysis.judgments.coverage import (
    Coverage,
    RunCoverage,
    coverage_of,
    judged_measures,
    judgment_facts,
    named_runs,
    pool_bias,
    run_name,
    undecided,
)
from rankflavor.analysis.judgments.scope import Rules, scale_grades
from rankflavor.engine.aggregate import summarize
from rankflavor.engine.merge import byte_order
from rankflavor.engine.plan import Evaluation
from rankflavor.engine.results import MeasureResult
from rankflavor.errors import EvaluationError, RankflavorError
from rankflavor.io.tables import Qrels
from rankflavor.metrics.measure import Measure
from rankflavor.presets.scales import Scale
from rankflavor.spark import worker
from rankflavor.spark.backend import bucket_count, merge_system, per_bucket, task_of
from rankflavor.spark.read import SparkTable

#: Row kinds of a judging task, beside the evaluation's (:mod:`rankflavor.spark.worker`):
#: ``lo``/``hi`` a query's interval ends (``measure``: which bounded measure), ``cover`` a query's
#: coverage (``value`` shown; ``text`` its unjudged count and ranks), ``top`` the bucket's top-k
#: grade histogram, ``facts`` the bucket's judgment facts (system -1), ``bound_error`` an error
#: of the bounds.
LOW, HIGH, COVER, TOP, FACTS, BOUND_ERROR = "lo", "hi", "cover", "top", "facts", "bound_error"


@dataclass(frozen=True)
class _Job:
    """What every judging task knows: one evaluation task per run (the evaluated measures:
    :func:`evaluated`), the bounded measures (``missing=skip``: the driver decides the missing
    queries), the scale and the relevance threshold."""

    tasks: tuple[worker.Task, ...]
    measures: tuple[Measure, ...]
    scale: Scale | None
    rel: float


def evaluated(measure: Measure) -> list[Measure]:
    """What the bounds of ``measure`` read of the engine: the zero-imputed measure, the measure
    as given, the condensed one and (RBP) the residual, as
    :func:`rankflavor.analysis.judgments.bounds.measures_bounds` evaluates them."""
    lower = zero_imputed(measure)
    out = [lower, measure, measure.with_knobs(unjudged="condensed", unjudged_grade="none")]
    if measure.spec.residual is not None:
        out.append(Measure(measure.spec.residual, lower.k, lower.flavor))
    return out


def _rows(system: int, kind: str, count: int, **columns: Any) -> pa.Table:
    return worker.kind_rows(worker.SYSTEMS_ARROW_SCHEMA, kind, count, {"system": [system] * count, **columns})


def _system_rows(job: _Job, s: int, qrels: Qrels, rows: pa.Table, bucket: int) -> tuple[list[pa.Table], pa.Array | None]:
    """One run's coverage and interval rows on a bucket (none where it shares no query with the
    judgments there), and the (query, doc) keys of its judged rows."""
    run = worker.run_table(job.tasks[s], rows)
    plan = Evaluation(qrels, run)
    try:
        if not plan.aligned(str(job.measures[0].flavor.duplicates)).evaluated.any():
            return [], None
        ids, shown, unjudged, ranks, hist, keys = coverage_of(plan, job.measures[0])
        found = measures_bounds(plan, job.measures, job.scale)
    except RankflavorError as error:
        return [_rows(s, BOUND_ERROR, 1, text=[worker.error_text(error, bucket, True)])], None
    finally:
        plan.close()
    n = len(ids)
    queries = [str(q) for q in ids]
    out = [_rows(s, COVER, n, query=queries, value=shown.astype(np.float64),
                 text=[json.dumps([int(u), r]) for u, r in zip(unjudged, ranks, strict=True)]),
           _rows(s, TOP, 1, text=[json.dumps(hist)])]
    for j, b in enumerate(found):
        names = [str(q) for q in b.queries]
        out += [_rows(s, LOW, len(names), measure=[j] * len(names), query=names, value=b.lower),
                _rows(s, HIGH, len(names), measure=[j] * len(names), query=names, value=b.upper)]
    return out, keys


def judge_bucket(job: _Job, bucket: int, run_rows: pa.Table, qrels_rows: pa.Table) -> pa.Table:
    """One bucket of every run (``system`` column) and the judgments, as
    :data:`~rankflavor.spark.worker.SYSTEMS_SCHEMA` rows: each run's evaluation rows
    (:func:`rankflavor.spark.worker.evaluate_systems`), its coverage and interval rows, and the
    bucket's judgment facts."""
    qrels = worker.qrels_table(job.tasks[0], qrels_rows)
    out = [worker.evaluate_systems(job.tasks, bucket, run_rows, qrels_rows, qrels)]
    retrieved = []
    for s, rows in enumerate(worker.by_system(run_rows, len(job.tasks))):
        found, keys = _system_rows(job, s, qrels, rows, bucket)
        out += found
        if keys is not None:
            retrieved.append(keys)
    grades, no_rel, never = judgment_facts(qrels, job.rel, retrieved)
    out.append(_rows(-1, FACTS, 1, text=[json.dumps({"grades": grades, "no_rel": no_rel, "never": never})]))
    return pa.concat_tables(out)


def _histogram(parts: Sequence[dict[str, int]], last: str | None = None) -> dict[str, int]:
    """Histograms keyed by a formatted grade summed, in grade order (``last``: a key after them)."""
    total: dict[str, int] = {}
    for part in parts:
        for key, count in part.items():
            total[key] = total.get(key, 0) + int(count)
    grades = sorted((k for k in total if k != last), key=float)
    out = {k: total[k] for k in grades}
    if last is not None:
        out[last] = total.get(last, 0)
    return out


def _merged_run(job: _Job, table: pa.Table, s: int, name: str, qrels: SparkTable, run: SparkTable,
                measures: Sequence[Measure], buckets: int) -> RunCoverage:
    """Run ``s``'s rows of every task as its coverage, named ``name``."""
    flat = [m for measure in measures for m in evaluated(measure)]
    rows = table.filter(pc.equal(table.column("system"), s))
    try:
        merged, _ = merge_system(rows, job.tasks[s], qrels, run, flat, buckets)
    except EvaluationError as exc:
        if "no query is both" in str(exc):  # (as rankflavor.analysis.judgments.bounds.matched names the run)
            raise EvaluationError(f"{run.source}: {exc}") from None
        raise
    failed = worker.rows_of(rows, BOUND_ERROR)
    if failed.num_rows:  # (the evaluations passed: the bounds' own error, from the first bucket met)
        worker.raise_error(str(worker.column(failed, "text")[0]))
    cover = worker.rows_of(rows, COVER)
    ids = worker.column(cover, "query").astype(object)
    order = byte_order(ids)
    if order is None:  # (already in byte order)
        order = np.arange(len(ids))
    texts = [json.loads(str(t)) for t in worker.column(cover, "text")]
    shown = np.asarray(worker.column(cover, "value"), dtype=np.int64)[order]
    unjudged = np.array([texts[i][0] for i in order], dtype=np.int64)
    ranks = [list(texts[i][1]) for i in order]
    hist = _histogram([json.loads(str(t)) for t in worker.column(worker.rows_of(rows, TOP), "text")], last="unjudged")
    found, at = [], 0
    for j, measure in enumerate(measures):
        parts = merged[at: at + len(evaluated(measure))]
        at += len(parts)
        # (the bounded metrics' summaries are means: no judgment grade enters them)
        found.append(_bounds(job, parts, rows, j, np.zeros(0)))
    return RunCoverage(name, measures[0].k, ids[order], shown, unjudged, ranks, hist,
                       Bounds(run.source, found, _NO_QRELS, job.scale))


_NO_QRELS = Qrels(pa.nulls(0, pa.string()), pa.nulls(0, pa.string()), np.zeros(0), "spark")


def _bounds(job: _Job, parts: Sequence[MeasureResult], rows: pa.Table, j: int,
            judged: np.ndarray) -> MeasureBounds:
    """One measure's bounds from its merged evaluations and the tasks' interval ends, as
    :func:`rankflavor.analysis.judgments.bounds.measures_bounds` finishes them locally."""
    lower, value, cond = parts[:3]
    queries = lower.queries
    where = {str(q): i for i, q in enumerate(queries)}
    lo = np.asarray(lower.values, dtype=np.float64).copy()
    up = lo.copy()
    for kind, target in ((LOW, lo), (HIGH, up)):
        ends = worker.rows_of(rows, kind)
        ends = ends.filter(pc.equal(ends.column("measure"), j))
        for q, v in zip(worker.column(ends, "query"), worker.column(ends, "value"), strict=True):
            target[where[str(q)]] = v
    lower_m = lower.measure
    grades = Rules.of(lower_m, scale_grades(lower_m, None if job.scale is None else job.scale.grades)).grades

    def mean(v: np.ndarray) -> float:
        return summarize(lower_m, v, lower.status, judged)[0]

    residual = residual_mean = None
    if len(parts) > 3:
        residual = values_at(parts[3], queries)
        residual_mean = mean(residual)
    return MeasureBounds(value.measure, lower_m, queries, lower.status, lo, values_at(value, queries), up,
                         values_at(cond, queries), mean(lo), value.summary, mean(up), cond.summary,
                         float(grades.max()), None, tuple(float(g) for g in grades), residual, residual_mean)


def judgments_spark(qrels: Any, runs: Any, metrics: Any = ("ndcg@10",), scale: Any = None, rel: float | None = None,
                    *, spark: Any = None, buckets: int | None = None) -> Coverage:
    """:func:`rankflavor.judgments` with Spark: the same :class:`~rankflavor.analysis.judgments.Coverage`
    (but for the per-document detail behind ``Bounds.document_table``, which stays in the
    tasks). ``qrels`` and ``runs``: paths Spark resolves (files, directories of part files,
    globs, Parquet) or Spark DataFrames; ``runs`` one run, a list of them or ``{name: run}``.
    ``spark``: the session (default: the DataFrames' own, or
    :func:`rankflavor.spark.local_session`); ``buckets`` as for :func:`rankflavor.spark.evaluate_spark`."""
    sc, measures, threshold = judged_measures(qrels, metrics, scale, rel)
    source, covered, (grades, no_rel, never) = judge_spark(qrels, named_runs(runs), measures, sc, threshold,
                                                           spark=spark, buckets=buckets)
    return Coverage(source, sc, threshold, measures, grades, no_rel, never, covered,
                    pool_bias({r.name: r.mean_unjudged for r in covered}), undecided(covered))


def judge_spark(qrels: Any, named: Sequence[tuple[str | None, Any]], measures: Sequence[Measure],
                scale: Scale | None, rel: float, *, spark: Any = None, buckets: int | None = None
                ) -> tuple[str, list[RunCoverage], tuple[dict[str, int], list[str], dict[str, list[str]]]]:
    """What :func:`rankflavor.judgments` computes, with Spark: the judgments' source, one
    :class:`~rankflavor.analysis.judgments.RunCoverage` per run (``named``: ``(name or None, run)``) and
    the judgment facts (grade histogram, queries with nothing relevant, relevant documents no run
    retrieved). Inputs are paths Spark resolves (files, directories of parts, globs, Parquet) or
    Spark DataFrames, read and checked by one Spark job (the scale's grades by a second); one job
    then finds everything per bucket of queries (module docstring)."""
    from rankflavor.spark import spark_inputs

    runs = [run for _, run in named]
    with spark_inputs(qrels, runs, spark, scale) as (session, q_table, r_tables):
        n = bucket_count(session, max(sum(r.rows for r in r_tables), q_table.rows), buckets)
        flat = [m for measure in measures for m in evaluated(measure)]
        tasks = tuple(task_of(flat, q_table, r) for r in r_tables)
        skip = tuple(m.with_knobs(missing="skip") for m in measures)
        job = _Job(tasks, skip, scale, rel)
        table = per_bucket(partial(judge_bucket, job), q_table.frame, [r.frame for r in r_tables], n,
                           worker.SYSTEMS_SCHEMA, worker.SYSTEMS_ARROW_SCHEMA)
        out: list[RunCoverage] = []
        for s, ((key, run), r_table) in enumerate(zip(named, r_tables, strict=True)):
            name = run_name(run, key, r_table)
            if any(r.name == name for r in out):  # (as locally: two runs of one name)
                name = f"{name}#{s + 1}"
            out.append(_merged_run(job, table, s, name, q_table, r_table, measures, n))
        facts = [json.loads(str(t)) for t in worker.column(worker.rows_of(table, FACTS), "text")]
        source = q_table.source
    never: dict[str, list[str]] = {}
    for f in facts:
        for q, docs in f["never"].items():
            never.setdefault(q, []).extend(docs)
    no_rel = sorted({q for f in facts for q in f["no_rel"]})
    return source, out, (_histogram([f["grades"] for f in facts]), no_rel,
                         {q: sorted(d) for q, d in sorted(never.items())})



__all__ = ["evaluated", "judge_bucket", "judge_spark", "judgments_spark"]
