"""The Spark backend: the local engine's own evaluation, run by Spark on buckets of whole queries.

:func:`evaluate_spark` takes qrels and run tables (PySpark DataFrames or TREC file paths) and
returns the same :class:`~rankflavor.engine.results.Results` as :func:`rankflavor.evaluate`: every
metric, preset and flavor, with the same numbers by construction, since every query is
evaluated whole by the local engine in a Spark task. Spark keeps what is Spark's:

* reading (:mod:`~rankflavor.spark.read`): TREC files with Spark's text reader, or DataFrames,
  checked and counted in one job;
* partitioning and collecting (:mod:`~rankflavor.spark.backend`): both inputs bucketed by a hash
  of the query id and co-grouped, one task per bucket (:mod:`~rankflavor.spark.worker`), per-query
  rows collected and merged by :mod:`rankflavor.engine.merge`, which chunked evaluation uses too.

Nothing row-level reaches the driver; a task holds one bucket of queries at a time.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rankflavor._version import __version__
from rankflavor.base.progress import Progress
from rankflavor.engine.results import MeasureResult, Results
from rankflavor.errors import RankflavorError, UsageError
from rankflavor.metrics.measure import Measure

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from rankflavor.analysis.check import CheckReport
    from rankflavor.analysis.judgments.coverage import Coverage
    from rankflavor.analysis.judgments.pool import Pool
    from rankflavor.presets.scales import Scale
    from rankflavor.spark.read import SparkTable

DEFAULT_MASTER = "local[2]"


def local_session(master: str | None = None, shuffle_partitions: int = 8, driver_memory: str = "4g",
                  conf: Mapping[str, str] | None = None) -> SparkSession:
    """The Spark session of the CLI and tests: local by default (no UI, few shuffle partitions,
    quiet logs), or any cluster's.

    Parameters
    ----------
    master : Spark master URL (``local[2]``, ``spark://host:7077``, ``yarn``, ``k8s://...``);
        None: the ``spark.master`` of ``conf``, else of Spark's own defaults
        (``spark-defaults.conf`` in ``SPARK_CONF_DIR`` or ``SPARK_HOME/conf``), else
        :data:`DEFAULT_MASTER`.
    shuffle_partitions : ``spark.sql.shuffle.partitions``, also the default number of query
        buckets; Spark's 200 is far too many locally.
    driver_memory : heap of the driver's JVM (in local mode it holds the data); only honoured
        when this call starts the JVM.
    conf : Spark settings applied after these defaults, so that they win
        (``spark.executor.memory``, ``spark.sql.shuffle.partitions``, ...): ``--spark-conf``.

    Notes
    -----
    Spark's Python workers run the interpreter that calls this function (``sys.executable``,
    set as ``spark.pyspark.python`` of the session), not the first ``python3`` on ``PATH``,
    which PySpark would start otherwise: from a virtual environment that one may not import
    rankflavor. Left alone: a ``PYSPARK_PYTHON`` you set (PySpark's own rule), and a session
    that is already active (yours, or one this function made before), whose workers keep
    the interpreter its context was given. Nothing process-wide (no environment variable)
    is changed.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise UsageError("the Spark engine needs PySpark: python3 -m pip install pyspark (and Java 17+)") from None
    ours = SparkSession.getActiveSession() is None and "PYSPARK_PYTHON" not in os.environ
    builder = SparkSession.builder
    if ours:
        # Workers run the driver's own interpreter (see the docstring): recorded in the session's conf.
        builder = builder.config("spark.pyspark.python", sys.executable).config("spark.pyspark.driver.python",
                                                                                sys.executable)
    settings = dict(conf or {})
    chosen = master or settings.pop("spark.master", None) or spark_defaults().get("spark.master") or DEFAULT_MASTER
    settings.pop("spark.master", None)
    builder = (
        builder.master(chosen)
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
    )
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    # (A context another thread started has no active session in this one: its name tells.)
    if ours and spark.sparkContext.appName == "rankflavor":
        # A context started from Python reads its workers' interpreter from PYSPARK_PYTHON alone
        # (python3 otherwise) and ignores spark.pyspark.python (SPARK-22640, apache/spark#31997):
        # the context's own attribute, which every Python function it ships carries, takes the conf.
        spark.sparkContext.pythonExec = spark.sparkContext.getConf().get("spark.pyspark.python", sys.executable)
    return spark


def spark_defaults() -> dict[str, str]:
    """The settings of Spark's own defaults file, ``spark-defaults.conf`` in ``SPARK_CONF_DIR``
    (else ``SPARK_HOME/conf``), as ``spark-submit`` reads them: one ``key value`` per line (blank
    or ``=`` between them), ``#`` comments; an absent file gives none."""
    home = os.environ.get("SPARK_HOME")
    folder = os.environ.get("SPARK_CONF_DIR") or (os.path.join(home, "conf") if home else None)
    if folder is None or not os.path.isfile(os.path.join(folder, "spark-defaults.conf")):
        return {}
    found: dict[str, str] = {}
    with open(os.path.join(folder, "spark-defaults.conf"), encoding="utf-8") as fh:
        for line in fh:
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            # (a Java properties line: the key ends at a blank, '=' or ':'; one of '=' ':' may follow)
            pair = re.match(r"([^\s=:]+)\s*[=:]?\s*(.*)", text)
            if pair:
                found[pair[1]] = pair[2].strip()
    return found


def parse_conf(items: Iterable[str]) -> dict[str, str]:
    """``--spark-conf KEY=VALUE`` options as settings; a malformed one is a :class:`UsageError`."""
    settings: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not key.strip().startswith("spark."):
            raise UsageError(f"--spark-conf: expected KEY=VALUE with a Spark setting (spark.executor.memory=4g), "
                             f"received {item!r}")
        settings[key.strip()] = value
    return settings


@contextmanager
def workers_import_rankflavor(spark: Any) -> Iterator[None]:
    """Spark's error for Python workers that cannot import rankflavor, as a :class:`UsageError`
    naming the interpreter they ran and what to do; any other error as it is."""
    try:
        yield
    except Exception as exc:
        from pyspark.errors import PySparkException

        if isinstance(exc, PySparkException) and "No module named 'rankflavor'" in str(exc):
            python = getattr(getattr(spark, "sparkContext", None), "pythonExec", None) or "python3"
            raise UsageError(
                f"Spark's Python workers run {python!r}, which cannot import rankflavor. Start the session with "
                "workers on an interpreter that has it (PYSPARK_PYTHON, e.g. the driver's own: "
                f"{sys.executable}), or let rankflavor start its own session (spark=None)") from None
        raise


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
        Defaults to the DataFrames' own session, or :func:`local_session` for paths. A session
        of yours is used as it is: its Python workers run the interpreter its context was given
        (``PYSPARK_PYTHON``, else the first ``python3`` on ``PATH``), which must import
        rankflavor; set ``PYSPARK_PYTHON`` before starting it to choose another.
    buckets : int, optional
        Hash buckets of query ids, one Spark task each (default: the session's shuffle
        partitions, more for inputs of many millions of rows).
    scale, raters
        As for :func:`rankflavor.evaluate`: the scale's knobs resolved into the measures on the
        driver and its grade check run as one Spark job (the first grade off it names its line);
        a ratings file is read and aggregated on the driver (judgments are small beside a run),
        then handed to Spark with its rule, which every flavor string names.
    progress : rankflavor.base.progress.Progress, optional
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
    from rankflavor.presets import resolve_measures
    from rankflavor.spark.backend import check_query_rows, evaluate_buckets
    from rankflavor.spark.read import check_scale, read_inputs
    from rankflavor.spark.status import spark_progress

    items = [metrics] if isinstance(metrics, (str, Measure)) else list(metrics)
    if not items:
        raise UsageError("metrics: give at least one measure, e.g. metrics=['ndcg@10']")
    if isinstance(qrels, str) and qrels.startswith("irds:"):
        raise UsageError(f"{qrels}: Spark reads files; evaluate ir_datasets judgments with the local engine, or "
                         "write them to a file first (rankflavor convert)")
    if buckets is not None and buckets < 1:
        raise UsageError(f"buckets must be >= 1, received {buckets}")
    sc = None
    if scale is not None:
        from rankflavor.presets.scales import scale_named

        sc = scale_named(scale)
    measures, extras = resolve_measures(items, preset, {k: v if isinstance(v, str) else str(v) for k, v in knobs.items()},
                                        sc)
    if raters is not None:
        from rankflavor.raters.files import read_aggregated

        qrels = read_aggregated(qrels, raters, None if sc is None else sc.grades)
        measures = [m.with_knobs(raters=raters) if m.flavor.raters == "none" else m for m in measures]
    if spark is None:
        frame = qrels if hasattr(qrels, "sparkSession") else run if hasattr(run, "sparkSession") else None
        spark = frame.sparkSession if frame is not None else local_session()
    with workers_import_rankflavor(spark):
        q_table, r_table = read_inputs(spark, qrels, run)
        try:
            check_query_rows(spark, [(t.frame, t.rows) for t in (q_table, r_table)])
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
        "spark_master": spark.sparkContext.master,
        "qrels": {"source": q_table.source},
        "run": {"source": r_table.source, "tag": r_table.tag},
    }
    return Results(merged, counts, provenance, extras)


def score_spark(qrels: Any, runs: Sequence[Any], measures: Sequence[Measure], *, spark: Any = None,
                scale: Scale | None = None, buckets: int | None = None
                ) -> tuple[list[list[MeasureResult | None]], dict[tuple[int, int], RankflavorError]]:
    """Every run under every measure with Spark, as :func:`rankflavor.engine.plan.evaluate_grid`
    evaluates them locally: ``results[r][j]`` (None where it raised) and ``errors[(r, j)]``, the
    same values and the same typed errors. What :func:`rankflavor.spread` and
    :func:`rankflavor.compare` compute from, with ``engine="spark"``.

    The judgments and every run are read and checked by one Spark job (paths Spark resolves:
    files, directories of part files, globs, Parquet; or Spark DataFrames), the scale's grade
    check by a second; one job then evaluates every run under every measure, a bucket of
    queries per task, the bucket's judgments shuffled once for all runs
    (:func:`rankflavor.spark.backend.score_systems`). Only per-query rows reach the driver.
    """
    from rankflavor.spark.backend import score_systems

    with spark_inputs(qrels, runs, spark, scale) as (session, q_table, r_tables):
        return score_systems(session, q_table, r_tables, measures, buckets)


def pool_spark(runs: Sequence[Any], depth: int = 10, qrels: Any = None, budget: int | None = None,
               scale: Any = None, gain: str = "linear", strategy: str = "gap", seed: int = 0, *, spark: Any = None,
               buckets: int | None = None) -> Pool:
    """:func:`rankflavor.pool` with Spark (:mod:`rankflavor.spark.pooling`): the same Pool, from
    paths Spark resolves (files, directories of part files, globs, Parquet) or DataFrames."""
    from rankflavor.spark.pooling import pool_spark as pooled

    return pooled(runs, depth, qrels, budget, scale, gain, strategy, seed, spark=spark, buckets=buckets)


def check_spark(qrels: Any, runs: Any = (), *, spark: Any = None, scale: Any = None, limit: int = 100,
                buckets: int | None = None) -> CheckReport:
    """:func:`rankflavor.analysis.check.check` with Spark (:mod:`rankflavor.spark.checking`): the same
    CheckReport, from paths Spark resolves (TREC files, directories of part files, globs,
    Parquet) or DataFrames, the row-level checks run per bucket of queries in Spark tasks."""
    from rankflavor.spark.checking import check_spark as checked

    return checked(qrels, runs, spark=spark, scale=scale, limit=limit, buckets=buckets)


def judgments_spark(qrels: Any, runs: Any, metrics: Any = ("ndcg@10",), scale: Any = None, rel: float | None = None,
                    *, spark: Any = None, buckets: int | None = None) -> Coverage:
    """:func:`rankflavor.judgments` with Spark (:mod:`rankflavor.spark.judging`): the same
    Coverage, from paths Spark resolves (files, directories of part files, globs, Parquet) or
    DataFrames."""
    from rankflavor.spark.judging import judgments_spark as judged

    return judged(qrels, runs, metrics, scale, rel, spark=spark, buckets=buckets)


@contextmanager
def spark_inputs(qrels: Any, runs: Sequence[Any], spark: Any = None, scale: Scale | None = None
                 ) -> Iterator[tuple[Any, SparkTable, list[SparkTable]]]:
    """The session (``spark``, else the DataFrames' own, else :func:`local_session`), the
    judgments (None: none) and every run read and checked by Spark (the scale's grades too),
    for a command to use inside the block; their kept copies are released after it (a persisted
    one at once; a local checkpoint, the default on a local master, when the driver's JVM
    collects it: ``spark.rankflavor.inputKeep``, :mod:`rankflavor.spark.read`), and Spark's
    error for workers that cannot import rankflavor is a :class:`UsageError`
    (:func:`workers_import_rankflavor`)."""
    from rankflavor.spark.backend import check_query_rows
    from rankflavor.spark.read import check_scale, read_systems

    if isinstance(qrels, str) and qrels.startswith("irds:"):
        raise UsageError(f"{qrels}: Spark reads files; use the local engine for ir_datasets judgments, or "
                         "write them to a file first (rankflavor convert)")
    if spark is None:
        frames = [x for x in (qrels, *runs) if hasattr(x, "sparkSession")]
        spark = frames[0].sparkSession if frames else local_session()
    with workers_import_rankflavor(spark):
        q_table, r_tables = read_systems(spark, qrels, list(runs))
        try:
            check_query_rows(spark, [(t.frame, t.rows) for t in (q_table, *r_tables)])
            if scale is not None and qrels is not None:
                check_scale(q_table, scale)
            yield spark, q_table, r_tables
        finally:
            for table in (q_table, *r_tables):
                if table.cached is not None:
                    table.cached.unpersist()


__all__ = ["DEFAULT_MASTER", "check_spark", "evaluate_spark", "judgments_spark", "local_session", "parse_conf", "pool_spark", "score_spark", "spark_defaults", "spark_inputs", "workers_import_rankflavor"]
