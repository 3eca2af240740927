"""Spark's part of evaluating: partition by query, run the local engine per bucket, collect, merge.

Both inputs are bucketed by a hash of the query id and co-grouped, so that one task receives
every run row and every judgment of its queries (:mod:`rankflavor.spark.worker`); only per-query
rows come back to the driver, which merges them as chunked evaluation merges its chunks
(:mod:`rankflavor.engine.merge`): the ``missing`` policy and every summary are decided once, over all
queries, by the local engine's own code.

Errors are data until the driver: a task answers with the first typed error it met and the index
of the measure it stopped at. The one-shot engine would have stopped at the smallest such index;
the buckets stopped there hold every row that error counts or names (the other buckets passed
that measure), so one bucket's error is raised as it is, and an error met in several buckets is
met again by one task over their union, whose message then counts and names them all (on
that error path one task holds those buckets' rows).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields, replace
from functools import partial, reduce
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankflavor.align import Counts
from rankflavor.analysis.check.findings import shown
from rankflavor.engine.aggregate import require_common_queries
from rankflavor.engine.merge import byte_sorted, merge_measure, sum_counts
from rankflavor.engine.results import MeasureResult
from rankflavor.errors import RankflavorError, UsageError
from rankflavor.metrics.measure import Measure
from rankflavor.spark import worker
from rankflavor.spark.read import SparkTable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: Rows of the larger input per bucket, at most, when the session's shuffle partitions are fewer
#: buckets than that needs: a bucket is one task's memory.
ROWS_PER_BUCKET = 2_000_000


#: A query's rows (every run's and the judgments' together) that one task may hold, at most: a
#: query is evaluated whole in one task, so a larger one is an error naming it, not an
#: out-of-memory in a Python worker (issue 35). About 100 bytes a row as Arrow with its ids: 20M
#: rows are some 2 GB in one worker. The session's ``spark.rankflavor.maxQueryRows`` changes it.
MAX_QUERY_ROWS = 20_000_000
QUERY_ROWS_CONF = "spark.rankflavor.maxQueryRows"


def max_query_rows(spark: SparkSession) -> int:
    """The session's :data:`QUERY_ROWS_CONF`, else :data:`MAX_QUERY_ROWS`."""
    text = spark.conf.get(QUERY_ROWS_CONF, None) or str(MAX_QUERY_ROWS)
    try:
        limit = int(text)
    except ValueError:
        limit = 0
    if limit < 1:
        raise UsageError(f"{QUERY_ROWS_CONF}: expected a whole number of rows >= 1, received {text!r}")
    return limit


def check_query_rows(spark: SparkSession, inputs: Sequence[tuple[DataFrame, int]]) -> None:
    """Refuse, naming it, a query whose rows in ``inputs`` (``(frame, rows)``: the judgments and
    every run, ``q`` the query column) pass :func:`max_query_rows`. Costs one aggregation job,
    only when the inputs together hold more rows than that (no query can otherwise)."""
    from pyspark.sql import functions as F

    limit = max_query_rows(spark)
    if sum(rows for _, rows in inputs) <= limit:
        return
    queries = reduce(lambda a, b: a.unionByName(b), [frame.select("q") for frame, _ in inputs])
    big = (queries.groupBy("q").count().filter(F.col("count") > limit)
           .orderBy(F.desc("count"), "q").limit(3).collect())
    if big:
        more = f" (and {len(big) - 1} more at least)" if len(big) > 1 else ""
        raise UsageError(
            f"query {shown(str(big[0]['q']))} has {int(big[0]['count']):,} rows (its runs' and judgments' together)"
            f"{more}, more than one Spark task holds ({QUERY_ROWS_CONF}={limit:,}): each query is evaluated whole in "
            f"one task. Cut the runs (depth), or raise the limit with --spark-conf {QUERY_ROWS_CONF}=N where the "
            "executors' Python workers have the memory (about 100 bytes a row)")


def _task(work: Callable[[int, pa.Table, pa.Table], pa.Table], index: dict[int, int], key: tuple[Any, ...],
          run_rows: pa.Table, qrels_rows: pa.Table) -> pa.Table:
    return work(index[int(key[0].as_py())], run_rows.drop_columns(["bucket"]), qrels_rows.drop_columns(["bucket"]))


def partition_keys(spark: SparkSession, partitions: int) -> list[int]:
    """For each partition ``p`` of ``partitions``, a key (a long) that Spark's hash partitioning
    of a long column into ``partitions`` sends to ``p``.

    Spark places a row of a shuffle by ``pmod(hash(key), partitions)`` (Murmur3, seed 42: the
    ``hash`` function of SQL). Query buckets numbered ``0 .. n-1`` and used as keys were hashed
    a second time, so that several buckets shared a task while other tasks had none (8 buckets
    landed on 4 of 8 tasks: 1, 2, 2, 3; issue 35). Keyed by these values, bucket ``p`` is
    partition ``p``: one bucket per task. Spark computes the hashes, so they are its own."""
    from pyspark.sql import functions as F

    candidates = spark.range(0, 64 * partitions + 1024).select(
        "id", F.pmod(F.hash("id"), F.lit(partitions)).alias("p"))
    found = {int(r["p"]): int(r["key"]) for r in candidates.groupBy("p").agg(F.min("id").alias("key")).collect()}
    if len(found) != partitions:  # (never seen: 64 candidates per partition on average)
        raise RuntimeError(f"no key found for {partitions - len(found)} of {partitions} Spark partitions")
    return [found[p] for p in range(partitions)]


def bucketed(frame: DataFrame, buckets: int, keys: list[int], only: list[int] | None = None) -> DataFrame:
    """``frame`` with a ``bucket`` column (its query's bucket, as the key of
    :func:`partition_keys`) and partitioned by it into ``buckets`` partitions, bucket ``b`` into
    partition ``b``. ``only``: just the rows of those buckets, all in bucket 0."""
    from pyspark.sql import functions as F

    number = F.pmod(F.xxhash64("q"), F.lit(buckets))
    if only is not None:
        frame = frame.filter(number.isin(only))
        number = F.lit(0).cast("long")
        keys, buckets = keys[:1], 1
    key = F.element_at(F.array(*[F.lit(k).cast("long") for k in keys]), (number + 1).cast("int"))
    return frame.withColumn("bucket", key).repartition(buckets, "bucket")


def systems_table(runs: Sequence[DataFrame]) -> DataFrame:
    """The runs as one table, each row with its run's index (``system``)."""
    from pyspark.sql import functions as F

    return reduce(lambda a, b: a.unionByName(b),
                  [frame.withColumn("system", F.lit(s).cast("int")) for s, frame in enumerate(runs)])


def _run_tasks(tasks: Sequence[worker.Task], qrels: DataFrame, runs: Sequence[DataFrame], buckets: int,
               only: list[int] | None = None) -> pa.Table:
    """Every bucket's :data:`~rankflavor.spark.worker.SYSTEMS_SCHEMA` rows, system ``s`` the run
    ``runs[s]`` read by ``tasks[s]``; ``only``: just those buckets, as one. The runs are one
    table (a ``system`` column), so each bucket's judgments are shuffled and rebuilt once for
    every system. Both sides are partitioned alike by :func:`bucketed`, so the co-group
    shuffles nothing more and each task holds one bucket, whatever the session's
    ``spark.sql.shuffle.partitions``."""
    return per_bucket(partial(worker.evaluate_systems, tuple(tasks)), qrels, runs, buckets, worker.SYSTEMS_SCHEMA,
                      worker.SYSTEMS_ARROW_SCHEMA, only)


def per_bucket(work: Callable[[int, pa.Table, pa.Table], pa.Table], qrels: DataFrame, runs: Sequence[DataFrame],
               buckets: int, schema: str, arrow_schema: pa.Schema, only: list[int] | None = None) -> pa.Table:
    """``work(bucket, run_rows, qrels_rows)`` in one Spark task per bucket, the runs as one table
    (:func:`systems_table`), and its rows (``schema``) on the driver a bucket at a time
    (:func:`collect_by_partition`); ``only``: just those buckets, as one."""
    keys = partition_keys(qrels.sparkSession, buckets if only is None else 1)
    index = {k: b for b, k in enumerate(keys)}
    sides = [bucketed(frame, buckets, keys, only).groupBy("bucket") for frame in (systems_table(runs), qrels)]
    out = sides[0].cogroup(sides[1]).applyInArrow(partial(_task, work, index), schema)
    return collect_by_partition(out, arrow_schema)


def _packed(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """A partition's rows as one Arrow IPC stream in one binary value."""
    sink = pa.BufferOutputStream()
    writer = None
    for batch in batches:
        if writer is None:
            writer = pa.ipc.new_stream(sink, batch.schema)
        writer.write_batch(batch)
    if writer is not None:
        writer.close()
        yield pa.record_batch([pa.array([sink.getvalue().to_pybytes()], pa.binary())], names=["ipc"])


def collect_by_partition(frame: DataFrame, schema: pa.Schema) -> pa.Table:
    """``frame``'s rows on the driver a partition at a time (``toLocalIterator``: one Spark job
    per partition), each partition's rows as one Arrow stream: what one job brings back is one
    bucket's per-query rows, so ``spark.driver.maxResultSize`` bounds a bucket, not the run
    (``toArrow`` collected every bucket in one job; issue 35). The driver holds the table it
    merges, as before."""
    tables = [pa.ipc.open_stream(row["ipc"]).read_all()
              for row in frame.mapInArrow(_packed, "ipc binary").toLocalIterator()]
    return pa.concat_tables(tables) if tables else schema.empty_table()


def _raise_first_error(errors: pa.Table, task: worker.Task, qrels: SparkTable, run: SparkTable, buckets: int,
                       sharing: list[int]) -> None:
    """Raise the error the one-shot engine meets first (see the module's docstring).

    ``sharing``: the buckets that share a query between run and judgments. A bucket that does
    not was evaluated as a part of the input (it would fail the check of a whole input), and
    the engine words a count of duplicates for such a part: its error is met again together
    with a bucket that shares one (and passed the measure, so adds nothing to the error).
    """
    at = worker.column(errors, "measure")
    first = int(at.min())
    texts = [str(t) for t, m in zip(worker.column(errors, "text"), at, strict=True) if m == first]
    if len(texts) > 1 or not json.loads(texts[0])["whole"]:
        where = sorted(json.loads(t)["bucket"] for t in texts)
        if not any(json.loads(t)["whole"] for t in texts) and sharing:
            where.append(next(b for b in sharing if b not in where))
        alone = replace(task, measures=(task.measures[first],), grade_policies=())
        again = worker.rows_of(_run_tasks([alone], qrels.frame, [run.frame], buckets, only=where), worker.ERROR)
        if again.num_rows:
            worker.raise_error(str(worker.column(again, "text")[0]))
    worker.raise_error(texts[0])


def _parts(measures: Sequence[Measure], values: pa.Table, skipped: dict[int, int]) -> list[MeasureResult]:
    """Each measure's rows from every bucket, as one (unsorted) result per measure."""
    # (by query too: Arrow orders strings by their bytes, so each measure's rows come in the
    # one-shot engine's order and merge_measure need not sort them in Python)
    values = values.take(pc.sort_indices(values, [("measure", "ascending"), ("query", "ascending")]))
    at = np.searchsorted(np.asarray(worker.column(values, "measure")), np.arange(len(measures) + 1))
    queries = worker.column(values, "query").astype(object)
    status = worker.column(values, "status").astype(object)
    numbers = np.asarray(worker.column(values, "value"), dtype=np.float64)
    texts = worker.column(values, "text").astype(object)
    out = []
    for i, m in enumerate(measures):
        rows = slice(at[i], at[i + 1])
        vals = texts[rows] if m.spec.summary == "none" else numbers[rows]  # (text-valued: relstring)
        out.append(MeasureResult(m, queries[rows], vals, status[rows], math.nan, 0, skipped.get(i, 0)))
    return out


class _Stopped(Exception):
    """The error the one-shot engine would raise, and the index of the measure it stopped at
    (None: a check of the whole input, before any measure)."""

    def __init__(self, at: int | None, error: RankflavorError) -> None:
        super().__init__(str(error))
        self.at, self.error = at, error


def bucket_count(spark: SparkSession, rows: int, buckets: int | None) -> int:
    """``buckets``, else the session's shuffle partitions, or more when a bucket of ``rows``
    would pass :data:`ROWS_PER_BUCKET`."""
    if buckets is not None:
        return buckets
    parts = int(spark.conf.get("spark.sql.shuffle.partitions") or 8)
    return max(parts, math.ceil(rows / ROWS_PER_BUCKET))


def task_of(measures: Sequence[Measure], qrels: SparkTable, run: SparkTable) -> worker.Task:
    """The task that evaluates ``measures`` on ``run``'s rows (``missing=skip``: the driver
    decides the missing queries; the judgments' positive grades kept where a summary sums)."""
    return worker.Task(
        tuple(m.with_knobs(missing="skip") for m in measures), qrels.source, run.source, qrels.from_file,
        run.from_file, tuple(dict.fromkeys(m.flavor.duplicates for m in measures if m.spec.summary == "sum")),
        qrels.raters,
    )


def evaluate_buckets(spark: SparkSession, qrels: SparkTable, run: SparkTable, measures: list[Measure],
                     buckets: int | None = None) -> tuple[list[MeasureResult], Counts]:
    """The measures over the two inputs: per-query results merged over the buckets, and counts.

    ``buckets``: how many hash buckets of query ids (tasks); by default the session's shuffle
    partitions, or more when the inputs need them (:data:`ROWS_PER_BUCKET`).
    """
    buckets = bucket_count(spark, max(run.rows, qrels.rows), buckets)
    task = task_of(measures, qrels, run)
    return merge_system(_run_tasks([task], qrels.frame, [run.frame], buckets), task, qrels, run, measures, buckets)


def merge_system(table: pa.Table, task: worker.Task, qrels: SparkTable, run: SparkTable, measures: Sequence[Measure],
                 buckets: int) -> tuple[list[MeasureResult], Counts]:
    """One run's rows of the tasks (``table``: its ``task``'s rows over every bucket) merged into
    its results and counts, as the one-shot engine gives them; its error raised as the engine
    raises it (the module's docstring)."""
    try:
        return _merged(table, task, qrels, run, measures, buckets)
    except _Stopped as stop:
        raise stop.error from None


def score_systems(spark: SparkSession, qrels: SparkTable, runs: Sequence[SparkTable], measures: Sequence[Measure],
                  buckets: int | None = None
                  ) -> tuple[list[list[MeasureResult | None]], dict[tuple[int, int], RankflavorError]]:
    """Every run (system) under every measure, as :func:`rankflavor.analysis.compare.scores.score_runs`
    and :func:`rankflavor.spread` evaluate them locally: ``scores[s][j]`` the result of
    ``runs[s]`` under ``measures[j]``, None where it raised, its error in ``errors[(s, j)]``.

    One Spark job evaluates every system under every measure, a bucket of queries per task
    (:func:`_run_tasks`). A system whose evaluation stopped at an error (the local engine's own,
    :func:`evaluate_buckets`) is evaluated again without that measure, and so on: locally each
    measure of a grid raises or not on its own (:class:`rankflavor.engine.plan.Evaluation`). A check of
    the whole input (no query to score) is made measure by measure, as locally.
    """
    buckets = bucket_count(spark, max(sum(r.rows for r in runs), qrels.rows), buckets)
    table = _run_tasks([task_of(measures, qrels, run) for run in runs], qrels.frame, [r.frame for r in runs],
                       buckets)
    system = worker.column(table, "system")
    scores: list[list[MeasureResult | None]] = [[None] * len(measures) for _ in runs]
    errors: dict[tuple[int, int], RankflavorError] = {}

    def again(run: SparkTable, todo: list[int]) -> pa.Table:
        return _run_tasks([task_of([measures[j] for j in todo], qrels, run)], qrels.frame, [run.frame], buckets)

    for s, run in enumerate(runs):
        todo, rows = list(range(len(measures))), table.filter(pa.array(system == s))
        while todo:
            chosen = [measures[j] for j in todo]
            try:
                merged, _ = _merged(rows, task_of(chosen, qrels, run), qrels, run, chosen, buckets)
            except _Stopped as stop:
                if stop.at is None and len(todo) > 1:  # measure by measure (see the docstring)
                    for j in todo:
                        one, found = score_systems(spark, qrels, [run], [measures[j]], buckets)
                        scores[s][j] = one[0][0]
                        if found:
                            errors[(s, j)] = found[(0, 0)]
                    break
                errors[(s, todo[stop.at or 0])] = stop.error
                del todo[stop.at or 0]
                rows = again(run, todo) if todo else rows
                continue
            for j, result in zip(todo, merged, strict=True):
                scores[s][j] = result
            break
    return scores, errors


def _merged(table: pa.Table, task: worker.Task, qrels: SparkTable, run: SparkTable, measures: Sequence[Measure],
            buckets: int) -> tuple[list[MeasureResult], Counts]:
    """One system's rows of the tasks (``table``) merged into its results and counts; the
    error the one-shot engine raises as :class:`_Stopped`."""
    present = worker.rows_of(table, worker.PRESENT)
    ids = worker.column(present, "query").astype(object)
    flags = np.asarray(worker.column(present, "value"), dtype=np.int64)
    in_run, in_qrels = (flags & 1) > 0, (flags & 2) > 0
    errors = worker.rows_of(table, worker.ERROR)
    bucket_rows = worker.rows_of(table, worker.BUCKET)
    sharing = sorted(int(b) for b, w in zip(worker.column(bucket_rows, "measure"), worker.column(bucket_rows, "value"),
                                            strict=True) if w)
    bucket_counts = [Counts(**json.loads(str(t))) for t in worker.column(worker.rows_of(table, worker.COUNTS), "text")]
    counts = replace(sum_counts(bucket_counts), comment_lines=qrels.comments + run.comments,
                     blank_lines=qrels.blanks + run.blanks, run_lines_with_extra_fields=run.extra_fields)
    if not (in_run & in_qrels).any():
        # The one-shot engine's first check, before any measure (its counts are the inputs'
        # even when a bucket stopped at an error).
        n_run, n_qrels = int(in_run.sum()), int(in_qrels.sum())
        sides = {"queries_in_run": n_run, "queries_in_qrels": n_qrels, "queries_evaluated": 0}
        seen = counts if not errors.num_rows else Counts(**{f.name: sides.get(f.name, 0) for f in fields(Counts)})
        try:
            require_common_queries(seen, byte_sorted(ids[in_run]), byte_sorted(ids[in_qrels]),
                                   [m.flavor for m in measures] or None)
        except RankflavorError as exc:
            raise _Stopped(None, exc) from None
    stopped_at = int(worker.column(errors, "measure").min()) if errors.num_rows else len(measures)

    values = worker.rows_of(table, worker.VALUE)
    skipped_rows = worker.rows_of(table, worker.SKIPPED)
    skipped: dict[int, int] = {}
    for i, n in zip(worker.column(skipped_rows, "measure"), worker.column(skipped_rows, "value"), strict=True):
        skipped[int(i)] = skipped.get(int(i), 0) + int(n)
    grade_rows = worker.rows_of(table, worker.GRADES)
    grades = {p: np.asarray(worker.column(grade_rows, "value")[worker.column(grade_rows, "text") == p], dtype=np.float64)
              for p in task.grade_policies}
    missing = ids[in_qrels & ~in_run]
    merged = []
    for i, (m, part) in enumerate(zip(measures, _parts(measures, values, skipped), strict=True)):
        try:
            if i == stopped_at:
                _raise_first_error(errors, task, qrels, run, buckets, sharing)
            # (raises missing=error for the whole input, as the one-shot engine at this measure)
            merged.append(merge_measure(m, [part], missing, grades.get(m.flavor.duplicates, np.zeros(0))))
        except RankflavorError as exc:
            raise _Stopped(i, exc) from None
    if errors.num_rows:  # (an error of no measure: the check of a bucket's inputs)
        try:
            _raise_first_error(errors, task, qrels, run, buckets, sharing)
        except RankflavorError as exc:
            raise _Stopped(None, exc) from None
    return merged, counts
