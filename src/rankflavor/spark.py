"""The Spark engine: the same measures and flavors, evaluated with Spark DataFrame operations.

:func:`evaluate_spark` takes qrels and run tables (PySpark DataFrames or TREC file paths) and
returns the same :class:`~rankflavor.results.Results` as :func:`rankflavor.evaluate`, with the same
canonical flavor strings, so every renderer works unchanged. The stages mirror the local engine:

* read - DataFrames as given (their row order is the input order), or TREC files read by
  Spark's text reader and split on the same whitespace as trec_eval; a malformed file is handed
  to the local reader only to name the bad line;
* align - duplicates resolved by a window over (query, doc); run rows left-joined to grades and
  hash-partitioned by query once, so later windows, aggregates and joins need no shuffle;
  everything dropped counted (:class:`~rankflavor.align.Counts`);
* order - ``row_number()`` over each query, ordered by the score at the flavor's precision
  (``float32`` = a cast to ``float``), descending, then the tie key of :mod:`rankflavor.order`;
  ``depth`` then ``unjudged=condensed`` as trec_eval applies ``-M`` before ``-J``;
* kernels - per-row columns (gains, discounts, running counts as window sums) reduced per query
  by ``groupBy``; ideal DCGs rank the candidate gains with another window;
* policy - only the per-query table (one row per query) reaches the driver, where the local
  engine's own :func:`rankflavor.engine.aggregate` applies ``empty``/``missing`` and averages.

Nothing row-level is collected. Float sums are added in Spark's order, not rank by rank, and
Spark's ``log2`` is ``ln(x) / ln(2)``, so values can differ from the local engine in the last bits
(the tests hold them to 1e-9).

Covered: ``ndcg``, ``dcg``, ``P``, ``recall``, ``AP`` (``map``, ``map_cut``, ``GMAP``), ``RR``,
``Rprec``, ``bpref`` (``gm_bpref``), ``success``, ``judged``, ``num_ret``, ``num_rel``,
``num_rel_ret``, under every value of gain, discount, ideal (global, local, recall@K, max),
ideal_cut, max_grade, rel, unjudged, negatives, ties (averaged included), precision, depth,
empty, missing, duplicates and total. Any other metric or knob value is refused with a
:class:`~rankflavor.errors.UsageError` naming it (:func:`check_supported`), never approximated.

References
----------
Apache Spark SQL window functions (``row_number``, frames ``rowsBetween``);
trec_eval 9.0.8 ``form_res_rels.c`` (ordering, negatives), ``m_*.c`` (measure definitions).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from . import __version__
from .align import Counts
from .errors import InputError, UsageError
from .flavor import Flavor
from .io.inputs import DOC_COLUMNS, GRADE_COLUMNS, QUERY_COLUMNS, SCORE_COLUMNS
from .io.trec import BLANKS
from .measure import Measure
from .order import fractional_error, negatives_error, order_key
from .results import Results

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

    from .align import Aligned

DEFAULT_MASTER = "local[2]"

#: What trec_eval's and the local reader's split() treat as blanks, as a Java regex.
_WHITESPACE = "[" + "".join(f"\\x{ord(c):02x}" for c in BLANKS) + "]+"
#: A number as the local reader (pyarrow's parse) takes one. Spark's cast to double goes through
#: Java's parseDouble, which also reads "1d", "1F", hex ("0x1p3") and trailing control bytes.
_DECIMAL = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$|^[+-]?(?i:inf|infinity|nan)$"


def local_session(master: str = DEFAULT_MASTER, shuffle_partitions: int = 8, driver_memory: str = "4g") -> SparkSession:
    """A local Spark session for the CLI and tests (no UI, few shuffle partitions, quiet logs).

    Parameters
    ----------
    master : Spark master URL, ``local[2]`` by default (one worker thread per core here).
    shuffle_partitions : ``spark.sql.shuffle.partitions``; Spark's 200 is far too many locally.
    driver_memory : heap of the local JVM (it holds the data in local mode); only honoured when
        this call starts the JVM.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise UsageError("the Spark engine needs PySpark: python3 -m pip install pyspark (and Java 17+)") from None
    spark = (
        SparkSession.builder.master(master)
        .appName("rankflavor")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.session.timeZone", "UTC")
        # The inputs are hash-partitioned by query once (see _align), so every later join is
        # co-partitioned; broadcasting small per-query tables and adaptive re-planning only add
        # jobs in a local session.
        .config("spark.sql.autoBroadcastJoinThreshold", "-1")
        .config("spark.sql.adaptive.enabled", "false")
        # Let the (query, doc) join of two query-partitioned tables use that partitioning as is.
        .config("spark.sql.requireAllClusterKeysForCoPartition", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# ---------------------------------------------------------------------------------------------
# Inputs: Spark DataFrames or TREC files read by Spark, as (q, d, v, row) tables.


@dataclass
class _Table:
    """One input as a Spark table ``q, d, v, row`` (row = input order) plus what reading saw."""

    frame: DataFrame
    source: str
    rows: int
    tag: str | None = None
    comments: int = 0
    blanks: int = 0
    extra_fields: int = 0
    cached: DataFrame | None = None  # what to unpersist when done


@dataclass
class _Pending:
    """An input before its one-row check (``stats``) has run: all inputs are checked in one job."""

    kind: str
    source: str
    cached: DataFrame
    frame: DataFrame
    stats: DataFrame  # one row: kind, n, bad, extra, blank, comment, tag
    on_error: Any  # called with the stats row when a line or value is bad; raises InputError


def _stats(kind: str, n: Column, bad: Column, extra: Column, blank: Column, comment: Column, tag: Column) -> list[Column]:
    from pyspark.sql import functions as F

    return [
        F.lit(kind).alias("kind"),
        n.cast("long").alias("n"),
        bad.cast("long").alias("bad"),
        extra.cast("long").alias("extra"),
        blank.cast("long").alias("blank"),
        comment.cast("long").alias("comment"),
        tag.cast("string").alias("tag"),
    ]


def _pick(columns: list[str], wanted: tuple[str, ...], source: str) -> str:
    for name in wanted:
        if name in columns:
            return name
    raise InputError(source, None, f"needs one of the columns {', '.join(wanted)}; has {', '.join(columns)}")


def _from_frame(frame: DataFrame, source: str, kind: str) -> _Pending:
    from pyspark.sql import functions as F

    columns = list(frame.columns)
    qc = _pick(columns, QUERY_COLUMNS, source)
    dc = _pick(columns, DOC_COLUMNS, source)
    vc = _pick(columns, GRADE_COLUMNS if kind == "qrels" else SCORE_COLUMNS, source)
    table = frame.select(
        F.col(qc).cast("string").alias("q"),
        F.col(dc).cast("string").alias("d"),
        F.col(vc).try_cast("double").alias("v"),
        F.monotonically_increasing_id().alias("row"),
    ).persist()
    bad = F.col("v").isNull() | F.isnan("v") | (F.abs("v") == math.inf) | F.col("q").isNull() | F.col("d").isNull()
    stats = table.agg(*_stats(kind, F.count(F.lit(1)), _count(bad), F.lit(0), F.lit(0), F.lit(0), F.lit(None)))

    def on_error(row: Any) -> None:
        if not row["n"]:
            raise InputError(source, None, "has no rows")
        example = table.filter(bad).limit(1).collect()[0]
        raise InputError(
            source,
            None,
            f"{row['bad']} row(s) have a null {qc!r} or {dc!r}, or a {vc!r} that is not a finite number; "
            f"e.g. query {example['q']!r}, doc {example['d']!r}, {vc} {example['v']!r}",
        )

    return _Pending(kind, source, table, table, stats, on_error)


def _read_trec(spark: SparkSession, path: str, kind: str) -> _Pending:
    """Read a TREC qrels or run file with Spark. A malformed file is re-read by the local reader,
    whose error names the line (Spark's line order is not a line number)."""
    from pyspark.sql import functions as F

    from .io import trec

    n_fields = trec.QRELS_FIELDS if kind == "qrels" else trec.RUN_FIELDS
    if not os.path.exists(path):
        raise InputError(path, None, "file not found")
    if os.path.isdir(path):
        raise InputError(path, None, "is a directory, expected a file")
    # Lines end at LF alone: by default Spark also ends one at a lone CR, a blank to trec_eval.
    lines = (spark.read.option("lineSep", "\n").text(path)
             .select(F.col("value").alias("line"), F.monotonically_increasing_id().alias("row")))
    text = F.regexp_replace("line", r"^[ \t\r\x0b\x0c]+|[ \t\r\x0b\x0c]+$", "")
    value_at = 3 if kind == "qrels" else 4
    fields = (
        # The local reader takes no file with a byte that is not UTF-8: Spark keeps them in the
        # line (and string functions turn them into U+FFFD).
        lines.select("row", text.alias("text"), F.is_valid_utf8("line").alias("utf8"))
        .select(
            "row",
            "utf8",
            (F.col("text") == "").alias("blank"),
            F.col("text").startswith("#").alias("comment"),
            F.split("text", _WHITESPACE).alias("f"),
        )
        .select(
            "row",
            "utf8",
            "blank",
            "comment",
            (~F.col("blank") & ~F.col("comment")).alias("body"),
            F.size("f").alias("n"),
            # get() gives null past the end of a short line (plain indexing fails under ANSI mode).
            F.get("f", 0).alias("q"),
            F.get("f", 2).alias("d"),
            F.when(F.get("f", value_at).rlike(_DECIMAL), F.get("f", value_at).try_cast("double")).alias("v"),
            (F.get("f", 5) if kind == "run" else F.lit(None).cast("string")).alias("tag"),
        )
        .persist()
    )
    ok_fields = (F.col("n") == n_fields) if kind == "qrels" else (F.col("n") >= n_fields)
    valid = ok_fields & F.col("v").isNotNull() & ~F.isnan("v") & (F.abs("v") != math.inf)
    body = F.col("body")
    stats = fields.agg(
        *_stats(
            kind,
            _count(body),
            _count((body & ~valid) | ~F.col("utf8")),
            _count(body & (F.col("n") > n_fields)),
            _count(F.col("blank")),
            _count(F.col("comment")),
            F.max_by(F.when(body, F.col("tag")), F.when(body, F.col("row"))),
        )
    )

    def on_error(row: Any) -> None:
        # Only asked once the file is known to be malformed; it raises naming the line.
        (trec.read_qrels if kind == "qrels" else trec.read_run)(path)
        raise InputError(path, None, f"{row['bad'] or 0} malformed {kind} line(s)")

    return _Pending(kind, path, fields, fields.filter(body).select("q", "d", "v", "row"), stats, on_error)


def _pending(spark: SparkSession, obj: Any, kind: str) -> _Pending:
    if isinstance(obj, (str, os.PathLike)):
        return _read_trec(spark, os.fspath(obj), kind)
    if hasattr(obj, "sparkSession") and hasattr(obj, "columns"):
        return _from_frame(obj, f"{kind} DataFrame", kind)
    raise UsageError(f"{kind} must be a Spark DataFrame or a TREC file path for the Spark engine; received {type(obj).__name__}")


def _load(spark: SparkSession, qrels: Any, run: Any) -> tuple[_Table, _Table]:
    """Both inputs, checked by one Spark job (qrels first, as the local engine reports them)."""
    pending = [_pending(spark, qrels, "qrels"), _pending(spark, run, "run")]
    rows = {r["kind"]: r for r in pending[0].stats.unionByName(pending[1].stats).collect()}
    tables = []
    for p in pending:
        row = rows[p.kind]
        if not row["n"] or row["bad"]:
            for other in pending:
                other.cached.unpersist()
            p.on_error(row)
        tables.append(
            _Table(
                p.frame,
                p.source,
                rows=int(row["n"]),
                tag=row["tag"],
                comments=int(row["comment"]),
                blanks=int(row["blank"]),
                extra_fields=int(row["extra"]),
                cached=p.cached,
            )
        )
    return tables[0], tables[1]


# ---------------------------------------------------------------------------------------------
# Align: duplicates, join, counts.


def _deduplicate(frame: DataFrame, policy: str) -> DataFrame:
    """Keep one row per (query, doc) under ``policy`` (``first``: earliest row; ``best``: highest
    value, earliest among equals). ``error`` keeps every row: duplicates are counted by
    :func:`_align` and refused there."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if policy == "error":
        return frame
    order = [F.col("row")] if policy == "first" else [F.col("v").desc(), F.col("row")]
    w = Window.partitionBy("q", "d").orderBy(*order)
    return frame.withColumn("_k", F.row_number().over(w)).filter(F.col("_k") == 1).drop("_k")


def _distinct_docs(rows: DataFrame, policy: str) -> DataFrame:
    """``q, docs``: distinct documents per query (rows are already distinct unless duplicates=error).

    Two grouping levels rather than ``count_distinct``: on query-partitioned rows neither needs a
    shuffle.
    """
    from pyspark.sql import functions as F

    if policy != "error":
        return rows.groupBy("q").agg(F.count(F.lit(1)).alias("docs"))
    return rows.groupBy("q", "d").agg(F.count(F.lit(1)).alias("c")).groupBy("q").agg(F.count(F.lit(1)).alias("docs"))


def _refuse_duplicates(table: _Table, dropped: int, query: str | None = None) -> None:
    """Raise the duplicates=error error, naming a duplicate (of ``query`` when given)."""
    from pyspark.sql import functions as F

    frame = table.frame if query is None else table.frame.filter(F.col("q") == query)
    _duplicates_error(table.source, frame, dropped)


def _duplicates_error(source: str, frame: DataFrame, dropped: int, scope: str = "") -> None:
    """Raise the duplicates=error error, naming the repeat of ``frame`` (q, d, row) that comes
    first in the input, as the local engine does."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    copy = F.row_number().over(Window.partitionBy("q", "d").orderBy("row"))
    example = frame.select("q", "d", "row", copy.alias("_n")).filter(F.col("_n") == 2).orderBy("row").first()
    assert example is not None  # only called when rows outnumber distinct (query, doc) pairs
    raise InputError(
        source,
        None,
        f"document {example['d']!r} appears more than once for query {example['q']!r}{scope}; trec_eval rejects "
        f"this. {dropped} duplicate row(s) in all; choose duplicates=first or duplicates=best to resolve them.",
    )


@dataclass(frozen=True)
class _QueryIndex:
    """The per-query facts :func:`rankflavor.engine.aggregate` reads from an aligned input:
    query ids in byte order and whether each is in the run and in the qrels."""

    query_ids: np.ndarray
    in_run: np.ndarray
    in_qrels: np.ndarray
    positive_judgments: int
    #: Judgments of grade >= 1 and <= -1 (positive and negative once truncated toward zero), and
    #: those with a fractional part: what the fractional policies need to know of the grades.
    whole_positive: int = 0
    whole_negative: int = 0
    fractional: int = 0

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def evaluated(self) -> np.ndarray:
        return self.in_run & self.in_qrels

    @property
    def qrels_grade(self) -> np.ndarray:
        """Stand-in for the grades, read only by ``total=qrels_positive`` as the number of
        judgments with a grade > 0, truncated toward zero or not (``fractional``): a 1 for each of
        grade >= 1, a 0.5 for each in (0, 1). The grades themselves stay in Spark."""
        return np.concatenate([np.ones(self.whole_positive), np.full(self.positive_judgments - self.whole_positive, 0.5)])


@dataclass
class _Aligned:
    """Spark counterpart of :class:`rankflavor.align.Aligned`: joined rows and query flags."""

    rows: DataFrame  # q, d, score, row, grade (null = not in the qrels); queries with judgments only
    judgments: DataFrame  # q, d, grade (duplicates resolved)
    evaluated: DataFrame  # q of every query in both the run and the qrels
    counts: Counts
    index: _QueryIndex
    run_source: str = "run"


def _align(run: _Table, qrels: _Table, policy: str) -> _Aligned:
    """Resolve duplicates, join run rows to grades, and count everything in one Spark job."""
    from pyspark.sql import functions as F

    # Everything downstream (ranking windows, per-query sums, joins of per-query tables) is keyed
    # by query: hash-partitioning the two cached tables by query once lets Spark plan all of it
    # without another shuffle.
    parts = int(run.frame.sparkSession.conf.get("spark.sql.shuffle.partitions") or 8)
    # The only shuffles of the whole evaluation: each input hash-partitioned by query, once.
    run_rows = _deduplicate(run.frame.repartition(parts, "q"), policy)
    judgments = (
        _deduplicate(qrels.frame.repartition(parts, "q"), policy)
        .select("q", "d", F.col("v").alias("grade"))
        .persist()
    )
    qrels_q = judgments.select("q").distinct()
    joined = (
        run_rows.select("q", "d", F.col("v").alias("score"), "row")
        .join(qrels_q, "q")
        .join(judgments, ["q", "d"], "left")
        .persist()
    )
    # One row per query (the size of the final result): presence, distinct documents (rows left
    # after resolving duplicates), and the counts of Counts, summed on the driver.
    run_side = _distinct_docs(run_rows, policy).withColumnRenamed("docs", "run_docs")
    qrels_side = _distinct_docs(judgments, policy).withColumnRenamed("docs", "qrels_docs").join(
        judgments.groupBy("q").agg(
            F.count(F.lit(1)).alias("qrels_lines"),
            _count(F.col("grade") < 0).alias("negative"), _count(F.col("grade") > 0).alias("positive"),
            _count(F.col("grade") >= 1).alias("whole_positive"), _count(F.col("grade") <= -1).alias("whole_negative"),
            _count(F.col("grade") != F.floor("grade")).alias("fractional"),
        ),
        "q",
    )
    joined_side = joined.groupBy("q").agg(
        F.count(F.lit(1)).alias("joined"),
        _count(F.col("grade").isNull()).alias("unjudged"),
        _count(F.col("grade") < 0).alias("negative_retrieved"),
    )
    queries = run_side.join(qrels_side, "q", "full_outer").join(joined_side, "q", "left")
    per_query = queries.collect()

    def total(name: str) -> int:
        return sum(int(r[name] or 0) for r in per_query)

    run_dups = run.rows - total("run_docs")
    # Resolved: none under duplicates=error, which refuses the judgments that matter below and
    # leaves the run's to each ranking (_rank: a depth cut may keep one row of each pair).
    qrels_dups = 0 if policy == "error" else qrels.rows - total("qrels_docs")
    run_kept, run_dups = (run_dups, 0) if policy == "error" else (0, run_dups)
    if policy == "error":  # qrels first, as the local engine checks them first
        # Only a query the run retrieves can refuse its duplicate judgments (align.py says why).
        refused = {r["q"]: int(r["qrels_lines"]) - int(r["qrels_docs"]) for r in per_query
                   if r["run_docs"] is not None and r["qrels_docs"] is not None and r["qrels_lines"] > r["qrels_docs"]}
        if refused:
            joined.unpersist()
            judgments.unpersist()
            _refuse_duplicates(qrels, sum(refused.values()), min(refused, key=lambda q: q.encode("utf-8")))
    ids = sorted((r["q"] for r in per_query), key=lambda text: text.encode("utf-8"))
    by_id = {r["q"]: (r["run_docs"] is not None, r["qrels_docs"] is not None) for r in per_query}
    in_run = np.array([by_id[q][0] for q in ids], dtype=bool)
    in_qrels = np.array([by_id[q][1] for q in ids], dtype=bool)
    n_run, n_qrels, n_both = int(in_run.sum()), int(in_qrels.sum()), int((in_run & in_qrels).sum())
    counts = Counts(
        run_rows=run.rows,
        qrels_rows=qrels.rows,
        queries_in_run=n_run,
        queries_in_qrels=n_qrels,
        queries_evaluated=n_both,
        queries_only_in_run=n_run - n_both,
        queries_only_in_qrels=n_qrels - n_both,
        run_duplicates_resolved=run_dups,
        qrels_duplicates_resolved=qrels_dups,
        unjudged_retrieved=total("unjudged"),
        negative_grades=total("negative"),
        negative_grades_retrieved=total("negative_retrieved"),
        run_rows_of_unjudged_queries=run.rows - run_dups - total("joined"),
        comment_lines=qrels.comments + run.comments,
        blank_lines=qrels.blanks + run.blanks,
        run_lines_with_extra_fields=run.extra_fields,
        run_duplicates_kept=run_kept,
    )
    index = _QueryIndex(np.asarray(ids, dtype=object), in_run, in_qrels, total("positive"),
                        total("whole_positive"), total("whole_negative"), total("fractional"))
    # The run rows kept are those of judged queries, so their queries are the evaluated ones.
    evaluated = joined.select("q").distinct()
    return _Aligned(joined, judgments, evaluated, counts, index, run.source)


# ---------------------------------------------------------------------------------------------
# Order: the same rules as rankflavor.order.rank, as window functions.


@dataclass
class _Ranked:
    rows: DataFrame  # q, rank, grade, judged, pooled, score_p
    judgments: DataFrame  # q, jgrade (usable judgments under the negatives policy)


def _rank(aligned: _Aligned, flavor: Flavor, refuse_duplicates: bool = True) -> _Ranked:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    index = aligned.index
    if flavor.fractional == "error" and index.fractional:
        raise InputError("qrels", None, fractional_error(index.fractional))
    truncate = flavor.fractional == "truncate"
    negatives = index.whole_negative if truncate else aligned.counts.negative_grades
    if flavor.negatives == "error" and negatives:
        raise InputError("qrels", None, negatives_error(negatives))
    # Truncated toward zero (fractional=truncate): -0.5 is a judged 0, as trec_eval's atol reads it.
    raw = F.when(F.col("grade") >= 0, F.floor("grade")).otherwise(F.ceil("grade")).cast("double") if truncate \
        else F.col("grade")
    pooled = F.col("grade").isNotNull()
    if flavor.negatives == "zero":
        judged = pooled
        grade = F.when(pooled, F.greatest(raw, F.lit(0.0))).otherwise(F.lit(0.0))
        jgrade = aligned.judgments.select("q", F.greatest(raw, F.lit(0.0)).alias("jgrade"))
    else:
        judged = pooled & (raw >= 0)
        grade = F.when(judged, raw).otherwise(F.lit(0.0))
        jgrade = aligned.judgments.filter(raw >= 0).select("q", raw.alias("jgrade"))
    score = F.col("score").cast("float").cast("double") if flavor.precision == "float32" else F.col("score")
    rows = aligned.rows.select(
        "q", "d", "row", score.alias("score_p"), grade.alias("grade"), judged.alias("judged"), pooled.alias("pooled")
    )
    ties = flavor.ties
    if ties in ("docno_desc", "averaged"):
        tie = [F.col("d").desc()]
    elif ties == "docno_asc":
        tie = [F.col("d").asc()]
    elif ties == "input_order":
        tie = [F.col("row").asc()]
    elif ties == "pessimistic":
        tie = [F.col("grade").asc(), F.col("row").asc()]
    else:  # optimistic
        tie = [F.col("grade").desc(), F.col("row").asc()]
    by_score = Window.partitionBy("q").orderBy(F.col("score_p").desc(), *tie)
    rows = rows.withColumn("rank", F.row_number().over(by_score))
    depth = flavor.depth_limit
    if depth is not None:
        rows = rows.filter(F.col("rank") <= depth)
    if aligned.counts.run_duplicates_kept and refuse_duplicates:
        # duplicates=error: refused where a ranking keeps both rows (order.rank says why); the
        # rows are those of queries with judgments, the ones trec_eval looks at.
        kept = rows.groupBy("q", "d").agg(F.count(F.lit(1)).alias("c")).filter(F.col("c") > 1)
        repeats = kept.agg(F.sum(F.col("c") - 1).alias("n")).first()
        if repeats is not None and repeats["n"]:
            scope = "" if depth is None else f", both within its top {depth} rows (depth={depth})"
            _duplicates_error(aligned.run_source, rows, int(repeats["n"]), scope)
    if flavor.unjudged == "condensed":
        rows = rows.filter(F.col("judged")).withColumn(
            "rank", F.row_number().over(Window.partitionBy("q").orderBy("rank"))
        )
    ranked = rows.select("q", "rank", "grade", "judged", "pooled", "score_p").persist()
    return _Ranked(ranked, jgrade)


# ---------------------------------------------------------------------------------------------
# Kernels as column expressions.


def _gain(grade: Column, judged: Column | None, flavor: Flavor) -> Column:
    """Spark twin of :func:`rankflavor.kernels.gain`."""
    from pyspark.sql import functions as F

    kind = flavor.gain
    if kind == "linear":
        out = grade
    elif kind == "exp2":
        out = F.pow(F.lit(2.0), grade) - F.lit(1.0)
    elif kind == "binary":
        out = (grade >= F.lit(flavor.rel_threshold)).cast("double")
    else:
        out = grade
        for g, v in reversed(flavor.gain_table or ()):
            out = F.when(grade == F.lit(g), F.lit(v)).otherwise(out)
    out = out.cast("double")
    return out if judged is None else F.when(judged, out).otherwise(F.lit(0.0))


def _denominator(rank: Column, flavor: Flavor) -> Column:
    """Spark twin of :func:`rankflavor.kernels.discount_denominators` at ``rank``."""
    from pyspark.sql import functions as F

    if flavor.discount == "log2":
        return F.log2(rank.cast("double") + F.lit(1.0))
    if flavor.discount == "reciprocal":
        return rank.cast("double")
    base = flavor.jk_base or 2.0
    return F.when(rank < F.lit(base), F.lit(1.0)).otherwise(F.log(rank.cast("double")) / F.lit(math.log(base)))


def _ratio(num: Column, den: Column) -> Column:
    """``num / den`` where ``den > 0``, else 0 (no division by zero even under ANSI mode)."""
    from pyspark.sql import functions as F

    return F.when(den > 0, num / F.when(den > 0, den).otherwise(F.lit(1.0))).otherwise(F.lit(0.0))


def _count(cond: Column) -> Column:
    from pyspark.sql import functions as F

    return F.sum(F.when(cond, F.lit(1)).otherwise(F.lit(0)))


@dataclass
class _IdealCandidates:
    """Positive gains of one ideal source (judgments or retrieved rows, under one gain), ranked
    once per query; every IDCG over them (cut at k, at min(k, hits), or not) is one sum."""

    ordered: DataFrame  # q, g, i (1-based rank of g among the query's gains, largest first)
    sums: dict[str, Column] = field(default_factory=dict)
    needs_n_ret: bool = False


@dataclass
class _Plan:
    """Columns to compute for a group of measures that share one ordering."""

    row_columns: dict[str, Column] = field(default_factory=dict)  # on ranked rows (may be windows)
    aggregates: dict[str, Column] = field(default_factory=dict)  # per query over ranked rows
    judgment_aggregates: dict[str, Column] = field(default_factory=dict)  # per query over judgments
    ideals: dict[tuple[str, ...], _IdealCandidates] = field(default_factory=dict)  # by gain source
    needs_row_judgment_stats: bool = False
    outputs: list[tuple[Column, Column]] = field(default_factory=list)  # (value, empty) per measure


def _plan_measures(measures: Sequence[Measure], ranked: _Ranked) -> _Plan:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    plan = _Plan()
    by_rank = Window.partitionBy("q").orderBy("rank").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    rank, judged = F.col("rank"), F.col("judged")
    plan.aggregates["n_ret"] = F.count(F.lit(1))
    n_ret = F.coalesce(F.col("n_ret"), F.lit(0))

    def threshold_stats(t: float) -> tuple[Column, Column]:
        """Per-query R (relevant judgments) and N (judged non-relevant) at threshold ``t``."""
        key = _key(t)
        plan.judgment_aggregates[f"R_{key}"] = _count(F.col("jgrade") >= F.lit(t))
        plan.judgment_aggregates[f"N_{key}"] = _count(F.col("jgrade") < F.lit(t))
        return F.coalesce(F.col(f"R_{key}"), F.lit(0)), F.coalesce(F.col(f"N_{key}"), F.lit(0))

    for i, m in enumerate(measures):
        f = m.flavor
        t = f.rel_threshold
        k = m.k
        in_cut = F.lit(True) if k is None else rank <= F.lit(k)
        rel = judged & (F.col("grade") >= F.lit(t))
        name = f"m{i}"
        metric = _KERNEL_OF.get(m.metric, m.metric)
        if metric in ("P", "recall", "AP", "RR", "Rprec", "bpref", "success", "num_rel", "num_rel_ret"):
            R, N = threshold_stats(t)
        empty = F.lit(False)
        if metric in ("P", "recall", "success"):
            plan.aggregates[name] = _count(rel & in_cut)
            hits = F.coalesce(F.col(name), F.lit(0))
            if metric == "P":
                value = _ratio(hits, n_ret) if k is None else hits / F.lit(float(k))
            elif metric == "recall":
                value = _ratio(hits, R)
            else:
                value = (hits > 0).cast("double")
            empty = R == 0
        elif metric == "AP":
            running = F.sum(F.when(rel, F.lit(1)).otherwise(F.lit(0))).over(by_rank)
            plan.row_columns[f"{name}_c"] = F.when(rel & in_cut, running / rank).otherwise(F.lit(0.0))
            plan.aggregates[name] = F.sum(f"{name}_c")
            value, empty = _ratio(F.coalesce(F.col(name), F.lit(0.0)), R), R == 0
        elif metric == "RR":
            plan.aggregates[name] = F.min(F.when(rel & in_cut, rank))
            first = F.coalesce(F.col(name), F.lit(0))
            value, empty = _ratio(F.lit(1.0), first), R == 0
        elif metric == "Rprec":
            plan.needs_row_judgment_stats = True
            plan.aggregates[name] = _count(rel & (rank <= R))
            value, empty = _ratio(F.coalesce(F.col(name), F.lit(0)), R), R == 0
        elif metric == "bpref":
            plan.needs_row_judgment_stats = True
            nonrel = judged & ~rel
            above = F.sum(F.when(nonrel, F.lit(1)).otherwise(F.lit(0))).over(by_rank) - F.when(nonrel, 1).otherwise(0)
            term = F.when(above > 0, F.lit(1.0) - _ratio(F.least(above, R), F.least(N, R))).otherwise(F.lit(1.0))
            plan.row_columns[f"{name}_c"] = F.when(rel & in_cut, term).otherwise(F.lit(0.0))
            plan.aggregates[name] = F.sum(f"{name}_c")
            value, empty = _ratio(F.coalesce(F.col(name), F.lit(0.0)), R), R == 0
        elif metric == "judged":
            plan.aggregates[name] = _count(F.col("pooled") & in_cut)
            shown = n_ret if k is None else F.least(n_ret, F.lit(k))
            value = _ratio(F.coalesce(F.col(name), F.lit(0)), shown)
        elif metric == "num_ret":
            value = n_ret.cast("double")
        elif metric == "num_rel":
            value = R.cast("double")
        elif metric == "num_rel_ret":
            plan.aggregates[name] = _count(rel)
            value = F.coalesce(F.col(name), F.lit(0)).cast("double")
        elif metric in ("dcg", "ndcg"):
            g = _gain(F.col("grade"), judged, f)
            if f.ties == "averaged":
                # McSherry-Najork: each row of a run of equal scores earns the run's mean gain.
                g = F.avg(g).over(Window.partitionBy("q", "score_p"))
            plan.row_columns[f"{name}_c"] = F.when(in_cut, g / _denominator(rank, f)).otherwise(F.lit(0.0))
            plan.aggregates[name] = F.sum(f"{name}_c")
            dcg = F.coalesce(F.col(name), F.lit(0.0))
            if metric == "dcg":
                value = dcg
            else:
                idcg = _ideal(m, ranked, plan, name, n_ret)
                empty = idcg <= 0
                value = _ratio(dcg, idcg)
        else:  # pragma: no cover - check_supported admits only the metrics handled above
            raise UsageError(f"the Spark engine has no kernel for metric {metric!r}")
        plan.outputs.append((value.cast("double"), empty))
    return plan


#: Metrics that are another metric's per-query values under a different summary.
_KERNEL_OF = {"GMAP": "AP", "gm_bpref": "bpref"}


def _key(t: float) -> str:
    return format(t, "g").replace("-", "m").replace(".", "p").replace("+", "")


def _ideal(m: Measure, ranked: _Ranked, plan: _Plan, name: str, n_ret: Column) -> Column:
    """IDCG of ``m`` per query, as a column of the final per-query table."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    f = m.flavor
    k = m.k
    # The ideal cut per query: None = no cut; else a column (k, or min(k, hits returned)).
    cut: Column | None
    if f.ideal_cut == "none" or (k is None and f.ideal_cut == "k"):
        cut = None
    elif f.ideal_cut == "hits":
        cut = n_ret if k is None else F.least(F.lit(k), n_ret)
    else:
        cut = F.lit(k)
    col = f"{name}_ideal"
    if f.ideal == "max":
        top = f.top_grade
        if top is None:
            from .errors import FlavorError

            raise FlavorError("ideal=max needs the top grade of the label scale: set max_grade=G")
        g_top = _gain(F.lit(top), None, f)
        slots = n_ret if cut is None else cut
        # The same slot-by-slot sum as the local engine's cumulative sum over the discounts.
        total = F.aggregate(
            F.sequence(F.lit(1), F.greatest(slots, F.lit(1))),
            F.lit(0.0),
            lambda acc, i: acc + g_top / _denominator(i, f),
        )
        return F.when(slots > 0, total).otherwise(F.lit(0.0))
    key = (f.ideal, f.gain, f.rel if f.gain == "binary" else "")
    if key not in plan.ideals:
        if f.ideal == "global":
            candidates = ranked.judgments.select("q", _gain(F.col("jgrade"), None, f).alias("g"))
        else:
            rows = ranked.rows
            if f.ideal != "local":
                rows = rows.filter(F.col("rank") <= F.lit(f.recall_depth or 0))
            candidates = rows.select("q", _gain(F.col("grade"), F.col("judged"), f).alias("g"))
        ideal_rank = F.row_number().over(Window.partitionBy("q").orderBy(F.col("g").desc()))
        plan.ideals[key] = _IdealCandidates(candidates.filter(F.col("g") > 0).withColumn("i", ideal_rank))
    source = plan.ideals[key]
    # min(k, hits returned) needs each query's number of ranked rows next to the candidates.
    source.needs_n_ret |= cut is not None and f.ideal_cut == "hits"
    keep = F.lit(True) if cut is None else F.col("i") <= cut
    source.sums[col] = F.sum(F.when(keep, F.col("g") / _denominator(F.col("i"), f)).otherwise(F.lit(0.0)))
    return F.coalesce(F.col(col), F.lit(0.0))


# ---------------------------------------------------------------------------------------------
# Entry point.


def evaluate_spark(
    qrels: Any,
    run: Any,
    metrics: str | Measure | Iterable[str | Measure],
    preset: str | None = None,
    *,
    spark: Any = None,
    **knobs: Any,
) -> Results:
    """Evaluate a run against judgments with Spark; same measures, flavors and Results as
    :func:`rankflavor.evaluate`.

    Parameters
    ----------
    qrels : Spark DataFrame (``query_id, doc_id, relevance``) or TREC qrels path
    run : Spark DataFrame (``query_id, doc_id, score``) or TREC run path
        Column names follow :mod:`rankflavor.io.inputs` (``qid``/``query``, ``docno``/``doc``,
        ``grade``/``label``, ``sim``...). A DataFrame's row order is its input order
        (``ties=input_order``, ``duplicates=first``).
    metrics, preset, **knobs
        As for :func:`rankflavor.evaluate`.
    spark : SparkSession, optional
        Defaults to the DataFrames' own session, or :func:`local_session` for paths.

    Returns
    -------
    Results
        Per-query values (only these reach the driver), summaries, counts, flavor strings.

    Raises
    ------
    UsageError
        For a metric or knob value the Spark engine does not implement (it names it).
    """
    from .engine import aggregate, require_common_queries
    from .presets import resolve_measures

    items = [metrics] if isinstance(metrics, (str, Measure)) else list(metrics)
    if not items:
        raise UsageError("metrics: give at least one measure, e.g. metrics=['ndcg@10']")
    measures, extras = resolve_measures(items, preset, {k: v if isinstance(v, str) else str(v) for k, v in knobs.items()})
    for m in measures:
        check_supported(m)
    if spark is None:
        frame = qrels if hasattr(qrels, "sparkSession") else run if hasattr(run, "sparkSession") else None
        spark = frame.sparkSession if frame is not None else local_session()
    q_table, r_table = _load(spark, qrels, run)
    cached: list[DataFrame] = [t.cached or t.frame for t in (q_table, r_table)]
    try:
        aligned_by_policy: dict[str, _Aligned] = {}
        groups: dict[tuple[Any, ...], list[int]] = {}
        for i, m in enumerate(measures):
            policy = m.flavor.duplicates
            if policy not in aligned_by_policy:
                aligned_by_policy[policy] = _align(r_table, q_table, policy)
                cached += [aligned_by_policy[policy].rows, aligned_by_policy[policy].judgments]
            # (a metric of the judgments alone refuses no run duplicate: MetricSpec.reads_run)
            groups.setdefault((policy, *order_key(m.flavor), m.spec.reads_run), []).append(i)
        first = next(iter(aligned_by_policy.values()))
        require_common_queries(first.counts, first.index.query_ids[first.index.in_run],
                               first.index.query_ids[first.index.in_qrels])
        n = len(measures)
        values: list[np.ndarray] = [np.zeros(0)] * n
        empty: list[np.ndarray] = [np.zeros(0, dtype=bool)] * n
        # One Spark job per ordering: one plan for everything would be smaller in jobs but slow to
        # plan and hungry for memory (every sort and aggregate of every ordering in one task).
        for key, members in groups.items():
            aligned = aligned_by_policy[key[0]]
            ranked = _rank(aligned, measures[members[0]].flavor, refuse_duplicates=key[-1])
            cached.append(ranked.rows)
            table = _per_query(ranked, [(i, measures[i]) for i in members], aligned.evaluated)
            for i, v, e in zip(members, *_collect(table, first.index, members), strict=True):
                values[i], empty[i] = v, e
            ranked.rows.unpersist()
        results = [
            aggregate(m, values[i], empty[i], cast("Aligned", aligned_by_policy[m.flavor.duplicates].index))
            for i, m in enumerate(measures)
        ]
        provenance = {
            "rankflavor": __version__,
            "engine": "spark",
            "spark": spark.version,
            "qrels": {"source": q_table.source},
            "run": {"source": r_table.source, "tag": r_table.tag},
        }
        return Results(results, first.counts, provenance, extras)
    finally:
        for frame_ in cached:
            frame_.unpersist()


#: Metrics with a Spark kernel here (GMAP and gm_bpref are AP and bpref with a geometric mean,
#: which the shared aggregation step computes).
SUPPORTED_METRICS = frozenset(
    ("P", "recall", "AP", "RR", "Rprec", "bpref", "success", "judged", "num_ret", "num_rel", "num_rel_ret",
     "ndcg", "dcg", "GMAP", "gm_bpref")
)
#: Knobs the Spark kernels read; any other knob must be left at its default.
SUPPORTED_KNOBS = frozenset(
    ("gain", "discount", "ideal", "ideal_cut", "max_grade", "rel", "unjudged", "negatives", "ties", "precision",
     "depth", "empty", "missing", "duplicates", "total", "fractional")
)


def check_supported(measure: Measure) -> None:
    """Raise :class:`UsageError` unless the Spark engine computes ``measure`` exactly as the local one."""
    from .flavor import KNOBS

    if measure.metric not in SUPPORTED_METRICS:
        raise UsageError(
            f"the Spark engine does not implement metric {measure.metric!r} (in {measure.display!r}); "
            f"it implements {', '.join(sorted(SUPPORTED_METRICS))}. Use the local engine for it."
        )
    flavor = measure.flavor
    for name, knob in KNOBS.items():
        value = getattr(flavor, name, knob.default)
        if name not in SUPPORTED_KNOBS and value != knob.default:
            raise UsageError(
                f"the Spark engine does not implement knob {name}={value} (in {measure.display!r}); "
                f"leave it at {knob.default} or use the local engine"
            )
    if flavor.ideal not in ("global", "local", "max") and flavor.recall_depth is None:
        raise UsageError(
            f"the Spark engine does not implement ideal={flavor.ideal} (in {measure.display!r}); "
            "it implements global, local, recall@K and max"
        )


def _per_query(ranked: _Ranked, members: Sequence[tuple[int, Measure]], evaluated: DataFrame) -> DataFrame:
    """Per-query table ``q, v{i}, e{i}`` of the measures ``members`` that share ``ranked``, one
    row per ``evaluated`` query (a query left with no ranked rows or usable judgments included)."""
    from pyspark.sql import functions as F

    plan = _plan_measures([m for _, m in members], ranked)
    rows = ranked.rows
    judgment_stats = (
        ranked.judgments.groupBy("q").agg(*[c.alias(n) for n, c in plan.judgment_aggregates.items()])
        if plan.judgment_aggregates
        else None
    )
    if plan.needs_row_judgment_stats and judgment_stats is not None:
        rows = rows.join(judgment_stats, "q", "left")
    if plan.row_columns:
        rows = rows.select("*", *[c.alias(n) for n, c in plan.row_columns.items()])
    table = evaluated.join(rows.groupBy("q").agg(*[c.alias(n) for n, c in plan.aggregates.items()]), "q", "left")
    if judgment_stats is not None:
        table = table.join(judgment_stats, "q", "left")
    n_rows = ranked.rows.groupBy("q").agg(F.count(F.lit(1)).alias("n_ret"))
    for source in plan.ideals.values():
        candidates = source.ordered.join(n_rows, "q", "left") if source.needs_n_ret else source.ordered
        ideal = candidates.groupBy("q").agg(*[c.alias(n) for n, c in source.sums.items()])
        table = table.join(ideal, "q", "left")
    outputs = [F.col("q")]
    for (i, _), (value, empty) in zip(members, plan.outputs, strict=True):
        outputs += [value.alias(f"v{i}"), empty.alias(f"e{i}")]
    return table.select(*outputs)


def _collect(
    table: DataFrame, index: _QueryIndex, members: Sequence[int]
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Collect a per-query table (one row per evaluated query) into arrays by query code."""
    position = {q: i for i, q in enumerate(index.query_ids)}
    n = index.n_queries
    values = [np.zeros(n) for _ in members]
    empty = [np.zeros(n, dtype=bool) for _ in members]
    for row in table.collect():
        p = position[row["q"]]
        for j, i in enumerate(members):
            values[j][p] = row[f"v{i}"]
            empty[j][p] = row[f"e{i}"]
    return values, empty
