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

import itertools

import pyarrow as pa
from click.testing import CliRunner

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.errors import InputError, UsageError
from rankflavor.io.run import read_run
from rankflavor.spark import evaluate_spark, parse_conf, spark_defaults
from rankflavor.spark.backend import bucketed, partition_keys

from ..conftest import shared_path

QRELS = "qrels.dl19-passage.txt"
RUN = "rankllm.dl19.bm25.top100.run"


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


# -- paths Spark resolves: directories of part files, globs, Parquet parts ------------------------


def _parts(tmp_path: Path, name: str, sizes: list[int]) -> tuple[Path, Path, list[Path]]:
    """The real run cut into part files (names in order, uneven sizes so that Spark's packing of
    splits does not keep name order), a _SUCCESS marker, and the whole file."""
    lines = shared_path("runs", RUN).read_bytes().splitlines(keepends=True)
    folder = tmp_path / name
    folder.mkdir()
    (folder / "_SUCCESS").write_bytes(b"")
    paths, at = [], 0
    for i, n in enumerate([*sizes, len(lines)]):
        part = folder / f"part-{i:05d}"
        part.write_bytes(b"".join(lines[at:at + n]))
        paths.append(part)
        at += n
        if at >= len(lines):
            break
    whole = tmp_path / f"{name}.txt"
    whole.write_bytes(b"".join(lines))
    return folder, whole, paths


@pytest.mark.parametrize("form", ["directory", "glob"])
def test_a_directory_of_part_files_reads_as_their_concatenation(spark, tmp_path: Path, form: str) -> None:  # type: ignore[no-untyped-def]
    folder, whole, _ = _parts(tmp_path, "run", [10, 2500, 40])
    qrels = str(shared_path("qrels", QRELS))
    wanted = ["ndcg@10", "AP", "P@5"]
    local = rankflavor.evaluate(qrels, str(whole), wanted)
    got = evaluate_spark(qrels, str(folder) if form == "directory" else str(folder / "part-*"), wanted, spark=spark)
    for a, b in zip(local, got, strict=True):
        assert list(a.queries) == list(b.queries) and a.values.tolist() == pytest.approx(b.values.tolist(), abs=1e-12)
    assert got.provenance["run"]["tag"] == local.provenance["run"]["tag"]  # the last part's last line
    assert got.counts == local.counts


def test_a_bad_line_in_a_later_part_is_named_in_its_own_file(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder, _, parts = _parts(tmp_path, "run", [10, 2500, 40])
    lines = parts[2].read_bytes().splitlines(keepends=True)
    lines[7] = b"19335 Q0 7 1 not-a-score tag\n"
    parts[2].write_bytes(b"".join(lines))
    with pytest.raises(InputError) as local:
        read_run(parts[2])  # the local reader on that part alone: the wording and the line
    with pytest.raises(InputError) as got:
        evaluate_spark(str(shared_path("qrels", QRELS)), str(folder), ["ndcg@10"], spark=spark)
    assert str(got.value) == str(local.value)
    assert (got.value.source, got.value.line) == (str(parts[2]), 8)


def test_a_path_spark_cannot_find_is_named(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for path in (tmp_path / "none.txt", tmp_path / "none.parquet"):
        with pytest.raises(InputError, match="file not found") as got:
            evaluate_spark(str(shared_path("qrels", QRELS)), str(path), ["ndcg@10"], spark=spark)
        assert got.value.source == str(path)


@pytest.mark.parametrize("form", ["directory", "glob"])
def test_parquet_parts_read_by_spark(spark, tmp_path: Path, form: str) -> None:  # type: ignore[no-untyped-def]
    import pyarrow.parquet as pq

    qrels, run = str(shared_path("qrels", QRELS)), str(shared_path("runs", RUN))
    table = pq.read_table(_converted(run, tmp_path))
    folder = tmp_path / "run.parquet"
    folder.mkdir()
    cut = [0, 7, 3000, table.num_rows]
    for i, (a, b) in enumerate(itertools.pairwise(cut)):
        pq.write_table(table.slice(a, b - a), folder / f"part-{i:05d}.parquet")
    wanted = ["ndcg@10", "AP"]
    local = rankflavor.evaluate(qrels, run, wanted)
    got = evaluate_spark(qrels, str(folder) if form == "directory" else str(folder / "*.parquet"), wanted, spark=spark)
    for a, b in zip(local, got, strict=True):
        assert list(a.queries) == list(b.queries) and a.values.tolist() == pytest.approx(b.values.tolist(), abs=1e-12)


def _converted(run: str, tmp_path: Path) -> Path:
    from rankflavor.io.convert import convert

    out = tmp_path / "whole.parquet"
    convert(run, out)
    return out


def test_per_query_results_come_back_a_bucket_at_a_time(tmp_path: Path) -> None:
    """100,000 queries with the driver's result limit at Spark's least (1 MiB): the per-query
    rows come back one bucket per job (a single collect of them all, about 8 MiB, is refused by
    Spark: 'Total size of serialized results ... is bigger than spark.driver.maxResultSize')."""
    queries = 100_000
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("".join(f"q{i} 0 d{i % 7} {i % 3}\n" for i in range(queries)))
    run.write_text("".join(f"q{i} Q0 d{(i + j) % 7} {j + 1} {10 - j} t\n" for i in range(queries) for j in range(3)))
    out = tmp_path / "spark.json"
    env = {**os.environ, "SPARK_CONF_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "rankflavor", "eval", str(qrels), str(run), "-m", "ndcg@10", "--engine", "spark",
         "--spark-master", "local[2]", "--spark-conf", "spark.driver.maxResultSize=1m",
         "--spark-conf", "spark.sql.shuffle.partitions=64", "--spark-conf", "spark.driver.memory=1g", "-o", str(out)],
        capture_output=True, text=True, env=env, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    saved = json.loads(out.read_text())
    local = rankflavor.evaluate(str(qrels), str(run), ["ndcg@10"])
    assert len(saved["measures"][0]["per_query"]) == queries
    assert saved["measures"][0]["value"] == pytest.approx(next(iter(local.means().values())), abs=1e-12)


def test_a_query_too_large_for_one_task_is_named_not_run(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Each query is evaluated whole in one task: past spark.rankflavor.maxQueryRows its rows
    (the runs' and the judgments' together) are refused by name before any task starts."""
    from rankflavor import spread
    from rankflavor.spark import check_spark, judgments_spark

    (tmp_path / "qrels.txt").write_text("small 0 a 1\nbig 0 b 1\n")
    lines = ["small Q0 a 1 1.0 t"] + [f"big Q0 d{i} {i} {1000 - i} t" for i in range(40)]
    (tmp_path / "r.run").write_text("\n".join(lines) + "\n")
    (tmp_path / "s.run").write_text("\n".join(lines[:25]) + "\n")
    q, r, s = (str(tmp_path / n) for n in ("qrels.txt", "r.run", "s.run"))
    spark.conf.set("spark.rankflavor.maxQueryRows", "60")
    try:
        # 40 rows of 'big' in r.run and one judgment: under the limit alone; 24 more in s.run pass it
        assert evaluate_spark(q, r, "P@5", spark=spark)[0].summary == rankflavor.evaluate(q, r, "P@5")[0].summary == 0.1
        calls = [lambda: spread(q, [r, s], "ndcg@10", presets=False, engine="spark", spark=spark),
                 lambda: judgments_spark(q, [r, s], ["ndcg@10"], scale="msmarco", spark=spark),
                 lambda: check_spark(q, [r, s], spark=spark)]
        for call in calls:
            with pytest.raises(UsageError, match=r"query 'big' has 65 rows .*\(spark\.rankflavor\.maxQueryRows=60\)"):
                call()
        spark.conf.set("spark.rankflavor.maxQueryRows", "many")
        with pytest.raises(UsageError, match="expected a whole number of rows >= 1, received 'many'"):
            evaluate_spark(q, r, "P@5", spark=spark)
    finally:
        spark.conf.unset("spark.rankflavor.maxQueryRows")
