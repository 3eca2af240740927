"""The Spark backend: the local engine's own evaluation, run by Spark on buckets of whole queries.

:func:`evaluate_spark` takes qrels and run tables (PySpark DataFrames or TREC file paths) and
returns the same :class:`~rankflavor.results.Results` as :func:`rankflavor.evaluate`: every
metric, preset and flavor, with the same numbers by construction, since every query is
evaluated whole by the local engine in a Spark task. Spark keeps what is Spark's:

* reading (:mod:`~rankflavor.spark.read`): TREC files with Spark's text reader, or DataFrames,
  checked and counted in one job;
* partitioning and collecting (:mod:`~rankflavor.spark.backend`): both inputs bucketed by a hash
  of the query id and co-grouped, one task per bucket (:mod:`~rankflavor.spark.worker`), per-query
  rows collected and merged by :mod:`rankflavor.merge`, which chunked evaluation uses too.

Nothing row-level reaches the driver; a task holds one bucket of queries at a time.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..errors import UsageError
from ..measure import Measure
from ..progress import Progress
from ..results import Results

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[2]"


def local_session(master: str = DEFAULT_MASTER, shuffle_partitions: int = 8, driver_memory: str = "4g") -> SparkSession:
    """A local Spark session for the CLI and tests (no UI, few shuffle partitions, quiet logs).

    Parameters
    ----------
    master : Spark master URL, ``local[2]`` by default (one worker thread per core here).
    shuffle_partitions : ``spark.sql.shuffle.partitions``, also the default number of query
        buckets; Spark's 200 is far too many locally.
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
        # Adaptive re-planning would merge the query buckets' shuffle partitions; it only adds
        # work in a local session.
        .config("spark.sql.adaptive.enabled", "false")
        # pandas DataFrames become Spark DataFrames through Arrow, not row by row in Python.
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def evaluate_spark(
    qrels: Any,
    run: Any,
    metrics: str | Measure | Iterable[str | Measure],
    preset: str | None = None,
    *,
    spark: Any = None,
    buckets: int | None = None,
    scale: Any = None,
    raters: str | None = None,
    progress: Progress | None = None,
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
    buckets : int, optional
        Hash buckets of query ids, one Spark task each (default: the session's shuffle
        partitions, more for inputs of many millions of rows).
    scale, raters
        As for :func:`rankflavor.evaluate`: the scale's knobs resolved into the measures on the
        driver and its grade check run as one Spark job (the first grade off it names its line);
        a ratings file is read and aggregated on the driver (judgments are small beside a run),
        then handed to Spark with its rule, which every flavor string names.
    progress : rankflavor.progress.Progress, optional
        Told of each Spark task (bucket) completed, from Spark's status tracker; nothing is
        shown when None.

    Returns
    -------
    Results
        Per-query values (only these reach the driver), summaries, counts, flavor strings;
        provenance names the engine, Spark's version, the sources and the run tag.

    Raises
    ------
    InputError, EvaluationError, UsageError
        As the local engine raises them, with the same messages, whichever task met them.
    """
    from ..presets import resolve_measures
    from .backend import evaluate_buckets
    from .read import check_scale, read_inputs
    from .status import spark_progress

    items = [metrics] if isinstance(metrics, (str, Measure)) else list(metrics)
    if not items:
        raise UsageError("metrics: give at least one measure, e.g. metrics=['ndcg@10']")
    if buckets is not None and buckets < 1:
        raise UsageError(f"buckets must be >= 1, received {buckets}")
    sc = None
    if scale is not None:
        from ..judgments.scale import scale_named

        sc = scale_named(scale)
    measures, extras = resolve_measures(items, preset, {k: v if isinstance(v, str) else str(v) for k, v in knobs.items()},
                                        sc)
    if raters is not None:
        from ..io.raters import read_aggregated

        qrels = read_aggregated(qrels, raters, None if sc is None else sc.grades)
        measures = [m.with_knobs(raters=raters) if m.flavor.raters == "none" else m for m in measures]
    if spark is None:
        frame = qrels if hasattr(qrels, "sparkSession") else run if hasattr(run, "sparkSession") else None
        spark = frame.sparkSession if frame is not None else local_session()
    q_table, r_table = read_inputs(spark, qrels, run)
    try:
        if sc is not None and q_table.raters is None:  # (ratings were checked one by one as read)
            check_scale(q_table, sc)
        with spark_progress(spark, progress, "Spark tasks (buckets of queries) done"):
            merged, counts = evaluate_buckets(spark, q_table, r_table, measures, buckets)
    finally:
        for table in (q_table, r_table):
            if table.cached is not None:
                table.cached.unpersist()
    provenance = {
        "rankflavor": __version__,
        "engine": "spark",
        "spark": spark.version,
        "qrels": {"source": q_table.source},
        "run": {"source": r_table.source, "tag": r_table.tag},
    }
    return Results(merged, counts, provenance, extras)


__all__ = ["DEFAULT_MASTER", "evaluate_spark", "local_session"]
