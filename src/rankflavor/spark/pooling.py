"""``pool`` on the Spark engine: the candidates of every query found in the Spark task that holds
the query, ordered and cut to the budget on the driver.

A candidate's priority depends on its own query alone (:mod:`rankflavor.pool`), but for one
number: the queries in each run's mean (``n_mean``), by which every shrink is divided. So two
passes over the same buckets: the first counts each run's queries in its mean and whether it
shares a query with the judgments, the second finds each bucket's candidates with those global
counts, by the local code (:func:`rankflavor.analysis.judgments.pool.run_part`, :func:`rankflavor.analysis.judgments.pool.candidates`).
What reaches the driver is one row per candidate and per (bucket, run) a few counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from rankflavor.analysis.judgments.pool import (
    Pool,
    candidates,
    choose,
    pool_counts,
    pool_measure,
    run_mean_count,
    run_part,
)
from rankflavor.errors import InputError
from rankflavor.metrics.measure import Measure
from rankflavor.spark import worker
from rankflavor.spark.backend import bucket_count, per_bucket
from rankflavor.spark.read import SparkTable

if TYPE_CHECKING:
    from rankflavor.presets.scales import Scale

_FIELDS = ("kind", "system", "query", "doc", "judged", "runs", "best", "priority", "n", "m")
_TYPES = (pa.string(), pa.int32(), pa.string(), pa.string(), pa.bool_(), pa.int64(), pa.int64(), pa.float64(),
          pa.int64(), pa.int64())
#: The rows a pooling task answers with: ``mean`` (per run: ``n`` queries in its mean, ``m`` 1 when
#: it shares a query with the judgments), ``run`` (per run: ``n`` top-k rows, ``m`` unjudged among
#: them) and ``candidate`` (a pooled (query, doc) pair).
SCHEMA = ", ".join(f"{n} {t}" for n, t in zip(_FIELDS, ("string", "int", "string", "string", "boolean", "long", "long",
                                                      "double", "long", "long"), strict=True))
ARROW_SCHEMA = pa.schema(list(zip(_FIELDS, _TYPES, strict=True)))


@dataclass(frozen=True)
class _Job:
    """What every pooling task knows: the runs' and judgments' sources, the measure, grades, depth,
    whether pooling is from scratch, and (second pass) each run's queries in its mean."""

    tasks: tuple[worker.Task, ...]
    measure: Measure
    grades: tuple[float, ...]
    depth: int
    scratch: bool
    n_mean: tuple[int, ...] | None = None


def _rows(kind: str, count: int, **columns: Any) -> pa.Table:
    return worker.kind_rows(ARROW_SCHEMA, kind, count, columns)


def pool_bucket(job: _Job, bucket: int, run_rows: pa.Table, qrels_rows: pa.Table) -> pa.Table:
    """One bucket of every run (``system`` column) and the judgments: the first pass's ``mean``
    rows (``job.n_mean`` None), else the ``run`` and ``candidate`` rows."""
    grades = np.asarray(job.grades, dtype=np.float64)
    out = [_rows("mean", 0)]
    parts = []
    qrels = worker.qrels_table(job.tasks[0], qrels_rows)  # (once: every run reads the same judgments)
    for s, (task, rows) in enumerate(zip(job.tasks, worker.by_system(run_rows, len(job.tasks)), strict=True)):
        run = worker.run_table(task, rows)
        if job.n_mean is None:
            n, shares = run_mean_count(run, qrels, job.measure, grades, job.scratch)
            out.append(_rows("mean", 1, system=[s], n=[n], m=[int(shares)]))
            continue
        part = run_part(run, qrels, job.measure, grades, job.depth, scratch=job.scratch, n_mean=job.n_mean[s])
        out.append(_rows("run", 1, system=[s], n=[len(part["doc"])], m=[int((~part["judged"]).sum())]))
        parts.append(part)
    if parts:
        c = candidates(parts, len(grades))
        out.append(_rows("candidate", len(c["query"]), query=c["query"].tolist(), doc=c["doc"].tolist(),
                         judged=c["judged"].tolist(), runs=c["runs"], best=c["best"], priority=c["priority"]))
    return pa.concat_tables(out)


def _pass(job: _Job, qrels: SparkTable, runs: Sequence[SparkTable], buckets: int) -> pa.Table:
    return per_bucket(partial(pool_bucket, job), qrels.frame, [r.frame for r in runs], buckets, SCHEMA, ARROW_SCHEMA)


def _sums(table: pa.Table, column: str, n_runs: int) -> np.ndarray:
    system = np.asarray(worker.column(table, "system"), dtype=np.int64)
    values = np.asarray(worker.column(table, column), dtype=np.int64)
    return np.bincount(system, weights=values, minlength=n_runs).astype(np.int64)


def pool_spark(runs: Sequence[Any], depth: int = 10, qrels: Any = None, budget: int | None = None,
               scale: str | Scale | None = None, gain: str = "linear", strategy: str = "gap", seed: int = 0,
               *, spark: Any = None, buckets: int | None = None) -> Pool:
    """:func:`rankflavor.pool` with Spark: the same :class:`~rankflavor.analysis.judgments.pool.Pool` (candidates,
    priorities, order, counts). ``runs`` and ``qrels``: paths Spark resolves (files, directories
    of part files, globs, Parquet) or Spark DataFrames."""
    from rankflavor.spark import spark_inputs

    sc, measure, grades = pool_measure(runs, depth, qrels, budget, scale, gain, strategy)
    with spark_inputs(qrels, runs, spark, sc) as (spark, q_table, r_tables):
        n = bucket_count(spark, max(sum(r.rows for r in r_tables), q_table.rows), buckets)
        tasks = tuple(worker.Task((), q_table.source, r.source, q_table.from_file, r.from_file) for r in r_tables)
        job = _Job(tasks, measure, tuple(float(g) for g in grades), depth, scratch=q_table.rows == 0)
        first = worker.rows_of(_pass(job, q_table, r_tables, n), "mean")
        if not job.scratch:
            shares = _sums(first, "m", len(r_tables))
            for r, s in zip(r_tables, shares, strict=True):
                if not s:  # (the local engine's error, for the first run that shares none)
                    raise InputError(r.source, None, f"shares no query with the judgments {q_table.source}; "
                                     "pool without them to pool this run from scratch")
        n_mean = tuple(int(x) for x in _sums(first, "n", len(r_tables)))
        second = _pass(_Job(tasks, measure, job.grades, depth, job.scratch, n_mean), q_table, r_tables, n)
    found = worker.rows_of(second, "candidate")
    cands = {name: worker.column(found, name) for name in
             ("query", "doc", "judged", "runs", "best", "priority")}
    cands["query"], cands["doc"] = cands["query"].astype(object), cands["doc"].astype(object)
    run_rows = worker.rows_of(second, "run")
    top_k, unjudged = _sums(run_rows, "n", len(r_tables)), _sums(run_rows, "m", len(r_tables))
    chosen = choose(cands, budget, strategy, seed)
    counts = pool_counts(runs, [r.source for r in r_tables], top_k, unjudged, cands, chosen)
    return Pool(cands["query"][chosen], cands["doc"][chosen], cands["priority"][chosen], cands["runs"][chosen],
                cands["best"][chosen], depth, budget, counts)
