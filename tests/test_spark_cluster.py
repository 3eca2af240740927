"""The Spark engine where users outgrow one machine (issue 35): the session's master and settings
from the command line and Spark's own defaults file, and one query bucket per Spark task.

Spark's hash partitioning placed buckets numbered 0..n-1 by hashing them again: 8 buckets landed
on 4 of 8 tasks. Here each bucket's rows are checked to reach a task of their own, by asking
Spark's TaskContext inside the tasks, and the values against the local engine. Skipped, saying
why, without PySpark or Java.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="the Spark engine tests need PySpark (python3 -m pip install pyspark)")
if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    pytest.skip("the Spark engine tests need Java 17+ on PATH or JAVA_HOME", allow_module_level=True)

import pyarrow as pa
from click.testing import CliRunner

import rankflavor
from rankflavor.cli import cli
from rankflavor.errors import UsageError
from rankflavor.spark import evaluate_spark, local_session, parse_conf, spark_defaults
from rankflavor.spark.backend import bucketed, partition_keys

from .conftest import shared_path

QRELS = "qrels.dl19-passage.txt"
RUN = "rankllm.dl19.bm25.top100.run"


@pytest.fixture(scope="module")
def spark():  # type: ignore[no-untyped-def]
    try:
        session = local_session("local[2]", shuffle_partitions=2, driver_memory="1g")
    except Exception as exc:  # pragma: no cover - depends on the machine's Java
        pytest.skip(f"cannot start a local Spark session: {exc}")
    yield session


def _where_buckets_ran(frame, buckets: int) -> dict[int, set[int]]:  # type: ignore[no-untyped-def]
    """Spark task (partition) -> the bucket numbers its co-group received, as the backend groups."""
    from pyspark import TaskContext
    from pyspark.sql import functions as F

    keys = partition_keys(frame.sparkSession, buckets)
    number = {k: b for b, k in enumerate(keys)}

    def seen(key, left: pa.Table, right: pa.Table) -> pa.Table:  # type: ignore[no-untyped-def]
        return pa.table({"task": [TaskContext.get().partitionId()], "bucket": [number[key[0].as_py()]]})

    sides = [bucketed(f, buckets, keys).groupBy("bucket") for f in (frame, frame.select("q", F.lit(1).alias("v")))]
    rows = sides[0].cogroup(sides[1]).applyInArrow(seen, "task long, bucket long").collect()
    out: dict[int, set[int]] = {}
    for row in rows:
        out.setdefault(int(row["task"]), set()).add(int(row["bucket"]))
    return out


@pytest.mark.parametrize("buckets", [8, 5, 1])
def test_each_bucket_is_a_task_of_its_own(spark, buckets: int) -> None:  # type: ignore[no-untyped-def]
    frame = spark.createDataFrame([(f"q{i}", i) for i in range(400)], "q string, v long")
    ran = _where_buckets_ran(frame, buckets)
    assert len(ran) == buckets  # as many tasks hold buckets as there are buckets
    assert all(len(b) == 1 for b in ran.values())  # each one bucket
    assert sorted(b for bs in ran.values() for b in bs) == list(range(buckets))


def test_the_keys_are_spark_s_own_partitions(spark) -> None:  # type: ignore[no-untyped-def]
    """A key's partition as Spark's repartition places it (spark_partition_id), for several sizes."""
    from pyspark.sql import functions as F

    for n in (2, 3, 8, 13, 200):
        keys = partition_keys(spark, n)
        frame = spark.createDataFrame([(k,) for k in keys], "k long").repartition(n, "k")
        placed = {r["k"]: r["p"] for r in frame.select("k", F.spark_partition_id().alias("p")).collect()}
        assert [placed[k] for k in keys] == list(range(n))


@pytest.mark.parametrize("buckets", [8, 3])
def test_values_equal_the_local_engine_whatever_the_buckets(spark, buckets: int) -> None:  # type: ignore[no-untyped-def]
    qrels, run = str(shared_path("qrels", QRELS)), str(shared_path("runs", RUN))
    wanted = ["ndcg@10", "AP", "P@5[missing=skip]", "RR"]
    local = rankflavor.evaluate(qrels, run, wanted)
    got = evaluate_spark(qrels, run, wanted, spark=spark, buckets=buckets)
    assert local.means() == pytest.approx(got.means(), abs=1e-12)
    for a, b in zip(local, got, strict=True):
        assert list(a.queries) == list(b.queries) and a.values.tolist() == pytest.approx(b.values.tolist(), abs=1e-12)
    assert got.provenance["spark_master"] == spark.sparkContext.master


def test_spark_defaults_file_is_read_as_spark_submit_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "spark-defaults.conf").write_text(
        "# a comment\n\nspark.master   spark://head:7077\nspark.executor.memory=8g\nspark.a.b: c d\n"
        "  spark.indented\tx\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert spark_defaults() == {"spark.master": "spark://head:7077", "spark.executor.memory": "8g",
                                "spark.a.b": "c d", "spark.indented": "x"}
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "none"))
    assert spark_defaults() == {}


@pytest.mark.parametrize("bad", ["spark.executor.memory", "=4g", "executor.memory=4g", ""])
def test_malformed_spark_conf_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError, match="--spark-conf: expected KEY=VALUE"):
        parse_conf([bad])
    assert parse_conf(["spark.a=1", "spark.b=x=y", "spark.a=2"]) == {"spark.a": "2", "spark.b": "x=y"}


def test_spark_options_need_the_spark_engine(tmp_path: Path) -> None:
    qrels, run = str(shared_path("qrels", QRELS)), str(shared_path("runs", RUN))
    for extra in (["--spark-master", "local[1]"], ["--spark-conf", "spark.a=1"]):
        result = CliRunner().invoke(cli, ["eval", qrels, run, "-m", "ndcg@10", *extra])
        assert result.exit_code == 2, result.output
        assert "--spark-master and --spark-conf are for --engine spark" in result.output


def test_master_and_settings_reach_a_fresh_session(tmp_path: Path) -> None:
    """A new process (its own JVM): --spark-master and --spark-conf make its session, and the
    results file says where it ran; the numbers are the local engine's."""
    qrels, run = str(shared_path("qrels", QRELS)), str(shared_path("runs", RUN))
    out = tmp_path / "spark.json"
    env = {**os.environ, "SPARK_CONF_DIR": str(tmp_path)}  # (and no defaults file of the machine's)
    (tmp_path / "spark-defaults.conf").write_text("spark.master local[2]\n")  # the option wins over it
    done = subprocess.run(
        [sys.executable, "-m", "rankflavor", "eval", qrels, run, "-m", "ndcg@10", "--engine", "spark",
         "--spark-master", "local[1]", "--spark-conf", "spark.sql.shuffle.partitions=3",
         "--spark-conf", "spark.driver.memory=1g", "-o", str(out)],
        capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    saved = json.loads(out.read_text())
    assert saved["provenance"]["spark_master"] == "local[1]"
    local = rankflavor.evaluate(qrels, run, ["ndcg@10"])
    assert saved["measures"][0]["value"] == pytest.approx(next(iter(local.means().values())), abs=1e-12)
    assert saved["measures"][0]["value"] == pytest.approx(0.5058, abs=5e-5)  # trec_eval 9.0.8's ndcg_cut_10
