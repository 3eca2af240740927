"""The spark and spark_triples presets reproduce Spark's own RankingMetrics test values.

Oracles: apache/spark ``mllib/src/test/scala/org/apache/spark/mllib/evaluation/RankingMetricsSuite.scala``
(its three tests, each value checked to the suite's ``eps = 1.0e-5``), and PySpark 4.3's
``pyspark.mllib.evaluation.RankingMetrics`` itself on random (prediction, labels) pairs, empty label
sets and empty predictions included (PySpark drops triples' relevances, so triples are checked
against the Scala suite alone).

A Spark row is a query: its predictions are the run's ranking, its label set the judged documents
(pairs: grade >= rel; triples: every judged document, its grade the relevance). A row whose label
set is empty is a query only in the run: Spark scores it 0 with a warning and counts it in
``mean()`` (``run_only=include``); a row with labels and no prediction is a query missing from the
run, also 0 and counted.
"""

from __future__ import annotations

import numpy as np
import pytest

import rankflavor

EPS = 1e-5

# RankingMetricsSuite "Ranking metrics: MAP, NDCG, Recall" (and "NDCG with relevance": same rows)
PREDICTIONS = {"q1": [1, 6, 2, 7, 8, 3, 9, 10, 4, 5], "q2": [4, 1, 5, 6, 2, 7, 3, 8, 9, 10], "q3": [1, 2, 3, 4, 5]}
PAIRS = {"q1": {str(d): 1 for d in (1, 2, 3, 4, 5)}, "q2": {str(d): 1 for d in (1, 2, 3)}}  # q3: Array.empty
TRIPLES = {"q1": {"1": 3, "2": 2, "3": 1, "4": 1, "5": 1}, "q2": {"1": 2, "2": 0, "3": 0}}

SUITE = {
    **{f"precisionAt({k})": v for k, v in ((1, 1 / 3), (2, 1 / 3), (3, 1 / 3), (4, 0.75 / 3), (5, 0.8 / 3),
                                            (10, 0.8 / 3), (15, 8 / 45))},
    "meanAveragePrecision": 0.355026,
    "meanAveragePrecisionAt(1)": 0.333334, "meanAveragePrecisionAt(2)": 0.25, "meanAveragePrecisionAt(3)": 0.24074,
    **{f"recallAt({k})": v for k, v in ((1, 1 / 15), (2, 8 / 45), (3, 11 / 45), (4, 11 / 45), (5, 16 / 45),
                                         (10, 2 / 3), (15, 2 / 3))},
}  # fmt: skip
NDCG_PAIRS = {"ndcgAt(3)": 1 / 3, "ndcgAt(5)": 0.328788, "ndcgAt(10)": 0.487913, "ndcgAt(15)": 0.487913}
NDCG_TRIPLES = {"ndcgAt(3)": 0.511959, "ndcgAt(5)": 0.487806, "ndcgAt(10)": 0.518700, "ndcgAt(15)": 0.518700}


def run_of(predictions: dict[str, list[int]]) -> dict[str, dict[str, float]]:
    return {q: {str(d): float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in predictions.items()}


def test_ranking_metrics_suite_pairs() -> None:
    """``test("Ranking metrics: MAP, NDCG, Recall")``: q3's empty label set scores 0 and counts."""
    for name, want in {**SUITE, **NDCG_PAIRS}.items():
        res = rankflavor.evaluate(PAIRS, run_of(PREDICTIONS), name, preset="spark")[0]
        assert res.mean == pytest.approx(want, abs=EPS), name
        assert res.per_query()["q3"] == 0.0 and res.n_queries == 3, name


def test_ranking_metrics_suite_triples() -> None:
    """``test("Ranking metrics: NDCG with relevance")``: precision, recall and the MAPs read the label
    set (q2's labels of relevance 0 count), ndcgAt the relevances, in the order supplied."""
    for name, want in {**SUITE, **NDCG_TRIPLES}.items():
        res = rankflavor.evaluate(TRIPLES, run_of(PREDICTIONS), name, preset="spark_triples")[0]
        assert res.mean == pytest.approx(want, abs=EPS), name
        assert res.per_query()["q3"] == 0.0 and res.n_queries == 3, name


def test_few_predictions_spark_14886() -> None:
    """``test("MAP, NDCG, Recall with few predictions (SPARK-14886)")``: a row with no prediction."""
    labels = {"q1": {str(d): 1 for d in (1, 2, 3, 4, 5)}, "q2": {str(d): 1 for d in (1, 2, 3)}}
    for run in (run_of({"q1": [1, 6, 2]}), {**run_of({"q1": [1, 6, 2]}), "q2": {}}):  # missing, or listed empty
        got = {name: rankflavor.evaluate(labels, run, name, preset="spark")[0].mean
               for name in ("precisionAt(1)", "precisionAt(2)", "ndcgAt(1)", "ndcgAt(2)", "recallAt(1)", "recallAt(2)")}
        assert got == pytest.approx({"precisionAt(1)": 0.5, "precisionAt(2)": 0.25, "ndcgAt(1)": 0.5,
                                     "ndcgAt(2)": 0.30657, "recallAt(1)": 0.1, "recallAt(2)": 0.1}, abs=EPS)


def test_an_all_zero_label_set_is_an_empty_one_for_pairs_only() -> None:
    """Pairs: labels are the grades >= rel, so a query judged all 0 has an empty label set (0);
    triples: its labels are in the set with relevance 0, so precision counts them."""
    qrels, run = {"q": {"a": 0, "b": 0}}, {"q": {"a": 2.0, "x": 1.0}}
    assert rankflavor.evaluate(qrels, run, "precisionAt(2)", preset="spark")[0].mean == 0.0
    assert rankflavor.evaluate(qrels, run, "precisionAt(2)", preset="spark_triples")[0].mean == 0.5
    assert rankflavor.evaluate(qrels, run, "ndcgAt(2)", preset="spark_triples")[0].mean == 0.0  # maxDcg 0: 0



def _random_rows(seed: int, n: int) -> list[tuple[list[str], list[str]]]:
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        pool = [f"d{j}" for j in rng.permutation(40)]
        labels = pool[: int(rng.integers(0, 8))] if rng.random() > 0.15 else []  # some empty label sets
        preds = list(rng.permutation(pool[:20])[: int(rng.integers(0, 15))]) if rng.random() > 0.1 else []
        if preds or labels:  # a row with neither is no query of the qrels or of the run's rows
            rows.append(([str(p) for p in preds], labels))
    return rows


def test_pyspark_ranking_metrics_random(spark) -> None:  # type: ignore[no-untyped-def]
    from pyspark.mllib.evaluation import RankingMetrics

    rows = _random_rows(3, 80)
    qrels = {f"q{i:02d}": {d: 1 for d in labels} for i, (_, labels) in enumerate(rows) if labels}
    run = {f"q{i:02d}": {d: float(len(preds) - j) for j, d in enumerate(preds)} for i, (preds, _) in enumerate(rows)}
    metrics = RankingMetrics(spark.sparkContext.parallelize(rows, 2))
    assert any(not labels for _, labels in rows) and any(not preds for preds, _ in rows)
    calls = {"precisionAt(1)": lambda: metrics.precisionAt(1), "precisionAt(5)": lambda: metrics.precisionAt(5),
             "recallAt(5)": lambda: metrics.recallAt(5), "meanAveragePrecision": lambda: metrics.meanAveragePrecision,
             "meanAveragePrecisionAt(3)": lambda: metrics.meanAveragePrecisionAt(3),
             "meanAveragePrecisionAt(10)": lambda: metrics.meanAveragePrecisionAt(10),
             "ndcgAt(3)": lambda: metrics.ndcgAt(3), "ndcgAt(10)": lambda: metrics.ndcgAt(10)}
    ours = rankflavor.evaluate(qrels, run, list(calls), preset="spark")
    for res, (name, call) in zip(ours, calls.items(), strict=True):
        assert res.n_queries == len(rows), name  # every row counts, an empty label set or prediction too
        assert res.mean == pytest.approx(call(), abs=1e-12), name


def test_spark_names() -> None:
    from rankflavor.errors import FlavorError
    from rankflavor.presets import resolve_measures

    with pytest.raises(FlavorError, match="k should be positive"):
        resolve_measures(["ndcgAt(0)"], "spark", {})
    for preset in ("spark", "spark_triples"):
        for canonical, tool in (("AP@5", "meanAveragePrecisionAt(5)"), ("AP", "meanAveragePrecision"),
                                ("P@5", "precisionAt(5)"), ("recall@5", "recallAt(5)"), ("ndcg@5", "ndcgAt(5)")):
            (a,), _ = resolve_measures([canonical], preset, {})
            (b,), _ = resolve_measures([tool], preset, {})
            assert (a.metric, a.k, a.flavor) == (b.metric, b.k, b.flavor), (preset, canonical)
        with pytest.raises(FlavorError, match="always takes k"):
            resolve_measures(["ndcg"], preset, {})
