"""``check`` on the Spark engine: the local report, from the facts of buckets of whole queries.

Every table check of :mod:`rankflavor.check` is per query, or a sum, a histogram or a list over
queries (:mod:`rankflavor.analysis.check.facts`). So a Spark task computes, with the local code, the facts
of one bucket of queries (the judgments and every run, :func:`check_bucket`), and the driver
merges those small facts and words them as the local engine does (the same functions). Two
counts are not over queries and are a Spark job each: the distinct grades of judgments with more
than a label scale's, and the run docnos judged for no query.

Reading: Spark reads the inputs (:mod:`rankflavor.spark.read`). A TREC file's malformed lines
are found by Spark; the first ``limit`` of them (in input order) reach the driver, where the
local line reader words each as it does in its file (whether a good line comes before it
changes the wording), and every one is counted. Not supported, with a
:class:`~rankflavor.errors.UsageError` rather than another report: a Parquet file or DataFrame
with a bad row (the local reader's error names it), judgments with a fifth (label source) field,
a run whose last tag is not UTF-8, and a line Spark finds bad but the local reader does not.
A TREC file's ``read`` in its summary is ``lines`` when it has comment, blank, malformed or
extra-field lines (the local columnar read refuses those), ``columnar`` otherwise.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankflavor.analysis.check.api import runs_of
from rankflavor.analysis.check.codes import run_codes
from rankflavor.analysis.check.facts import merged
from rankflavor.analysis.check.findings import LIST_LIMIT, CheckReport, FileSummary, Finding, Overlap
from rankflavor.analysis.check.grades import qrels_facts, qrels_findings
from rankflavor.analysis.check.overlap import overlap_facts, overlap_findings
from rankflavor.analysis.check.reading import error_finding, malformed_findings
from rankflavor.analysis.check.scores import run_facts, run_findings
from rankflavor.errors import InputError, UsageError
from rankflavor.io.lines import QRELS_FIELDS, RUN_FIELDS, parse_qrels_lines, parse_run_lines
from rankflavor.spark import worker
from rankflavor.spark.backend import bucket_count, check_query_rows, per_bucket

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from rankflavor.presets.scales import Scale

#: A task's rows: per system (-1: the judgments) its facts, pickled.
SCHEMA = "system int, facts binary"
ARROW_SCHEMA = pa.schema([pa.field("system", pa.int32()), pa.field("facts", pa.binary())])
#: A good line put before a malformed one, for the local reader to word it as after good lines.
_GOOD_LINE = {"qrels": b"q 0 d 1\n", "run": b"q Q0 d 1 1 t\n"}
#: The columns of a bucket's rows the engine's tables are built from.
_KEEP = ["q", "d", "v", "row", "line"]


@dataclass
class _Input:
    """One input as ``check`` read it with Spark: its good rows (``frame``: ``q, d, v, row, line,
    rank``; None when it could not be read), the findings of the read and its summary."""

    kind: str
    name: str
    frame: DataFrame | None
    rows: int
    findings: list[Finding]
    summary: FileSummary
    ranks: bool = False
    extra_fields: int = 0
    cached: DataFrame | None = None


@dataclass(frozen=True)
class _Job:
    """What every check task knows: the inputs' names, whether they are files, the list limit,
    the scale, which runs have their rank field and whether any judgment was read."""

    qrels: worker.Task
    runs: tuple[worker.Task, ...]
    ranks: tuple[bool, ...]
    limit: int
    scale: Scale | None
    judged: bool


def _sorted(rows: pa.Table) -> tuple[pa.Table, np.ndarray]:
    rows = rows.take(pc.sort_indices(rows, [("row", "ascending")]))
    return rows, np.asarray(rows.column("row").to_numpy(zero_copy_only=False), dtype=np.int64)


def _queries(rows: pa.Table) -> int:
    return len(pc.unique(rows.column("q")))


def check_bucket(job: _Job, bucket: int, run_rows: pa.Table, qrels_rows: pa.Table) -> pa.Table:
    """One bucket of whole queries: the facts of its judgments (system -1) and of each run
    (``system`` column), by the local checks, with each row's input order."""
    qrels_rows, q_at = _sorted(qrels_rows)
    qrels = worker.qrels_table(job.qrels, qrels_rows.select(_KEEP))  # (once: every run reads it)
    judged = qrels_facts(qrels, job.limit, job.scale, q_at)
    out: list[tuple[int, tuple[Any, ...]]] = [(-1, (judged, _queries(qrels_rows)))]
    for s, (task, rows) in enumerate(zip(job.runs, worker.by_system(run_rows, len(job.runs)), strict=True)):
        rows, r_at = _sorted(rows)
        run = worker.run_table(task, rows.select(_KEEP))
        against = qrels if len(qrels) else None
        if not len(run):  # (a bucket of judged queries only: they count in the overlap)
            out.append((s, (None, overlap_facts(run_codes(run, against)) if job.judged and against else None, 0)))
            continue
        codes = run_codes(run, against)
        ranks = rows.column("rank").combine_chunks().cast(pa.string()) if job.ranks[s] else None
        facts = run_facts(run, job.limit, codes, against, ranks, r_at)
        out.append((s, (facts, overlap_facts(codes) if job.judged else None, _queries(rows))))
    return pa.table({"system": pa.array([s for s, _ in out], pa.int32()),
                     "facts": pa.array([pickle.dumps(f) for _, f in out], pa.binary())})


def check_spark(qrels: Any, runs: Any = (), *, spark: Any = None, scale: str | Scale | None = None,
                limit: int = LIST_LIMIT, buckets: int | None = None) -> CheckReport:
    """:func:`rankflavor.analysis.check.check` with Spark: the same :class:`~rankflavor.analysis.check.CheckReport`.

    Parameters
    ----------
    qrels : a TREC qrels path, a Parquet file or directory of parts (``*.parquet``), a directory
        or glob of TREC part files (read as their concatenation in name order), or a Spark
        DataFrame.
    runs : one run or a sequence of them, as ``qrels``.
    spark : SparkSession, optional
        Default: the DataFrames' own session, else :func:`~rankflavor.spark.local_session`.
    scale : a label scale (name or :class:`~rankflavor.Scale`): grades off it are errors.
    limit : findings of one kind listed line by line per file; the rest are counted.
    buckets : hash buckets of query ids, one Spark task each (default as for evaluation).

    Returns
    -------
    CheckReport
        As the local engine's for the same rows (see the module docstring for what is not
        supported on Spark).

    Raises
    ------
    UsageError
        An input this engine does not check as the local one does (the module docstring).
    """
    from rankflavor.presets.irds import scale_for
    from rankflavor.spark import local_session, workers_import_rankflavor

    if isinstance(qrels, str) and qrels.startswith("irds:"):
        raise UsageError(f"{qrels}: Spark reads files; check ir_datasets judgments with the local engine")
    sc = scale_for(scale, qrels)
    items = runs_of(runs)
    if spark is None:
        frames = [x for x in (qrels, *items) if hasattr(x, "sparkSession")]
        spark = frames[0].sparkSession if frames else local_session()
    with workers_import_rankflavor(spark):
        judged = _read(spark, "qrels", qrels, f"qrels ({type(qrels).__name__})", limit)
        inputs = [judged] + [_read(spark, "run", r, f"run {k} ({type(r).__name__})", limit)
                             for k, r in enumerate(items, 1)]
        try:
            check_query_rows(spark, [(one.frame, one.rows) for one in inputs if one.frame is not None])
            return _checked(spark, inputs, sc, limit, buckets)
        finally:
            for one in inputs:
                if one.cached is not None:
                    one.cached.unpersist()


def _checked(spark: SparkSession, inputs: list[_Input], sc: Scale | None, limit: int, buckets: int | None
             ) -> CheckReport:
    """Check the tables read (``inputs``: the judgments, then the runs) in one Spark job over
    buckets of queries, and word the merged facts."""
    judged, runs = inputs[0], inputs[1:]
    empty = spark.createDataFrame([], "q string, d string, v double, row long, line long, rank string")
    q_frame = judged.frame.drop("rank") if judged.frame is not None else empty.drop("rank")
    r_frames = [r.frame if r.frame is not None else empty for r in runs]
    tasks = [worker.Task((), one.name, one.name, one.summary.read != "reader", one.summary.read != "reader")
             for one in inputs]
    job = _Job(tasks[0], tuple(tasks[1:]), tuple(r.ranks for r in runs), limit, sc, judged.rows > 0)
    n = bucket_count(spark, max([one.rows for one in inputs]), buckets)
    if runs:
        table = per_bucket(partial(check_bucket, job), q_frame, r_frames, n, SCHEMA, ARROW_SCHEMA)
    else:  # (a run that is empty everywhere: every bucket's facts of the judgments alone)
        table = per_bucket(partial(check_bucket, job), q_frame, [empty], n, SCHEMA, ARROW_SCHEMA)
    system = np.asarray(table.column("system").to_numpy(zero_copy_only=False))
    facts = [pickle.loads(b) for b in table.column("facts").to_pylist()]
    per_system: dict[int, list[Any]] = {}
    for s, f in zip(system.tolist(), facts, strict=True):
        per_system.setdefault(int(s), []).append(f)

    findings: list[Finding] = [*judged.findings]
    q_parts = per_system.get(-1, [])
    q_facts = merged([f for f, _ in q_parts])
    files = [replace(judged.summary, queries=sum(c for _, c in q_parts))]
    if q_facts is not None:
        if q_facts.grades.values is not None:
            q_facts = replace(q_facts, distinct=len(q_facts.grades.values))
        elif judged.frame is not None:  # more grades than a scale has: counted by Spark
            q_facts = replace(q_facts, distinct=judged.frame.select("v").distinct().count())
    if judged.frame is not None:
        findings += qrels_findings(q_facts, judged.name, sc)
    overlaps: list[Overlap] = []
    for s, run in enumerate(runs):
        parts = per_system.get(s, [])
        findings += run.findings
        files.append(replace(run.summary, queries=sum(c for _, _, c in parts)))
        if run.frame is None or not run.rows:
            continue
        r_facts = merged([f for f, _, _ in parts])
        findings += run_findings(replace(r_facts, extra_fields=run.extra_fields), run.name)
        if judged.rows:
            never = run.frame.select("d").distinct().join(q_frame.select("d").distinct(), "d", "left_anti").count()
            overlap, found = overlap_findings(merged([o for _, o, _ in parts]), run.name, judged.name, never)
            overlaps.append(overlap)
            findings += found
    return CheckReport(tuple(findings), tuple(files), tuple(overlaps), limit)


def _read(spark: SparkSession, kind: str, obj: Any, label: str, limit: int) -> _Input:
    """One input read by Spark for ``check``: its good rows, and findings for the rest."""
    from pyspark.sql import functions as F

    from rankflavor.spark.read import pending_input, placed, places_of

    name = os.fspath(obj) if isinstance(obj, (str, os.PathLike)) else label
    try:
        pending = pending_input(spark, obj, kind, ranks=True)
    except InputError as exc:  # not found, not readable by Spark
        return _Input(kind, name, None, 0, [error_finding(exc, name)], FileSummary(name, kind, 0, 0, read="failed"))
    rows = [r.asDict() for r in pending.stats.collect()]
    total = {k: sum(int(r[k] or 0) for r in rows) for k in ("n", "bad", "extra", "blank", "comment")}
    places = places_of(sorted(rows, key=lambda r: (r["p"], r["file"]))) if pending.from_file else []
    cached = pending.cached
    if pending.bad is None:  # a Parquet file or a DataFrame: the reader's error is the local reader's to word
        if not total["n"] or total["bad"]:
            cached.unpersist()
            raise UsageError(f"{name}: has no rows, or rows with a null id or a value that is no finite number; the "
                             "Spark engine does not check such inputs row by row: check them with the local engine")
        frame = pending.frame(places)
        if kind == "run":
            frame = frame.withColumn("rank", F.lit(None).cast("string"))
        return _Input(kind, name, frame, total["n"], [], FileSummary(name, kind, total["n"], 0, read="reader"),
                      cached=cached)
    tagged, tag = pending.last_tag(rows, places)
    if kind == "run" and tagged:
        if tag is None:
            cached.unpersist()
            raise UsageError(f"{name}: the run tag on the last line is not valid UTF-8 text; the Spark engine does not "
                             "check such a run: check it with the local engine")
    body = F.col("body")
    good = placed(spark, cached.filter(body & ~pending.bad), places).select("q", "d", "v", "row", "line", "rank")
    n_good = total["n"] - total["bad"]
    findings: list[Finding] = []
    if total["bad"] or not n_good:
        findings = _malformed(spark, kind, name, cached.filter(pending.bad), good, places, total["bad"], n_good,
                              limit)
    read = "lines" if total["bad"] or not n_good or total["comment"] or total["blank"] or total["extra"] else "columnar"
    summary = FileSummary(name, kind, n_good, 0, total["comment"], total["blank"], read)
    return _Input(kind, name, good, n_good, findings, summary, kind == "run", total["extra"], cached)


def _malformed(spark: SparkSession, kind: str, name: str, bad: DataFrame, good: DataFrame, places: list[Any],
               n_bad: int, n_good: int, limit: int) -> list[Finding]:
    """The findings of a TREC input's malformed lines (:func:`rankflavor.analysis.check.reading.malformed_findings`):
    the first ``limit`` worded by the local line reader, every one counted."""
    from pyspark.sql import functions as F

    from rankflavor.spark.read import placed

    kept: list[InputError] = []
    other_kind = 0
    if n_bad:
        malformed = placed(spark, bad, places)
        other = (F.col("n") >= RUN_FIELDS) if kind == "qrels" else (F.col("n") == QRELS_FIELDS)
        counts = malformed.agg(F.sum(F.when(other, 1).otherwise(0)).alias("other"),
                               F.sum(F.when(F.col("n") == QRELS_FIELDS + 1, 1).otherwise(0)).alias("five")).collect()[0]
        if kind == "qrels" and counts["five"]:
            raise UsageError(f"{name}: {counts['five']} judgment lines have a fifth (label source) field, which the "
                             "Spark engine does not read: check these judgments with the local engine")
        other_kind = int(counts["other"] or 0)
        first_good = good.agg(F.min("row")).collect()[0][0]
        for line in malformed.orderBy("row").select("raw", "line", "row").limit(limit).collect():
            before = first_good is not None and first_good < line["row"]
            kept.append(_worded(kind, name, bytes(line["raw"]), int(line["line"]), before))
    seen = n_bad
    if not n_good:  # the line reader's error for a file with no good line, after the others
        found: list[InputError] = []
        (parse_qrels_lines if kind == "qrels" else parse_run_lines)(name, b"", collect=found)
        seen += len(found)
        kept = (kept + found)[:limit]
    return malformed_findings(kind, name, kept, seen, other_kind, n_good, limit)


def _worded(kind: str, name: str, raw: bytes, line: int, before: bool) -> InputError:
    """The local line reader's error for one malformed line (``before``: good lines come before
    it in its input), numbered ``line``."""
    data = (_GOOD_LINE[kind] if before else b"") + raw + b"\n"
    found: list[InputError] = []
    (parse_qrels_lines if kind == "qrels" else parse_run_lines)(name, data, collect=found)
    errors = [e for e in found if e.line is not None]
    if not errors:
        raise UsageError(f"{name}:{line}: Spark finds this line malformed and the local reader does not; check this "
                         "input with the local engine")
    return InputError(errors[0].source, line, errors[0].message, errors[0].text)


__all__: Sequence[str] = ["check_bucket", "check_spark"]
