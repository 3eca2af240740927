"""Queries an input names with nothing in them: a ranking of no document, a query nobody judged,
or both. Each is known to the alignment, counted, and scored as the preset's tool scores it.

Oracles (the tools' own tests and sources, never rankflavor's output):

* Spark: apache/spark ``mllib/src/main/scala/org/apache/spark/mllib/evaluation/RankingMetrics.scala``
  maps every (prediction, labels) row to a value, 0.0 for an empty label set ("Empty ground truth
  set, check input data"), and takes the RDD's ``mean()``; so a row with neither predictions nor
  labels adds a 0 to the mean. ``RankingMetricsSuite`` "Ranking metrics: MAP, NDCG, Recall" with
  such a fourth row: every suite value times 3/4. PySpark's own ``RankingMetrics`` on random rows,
  such rows included.
* Elasticsearch: elastic/elasticsearch ``modules/rank-eval``: ``TransportRankEvalAction`` evaluates
  every rated request's hits, ``EvaluationMetric.combine`` averages them all;
  ``RecallAtKTests.testNoResults`` (no hit, no rating) and ``PrecisionAtKTests.testNoRatedDocs``
  (hits, no rating) are 0.0; ``DiscountedCumulativeGainTests.testDCGAt`` gives the rated request.
* Quepid: o19s/quepid ``test/services/javascript_scorer_test.rb`` "runs even though no scores
  provided": a query with no rating scores 0.0.
* pytrec_eval, ir_measures and ranx themselves, on dicts listing queries with ``{}``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import rankflavor
from rankflavor.cli.main import cli
from rankflavor.engine.chunked import evaluate_chunked
from rankflavor.errors import EvaluationError, InputError
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.presets import resolve_measures

from ..presets.test_presets_spark import NDCG_PAIRS, NDCG_TRIPLES, PAIRS, PREDICTIONS, SUITE, TRIPLES, run_of

EPS = 1e-5  # RankingMetricsSuite's eps


# ---------------------------------------------------------------------------------------------
# Spark: a row of neither predictions nor labels


@pytest.mark.parametrize(("preset", "labels", "ndcg"), [("spark", PAIRS, NDCG_PAIRS),
                                                          ("spark_triples", TRIPLES, NDCG_TRIPLES)])
def test_spark_row_of_nothing_counts_zero(preset: str, labels: dict[str, dict[str, int]],
                                          ndcg: dict[str, float]) -> None:
    """RankingMetricsSuite's rows plus ``(Array.empty, Array.empty)``: RankingMetrics maps it to
    0.0 and ``mean()`` counts it, so every suite value is 3/4 of the suite's. The row is the run's
    ``{"q4": {}}``, with the labels silent about q4 or listing it as ``{}``."""
    run = {**run_of(PREDICTIONS), "q4": {}}
    for qrels in (labels, {**labels, "q4": {}}):
        for name, want in {**SUITE, **ndcg}.items():
            res = rankflavor.evaluate(qrels, run, name, preset=preset)
            m = res[0]
            assert m.mean == pytest.approx(want * 3 / 4, abs=EPS), name
            assert m.per_query()["q4"] == 0.0 and m.n_queries == 4, name
            assert res.counts.queries_in_run == 4


def test_spark_labels_listed_without_predictions() -> None:
    """A row of labels ``{}`` and no prediction at all (the run silent about it): 0 and counted,
    as RankingMetrics counts every row (SPARK-14886's suite values for the other rows, times 2/3)."""
    labels = {"q1": {str(d): 1 for d in (1, 2, 3, 4, 5)}, "q2": {str(d): 1 for d in (1, 2, 3)}, "q3": {}}
    run = run_of({"q1": [1, 6, 2]})
    want = {"precisionAt(1)": 0.5, "precisionAt(2)": 0.25, "ndcgAt(1)": 0.5, "ndcgAt(2)": 0.30657, "recallAt(1)": 0.1}
    for name, value in want.items():
        m = rankflavor.evaluate(labels, run, name, preset="spark")[0]
        assert m.mean == pytest.approx(value * 2 / 3, abs=EPS) and m.per_query()["q3"] == 0.0, name



def test_pyspark_rows_of_nothing_and_the_spark_engine(spark) -> None:  # type: ignore[no-untyped-def]
    """The one Spark check: PySpark's RankingMetrics on rows, some with neither predictions nor
    labels, against the spark preset on dicts listing those queries with ``{}``; and the Spark
    engine, whose inputs (TREC files, tables of one row per judgment or result) cannot name such
    a query: where a flavor scores run-only queries, a run sharing no query with the judgments
    is evaluated (0.0 each) there as locally, and refused where nothing is left to score."""
    from pyspark.mllib.evaluation import RankingMetrics

    from rankflavor.spark import evaluate_spark

    rng = np.random.default_rng(11)
    rows: list[tuple[list[str], list[str]]] = [([], []), ([], [])]
    for _ in range(30):
        pool = [f"d{j}" for j in rng.permutation(30)]
        labels = pool[: int(rng.integers(0, 6))] if rng.random() > 0.2 else []
        preds = list(rng.permutation(pool[:15])[: int(rng.integers(0, 10))]) if rng.random() > 0.2 else []
        rows.append(([str(p) for p in preds], labels))
    qrels = {f"q{i:02d}": {d: 1 for d in labels} for i, (_, labels) in enumerate(rows)}  # {} for an empty set
    run = {f"q{i:02d}": {d: float(len(preds) - j) for j, d in enumerate(preds)} for i, (preds, _) in enumerate(rows)}
    metrics = RankingMetrics(spark.sparkContext.parallelize(rows, 2))
    ours = rankflavor.evaluate(qrels, run, ["precisionAt(3)", "recallAt(5)", "meanAveragePrecision", "ndcgAt(5)"],
                               preset="spark")
    for res, want in zip(ours, (metrics.precisionAt(3), metrics.recallAt(5), metrics.meanAveragePrecision,
                                metrics.ndcgAt(5)), strict=True):
        assert res.n_queries == len(rows) and res.mean == pytest.approx(want, abs=1e-12), res.measure.display

    import pandas as pd

    q = spark.createDataFrame(pd.DataFrame({"query_id": ["a"], "doc_id": ["x"], "relevance": [1]}))
    r = spark.createDataFrame(pd.DataFrame({"query_id": ["b", "b", "c"], "doc_id": ["x", "y", "x"],
                                            "score": [2.0, 1.0, 1.0]}))
    local_q, local_r = {"a": {"x": 1}}, {"b": {"x": 2.0, "y": 1.0}, "c": {"x": 1.0}}
    names = ["quepid:nDCG@10", "spark:precisionAt(2)"]
    local = rankflavor.evaluate(local_q, local_r, names)
    got = evaluate_spark(q, r, names, spark=spark, buckets=2)
    for a, b in zip(local, got, strict=True):
        assert a.per_query() == b.per_query() == {"a": 0.0, "b": 0.0, "c": 0.0}  # (a: missing=zero)
    assert local.counts == got.counts
    with pytest.raises(EvaluationError, match="no query is both"):  # (the Spark engine's: tests/spark/test_spark.py)
        rankflavor.evaluate(local_q, local_r, ["quepid:nDCG@10", "ndcg@10"])  # the second leaves nothing to score
    with pytest.raises(rankflavor.errors.UsageError, match="cannot hold"):
        evaluate_spark(as_qrels({"a": {"x": 1}, "z": {}}), r, "ndcg@10", spark=spark)


# ---------------------------------------------------------------------------------------------
# Elasticsearch: a request with no rating


def _es_files(tmp_path: Path, ratings: dict[str, dict[str, int]], hits: dict[str, list[str]]) -> tuple[Path, Path]:
    request = {"requests": [{"id": q, "request": {"query": {"match_all": {}}},
                             "ratings": [{"_index": "index", "_id": d, "rating": g} for d, g in docs.items()]}
                            for q, docs in ratings.items()]}
    responses = {q: {"hits": {"hits": [{"_index": "index", "_id": d, "_score": float(len(docs) - i)}
                                       for i, d in enumerate(docs)]}} for q, docs in hits.items()}
    (tmp_path / "rank_eval.json").write_text(json.dumps(request))
    (tmp_path / "hits.json").write_text(json.dumps(responses))
    return tmp_path / "rank_eval.json", tmp_path / "hits.json"


#: DiscountedCumulativeGainTests.testDCGAt: docs 0..5 rated 3, 2, 3, 0, 1, 2, returned in that order.
DCG_AT = {str(i): g for i, g in enumerate((3, 2, 3, 0, 1, 2))}
EXPECTED_DCG, EXPECTED_IDCG = 13.84826362927298, 14.595390756454922


@pytest.mark.parametrize("preset", ["elasticsearch", "opensearch"])
def test_a_request_with_no_rating_scores_zero_and_counts(tmp_path: Path, preset: str) -> None:
    """RecallAtKTests.testNoResults (no hit, no rating: 0.0) and PrecisionAtKTests.testNoRatedDocs
    (hits, no rating: 0.0), beside testDCGAt's request: combine() is the mean over every request."""
    qpath, rpath = _es_files(tmp_path, {"rated": DCG_AT, "nothing": {}, "unrated": {}},
                             {"rated": list("012345"), "nothing": [], "unrated": list("abcde")})
    res = rankflavor.evaluate(qpath, rpath, ["dcg", "dcg(normalize=true)", "precision", "recall"], preset=preset)
    rated = (EXPECTED_DCG, EXPECTED_DCG / EXPECTED_IDCG, 5 / 6, 1.0)  # (precision: 5 rated >= 1 of 6 hits)
    for m, value in zip(res, rated, strict=True):
        assert m.per_query() == pytest.approx({"nothing": 0.0, "rated": value, "unrated": 0.0}, abs=1e-12)
        assert m.mean == pytest.approx(value / 3, abs=1e-12) and m.n_queries == 3, m.measure.display
    assert (res.counts.queries_listed_unjudged, res.counts.queries_listed_unjudged_in_run) == (2, 2)
    # a request body of unrated requests alone, and their searches: 0.0 each, not "no common query"
    qpath, rpath = _es_files(tmp_path, {"nothing": {}, "unrated": {}}, {"nothing": [], "unrated": list("ab")})
    alone = rankflavor.evaluate(qpath, rpath, "dcg(normalize=true)", preset=preset)[0]
    assert alone.per_query() == {"nothing": 0.0, "unrated": 0.0}


def test_every_output_counts_the_listed_queries(tmp_path: Path) -> None:
    qpath, rpath = _es_files(tmp_path, {"rated": DCG_AT, "nothing": {}}, {"rated": list("012345"), "nothing": []})
    table = CliRunner().invoke(cli, ["eval", str(qpath), str(rpath), "--preset", "elasticsearch", "-m", "dcg"],
                               env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert "1 listed in qrels with no judgment" in table.output and "(1 in the run)" in table.output
    out = CliRunner().invoke(cli, ["eval", str(qpath), str(rpath), "--preset", "elasticsearch", "-m", "dcg",
                                   "--format", "json"])
    counts = json.loads(out.output)["counts"]
    assert counts["queries_listed_unjudged"] == counts["queries_listed_unjudged_in_run"] == 1


# ---------------------------------------------------------------------------------------------
# Quepid: a case nobody rated


def _quepid(tmp_path: Path, ratings: str) -> tuple[Path, Path]:
    (tmp_path / "ratings.csv").write_text("query,docid,rating\n" + ratings)
    (tmp_path / "snapshot.csv").write_text(
        "Snapshot Name,Snapshot Time,Case ID,Query Text,Doc ID,Doc Position\n"
        "base,2026-12-02,8,red shoes,d7,1\nbase,2026-12-02,8,red shoes,d8,2\nbase,2026-12-02,8,blue shoes,d1,1\n")
    return tmp_path / "ratings.csv", tmp_path / "snapshot.csv"


def test_a_case_nobody_rated(tmp_path: Path) -> None:
    """javascript_scorer_test.rb "runs even though no scores provided": unrated results score 0.0.
    A ratings export of unrated queries alone (rows of the query text) is no error under quepid."""
    qpath, rpath = _quepid(tmp_path, "red shoes,,\nblue shoes\n")
    for name in ("P@10", "nDCG@10", "NDCG_CUT@10", "RR@10", "ERR@10"):
        m = rankflavor.evaluate(qpath, rpath, name, preset="quepid")[0]
        assert m.per_query() == {"blue shoes": 0.0, "red shoes": 0.0} and m.mean == 0.0, name
    assert math.isnan(rankflavor.evaluate(qpath, rpath, "AP@10", preset="quepid")[0].per_query()["red shoes"])
    # where the policy leaves nothing to score, still the error naming ids
    with pytest.raises(EvaluationError, match=r"'blue shoes', 'red shoes'; qrels: 0, e.g. none \(and 2 named"):
        rankflavor.evaluate(qpath, rpath, "ndcg_cut.10", preset="trec_eval")


def test_run_only_include_scores_a_run_with_no_judged_query(tmp_path: Path) -> None:
    """Under run_only=include every run query is scored (0.0 with nothing relevant), so a run that
    shares no query with the judgments is no error; under run_only=skip it still is."""
    qpath, rpath = _quepid(tmp_path, "green shoes,d1,3\n")
    m = rankflavor.evaluate(qpath, rpath, "nDCG@10", preset="quepid")[0]
    assert m.per_query() == {"blue shoes": 0.0, "green shoes": 0.0, "red shoes": 0.0}  # (green: missing=zero)
    for knobs in ({}, {"run_only": "error"}):
        with pytest.raises(EvaluationError, match="no query is both"):
            rankflavor.evaluate(qpath, rpath, "ndcg@10", **knobs)
    assert rankflavor.evaluate(qpath, rpath, "ndcg@10", run_only="include")[0].n_queries == 3


# ---------------------------------------------------------------------------------------------
# One rule for a dict and its JSON file


def test_a_dict_of_empty_rankings_is_read_as_its_json_file(tmp_path: Path) -> None:
    qrels = {"q": {"a": 1}, "p": {"b": 1}}
    for obj in ({"q": {}}, {"q": {}, "p": {"b": 1.0}}, {"q": {}, "z": {}}):
        (tmp_path / "run.json").write_text(json.dumps(obj))
        from_file = rankflavor.evaluate(qrels, tmp_path / "run.json", ["ndcg@10", "P@5"])
        from_dict = rankflavor.evaluate(qrels, obj, ["ndcg@10", "P@5"])
        assert [m.per_query() for m in from_file] == [m.per_query() for m in from_dict]
        assert from_file.counts == from_dict.counts and from_file[0].per_query()["q"] == 0.0
        assert as_run(obj).listed_empty == as_run(tmp_path / "run.json").listed_empty
        (tmp_path / "qrels.json").write_text(json.dumps(obj))
        assert as_qrels(obj).listed_empty == as_qrels(tmp_path / "qrels.json").listed_empty
    (tmp_path / "none.json").write_text("{}")
    for read in (as_run, as_qrels):
        with pytest.raises(InputError, match="is empty"):
            read({})
        with pytest.raises(InputError, match="holds no"):
            read(tmp_path / "none.json")


def test_a_dataframe_names_no_query_without_rows() -> None:
    """A DataFrame has a row per (query, document): its queries are those of its rows, so it never
    lists a query with nothing in it, and one of no row is refused as before."""
    import pandas as pd
    import pyarrow as pa

    frame = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [1.0]})
    assert as_run(frame).listed_empty == () and as_run(pa.Table.from_pandas(frame)).listed_empty == ()
    with pytest.raises(InputError, match="has no rows"):
        as_run(frame.iloc[:0])


# ---------------------------------------------------------------------------------------------
# The trec_eval family against the tools, on dicts


def _dicts(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Small qrels and run dicts in which some queries are ``{}`` on one side, the other or both."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(8):
        q = f"q{i}"
        docs = [f"d{j}" for j in rng.permutation(10)[: int(rng.integers(1, 6))]]
        side = rng.integers(0, 4)  # 0: both full, 1: qrels {}, 2: run {}, 3: both {}
        qrels[q] = {} if side in (1, 3) else {d: int(rng.integers(0, 3)) for d in docs}
        run[q] = {} if side in (2, 3) else {d: float(10 - k) for k, d in enumerate(rng.permutation([*docs, "u"]))}
    qrels["judged"], run["judged"] = {"a": 1}, {"a": 1.0}  # one query in common at least
    return qrels, run


@pytest.mark.parametrize("seed", range(4))
def test_pytrec_eval_and_ir_measures_on_listed_queries(seed: int) -> None:
    """pytrec_eval leaves out a query whose judgments are ``{}`` (trec_eval's core has none to
    look up; missing=skip); ir_measures scores it 0 and counts it (qrels keys, missing=zero)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = _dicts(seed)
    want = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "P_5", "map"}).evaluate(run)
    for name, key in (("ndcg_cut.10", "ndcg_cut_10"), ("P.5", "P_5"), ("map", "map")):
        got = rankflavor.evaluate(qrels, run, name, preset="pytrec_eval")[0].per_query()
        assert got == pytest.approx({q: v[key] for q, v in want.items()}, abs=1e-6), name
    for name in ("nDCG@10", "P@5", "AP"):
        measure = ir_measures.parse_measure(name)
        per_query = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
        res = rankflavor.evaluate(qrels, run, name, preset="ir_measures")[0]
        assert res.per_query() == pytest.approx(per_query, abs=1e-6), name
        assert res.mean == pytest.approx(ir_measures.calc_aggregate([measure], qrels, run)[measure], abs=1e-6)
    # trec_eval (a qrels file cannot list such a query): the values of the judgments without them
    judged = {q: v for q, v in qrels.items() if v}
    for name in ("ndcg_cut.10", "map"):
        listed = rankflavor.evaluate(qrels, run, name, preset="trec_eval")[0]
        bare = rankflavor.evaluate(judged, run, name, preset="trec_eval")[0]
        assert listed.per_query() == bare.per_query() and listed.mean == bare.mean, name


def test_ranx_on_listed_queries() -> None:
    """ranx's ``Qrels`` key of no judgment scores 0 and counts; absent from the run, it is refused
    (ranx asserts the query ids match unless make_comparable)."""
    ranx = pytest.importorskip("ranx")
    qrels: dict[str, Any] = {"q": {}, "r": {"a": 1, "b": 2}, "s": {}}
    run: dict[str, Any] = {"q": {"x": 2.0}, "r": {"b": 2.0, "a": 1.0, "y": 0.5}, "s": {}}
    want = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), ["ndcg@5"], return_mean=False)
    got = rankflavor.evaluate(qrels, run, "ndcg@5", preset="ranx")[0]
    assert list(got.per_query().values()) == pytest.approx(list(want), abs=1e-9) and got.n_queries == 3
    with pytest.raises(AssertionError):
        ranx.evaluate(ranx.Qrels(qrels), ranx.Run({"r": run["r"]}), ["ndcg@5"])
    with pytest.raises(EvaluationError, match="missing=error"):
        rankflavor.evaluate(qrels, {"r": run["r"]}, "ndcg@5", preset="ranx")


# ---------------------------------------------------------------------------------------------
# Counts, chunked evaluation, explain


@pytest.mark.parametrize("seed", range(3))
def test_every_query_is_counted_once(seed: int) -> None:
    qrels, run = _dicts(seed)
    c = rankflavor.evaluate(qrels, run, "ndcg@10").counts
    parts = (c.queries_evaluated, c.queries_only_in_qrels, c.queries_only_in_run, c.queries_listed_unjudged)
    assert sum(parts) == len(set(qrels) | set(run))
    assert c.queries_in_run == c.queries_evaluated + c.queries_only_in_run + c.queries_listed_unjudged_in_run
    assert c.queries_in_run == len(run) and c.queries_in_qrels == sum(1 for v in qrels.values() if v)


@pytest.mark.parametrize("preset", ["ir_measures", "pytrec_eval", "quepid", "elasticsearch", "trectools", "ranx"])
def test_chunked_keeps_listed_queries(tmp_path: Path, preset: str) -> None:
    """A TREC run cannot list a query with no document, but the judgments can (here a
    ``_rank_eval`` request body): chunked evaluation scores and counts them as one evaluation."""
    qrels, _ = _es_files(tmp_path, {"r": {"a": 1}, "s": {}, "t": {}, "v": {"z": 2}}, {})
    (tmp_path / "run.txt").write_text("r Q0 a 1 2.0 t\ns Q0 b 1 1.0 t\nu Q0 x 1 1.0 t\nv Q0 z 1 1.0 t\n")
    name = {"ir_measures": "nDCG@10", "pytrec_eval": "ndcg_cut.10", "quepid": "nDCG@10",
            "elasticsearch": "dcg(normalize=true)", "trectools": "ndcg@10", "ranx": "ndcg@10"}[preset]
    measures, _ = resolve_measures([name], preset, {})
    try:
        one = rankflavor.evaluate(qrels, tmp_path / "run.txt", name, preset=preset)
    except EvaluationError as exc:  # ranx: "t" is missing from the run
        for rows in (1, 3):
            with pytest.raises(EvaluationError) as chunked:
                evaluate_chunked(as_qrels(qrels), tmp_path / "run.txt", measures, chunk_rows=rows)
            assert str(chunked.value) == str(exc)
        return
    for rows in (1, 2, 100):
        ch = evaluate_chunked(as_qrels(qrels), tmp_path / "run.txt", measures, chunk_rows=rows)
        assert ch[0].per_query() == one[0].per_query() and ch[0].n_queries == one[0].n_queries, rows
        assert ch.counts == one.counts, rows
    assert one.counts.queries_listed_unjudged == 2 and one.counts.queries_listed_unjudged_in_run == 1


def test_explain_a_listed_query() -> None:
    qrels, run = {"q": {}, "r": {"a": 1}}, {"q": {"x": 1.0}, "r": {"a": 1.0}}
    e = rankflavor.explain(qrels, run, "q", "nDCG@10", preset="ir_measures")
    assert e.value == 0.0 and any("no judgment" in n for n in e.notes)
    with pytest.raises(rankflavor.errors.UsageError, match="missing=skip"):
        rankflavor.explain(qrels, run, "q", "ndcg_cut.10", preset="pytrec_eval")


# ---------------------------------------------------------------------------------------------
# convert: written where the format can name such a query, else refused (--lossy: left out)


def test_convert_keeps_or_refuses_listed_queries(tmp_path: Path) -> None:
    from rankflavor.errors import FormatLossError
    from rankflavor.io.convert import convert
    from rankflavor.io.formats.spec import Input

    run_in, qrels_in = tmp_path / "run.json", tmp_path / "qrels.json"
    run_in.write_text(json.dumps({"q1": {"d1": 2.0}, "q2": {}}))
    qrels_in.write_text(json.dumps({"q1": {"d1": 1}, "q3": {}}))
    for src, kind, names in ((run_in, "run", ("json", "es")), (qrels_in, "qrels", ("json", "es", "quepid"))):
        for fmt in names:
            out = tmp_path / f"{kind}.{fmt}.out"
            c = convert(src, out, kind=kind, to_format=fmt)
            assert (c.queries, c.listed, c.dropped) == (2, 1, 0), (kind, fmt)
            back = (as_run if kind == "run" else as_qrels)(Input(str(out), fmt))
            assert back.listed_empty == (as_run if kind == "run" else as_qrels)(src).listed_empty, (kind, fmt)
        for fmt in ("trec", "csv", "parquet"):
            with pytest.raises(FormatLossError, match="listed with no"):
                convert(src, tmp_path / f"{kind}.{fmt}.out", kind=kind, to_format=fmt)
            c = convert(src, tmp_path / f"{kind}.{fmt}.out", kind=kind, to_format=fmt, lossy=True)
            assert (c.queries, c.dropped) == (1, 1) and "left out 1 query" in c.summary()
