"""``spread`` and ``compare`` on the Spark engine (issue 35): the same JSON as the local engine,
from inputs given as directories of Parquet parts, every system under every flavor in one Spark
job, and a flavor refused for one run alone refused there only, as locally.

The local side reads the same rows as single files; the two outputs are compared whole, but for
their provenance (the command line differs by ``--engine spark``). Skipped, saying why, without
PySpark or Java.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="the Spark engine tests need PySpark (python3 -m pip install pyspark)")
if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    pytest.skip("the Spark engine tests need Java 17+ on PATH or JAVA_HOME", allow_module_level=True)

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import CliRunner

from rankflavor import compare, evaluate, spread
from rankflavor.cli.main import cli
from rankflavor.errors import EvaluationError, RankflavorError
from rankflavor.spark import backend as spark_backend
from rankflavor.spark import evaluate_spark, judgments_spark


def _tables(seed: int, n_queries: int = 24) -> tuple[pa.Table, list[pa.Table]]:
    """Judgments and three runs with tied scores (one decimal) and unjudged documents."""
    rng = np.random.default_rng(seed)
    q_rows: dict[str, list] = {"query_id": [], "doc_id": [], "relevance": []}
    runs: list[dict[str, list]] = [{"query_id": [], "doc_id": [], "score": []} for _ in range(3)]
    for q in range(n_queries):
        docs = [f"d{q}-{i}" for i in range(30)]
        judged = rng.choice(30, size=12, replace=False)
        for i in judged:
            q_rows["query_id"].append(f"q{q}")
            q_rows["doc_id"].append(docs[i])
            q_rows["relevance"].append(int(rng.integers(0, 4)))
        for run in runs:
            for i in rng.choice(30, size=15, replace=False):
                run["query_id"].append(f"q{q}")
                run["doc_id"].append(docs[i])
                run["score"].append(float(rng.integers(0, 5)) / 10)
    return pa.table(q_rows), [pa.table(r) for r in runs]


def _write(table: pa.Table, local: Path, parts: Path, sizes: tuple[int, ...]) -> None:
    """``table`` as one Parquet file and as a directory of parts of the given row counts (the
    last takes the rest), named so that the largest is not the first."""
    pq.write_table(table, local)
    parts.mkdir()
    start = 0
    for i, size in enumerate((*sizes, table.num_rows)):
        piece = table.slice(start, size if i < len(sizes) else table.num_rows - start)
        if piece.num_rows:
            pq.write_table(piece, parts / f"part-{i:05d}.parquet")
        start += piece.num_rows


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    root = tmp_path_factory.mktemp("spark_commands")
    (root / "local").mkdir()
    (root / "spark").mkdir()
    qrels, runs = _tables(7)
    out: dict[str, list[str]] = {"local": [], "spark": []}
    for name, table in [("qrels.parquet", qrels)] + [(f"{s}.parquet", r) for s, r in zip("abc", runs, strict=True)]:
        # (a small first part, then a large one: Spark scans the largest file first)
        _write(table, root / "local" / name, root / "spark" / name, (7, 200))
        out["local"].append(str(root / "local" / name))
        out["spark"].append(str(root / "spark" / name))
    return out


def _json(args: list[str]) -> dict:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    data.pop("provenance", None)
    return data


def test_a_parquet_directory_is_read_in_its_files_name_order(spark, inputs) -> None:  # type: ignore[no-untyped-def]
    # Ties in input order read the rows as the concatenation of the parts in name order.
    local = evaluate(inputs["local"][0], inputs["local"][1], ["ndcg@10[ties=input_order]", "P@5[ties=input_order]"])
    remote = evaluate_spark(inputs["spark"][0], inputs["spark"][1], ["ndcg@10[ties=input_order]", "P@5[ties=input_order]"],
                            spark=spark)
    for a, b in zip(local, remote, strict=True):
        assert a.summary == b.summary
        assert list(a.queries) == list(b.queries)
        assert a.values.tolist() == b.values.tolist()
    # and the order matters here: the reversed ties give another value
    other = evaluate(inputs["local"][0], inputs["local"][1], ["ndcg@10[ties=docno_desc]"])
    assert other[0].values.tolist() != local[0].values.tolist()


def test_spread_on_spark_is_the_local_json(spark, inputs) -> None:  # type: ignore[no-untyped-def]
    local = _json(["spread", *inputs["local"], "--format", "json"])
    remote = _json(["spread", *inputs["spark"], "--format", "json", "--engine", "spark"])
    assert local == remote
    assert len(local["flavors"]) > 60 and len(local["runs"]) == 3


def test_compare_on_spark_is_the_local_json(spark, inputs) -> None:  # type: ignore[no-untyped-def]
    common = ["-m", "ndcg@10", "-m", "P@5", "--flavors", "grid", "--resamples", "200", "--format", "json"]
    local = _json(["compare", *inputs["local"], *common])
    remote = _json(["compare", *inputs["spark"], *common, "--engine", "spark"])
    assert local == remote
    assert local["measures"][0]["systems"]


def test_every_system_and_flavor_in_one_spark_job(spark, inputs, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls = []
    real = spark_backend._run_tasks

    def counted(tasks, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(len(tasks))
        return real(tasks, *args, **kwargs)

    monkeypatch.setattr(spark_backend, "_run_tasks", counted)
    s = spread(inputs["spark"][0], inputs["spark"][1:], "ndcg@10", engine="spark", spark=spark)
    assert calls == [3]  # one pass over the buckets, three systems in each task
    assert s.means.shape == (3, len(s.flavors))


def test_a_flavor_refused_for_one_run_only_is_refused_there_only(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}}
    clean = {"q1": {"a": 0.5, "b": 0.4}, "q2": {"c": 0.3, "x": 0.2}}
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, ds in qrels.items() for d, g in ds.items()))
    (tmp_path / "clean.run").write_text("".join(f"{q} Q0 {d} 1 {s} t\n" for q, ds in clean.items()
                                                for d, s in ds.items()))
    # a document twice: refused under duplicates=error, the first kept under duplicates=first
    (tmp_path / "twice.run").write_text("q1 Q0 a 1 0.5 t\nq1 Q0 a 2 0.1 t\nq1 Q0 b 3 0.4 t\nq2 Q0 c 1 0.3 t\n")
    paths = [str(tmp_path / n) for n in ("qrels.txt", "clean.run", "twice.run")]
    grid = {"duplicates": ["first", "error"], "gain": ["linear", "exp2"]}
    local = spread(paths[0], paths[1:], "ndcg@10", grid=grid, presets=False)
    remote = spread(paths[0], paths[1:], "ndcg@10", grid=grid, presets=False, engine="spark", spark=spark)
    assert local.errors and all(run == "twice.run" for run, _ in local.errors)
    assert remote.errors == local.errors
    assert np.array_equal(remote.means, local.means, equal_nan=True)
    assert remote.to_dict() == local.to_dict()


def test_no_common_query_is_the_local_error(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\n")
    (tmp_path / "r.run").write_text("q9 Q0 a 1 0.5 t\n")
    (tmp_path / "s.run").write_text("q8 Q0 a 1 0.5 t\n")
    args = (str(tmp_path / "qrels.txt"), [str(tmp_path / "r.run"), str(tmp_path / "s.run")], "ndcg@10")
    with pytest.raises(RankflavorError) as local:
        spread(*args, grid={"gain": ["linear", "exp2"]}, presets=False)
    with pytest.raises(RankflavorError) as remote:
        spread(*args, grid={"gain": ["linear", "exp2"]}, presets=False, engine="spark", spark=spark)
    assert type(remote.value) is type(local.value) is EvaluationError
    assert str(remote.value) == str(local.value)


def test_compare_on_spark_refuses_what_it_cannot_do(spark, inputs) -> None:  # type: ignore[no-untyped-def]
    from rankflavor.errors import UsageError

    with pytest.raises(UsageError, match="label source is for the local engine"):
        compare(inputs["spark"][0], inputs["spark"][1:], "ndcg@10", labels="human", engine="spark", spark=spark)
    with pytest.raises(UsageError, match="engine: expected"):
        compare(inputs["local"][0], inputs["local"][1:], "ndcg@10", engine="dask")
    result = CliRunner().invoke(cli, ["spread", *inputs["local"], "--spark-master", "local[1]"])
    assert result.exit_code == 2 and "--spark-master and --spark-conf are for --engine spark" in result.output


def test_parquet_parts_named_with_blanks_plus_and_accents(spark, inputs, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Spark lists such a file as file:///d b+é/... and names its rows' file file:/d%20b+é/...
    run = pq.read_table(inputs["local"][1])
    folder = tmp_path / "run d+é.parquet"
    _write(run, tmp_path / "one.parquet", folder, (5, 100))
    (folder / "part-00000.parquet").rename(folder / "part 0+é.parquet")  # (still first by name)
    measures = ["ndcg@10[ties=input_order]"]
    local = evaluate(inputs["local"][0], inputs["local"][1], measures)
    remote = evaluate_spark(inputs["spark"][0], str(folder), measures, spark=spark)
    assert local[0].values.tolist() == remote[0].values.tolist()


def _same_pool(a, b) -> None:  # type: ignore[no-untyped-def]
    assert a.query.tolist() == b.query.tolist() and a.doc.tolist() == b.doc.tolist()
    assert a.priority.tolist() == b.priority.tolist()  # (bit for bit: the same code on the same rows)
    assert a.runs.tolist() == b.runs.tolist() and a.best_rank.tolist() == b.best_rank.tolist()
    ca, cb = dict(a.counts), dict(b.counts)
    assert list(ca.pop("per_run").values()) == list(cb.pop("per_run").values())  # (named by their paths)
    assert ca == cb


@pytest.mark.parametrize(("judged", "budget", "strategy"), [(True, 40, "gap"), (True, None, "gap"),
                                                            (False, 25, "random")])
def test_pool_on_spark_is_the_local_pool(spark, inputs, judged, budget, strategy) -> None:  # type: ignore[no-untyped-def]
    from rankflavor import pool
    from rankflavor.spark import pool_spark

    def made(side: str, pooled, **kw):  # type: ignore[no-untyped-def]
        qrels = inputs[side][0] if judged else None
        return pooled(inputs[side][1:], 5, qrels, budget, scale="trec_dl" if judged else None, strategy=strategy,
                      seed=3, **kw)

    local, remote = made("local", pool), made("spark", pool_spark, spark=spark)
    _same_pool(local, remote)
    assert len(local) == (budget or local.counts["candidates"]) and local.counts["pooled"] > len(local)


def test_pool_cli_on_spark_writes_the_local_candidates(spark, inputs) -> None:  # type: ignore[no-untyped-def]
    common = ["-k", "5", "--budget", "30", "--scale", "trec_dl", "--format", "csv"]
    local = CliRunner().invoke(cli, ["pool", *inputs["local"][1:], "--qrels", inputs["local"][0], *common])
    remote = CliRunner().invoke(cli, ["pool", *inputs["spark"][1:], "--qrels", inputs["spark"][0], *common,
                                      "--engine", "spark"])
    assert local.exit_code == 0 and remote.exit_code == 0, remote.output
    assert local.stdout == remote.stdout and local.stdout.count("\n") == 31


def test_pool_on_spark_refuses_a_run_of_other_queries(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from rankflavor import pool
    from rankflavor.errors import InputError
    from rankflavor.spark import pool_spark

    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq2 0 b 0\n")
    (tmp_path / "ok.run").write_text("q1 Q0 a 1 0.5 t\nq1 Q0 c 2 0.4 t\n")
    (tmp_path / "other.run").write_text("q7 Q0 a 1 0.5 t\n")
    runs = [str(tmp_path / "ok.run"), str(tmp_path / "other.run")]
    with pytest.raises(InputError) as local:
        pool(runs, 5, str(tmp_path / "qrels.txt"), scale="trec_dl")
    with pytest.raises(InputError) as remote:
        pool_spark(runs, 5, str(tmp_path / "qrels.txt"), scale="trec_dl", spark=spark)
    assert str(remote.value) == str(local.value) and "other.run" in str(local.value)


def _judgments_json(args: list[str]) -> dict:
    data = _json(args)
    assert os.path.basename(data.pop("qrels")) == "qrels.parquet"  # (the two sides' paths differ)
    return data


@pytest.mark.parametrize("measures", [["-m", "ndcg@10", "-m", "P@5", "-m", "RBP@20", "--scale", "trec_dl"],
                                      ["-m", "ndcg@5[ties=pessimistic]", "-m", "AP@20", "-m", "ERR@10", "--scale", "ecommerce"]])
def test_judgments_on_spark_is_the_local_json(spark, inputs, measures) -> None:  # type: ignore[no-untyped-def]
    local = _judgments_json(["judgments", *inputs["local"], *measures, "--format", "json"])
    remote = _judgments_json(["judgments", *inputs["spark"], *measures, "--format", "json", "--engine", "spark"])
    assert local == remote
    assert len(local["runs"]) == 3 and local["runs"][0]["per_query"] and local["relevant_never_retrieved"]["count"]


def _trec_inputs(root: Path, seed: int) -> tuple[str, list[str]]:
    """Small random TREC judgments and two runs: tied scores, unjudged documents, judged queries
    one run lacks, run-only queries, a query judged all 0, grades 0-3."""
    rng = np.random.default_rng(seed)
    root.mkdir()
    qrels_lines, runs = [], [[], []]
    for q in range(int(rng.integers(3, 12))):
        docs = [f"d{int(i)}" for i in rng.choice(40, size=12, replace=False)]
        for d in docs[: int(rng.integers(1, 8))]:
            qrels_lines.append(f"q{q} 0 {d} {0 if q == 1 else int(rng.integers(0, 4))}")
        for r, lines in enumerate(runs):
            if rng.random() < 0.2:  # (this run lacks the query)
                continue
            for d in rng.choice(docs, size=int(rng.integers(1, 10)), replace=False):
                lines.append(f"q{q} Q0 {d} 0 {int(rng.integers(0, 4)) / 4} r{r}")
    runs[1].append("q99 Q0 d1 0 0.5 r1")  # (a query the judgments do not have)
    (root / "qrels.txt").write_text("\n".join(qrels_lines) + "\n")
    paths = []
    for r, lines in enumerate(runs):
        (root / f"run{r}.txt").write_text("\n".join(lines) + "\n")
        paths.append(str(root / f"run{r}.txt"))
    return str(root / "qrels.txt"), paths


@pytest.mark.parametrize("seed", range(4))
def test_judgments_on_spark_equal_local_on_random_inputs(spark, tmp_path, seed) -> None:  # type: ignore[no-untyped-def]
    from rankflavor import judgments

    qrels, runs = _trec_inputs(tmp_path / "in", seed)
    flavors = [["ndcg@5", "P@3", "RR", "RBP@10"],
               ["ndcg@10[missing=zero,ideal=global]", "AP@10[missing=zero]", "dcg@5[ties=optimistic]"],
               ["ndcg@5[empty=nan,unjudged=condensed]", "ERR@5[ties=averaged]"],
               ["ndcg@3[gain=linear,discount=reciprocal]", "P@5[missing=zero,empty=zero]"]][seed]

    def outcome(judge, **session):  # type: ignore[no-untyped-def]
        try:
            return judge(qrels, runs, flavors, scale="trec_dl", **session).to_dict()
        except RankflavorError as exc:  # (a flavor whose interval is refused: the same error)
            return type(exc).__name__, str(exc)

    local = outcome(judgments)
    assert local == outcome(judgments_spark, spark=spark)
    assert isinstance(local, dict) == (seed != 2), local  # (seed 2's empty=nan is refused: the error compared)


def test_judgments_on_spark_names_a_run_of_other_queries_as_locally(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from rankflavor import judgments

    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq2 0 b 0\n")
    (tmp_path / "ok.run").write_text("q1 Q0 a 1 0.5 t\nq1 Q0 c 2 0.4 t\n")
    (tmp_path / "other.run").write_text("q7 Q0 a 1 0.5 t\n")
    args = (str(tmp_path / "qrels.txt"), [str(tmp_path / "ok.run"), str(tmp_path / "other.run")], ["ndcg@10"])
    with pytest.raises(EvaluationError) as local:
        judgments(*args, scale="trec_dl")
    with pytest.raises(EvaluationError) as remote:
        judgments_spark(*args, scale="trec_dl", spark=spark)
    assert str(remote.value) == str(local.value) and "other.run" in str(local.value)


def test_judgments_of_spark_dataframes_equal_the_local_ones_of_pandas(spark) -> None:  # type: ignore[no-untyped-def]
    from rankflavor import judgments

    q = spark.createDataFrame([("q1", "a", 2), ("q1", "b", 0), ("q2", "c", 1), ("q3", "d", 3)],
                              "query_id string, doc_id string, relevance long")
    a = spark.createDataFrame([("q1", "a", 2.0), ("q1", "x", 1.0), ("q2", "c", 0.5)], "query_id string, doc_id string, score double")
    b = spark.createDataFrame([("q1", "x", 2.0), ("q2", "y", 1.0), ("q3", "d", 1.0)], "query_id string, doc_id string, score double")
    remote = judgments_spark(q, {"A": a, "B": b}, ["ndcg@3", "P@2"], scale="trec_dl", spark=spark).to_dict()
    local = judgments(q.toPandas(), {"A": a.toPandas(), "B": b.toPandas()}, ["ndcg@3", "P@2"], scale="trec_dl").to_dict()
    remote.pop("qrels"), local.pop("qrels")  # (each side's name for an input in memory)
    assert remote == local and [r["run"] for r in local["runs"]] == ["A", "B"]
