"""The Spark backend equals the local engine: same per-query values (to 1e-12), statuses, summaries,
counts and flavor strings, for every registered metric (with its knobs away from their defaults)
and every preset's dialect names, on the real DL runs and on random data with ties, unjudged
documents, negative grades, missing and run-only queries and duplicates; the same typed errors
with the same messages; the same reading of TREC files.

The local engine is the oracle here because it is itself checked line by line against trec_eval
9.0.8 (tests/presets/test_trec_parity.py). One local[2] session serves every test, and agreement is
checked on many measures per Spark evaluation. Skipped, saying why, without PySpark or Java.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyspark", reason="the Spark engine tests need PySpark (python3 -m pip install pyspark)")
if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    pytest.skip("the Spark engine tests need Java 17+ on PATH or JAVA_HOME", allow_module_level=True)

import pandas as pd
from click.testing import CliRunner

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.engine.results import Results
from rankflavor.errors import FlavorError, InputError, RankflavorError, UsageError
from rankflavor.metrics import REGISTRY
from rankflavor.metrics.measure import parse_measure
from rankflavor.presets import PRESETS, resolve_measures
from rankflavor.presets.trec_eval import FAMILIES, NICKNAMES
from rankflavor.spark import evaluate_spark, local_session

from ..conftest import shared_path

TOLERANCE = 1e-12


@pytest.fixture(scope="module")
def spark():  # type: ignore[no-untyped-def]
    try:
        session = local_session("local[2]", shuffle_partitions=2, driver_memory="1g")
    except Exception as exc:  # pragma: no cover - depends on the machine's Java
        pytest.skip(f"cannot start a local Spark session: {exc}")
    yield session


def assert_same(local: Results, spark_result: Results) -> None:
    """Every measure: same flavor string, queries, statuses, values (1e-12), summary; same counts."""
    assert local.counts == spark_result.counts
    assert len(local) == len(spark_result)
    for a, b in zip(local, spark_result, strict=True):
        assert str(a.measure) == str(b.measure)
        where = a.measure.display
        assert list(a.queries) == list(b.queries), where
        assert list(a.status) == list(b.status), where
        if a.values.dtype == object:  # text-valued (relstring)
            assert list(a.values) == list(b.values), where
        else:
            np.testing.assert_allclose(b.values, a.values, rtol=0, atol=TOLERANCE, err_msg=where)
        assert a.n_queries == b.n_queries, where
        assert (a.skipped_empty, a.skipped_missing) == (b.skipped_empty, b.skipped_missing), where
        if np.isnan(a.summary):
            assert np.isnan(b.summary), where
        else:
            assert abs(a.summary - b.summary) <= TOLERANCE, where


def same_error(local: pytest.ExceptionInfo[RankflavorError], got: pytest.ExceptionInfo[RankflavorError]) -> None:
    """The Spark backend raised the local engine's error: same type, same message."""
    assert type(got.value) is type(local.value)
    assert str(got.value) == str(local.value)


#: Measures the first Spark engine had column kernels for, under every knob value it took,
#: with combined ordering knobs.
MEASURES = [
    "ndcg@5", "ndcg", "dcg@5", "P@5", "P", "recall@10", "AP", "AP@5", "RR", "RR@3", "Rprec", "bpref",
    "success@3", "judged@5", "judged", "num_ret", "num_rel", "num_rel_ret",
    "ndcg@5[gain=exp2]", "ndcg@5[gain=binary,rel=2]", "ndcg@5[gain={0:0,1:1,2:5,3:10}]",
    "ndcg@5[discount=jk(2)]", "ndcg@5[discount=reciprocal]", "ndcg@5[discount=jk(3.5)]",
    "ndcg@5[ideal=local]", "ndcg@5[ideal=recall@8]", "ndcg@5[ideal=max,max_grade=3]", "ndcg[ideal=max,max_grade=3]",
    "ndcg@5[ideal_cut=hits]", "ndcg@5[ideal_cut=none]", "ndcg@5[ideal=local,ideal_cut=hits]",
    "ndcg@5[ideal=max,max_grade=4,ideal_cut=hits]",
    "ndcg@5[empty=one]", "ndcg@5[empty=nan]", "ndcg@5[empty=skip]", "AP[empty=skip]", "ndcg@5[missing=skip]",
    "P@5[rel=2]", "AP[rel=2]", "bpref[rel=2]", "Rprec[rel=2]", "recall@10[rel=0]", "num_rel[total=qrels_positive]",
    # orderings
    "ndcg@5[ties=docno_asc,precision=float32]", "P@5[ties=docno_asc,precision=float32]",
    "ndcg@5[ties=input_order,depth=7]", "AP[ties=input_order,depth=7]", "num_ret[ties=input_order,depth=7]",
    "ndcg@5[ties=averaged,unjudged=condensed]", "dcg@5[ties=averaged,unjudged=condensed]",
    "bpref[ties=averaged,unjudged=condensed]", "ndcg@5[ties=averaged,unjudged=condensed,ideal_cut=hits]",
    "ndcg@5[ties=pessimistic,unjudged=condensed,depth=7]", "P@5[ties=pessimistic,unjudged=condensed,depth=7]",
    "ndcg@5[ties=optimistic,negatives=zero]", "AP[ties=optimistic,negatives=zero]",
    "bpref[ties=optimistic,negatives=zero]", "ndcg@5[ties=optimistic,negatives=zero,ideal=local]",
]  # fmt: skip


def random_inputs(seed: int, duplicates: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Qrels and run with score ties (also ties only in float32), unjudged documents, negative
    grades, queries with nothing relevant, qrels-only and run-only queries, and optionally
    duplicate (query, doc) rows."""
    rng = np.random.default_rng(seed)
    qrels_rows: list[tuple[str, str, float]] = []
    run_rows: list[tuple[str, str, float]] = []
    for qi in range(40):
        q = f"q{rng.integers(0, 10**rng.integers(1, 4))}_{qi}"  # ids whose byte order is not numeric order
        docs = [f"d{x}" for x in rng.choice(200, size=30, replace=False)]
        kind = qi % 8
        judged = docs[: rng.integers(0, 20)] if kind != 0 else docs[:5]
        for d in judged:
            g = float(rng.choice([-1, 0, 0, 1, 2, 3])) if kind != 0 else 0.0  # kind 0: nothing relevant
            qrels_rows.append((q, d, g))
        if kind == 1:
            continue  # a qrels query the run does not answer
        n = int(rng.integers(1, 25))
        retrieved = list(rng.permutation(docs))[:n]
        if kind == 2:
            q = q + "_run_only"
        for d in retrieved:
            s = float(np.round(rng.normal(), 1))  # one decimal: many exact ties
            if rng.random() < 0.15:
                s = 0.25 + float(rng.integers(1, 4)) * 1e-10  # distinct in float64, tied in float32
            run_rows.append((q, d, s))
    if duplicates:
        for rows, n in ((run_rows, 12), (qrels_rows, 8)):
            for i in rng.choice(len(rows), size=n, replace=False):
                q, d, v = rows[int(i)]
                rows.append((q, d, v + float(rng.choice([-1.0, 0.5, 1.0]))))
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    return qrels, run


def test_random_inputs_every_knob(spark) -> None:  # type: ignore[no-untyped-def]
    qrels, run = random_inputs(7)
    local = rankflavor.evaluate(qrels, run, MEASURES)
    assert local.counts.negative_grades > 0 and local.counts.queries_only_in_qrels > 0
    assert local.counts.queries_only_in_run > 0 and local.counts.unjudged_retrieved > 0
    got = evaluate_spark(spark.createDataFrame(qrels), spark.createDataFrame(run), MEASURES)
    assert_same(local, got)


def test_random_inputs_trec_eval_flavor(spark) -> None:  # type: ignore[no-untyped-def]
    qrels, run = random_inputs(11)
    wanted = ["ndcg", "ndcg_cut.5,10", "map", "map_cut.5", "P.5", "recall.10", "recip_rank", "Rprec", "bpref",
              "success.1,5", "num_ret", "num_rel", "num_rel_ret"]  # fmt: skip
    # trec_eval -c -l 2 (the preset's own missing=skip is exercised on the real files below).
    local = rankflavor.evaluate(qrels, run, wanted, preset="trec_eval", missing="zero", rel=2)
    got = evaluate_spark(
        spark.createDataFrame(qrels), spark.createDataFrame(run), wanted, preset="trec_eval", missing="zero", rel=2
    )
    assert_same(local, got)


def test_duplicates_first_and_best(spark) -> None:  # type: ignore[no-untyped-def]
    qrels, run = random_inputs(3, duplicates=True)
    wanted = [f"{m}[duplicates={p},ties=input_order]" for p in ("first", "best") for m in ("ndcg@5", "AP")]
    wanted += ["num_rel[duplicates=first]", "num_rel[duplicates=best]"]
    local = rankflavor.evaluate(qrels, run, wanted)
    assert local.counts.run_duplicates_resolved == 12 and local.counts.qrels_duplicates_resolved == 8
    got = evaluate_spark(spark.createDataFrame(qrels), spark.createDataFrame(run), wanted)
    assert_same(local, got)
    for buckets in (1, 5):  # duplicates in one task, or in several (counted over all)
        with pytest.raises(InputError, match="appears more than once") as local_error:
            rankflavor.evaluate(qrels, run, ["ndcg@5"])
        with pytest.raises(InputError) as got_error:
            evaluate_spark(spark.createDataFrame(qrels), spark.createDataFrame(run), ["ndcg@5"], buckets=buckets)
        same_error(local_error, got_error)
    # duplicate judgments of queries the run lacks are kept under duplicates=error, as locally
    absent = qrels[~qrels["query_id"].isin(run["query_id"])]
    assert len(absent), "random_inputs has qrels-only queries"
    extra = pd.concat([qrels.drop_duplicates(["query_id", "doc_id"]), absent.iloc[:1], absent.iloc[:1]])
    clean = run.drop_duplicates(["query_id", "doc_id"])
    wanted = ["ndcg@5", "num_rel[missing=zero]", "AP[missing=zero]"]
    local = rankflavor.evaluate(extra, clean, wanted)
    assert local.counts.qrels_duplicates_resolved == 0
    assert_same(local, evaluate_spark(spark.createDataFrame(extra), spark.createDataFrame(clean), wanted))


def test_run_duplicates_refused_only_within_the_depth_cut(spark) -> None:  # type: ignore[no-untyped-def]
    """duplicates=error: a ranking refuses a pair it keeps twice; a depth cut that keeps one row
    of each pair is no error (trec_eval -M), on both engines alike."""
    qrels, run = random_inputs(3, duplicates=True)
    clean_qrels = qrels.drop_duplicates(["query_id", "doc_id"])
    q, r = spark.createDataFrame(clean_qrels), spark.createDataFrame(run)
    outcomes = []
    for depth in (1, 2, 3, 5, None):
        # num_rel reads the judgments alone: it refuses no run duplicate (MetricSpec.reads_run)
        wanted = [f"{m}[depth={depth or 'none'}]" for m in ("ndcg@5", "AP", "num_ret", "P@3")] + ["num_rel"]
        try:
            local = rankflavor.evaluate(clean_qrels, run, wanted, preset="trec_eval")
        except InputError as error:
            # both engines name the repeat that comes first in the input
            named = re.search(r"document '[^']*' appears more than once for query '[^']*'", str(error))
            assert named is not None, str(error)
            with pytest.raises(InputError, match=re.escape(named.group(0)) + ".*" +
                               ("" if depth is None else f"top {depth} rows")) as got:
                evaluate_spark(q, r, wanted, preset="trec_eval", buckets=3)
            assert str(got.value) == str(error)
            outcomes.append("refused")
            continue
        assert local.counts.run_duplicates_kept == 12 and local.counts.run_duplicates_resolved == 0
        assert_same(local, evaluate_spark(q, r, wanted, preset="trec_eval"))
        outcomes.append("scored")
    assert outcomes[0] == "scored" and outcomes[-1] == "refused" and "refused" in outcomes[1:4]


REAL = [
    ("qrels.dl19-passage.txt", "rankllm.dl19.splade-p-p-ensemble-distil.top100.run"),
    ("qrels.dl20-passage.txt", "rankllm.dl20.bm25.top100.run"),
    ("qrels.beir-v1.0.0-trec-covid.test.txt", "rankllm.covid.bm25.top100.run"),
]


@pytest.mark.parametrize(("qrels_name", "run_name"), REAL)
def test_real_runs_from_files(spark, qrels_name: str, run_name: str) -> None:  # type: ignore[no-untyped-def]
    """Real files read by Spark: trec_eval's core measures at its default cutoffs, and graded variants."""
    qrels = str(shared_path("qrels", qrels_name))
    run = str(shared_path("runs", run_name))
    families = ("num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank", "P", "recall", "ndcg",
                "ndcg_cut", "map_cut", "success")  # fmt: skip
    wanted = [f"trec_eval:{f}" for f in families] + ["ndcg@10", "ndcg@10[gain=exp2,ideal=local]", "judged@10", "AP[rel=2]"]
    local = rankflavor.evaluate(qrels, run, wanted)
    got = evaluate_spark(qrels, run, wanted, spark=spark)
    assert_same(local, got)
    assert got.provenance["run"]["tag"] == local.provenance["run"]["tag"]


def test_every_real_run(spark) -> None:  # type: ignore[no-untyped-def]
    """All eight real runs as Spark DataFrames, in one table: each run's query ids are prefixed
    with the run's name (and its qrels copied under the same prefix), so per-query values are
    each run's own and one Spark evaluation covers them all."""
    qrels_of = {"dl19": "qrels.dl19-passage.txt", "dl20": "qrels.dl20-passage.txt", "covid": "qrels.beir-v1.0.0-trec-covid.test.txt"}
    qrels_parts, run_parts = [], []
    for run_path in sorted(shared_path("runs").glob("*.run")):
        q = rankflavor.read_qrels(shared_path("qrels", qrels_of[run_path.name.split(".")[1]]))
        r = rankflavor.read_run(run_path)
        prefix = run_path.stem + "/"
        qrels_parts.append(pd.DataFrame(
            {"query_id": [prefix + x for x in q.query.to_pylist()], "doc_id": q.doc.to_pylist(), "relevance": q.grade}
        ))
        run_parts.append(pd.DataFrame(
            {"query_id": [prefix + x for x in r.query.to_pylist()], "doc_id": r.doc.to_pylist(), "score": r.score}
        ))
    assert len(run_parts) == 8
    qrels, run = pd.concat(qrels_parts, ignore_index=True), pd.concat(run_parts, ignore_index=True)
    wanted = ["trec_eval:ndcg_cut.10", "trec_eval:map", "trec_eval:bpref", "ndcg@10[ties=averaged]"]
    local = rankflavor.evaluate(qrels, run, wanted)
    got = evaluate_spark(spark.createDataFrame(qrels), spark.createDataFrame(run), wanted)
    assert_same(local, got)


def test_irregular_file_counts_and_tag(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("# judged\nq1 0 a 2\n\nq1\t0  b 0\nq1 0 c -1\nq2 0 a 1\r\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 0.5 first\n  q1 Q0 b 2 0.5 mid extra\n# note\nq1 Q0 x 3 0.1 mid\nq3 Q0 a 1 1 last\n")
    wanted = ["ndcg@3", "P@2", "num_ret", "judged@3"]
    local = rankflavor.evaluate(str(qrels), str(run), wanted)
    got = evaluate_spark(str(qrels), str(run), wanted, spark=spark)
    assert got.counts.comment_lines == 2 and got.counts.run_lines_with_extra_fields == 1
    assert_same(local, got)
    assert got.provenance["run"]["tag"] == "last"


@pytest.fixture
def small_splits(spark):  # type: ignore[no-untyped-def]
    """Spark's text reader cuts files into pieces of a few hundred bytes (many partitions)."""
    names = ("spark.sql.files.maxPartitionBytes", "spark.sql.files.openCostInBytes")
    before = {n: spark.conf.get(n) for n in names}
    for n in names:
        spark.conf.set(n, "200")
    yield
    for n, v in before.items():
        spark.conf.set(n, v)


def test_errors_name_the_file_line_across_splits(spark, tmp_path: Path, small_splits) -> None:  # type: ignore[no-untyped-def]
    """A file read in many partitions: its lines are numbered across them (an error a task meets
    names the line as the local engine does), its last tag and its counts are the file's."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    judged = [f"q{i} 0 d{j} {(i + j) % 3}" for i in range(12) for j in range(6)]
    qrels.write_text("# head\n\n" + "\n".join(judged[:40]) + "\n# mid\n" + "\n".join(judged[40:]) + "\n")
    lines = [f"q{i} Q0 d{j} {j + 1} {1 - j / 10} tag{i}" for i in range(12) for j in range(8)]
    run.write_text("\n".join(lines[:50]) + "\n\n# note\n" + "\n".join(lines[50:]) + "\n")
    assert spark.read.text(str(run)).rdd.getNumPartitions() > 3
    wanted = ["ndcg@5", "P@3", "num_ret"]
    local = rankflavor.evaluate(str(qrels), str(run), wanted)
    got = evaluate_spark(str(qrels), str(run), wanted, spark=spark)
    assert_same(local, got)
    assert got.provenance["run"]["tag"] == local.provenance["run"]["tag"] == "tag11"
    # duplicates deep in both files, of queries in several buckets
    qrels.write_text(qrels.read_text() + "q3 0 d1 2\nq9 0 d2 1\n")
    run.write_text(run.read_text() + "q5 Q0 d1 9 0.01 late\nq10 Q0 d3 9 0.01 late\n")
    for q_path, r_path in ((qrels, run), (tmp_path / "clean.txt", run)):
        if q_path.name == "clean.txt":
            q_path.write_text("\n".join(judged) + "\n")
        with pytest.raises(InputError, match=r":\d+: document") as local_error:
            rankflavor.evaluate(str(q_path), str(r_path), wanted)
        with pytest.raises(InputError) as got_error:
            evaluate_spark(str(q_path), str(r_path), wanted, spark=spark, buckets=4)
        same_error(local_error, got_error)


@pytest.mark.parametrize("keep", ["persist", "checkpoint", "none", "cache"])
def test_each_way_of_keeping_the_inputs_gives_the_local_values(spark, tmp_path: Path, small_splits,  # type: ignore[no-untyped-def]
                                                               keep: str) -> None:
    """spark.rankflavor.inputKeep: the checked inputs persisted, checkpointed or read again give
    the same values, counts and tag (the last line's, looked up after the check); another
    choice is refused by name."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("# judged\n" + "".join(f"q{i} 0 d{j} {(i * j) % 3}\n" for i in range(9) for j in range(7)))
    lines = [f"q{i}\tQ0 d{j}  {j + 1} {1 - j / 10} t{i}{' extra' * (j == 3)}" for i in range(9) for j in range(8)]
    run.write_text("\n".join(lines[:30]) + "\n\n# note\n" + "\n".join(lines[30:]) + "\n")
    wanted = ["ndcg@5", "P@3", "num_ret", "judged@3"]
    spark.conf.set("spark.rankflavor.inputKeep", keep)
    try:
        if keep == "cache":
            with pytest.raises(UsageError, match=r"spark\.rankflavor\.inputKeep: expected one of persist, "
                                                 r"checkpoint, none, received 'cache'"):
                evaluate_spark(str(qrels), str(run), wanted, spark=spark)
            return
        got = evaluate_spark(str(qrels), str(run), wanted, spark=spark, buckets=3)
    finally:
        spark.conf.unset("spark.rankflavor.inputKeep")
    local = rankflavor.evaluate(str(qrels), str(run), wanted)
    assert_same(local, got)
    assert got.counts.comment_lines == 2 and got.counts.run_lines_with_extra_fields == 9
    assert got.provenance["run"]["tag"] == local.provenance["run"]["tag"] == "t8"


def test_malformed_file_names_the_line(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 high t\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\n")
    with pytest.raises(InputError, match=r"run.txt:2: score 'high' is not a number"):
        evaluate_spark(str(qrels), str(run), ["ndcg@10"], spark=spark)


@pytest.mark.parametrize("score", ["1d", "1F", "0x1p3", "1_0", "1.5\x01"])
def test_a_score_java_reads_and_pyarrow_does_not_names_the_line(spark, tmp_path: Path, score: str) -> None:  # type: ignore[no-untyped-def]
    """Spark's cast to double is Java's parseDouble, which reads "1d" as 1.0: the local reader and
    trec_eval do not, and the Spark engine once evaluated such a file."""
    run = tmp_path / "run.txt"
    run.write_text(f"q1 Q0 a 1 0.5 t\nq1 Q0 b 2 {score} t\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\n")
    with pytest.raises(InputError, match=r"run.txt:2: score .* is not a number"):
        evaluate_spark(str(qrels), str(run), ["P@2"], spark=spark)


@pytest.mark.parametrize("where", [b"q1 Q0 b\xff 2 0.4 t\n", b"q\xff Q0 b 2 0.4 t\n", b"q1 Q0 b 2 0.4 t\xc3\n"])
def test_a_byte_that_is_not_utf8_names_the_line(spark, tmp_path: Path, where: bytes) -> None:  # type: ignore[no-untyped-def]
    """Spark's text reader keeps bytes that are not UTF-8; the local reader rejects a file with
    them in a field it keeps, or in the run tag it reports (the last line's)."""
    run = tmp_path / "run.txt"
    run.write_bytes(b"q1 Q0 a 1 0.5 t\n" + where)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\n")
    with pytest.raises(InputError, match="not valid UTF-8 text") as local:
        rankflavor.evaluate(str(qrels), str(run), ["P@2"])
    with pytest.raises(InputError) as got:
        evaluate_spark(str(qrels), str(run), ["P@2"], spark=spark)
    assert str(got.value) == str(local.value)


@pytest.mark.parametrize("where", [b"q1 Q0 b\x00c 2 0.4 t\n", b"q\x001 Q0 b 2 0.4 t\n"])
def test_an_id_holding_nul_names_the_line(spark, tmp_path: Path, where: bytes) -> None:  # type: ignore[no-untyped-def]
    """One rule for every reader (rankflavor.io.nul, issue #32): Spark's text reader and the
    DataFrame path refuse an id holding a NUL byte as the local reader does."""
    run = tmp_path / "run.txt"
    run.write_bytes(b"q1 Q0 a 1 0.5 t\n" + where)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\n")
    with pytest.raises(InputError, match=r"run\.txt:2: the .* id holds a NUL byte") as local:
        rankflavor.evaluate(str(qrels), str(run), ["P@2"])
    with pytest.raises(InputError) as got:
        evaluate_spark(str(qrels), str(run), ["P@2"], spark=spark)
    assert str(got.value) == str(local.value)
    frame = spark.createDataFrame(pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b\x00c"], "score": [1.0, 0.5]}))
    with pytest.raises(InputError, match="an id holding a NUL byte"):
        evaluate_spark(str(qrels), frame, ["P@2"], spark=spark)


@pytest.mark.parametrize("where", [b"# \xff\n", b"q1 Q0 b \xff 0.4 t\xc3\n", b"q1 \xff b 2 0.4 t extra\xff\n"])
def test_bytes_not_utf8_in_skipped_fields_are_read_alike(spark, tmp_path: Path, where: bytes) -> None:  # type: ignore[no-untyped-def]
    """A comment, Q0, the rank, or a tag other than the last line's: fields neither reader keeps,
    so bytes that are not UTF-8 there are no error to either (as to trec_eval)."""
    run = tmp_path / "run.txt"
    run.write_bytes(b"q1 Q0 a 1 0.5 t\n" + where + b"q1 Q0 c 3 0.3 t\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 1\n")
    local = rankflavor.evaluate(str(qrels), str(run), ["P@2", "num_ret"])
    got = evaluate_spark(str(qrels), str(run), ["P@2", "num_ret"], spark=spark)
    assert_same(local, got)


def test_a_lone_cr_is_a_blank_not_a_line_end(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Spark's text reader ends lines at a lone CR by default; trec_eval and the local reader
    take it for a blank, so the second "line" is extra fields of the first."""
    run = tmp_path / "run.txt"
    run.write_bytes(b"q1 Q0 a 1 0.5 t\rq1 Q0 b 2 0.4 t\r\nq1 Q0 c 3 0.3 t\r\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(b"q1 0 b 1\r\nq1 0 c 1\n")
    wanted = ["P@3", "num_ret"]
    local = rankflavor.evaluate(str(qrels), str(run), wanted)
    got = evaluate_spark(str(qrels), str(run), wanted, spark=spark)
    assert local["num_ret"].per_query() == {"q1": 2.0}
    assert got.counts.run_lines_with_extra_fields == local.counts.run_lines_with_extra_fields == 1
    assert_same(local, got)


@pytest.mark.parametrize("fractional", ["keep", "truncate"])
def test_fractional_grades_as_the_local_engine(spark, tmp_path: Path, fractional: str) -> None:  # type: ignore[no-untyped-def]
    """trec_eval truncates a grade toward zero (atol): 0.4 is not relevant, -0.5 is a judged 0."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 a 1.5\nq1 0 b 2.7\nq1 0 c 0.4\nq1 0 d -0.5\nq1 0 e 1\nq2 0 a 0.5\n")
    run.write_text("q1 Q0 c 1 5 t\nq1 Q0 d 2 4 t\nq1 Q0 x 3 3 t\nq1 Q0 a 4 2 t\nq1 Q0 b 5 1 t\nq2 Q0 a 1 1 t\n")
    wanted = [f"{m}[{knobs}fractional={fractional}]" for m, knobs in
              (("ndcg", ""), ("ndcg@3", "gain=exp2,"), ("P@5", ""), ("bpref", ""), ("num_rel", "total=qrels_positive,"),
               ("ndcg", "unjudged=condensed,"))]
    local = rankflavor.evaluate(str(qrels), str(run), wanted)
    got = evaluate_spark(str(qrels), str(run), wanted, spark=spark)
    assert_same(local, got)
    assert local[4].mean == (5 if fractional == "keep" else 3)  # grades > 0, truncated or not
    with pytest.raises(InputError, match="fractional=error") as refused:
        evaluate_spark(str(qrels), str(run), ["P@5[fractional=error]"], spark=spark)
    with pytest.raises(InputError) as local_refused:
        rankflavor.evaluate(str(qrels), str(run), ["P@5[fractional=error]"])
    assert str(refused.value).split(": ", 1)[1] == str(local_refused.value).split(": ", 1)[1]


def test_policy_errors(spark) -> None:  # type: ignore[no-untyped-def]
    """Raised in one task or in several of the five (then counted and named over all of them):
    the local engine's type and message, never a Spark traceback."""
    qrels, run = random_inputs(5)
    q, r = spark.createDataFrame(qrels), spark.createDataFrame(run)
    other = run.assign(query_id="elsewhere-" + run["query_id"].astype(str))
    judged = run.loc[run["query_id"].isin(set(qrels["query_id"])), "query_id"].unique()[:3]
    pick = run["query_id"].isin(set(judged))
    singles = pd.concat([run[~pick], run[pick].groupby("query_id").head(1)])  # three one-document rankings
    cases = [
        (run, ["ndcg@5[missing=error]"], "missing=error"),
        (run, ["ndcg@5[empty=error]"], "empty=error"),
        (run, ["ndcg@5[negatives=error]"], "negatives=error"),
        (run, ["ndcg@5[run_only=error]"], "run_only=error"),
        (singles, ["ndcg@5[singletons=error]"], "singletons=error"),
        (run, ["ERR@5[max_grade=2]"], "exceeds max_grade=2"),  # a FlavorError the kernel raises
        # the first measure that fails decides, as in one local evaluation
        (run, ["ndcg@5", "P@5[missing=error]", "ndcg@5[empty=error]"], "missing=error"),
        (run, ["ndcg@5", "P@5[empty=error]", "ndcg@5[missing=error]"], "empty=error"),
        (run, ["ndcg@5[missing=error,empty=error]"], "empty=error"),
        (other, ["ndcg@5"], "no query is both in the run and in the qrels"),
        (other, ["ndcg@5[empty=error,run_only=error]"], "no query is both in the run and in the qrels"),
        # run_only=include has something to score; the second measure has not
        (other, ["ndcg@5[run_only=include]", "P@5"], "no query is both in the run and in the qrels"),
    ]
    for run_frame, wanted, what in cases:
        with pytest.raises(RankflavorError, match=re.escape(what)) as local:
            rankflavor.evaluate(qrels, run_frame, wanted)
        with pytest.raises(RankflavorError) as got:
            evaluate_spark(q, r if run_frame is run else spark.createDataFrame(run_frame), wanted, buckets=5)
        same_error(local, got)


#: The metrics and knobs the first Spark engine refused (its check_supported): a UsageError then.
ONCE_REFUSED = [
    "ERR@5[max_grade=3]", "IPrec[param=0.3]", "IPrec_avg", "Rprec_mult[param=2]", "infAP", "utility", "binG", "G", "ndcg_rel",
    "Rndcg", "relative_P@5", "set_AP", "F", "num_nonrel_judged_ret", "relstring@5", "ndcg@5[self_hits=drop]",
    "P@5[p_divisor=hits]", "ndcg@5[unjudged_grade=1]", "ndcg@5[min_grade=1]", "ndcg@5[ideal=as_supplied]",
    "ndcg@5[run_only=include]", "AP[run_only=include,empty=one]",
]  # fmt: skip


def test_once_refused_metrics_and_knobs_match_the_local_engine(spark) -> None:  # type: ignore[no-untyped-def]
    qrels, run = random_inputs(13)
    local = rankflavor.evaluate(qrels, run, ONCE_REFUSED)
    assert_same(local, evaluate_spark(spark.createDataFrame(qrels), spark.createDataFrame(run), ONCE_REFUSED))


#: A value away from the default for each knob (several for the knobs of the orderings and the ideal).
NON_DEFAULT = {
    "gain": ["exp2", "binary", "{0:0,1:1,2:5,3:10}"], "discount": ["reciprocal", "jk(3.5)", "log(10)"],
    "ideal": ["local", "recall@8", "max", "as_supplied"], "ideal_cut": ["hits", "none"], "max_grade": ["4"],
    "min_grade": ["1"], "rel": ["2", "0"], "unjudged": ["condensed"], "unjudged_grade": ["1"], "negatives": ["zero"],
    "ties": ["docno_asc", "input_order", "averaged", "pessimistic", "optimistic"], "precision": ["float32"],
    "depth": ["7"], "empty": ["one", "nan", "skip"], "missing": ["skip"], "run_only": ["include"],
    "fractional": ["truncate"], "self_hits": ["drop"], "p_divisor": ["hits", "judged"], "duplicates": ["first", "best"],
    "total": ["qrels_positive"], "distractor_grade": ["-1", "0"], "penalty": ["-0.5"], "utility": ["grade"],
    "ap_divisor": ["min_k_relevant", "found"], "relevant_set": ["retrieved"], "nonpositive": ["nonrelevant"],
}  # fmt: skip
#: Knobs a value needs beside it (ideal=max needs the top grade).
COMPANIONS = {("ideal", "max"): "max_grade=3"}
#: Knobs a metric needs to be evaluated at all (its parameter, the top grade of ERR).
NEEDS = {"IPrec": {"param": "0.5"}, "Rprec_mult": {"param": "0.5"}, "ERR": {"max_grade": "3"},
         "nERR": {"max_grade": "3"}, "RBP": {"max_grade": "3"}, "ERR_gain": {"max_grade": "3"},
         "nERR_gain": {"max_grade": "3"},
         **{name: {"max_grade": "3"} for name in ("RBP_cwl", "NERR8", "NERR9", "NERR10", "NERR11", "INST", "INSQ",
                                                 "BPM", "SDCG")}}
#: The parameter knob away from the metric's default, for the metrics that read it.
PARAMS = {"IPrec": "0.2", "IPrec_avg": "(0.2,0.8)", "Rprec_mult": "2", "utility": "(1,-1,0,0)", "F": "0.25",
          "RBP": "0.5", "RBP_resid": "0.5", "RBP_gain": "0.5", "UDCG": "(0.5,0.4,0.3,0.2,0.1,-0.5,-0.4,-0.3,-0.2,-0.1)",
          "RBP_cwl": "0.5", "NERR10": "0.5", "NERR11": "2", "INST": "2", "INSQ": "2", "BPM": "2", "Compat": "0.8"}


def registry_measures() -> list[str]:
    """Every registered metric, with and without a cutoff where it takes one, and with each knob
    it reads away from the default, one at a time (the values a metric refuses are left out)."""

    def text(base: str, knobs: dict[str, str]) -> str:
        return base + ("[" + ",".join(f"{k}={v}" for k, v in knobs.items()) + "]" if knobs else "")

    out: list[str] = []
    for name, spec in REGISTRY.items():
        bases = {"none": [name], "required": [f"{name}@5"], "optional": [name, f"{name}@5"]}[spec.cutoff]
        needs = NEEDS.get(name, {})
        out += [text(b, needs) for b in bases]
        params = {"param": [PARAMS[name]]} if "param" in spec.knobs else {}
        for knob, values in {**NON_DEFAULT, **params}.items():  # (a knob the metric does not read is refused)
            for value in values:
                knobs = {**needs, knob: value}
                if (knob, value) in COMPANIONS:
                    k, v = COMPANIONS[knob, value].split("=")
                    knobs[k] = v
                candidate = text(bases[-1], knobs)
                try:
                    parse_measure(candidate)
                except FlavorError:
                    continue
                out.append(candidate)
    return list(dict.fromkeys(out))


def test_registry_measures_cover_every_metric_and_knob() -> None:
    """The enumeration is not hollow: every metric, and every knob value of NON_DEFAULT, is there."""
    texts = registry_measures()
    metrics = {parse_measure(t).metric for t in texts}
    assert metrics == set(REGISTRY)
    assert {n for n, spec in REGISTRY.items() if "param" in spec.knobs} == set(PARAMS)
    for knob, values in NON_DEFAULT.items():
        for value in values:
            assert any(f"{knob}={value}" in t for t in texts), (knob, value)
    assert len(texts) > 10 * len(REGISTRY)


def _cut(name: str) -> list[str]:
    return [name, f"{name}@10"]


#: Each preset's own metric names: the trec_eval families (and their nicknames), each entry of
#: each dialect's name table, and every preset's default measures (added below).
DIALECT = {
    "trec_eval": [*FAMILIES, *NICKNAMES, "P.5,10", "ndcg_cut.5,10", "relstring.5", "iprec_at_recall.0.2",
                  "Rprec_mult.0.5,2", "utility.1,-1,0,0", "set_F.0.5", "G.0=0,1=1,2=3"],
    "pytrec_eval": ["ndcg_cut.10", "map", "P.5", "recip_rank", "bpref", "Rprec", "success.1"],
    "ir_measures": ["nDCG@10", "nDCG", "P@10", "RR", "RR@10", "AP", "AP@10", "R@10", "Judged@10", "Success@10",
                    "Rprec", "Bpref", "NumRet", "NumRelRet", "NumRel", "NumQ", "NDCG@5", "Precision@5", "MRR@5",
                    "MAP", "Recall@5", "RPrec", "BPref", "nDCG(dcg='exp-log2')@10", "P(rel=2)@5"],
    "ranx": ["ndcg@10", "ndcg_burges@10", "dcg@10", "dcg_burges@10", "mrr@10", "map@10", "recall@10",
             "precision@10", "hit_rate@10", "r-precision", "ndcg@10-l2", "hits@10", "f1@10", "rbp.95", "rbp.8-l2",
             "bpref", "bpref-l2"],
    "gdeval": ["ndcg@20", "err@20"],
    "trectools": ["NDCG@10", "P@10", "R@100", "MAP@1000", "recip_rank@1000",
                  "get_ndcg(depth=10, trec_eval=False)", "get_map(depth=100, removeUnjudged=True)"],
    "ntcireval": ["nDCG@10", "MSnDCG@10", "nDCG@10 -g 1:2:3", "AP", "AP@10", "RR", "P@10", "Hit@10", "ERR -g 1:2:3",
                  "nERR@10 -g 1:3:7", "RBP -g 1:2:3"],
    "msmarco": ["MRR@10", "MRR@100"],
    "trec_dl": ["ndcg@10", "AP", "RR@10", "recall@100"],
    "beir": ["NDCG@10", "MAP@10", "Recall@100", "P@10", "MRR@10"],
    "elasticsearch": ["dcg", "dcg@5", "dcg(normalize=true)", "dcg(normalize=true,unknown_doc_rating=1)",
                      "precision@5(ignore_unlabeled=true)", "recall(relevant_rating_threshold=2)", "mean_reciprocal_rank",
                      "expected_reciprocal_rank(maximum_relevance=3,unknown_doc_rating=1)"],
    "opensearch": ["dcg(normalize=true)", "precision"],
    "quepid": ["nDCG@10", "NDCG_CUT@10", "P@10", "AP@10", "RR@10", "ERR@10"],
    "spark": ["ndcgAt(10)", "precisionAt(5)", "recallAt(10)", "meanAveragePrecision", "meanAveragePrecisionAt(5)"],
    "spark_triples": ["ndcgAt(10)", "ndcgAt(3)", "precisionAt(5)", "meanAveragePrecisionAt(5)"],
    "sklearn": [*_cut("ndcg"), "dcg@5", "ndcg_score(k=10, ignore_ties=True)", "dcg_score(k=5, log_base=2)"],
    "torchmetrics": ["ndcg@10", "retrieval_normalized_dcg(top_k=10)", "RetrievalNormalizedDCG(top_k=5, empty_target_action=pos)",
                     "RetrievalMAP(top_k=5)", "RetrievalMRR", "retrieval_precision(top_k=5, adaptive_k=True)",
                     "RetrievalRecall(top_k=5)", "RetrievalHitRate(top_k=5)", "RetrievalFallOut(top_k=5)",
                     "retrieval_r_precision"],
    "lightgbm": [*_cut("ndcg"), "lambdarank@5", "rank_xendcg@5"],
    "xgboost": [*_cut("ndcg"), "ndcg@10-", "ndcg@10(ndcg_exp_gain=false)"],
    "catboost": ["NDCG", "NDCG:top=10", "DCG:top=5;type=Exp", "NDCG:denominator=Position"],
    "ranklib": ["NDCG@10", "NDCG", "DCG@5"],
    "ranklib_qrel": ["NDCG@10", "DCG@5"],
}  # fmt: skip


def dialect_names() -> list[str]:
    """``PRESET:NAME`` for every name above and every preset's default measures, each checked to
    be the preset's own (its dialect or its flavor takes it)."""
    out: list[str] = []
    for preset in PRESETS.values():
        names = list(dict.fromkeys([*DIALECT.get(preset.name, []), *preset.default_metrics]))
        for name in names:
            text = f"{preset.name}:{name}"
            resolve_measures([text], None, {})  # (raises on a name the preset does not take)
            out.append(text)
    return out


def test_every_preset_has_dialect_names() -> None:
    names = dialect_names()
    for preset in PRESETS:
        if preset != "rankflavor":
            assert any(n.startswith(f"{preset}:") for n in names), preset


def _dl_inputs(which: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    qrels_name, run_name = {"dl19": REAL[0], "dl20": REAL[1]}[which]
    q = rankflavor.read_qrels(shared_path("qrels", qrels_name))
    r = rankflavor.read_run(shared_path("runs", run_name))
    return (pd.DataFrame({"query_id": q.query.to_pylist(), "doc_id": q.doc.to_pylist(), "relevance": q.grade}),
            pd.DataFrame({"query_id": r.query.to_pylist(), "doc_id": r.doc.to_pylist(), "score": r.score}))


def _inputs(data: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Random inputs; the same without negative grades, run-only and missing queries, queries
    with nothing relevant and one-document rankings (some presets refuse them: ``random_plain``);
    or a DL run."""
    if data == "random":
        return random_inputs(17)
    if data == "random_plain":
        qrels, run = random_inputs(17)
        relevant = set(qrels.loc[qrels["relevance"] >= 1, "query_id"])
        sizes = run["query_id"].value_counts()
        both = set(qrels["query_id"]) & set(sizes[sizes > 1].index) & relevant
        return (qrels[qrels["query_id"].isin(both)].assign(relevance=qrels["relevance"].clip(lower=0)),
                run[run["query_id"].isin(both)])
    return _dl_inputs(data)


@pytest.mark.parametrize(("data", "names"), [("random", "registry"), ("random_plain", "dialects"),
                                             ("dl19", "both"), ("dl20", "both")])
def test_every_metric_and_dialect_name_matches_the_local_engine(spark, data: str, names: str) -> None:  # type: ignore[no-untyped-def]
    """The issue's criterion: every registered metric (knobs away from their defaults too) and
    every preset's dialect names, on both backends, |delta| <= 1e-12, in one Spark evaluation per
    data set (seven buckets, so that the merge of many is what is checked)."""
    qrels, run = _inputs(data)
    wanted = (registry_measures() if names != "dialects" else []) + (dialect_names() if names != "registry" else [])
    local = rankflavor.evaluate(qrels, run, wanted)
    assert len(local) > 200
    got = evaluate_spark(spark.createDataFrame(qrels), spark.createDataFrame(run), wanted, buckets=7)
    assert_same(local, got)
    assert got.extras == local.extras


#: Measures evaluated alone on Spark: those that read no run (num_rel), no ranking of it
#: (num_ret), nothing but the counts (ir_measures' NumQ, trec_eval's runid), or give text.
ALONE = ["ir_measures:NumQ", "trec_eval:runid", "num_rel", "num_ret", "trec_eval:relstring.3", "ndcg@3"]


@pytest.mark.parametrize("name", ALONE)
def test_a_measure_alone_on_spark(spark, name: str) -> None:  # type: ignore[no-untyped-def]
    qrels, run = random_inputs(19)
    local = rankflavor.evaluate(qrels, run, [name])
    got = evaluate_spark(spark.createDataFrame(qrels), spark.createDataFrame(run), [name])
    assert_same(local, got)
    assert got.extras == local.extras


def _one_per_metric() -> list[str]:
    """Every registered metric once, with the cutoff it requires and the knobs it needs."""
    out = []
    for name, spec in REGISTRY.items():
        base = f"{name}@5" if spec.cutoff == "required" else name
        needs = NEEDS.get(name, {})
        out.append(base + ("[" + ",".join(f"{k}={v}" for k, v in needs.items()) + "]" if needs else ""))
    return out


@pytest.mark.parametrize("name", _one_per_metric())
def test_each_registered_metric_alone_on_spark(spark, name: str) -> None:  # type: ignore[no-untyped-def]
    """The engine issue's criterion on the Spark backend: each metric evaluated on its own."""
    qrels, run = random_inputs(23)
    local = rankflavor.evaluate(qrels, run, [name])
    got = evaluate_spark(spark.createDataFrame(qrels), spark.createDataFrame(run), [name])
    assert_same(local, got)


@pytest.mark.parametrize("names", ["registry", "dialects"])
def test_every_metric_and_dialect_name_alone_locally(names: str) -> None:
    """Each measure of the test above on its own, with the local engine (the Spark backend runs
    the same engine per bucket; test_a_measure_alone_on_spark checks that path alone)."""
    qrels, run = _inputs("random" if names == "registry" else "random_plain")
    # (every metric with and without its cutoff; its knob variants are evaluated together above)
    texts = [t for t in registry_measures() if "[" not in t or parse_measure(t).metric in NEEDS] \
        if names == "registry" else dialect_names()
    together = rankflavor.evaluate(qrels, run, texts)
    seen = 0
    for text in texts:
        alone = rankflavor.evaluate(qrels, run, [text])
        for m in alone:
            a = together[str(m.measure)]
            assert list(a.queries) == list(m.queries), text
            assert list(a.values.astype(str)) == list(m.values.astype(str)), text
            seen += 1
    assert seen >= len(texts) // 2


def test_queries_alone_in_their_buckets(spark) -> None:  # type: ignore[no-untyped-def]
    """With many more buckets than queries, buckets hold only missing queries, only run-only
    queries, or nothing: counts and policies as in one local evaluation."""
    qrels, run = random_inputs(23)
    wanted = ["ndcg@5", "AP[run_only=include]", "P@5[missing=skip]", "num_rel[total=qrels_positive]", "num_ret",
              "ndcg@5[empty=skip,missing=skip]"]  # fmt: skip
    local = rankflavor.evaluate(qrels, run, wanted)
    got = evaluate_spark(spark.createDataFrame(qrels), spark.createDataFrame(run), wanted, buckets=97)
    assert_same(local, got)
    # A duplicate of a run-only query that run_only=include ranks: refused, counted "in all",
    # though its bucket holds no judged query.
    only = run[run["query_id"].str.endswith("_run_only")].iloc[:1]
    doubled = pd.concat([run, only.assign(score=only["score"] - 1)], ignore_index=True)
    wanted = ["ndcg@5", "AP[run_only=include]"]
    with pytest.raises(InputError, match="in all") as local_error:
        rankflavor.evaluate(qrels, doubled, wanted)
    with pytest.raises(InputError) as got_error:
        evaluate_spark(spark.createDataFrame(qrels), spark.createDataFrame(doubled), wanted, buckets=97)
    same_error(local_error, got_error)


def test_cli_engine_spark_matches_local(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    qrels = str(shared_path("qrels", "qrels.dl19-passage.txt"))
    run = str(shared_path("runs", "rankllm.dl19.bm25.top100.run"))
    args = ["eval", qrels, run, "--preset", "trec_eval", "-m", "ndcg_cut.10", "-m", "map", "-m", "P.10", "-q", "-c",
            "--format", "trec"]  # fmt: skip
    runner = CliRunner()
    local = runner.invoke(cli, args)
    remote = runner.invoke(cli, [*args, "--engine", "spark"])
    assert local.exit_code == 0, local.output
    assert remote.exit_code == 0, remote.output
    assert remote.output == local.output
    # trec_eval 9.0.8's own summary line (shared/data/expected), not ours.
    assert "ndcg_cut_10           \tall\t0.5058" in remote.output


def test_scale_and_raters_as_the_local_engine(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``--scale``: the measures resolved on the driver, the grade check one Spark job naming the
    first bad line as the local check does; ``--raters``: aggregated on the driver, the rule in
    every flavor string."""
    qrels = str(shared_path("qrels", "qrels.dl19-passage.txt"))
    run = str(shared_path("runs", "rankllm.dl19.bm25.top100.run"))
    wanted = ["P@10", "ERR@10", "ndcg@10[ideal=max]", "AP"]
    assert_same(rankflavor.evaluate(qrels, run, wanted, scale="trec_dl"),
                evaluate_spark(qrels, run, wanted, spark=spark, scale="trec_dl"))
    # A typed knob beats the scale on both engines.
    assert_same(rankflavor.evaluate(qrels, run, wanted, scale="trec_dl", rel=1),
                evaluate_spark(qrels, run, wanted, spark=spark, scale="trec_dl", rel=1))
    off = tmp_path / "q.txt"
    off.write_text("q1 0 a 1\n# note\nq1 0 b 7\nq2 0 c 2\nq2 0 d 9\n")
    small = tmp_path / "r.txt"
    small.write_text("q1 Q0 a 1 1.0 t\nq2 Q0 c 1 1.0 t\n")
    with pytest.raises(InputError, match=r"q.txt:3: grade 7 .*2 judgment\(s\) are off it") as local_error:
        rankflavor.evaluate(str(off), str(small), "P@1", scale="trec_dl")
    with pytest.raises(InputError) as got_error:
        evaluate_spark(str(off), str(small), "P@1", spark=spark, scale="trec_dl")
    assert str(got_error.value) == str(local_error.value)
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("query,doc,rater,grade\nq1,a,ann,2\nq1,a,bob,3\nq1,b,ann,0\nq2,c,bob,1\nq2,c,cy,3\n")
    for rule in ("median", "quepid"):
        local = rankflavor.evaluate(str(ratings), str(small), ["ndcg@10", "P@1"], raters=rule, scale="trec_dl")
        got = evaluate_spark(str(ratings), str(small), ["ndcg@10", "P@1"], spark=spark, raters=rule, scale="trec_dl")
        assert_same(local, got)
        assert all(f"raters={rule}" in str(m.measure) for m in got)
    out = CliRunner().invoke(cli, ["eval", str(ratings), str(small), "--engine", "spark", "--raters", "mean",
                                   "--scale", "trec_dl", "-m", "P@1", "--format", "csv"])
    assert out.exit_code == 0, out.output
    assert "raters=mean" in out.output


def test_spark_reports_its_tasks_to_a_progress(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 19 item 6: the Spark job's tasks, read from Spark's status tracker, reach the caller's
    progress (tests/base/test_progress.py covers the local engine)."""
    from rankflavor.base.progress import Recorder

    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("".join(f"q{q} 0 d{d} {(q + d) % 3}\n" for q in range(20) for d in range(5)))
    run.write_text("".join(f"q{q} Q0 d{d} {d + 1} {10 - d} sys\n" for q in range(20) for d in range(8)))
    rec = Recorder()
    got = evaluate_spark(str(qrels), str(run), ["ndcg@5"], spark=spark, buckets=3, progress=rec)
    assert got.means() == rankflavor.evaluate(str(qrels), str(run), ["ndcg@5"]).means()
    label = "Spark tasks (buckets of queries) done"
    assert rec.events[0] == ("start", label, None) and rec.events[-1] == ("end", label, None)
    assert sum(n or 0 for kind, _, n in rec.events if kind == "advance") >= 3  # a Spark task per bucket at least
