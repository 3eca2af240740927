"""``check --engine spark`` and :func:`rankflavor.spark.check_spark` (issue 35): the local report,
whole, for the same rows: Parquet directories of parts against single files, TREC text files
with every kind of finding (malformed lines too), a directory of TREC parts against their
concatenation, and random small inputs. Where paths differ (a directory here, a file there),
the Spark side's directory is renamed to the local one in the JSON text before comparing.

Skipped, saying why, without PySpark or Java.
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

from rankflavor.analysis.check import check
from rankflavor.cli.main import cli
from rankflavor.errors import UsageError
from rankflavor.spark import check_spark


def _write(table: pa.Table, local: Path, parts: Path) -> None:
    """``table`` as one Parquet file and as a directory of parts (a small first one, then a
    large one: Spark scans the largest file first)."""
    pq.write_table(table, local)
    parts.mkdir()
    pq.write_table(table.slice(0, 5), parts / "part-00000.parquet")
    pq.write_table(table.slice(5), parts / "part-00001.parquet")


def _clean(rng: np.random.Generator) -> tuple[pa.Table, list[pa.Table]]:
    """Judgments of every query (one relevant at least) and two runs of distinct scores over
    judged documents."""
    q: dict[str, list] = {"query_id": [], "doc_id": [], "relevance": []}
    runs: list[dict[str, list]] = [{"query_id": [], "doc_id": [], "score": []} for _ in range(2)]
    for k in range(12):
        for i in range(6):
            q["query_id"].append(f"q{k}")
            q["doc_id"].append(f"d{k}-{i}")
            q["relevance"].append(int(i == 0) + int(rng.integers(0, 3)))
        for run in runs:
            for rank, i in enumerate(rng.permutation(6)[:5]):
                run["query_id"].append(f"q{k}")
                run["doc_id"].append(f"d{k}-{i}")
                run["score"].append(10.0 - rank + float(rng.random()) / 10)
    return pa.table(q), [pa.table(r) for r in runs]


def _noisy(rng: np.random.Generator) -> tuple[pa.Table, list[pa.Table]]:
    """As :func:`_clean`, with duplicates, equal and tied scores, grades off the trec_dl scale,
    fractional and negative grades, queries judged only and retrieved only."""
    qrels, runs = _clean(rng)
    q = qrels.to_pydict()
    q["query_id"] += ["q3", "q5", "q40", "q41", "q7", "q8"]
    q["doc_id"] += ["d3-1", "d5-2", "x", "y", "d7-9", "d8-9"]
    q["relevance"] += [2, 0, 1, 0, 7, -1]
    out = []
    for s, run in enumerate(runs):
        r = run.to_pydict()
        r["query_id"] += ["q2", "q2", "q2", "q90", "q91", "q4", "q4", "q91"]
        r["doc_id"] += ["a", "b", "c", "z", "z", "d4-1", "e", "y"]
        r["score"] += [1.0, 1.0, 1.0, 3.0, 2.0, 0.5 + s, 9.95, 2.0]
        out.append(pa.table(r))
    return pa.table({**q, "relevance": pa.array(q["relevance"], pa.float64())}), out


@pytest.fixture(scope="module")
def parquet(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, list[str]]]:
    root = tmp_path_factory.mktemp("spark_check")
    out: dict[str, dict[str, list[str]]] = {}
    for case, make in (("clean", _clean), ("noisy", _noisy)):
        qrels, runs = make(np.random.default_rng(5))
        paths: dict[str, list[str]] = {"local": [], "spark": []}
        for side in paths:
            (root / case / side).mkdir(parents=True)
        for name, table in [("qrels.parquet", qrels), ("a.parquet", runs[0]), ("b.parquet", runs[1])]:
            _write(table, root / case / "local" / name, root / case / "spark" / name)
            paths["local"].append(str(root / case / "local" / name))
            paths["spark"].append(str(root / case / "spark" / name))
        out[case] = paths
    return out


def _cli(args: list[str], local_dir: str | None = None, spark_dir: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code in (0, 1, 3), result.output
    text = result.stdout if local_dir is None or spark_dir is None else result.stdout.replace(spark_dir, local_dir)
    return result.exit_code, text


def _both(local: list[str], spark: list[str], *options: str) -> tuple[tuple[int, str], tuple[int, str]]:
    here = _cli(["check", *local, *options])
    there = _cli(["check", *spark, *options, "--engine", "spark"], os.path.dirname(local[0]),
                 os.path.dirname(spark[0]))
    return here, there


def test_clean_parquet_directories_give_the_local_json(spark, parquet) -> None:  # type: ignore[no-untyped-def]
    (code, local), (spark_code, remote) = _both(parquet["clean"]["local"], parquet["clean"]["spark"], "--format", "json")
    assert json.loads(remote) == json.loads(local)
    assert code == spark_code == 0
    assert {f["code"] for f in json.loads(local)["findings"]} == {"grade_scale", "judged_coverage"}


def test_findings_of_parquet_directories_are_the_local_ones(spark, parquet) -> None:  # type: ignore[no-untyped-def]
    for options in (("--scale", "trec_dl", "--limit", "1"), ()):
        (code, local), (spark_code, remote) = _both(parquet["noisy"]["local"], parquet["noisy"]["spark"],
                                                    "--format", "json", *options)
        assert json.loads(remote) == json.loads(local)
        assert code == spark_code == 3
    codes = {f["code"] for f in json.loads(local)["findings"]}
    assert {"duplicate", "equal_scores", "tied_scores", "qrels_only_queries", "run_only_queries",
            "negative_grades", "no_relevant", "never_judged_docs"} <= codes


_QRELS = """# judged by hand
q1 0 d1 1
q1 0 d2 0
q1 0 d1 2
q2 0 d3 0
q2 0 d4 x
q3 0 d5 3

q4 0 d6 1 extra fields here
q9 0 d9 5
q2 0 d7
"""

_RUN = """q1 Q0 d1 1 0.9 t
q1 Q0 d2 2 0.95 t
q1 Q0 d8 x 0.5 t
q2 Q0 d3 1 0.4 t
q2 Q0 d4 2 0.4 t
q2 Q0 d3 3 0.3 t
q1 0 d1 1
q3 Q0 d5 1 nan t
q7 Q0 d1 1 2 t extra
q2 Q0 d9 4 zz t
"""


@pytest.fixture(scope="module")
def trec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("spark_check_trec")
    (root / "qrels.txt").write_text(_QRELS)
    (root / "run.txt").write_text(_RUN)
    return root


def test_trec_files_with_malformed_lines_give_the_local_json(spark, trec) -> None:  # type: ignore[no-untyped-def]
    paths = [str(trec / "qrels.txt"), str(trec / "run.txt")]
    for options in (("--limit", "2", "--scale", "trec_dl"), ("--limit", "100")):
        here = _cli(["check", *paths, "--format", "json", *options])
        there = _cli(["check", *paths, "--format", "json", *options, "--engine", "spark"])
        assert json.loads(there[1]) == json.loads(here[1])
        assert here[0] == there[0] == 3
    report = json.loads(here[1])
    assert {"malformed_line", "duplicate", "rank_not_numeric", "ranks_contradict_scores", "extra_fields",
            "off_scale"} - {f["code"] for f in report["findings"]} == {"off_scale"}
    assert [f["read"] for f in report["files"]] == ["lines", "lines"]
    # and the terminal table too (the same paths here)
    assert _cli(["check", *paths, "--engine", "spark"]) == _cli(["check", *paths])


def test_a_directory_of_trec_parts_is_checked_as_their_concatenation(spark, trec, tmp_path) -> None:  # type: ignore[no-untyped-def]
    lines = _RUN.splitlines(keepends=True)
    (tmp_path / "run.txt").mkdir()
    (tmp_path / "run.txt" / "part-0").write_text("".join(lines[:4]))
    (tmp_path / "run.txt" / "part-1").write_text("".join(lines[4:]))
    local = check(str(trec / "qrels.txt"), [str(trec / "run.txt")], limit=3).to_dict()
    remote = check_spark(str(trec / "qrels.txt"), [str(tmp_path / "run.txt")], limit=3, spark=spark).to_dict()
    assert json.loads(json.dumps(remote).replace(str(tmp_path), str(trec))) == local


def _random_files(root: Path, seed: int) -> tuple[str, str]:
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for _ in range(int(rng.integers(5, 40))):
        grade = rng.choice([0, 1, 2, 3, -1, 0.5, 9]) if rng.random() < 0.3 else int(rng.integers(0, 4))
        qrels.append(f"q{rng.integers(0, 9)} 0 d{rng.integers(0, 12)} {grade:g}")
        if rng.random() < 0.05:
            qrels.append("q1 Q0 d1 1 1 t")
    for _ in range(int(rng.integers(5, 60))):
        rank = "x" if rng.random() < 0.05 else str(rng.integers(1, 9))
        run.append(f"q{rng.integers(0, 11)} Q0 d{rng.integers(0, 15)} {rank} {rng.integers(0, 5) / 2:g} t")
        if rng.random() < 0.05:
            run.append("q1 0 d1 1")
    (root / f"q{seed}").write_text("\n".join(qrels) + "\n")
    (root / f"r{seed}").write_text("\n".join(run) + "\n")
    return str(root / f"q{seed}"), str(root / f"r{seed}")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_inputs_give_the_local_report(spark, tmp_path, seed) -> None:  # type: ignore[no-untyped-def]
    qrels, run = _random_files(tmp_path, seed)
    scale = "trec_dl" if seed % 2 else None
    local = check(qrels, [run], scale=scale, limit=3)
    remote = check_spark(qrels, [run], scale=scale, limit=3, spark=spark, buckets=3)
    assert remote.to_dict() == local.to_dict()
    assert remote.exit_code == local.exit_code


def test_what_spark_does_not_check_is_a_usage_error(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    pq.write_table(pa.table({"query_id": ["q1", None], "doc_id": ["a", "b"], "relevance": [1, 0]}),
                   tmp_path / "q.parquet")
    (tmp_path / "r.txt").write_text("q1 Q0 a 1 1 t\n")
    with pytest.raises(UsageError, match="local engine"):
        check_spark(str(tmp_path / "q.parquet"), [str(tmp_path / "r.txt")], spark=spark)
    (tmp_path / "q5.txt").write_text("q1 0 a 1 human:nist\nq1 0 b 0 human:nist\n")
    with pytest.raises(UsageError, match="fifth"):
        check_spark(str(tmp_path / "q5.txt"), [str(tmp_path / "r.txt")], spark=spark)


def test_usage_errors_exit_2(tmp_path) -> None:
    (tmp_path / "parts").mkdir()
    (tmp_path / "r.txt").write_text("q1 Q0 a 1 1 t\n")
    local_dir = CliRunner().invoke(cli, ["check", str(tmp_path / "parts"), str(tmp_path / "r.txt")])
    assert local_dir.exit_code == 2 and "--engine spark" in local_dir.output
    columns = CliRunner().invoke(cli, ["check", str(tmp_path / "r.txt"), "--columns", "query=q", "--engine", "spark"])
    assert columns.exit_code == 2 and "local engine" in columns.output
