"""The elasticsearch and opensearch presets reproduce ``_rank_eval``'s own test values.

Every expected value below is written in Elasticsearch's test suite, elastic/elasticsearch
``modules/rank-eval/src/test/java/org/elasticsearch/index/rankeval/`` (the test named beside it).
Documents are keyed by ``_index`` and ``_id`` there; here a test that rates two indices spells
the key ``index/id``. The ``_rank_eval`` request and search-response files are read through the
``es`` format, so a request without hits (``"hits": []``) is tested as the engine returns it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import rankflavor
from rankflavor.errors import FlavorError
from rankflavor.presets import resolve_measures

DELTA = 1e-12


def value(qrels: dict[str, dict[str, int]], hits: dict[str, list[str]], metric: str) -> dict[str, float]:
    """Per-request values of ``metric`` for hits given in rank order."""
    run = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in hits.items()}
    return rankflavor.evaluate(qrels, run, metric, preset="elasticsearch")[0].per_query()


def files(tmp_path: Path, ratings: dict[str, dict[str, int]], hits: dict[str, list[str]]) -> tuple[Path, Path]:
    """A ``_rank_eval`` request with these ratings and the search responses with these hits."""
    request = {"requests": [{"id": q, "request": {"query": {"match_all": {}}},
                             "ratings": [{"_index": "index", "_id": d, "rating": g} for d, g in docs.items()]}
                            for q, docs in ratings.items()]}
    responses = {q: {"hits": {"hits": [{"_index": "index", "_id": d, "_score": float(len(docs) - i)}
                                       for i, d in enumerate(docs)]}} for q, docs in hits.items()}
    (tmp_path / "rank_eval.json").write_text(json.dumps(request))
    (tmp_path / "hits.json").write_text(json.dumps(responses))
    return tmp_path / "rank_eval.json", tmp_path / "hits.json"


# ---------------------------------------------------------------------------------------------
# PrecisionAtKTests


def test_precision_at_k_tests() -> None:
    assert value({"q": {"0": 1}}, {"q": ["0"]}, "precision")["q"] == pytest.approx(1.0, abs=DELTA)  # testCalculation
    five = {"q": {"0": 1, "1": 1, "2": 1, "3": 1, "4": 0}}
    assert value(five, {"q": list("01234")}, "precision")["q"] == pytest.approx(4 / 5, abs=DELTA)  # testIgnoreOneResult
    graded = {"q": {str(i): i for i in range(5)}}
    got = value(graded, {"q": list("01234")}, "precision@5(relevant_rating_threshold=2)")["q"]
    assert got == pytest.approx(3 / 5, abs=DELTA)  # testRelevanceThreshold
    indices = {"q": {"test_other/0": 1, "test_other/1": 1, "test/0": 1, "test/1": 1, "test/2": 0}}
    got = value(indices, {"q": ["test/0", "test/1", "test/2"]}, "precision@5")["q"]
    assert got == pytest.approx(2 / 3, abs=DELTA)  # testPrecisionAtFiveCorrectIndex
    # testIgnoreUnlabeled: two rated hits and an unlabeled one
    rated = {"q": {"0": 1, "1": 1}}
    assert value(rated, {"q": ["0", "1", "2"]}, "precision")["q"] == pytest.approx(2 / 3, abs=DELTA)
    assert value(rated, {"q": ["0", "1", "2"]}, "precision(ignore_unlabeled=true)")["q"] == pytest.approx(1.0, abs=DELTA)


def test_precision_recall_mrr_with_no_rated_docs_score_zero_and_count() -> None:
    """testNoRatedDocs (precision and recall), testEvaluationNoRelevantInResults (MRR): five hits
    and no rating score 0.0; the request counts in the unweighted mean (another request is rated 1.0)."""
    qrels = {"rated": {"a": 1}}
    hits = {"id": list("01234"), "rated": ["a"]}
    for metric in ("precision", "precision(ignore_unlabeled=true)", "recall", "mean_reciprocal_rank"):
        res = rankflavor.evaluate(qrels, {q: {d: 5.0 - i for i, d in enumerate(v)} for q, v in hits.items()},
                                  metric, preset="elasticsearch")[0]
        assert res.per_query() == {"id": 0.0, "rated": 1.0}, metric
        assert res.mean == pytest.approx(0.5, abs=DELTA), metric


# ---------------------------------------------------------------------------------------------
# RecallAtKTests


def test_recall_at_k_tests() -> None:
    assert value({"q": {"0": 1}}, {"q": ["0"]}, "recall")["q"] == pytest.approx(1.0, abs=DELTA)  # testCalculation
    five = {"q": {"0": 1, "1": 1, "2": 1, "3": 1, "4": 0}}
    assert value(five, {"q": list("01234")}, "recall")["q"] == pytest.approx(4 / 4, abs=DELTA)  # testIgnoreOneResult
    graded = {"q": {str(i): i for i in range(5)}}
    got = value(graded, {"q": list("012")}, "recall(relevant_rating_threshold=2, k=5)")["q"]
    assert got == pytest.approx(1 / 3, abs=DELTA)  # testRelevanceThreshold
    indices = {"q": {"test_other/0": 1, "test_other/1": 1, "test/0": 1, "test/1": 1, "test/2": 0}}
    got = value(indices, {"q": ["test/0", "test/1", "test/2"]}, '{"recall": {"k": 5}}')["q"]
    assert got == pytest.approx(2 / 4, abs=DELTA)  # testCorrectIndex


# ---------------------------------------------------------------------------------------------
# MeanReciprocalRankTests


def test_mean_reciprocal_rank_tests() -> None:
    graded = {"q": {str(i): i for i in range(5)}}
    got = value(graded, {"q": list("01234")}, "mean_reciprocal_rank(relevant_rating_threshold=2, k=10)")["q"]
    assert got == pytest.approx(1 / 3, abs=DELTA)  # testPrecisionAtFiveRelevanceThreshold
    for relevant_at in range(10):  # testEvaluationOneRelevantInResults: ten hits, 21 rated documents
        qrels = {"q": {str(i): int(i == relevant_at) for i in range(21)}}
        got = value(qrels, {"q": [str(i) for i in range(10)]}, "mean_reciprocal_rank")["q"]
        assert got == pytest.approx(1 / (relevant_at + 1), abs=DELTA)
        # testMaxAcceptableRank: fewer hits than the relevant document's position
        if relevant_at:
            assert value(qrels, {"q": [str(i) for i in range(relevant_at)]}, "mean_reciprocal_rank")["q"] == 0.0
    # the window is k: a relevant document at rank 11 is not found by the default k = 10
    qrels = {"q": {str(i): int(i == 10) for i in range(11)}}
    assert value(qrels, {"q": [str(i) for i in range(11)]}, "mean_reciprocal_rank")["q"] == 0.0


# ---------------------------------------------------------------------------------------------
# ExpectedReciprocalRankTests


def test_expected_reciprocal_rank_tests() -> None:
    qrels = {"q": {"0": 3, "1": 2, "2": 0, "3": 1}}
    hits = {"q": ["0", "1", "2", "3"]}
    assert value(qrels, hits, "expected_reciprocal_rank@3(maximum_relevance=3,unknown_doc_rating=0)")["q"] == \
        pytest.approx(0.8984375, abs=DELTA)  # testERRAt
    assert value(qrels, hits, '{"expected_reciprocal_rank": {"maximum_relevance": 3, "unknown_doc_rating": 0, "k": 4}}'
                 )["q"] == pytest.approx(0.8984375 + 0.00244140625, abs=DELTA)  # ... the 4th rank in the window
    missing = {"q": {"0": 3, "2": 0, "3": 1}}  # testERRMissingRatings: rank 2 unrated
    assert value(missing, hits, "expected_reciprocal_rank@4(maximum_relevance=3)")["q"] == \
        pytest.approx(0.875 + 0.00390625, abs=DELTA)
    assert value(missing, hits, "expected_reciprocal_rank@4(maximum_relevance=3,unknown_doc_rating=2)")["q"] == \
        pytest.approx(0.8984375 + 0.00244140625, abs=DELTA)


def test_err_probability_of_relevance() -> None:
    """testProbabilityOfRelevance: maximum_relevance 5, R(r) = (2^r - 1) / 32, each alone at rank 1."""
    for rating in range(6):
        got = value({"q": {"a": rating}}, {"q": ["a"]}, "expected_reciprocal_rank@1(maximum_relevance=5)")["q"]
        assert got == pytest.approx((2 ** rating - 1) / 32, abs=0.0)


# ---------------------------------------------------------------------------------------------
# DiscountedCumulativeGainTests


def test_discounted_cumulative_gain_tests() -> None:
    ratings = [3, 2, 3, 0, 1, 2]
    qrels = {"q": {str(i): g for i, g in enumerate(ratings)}}
    hits = {"q": [str(i) for i in range(6)]}
    assert value(qrels, hits, "dcg")["q"] == pytest.approx(13.84826362927298, abs=1e-12)  # testDCGAt
    assert value(qrels, hits, "dcg(normalize=true)")["q"] == pytest.approx(13.84826362927298 / 14.595390756454922,
                                                                          abs=1e-12)
    six = {"q": {"0": 3, "1": 2, "2": 3, "4": 1}}  # testDCGAtSixMissingRatings: ranks 4 and 6 unrated
    assert value(six, hits, "dcg")["q"] == pytest.approx(12.779642067948913, abs=1e-12)
    assert value(six, hits, "dcg(normalize=true)")["q"] == pytest.approx(12.779642067948913 / 13.347184833073591,
                                                                         abs=1e-12)
    four = {"q": {"0": 3, "1": 2, "2": 3, "4": 1}}  # testDCGAtFourMoreRatings: four hits, the ideal cut at 4
    assert value(four, {"q": list("0123")}, "dcg")["q"] == pytest.approx(12.392789260714371, abs=1e-12)
    assert value(four, {"q": list("0123")}, "dcg(normalize=true)")["q"] == pytest.approx(
        12.392789260714371 / 13.347184833073591, abs=1e-12)


METRICS = ["dcg", "dcg(normalize=true)", "precision", "precision(ignore_unlabeled=true)", "recall",
           "mean_reciprocal_rank", "expected_reciprocal_rank(maximum_relevance=3)"]


@pytest.mark.parametrize("preset", ["elasticsearch", "opensearch"])
def test_a_request_without_hits_scores_zero_through_the_es_files(tmp_path: Path, preset: str) -> None:
    """testNoResults (DCG, normalised DCG, precision, ERR) and RecallAtKTests.testNoResultsWithRatedDocs:
    a request whose search returned no hit scores 0.0, and counts in the mean."""
    ratings = {"empty": {"0": 3, "1": 2, "2": 3, "4": 1}, "full": {"a": 3}}
    qpath, rpath = files(tmp_path, ratings, {"empty": [], "full": ["a"]})
    for metric in METRICS:
        res = rankflavor.evaluate(qpath, rpath, metric, preset=preset)[0]
        assert res.per_query()["empty"] == 0.0, metric
        assert res.mean == pytest.approx(res.per_query()["full"] / 2, abs=DELTA), metric
    # a response of requests without hits alone is a run too: every request scores 0.0
    qpath, rpath = files(tmp_path, {"empty": {"0": 3}}, {"empty": []})
    for metric in METRICS:
        assert rankflavor.evaluate(qpath, rpath, metric, preset=preset)[0].per_query() == {"empty": 0.0}, metric


def test_an_empty_json_ranking_scores_zero_and_is_not_missing(tmp_path: Path) -> None:
    """``{"q": {}}``: a query listed with no document is in the run (scored 0), not missing, even
    under presets that skip missing queries (trec_eval); it used to be refused as "empty"."""
    (tmp_path / "run.json").write_text(json.dumps({"q": {}}))
    (tmp_path / "both.json").write_text(json.dumps({"q": {}, "p": {"b": 1.0}}))
    qrels = {"q": {"a": 1}, "p": {"b": 1}}
    for preset, metric in ((None, "ndcg@10"), ("trec_eval", "ndcg_cut.10"), ("elasticsearch", "dcg(normalize=true)")):
        res = rankflavor.evaluate(qrels, tmp_path / "run.json", metric, preset=preset)
        assert res[0].per_query()["q"] == 0.0 and res.counts.queries_evaluated == 1, preset
        both = rankflavor.evaluate(qrels, tmp_path / "both.json", metric, preset=preset)[0]
        assert both.per_query() == {"p": 1.0, "q": 0.0} and both.mean == 0.5, preset
    (tmp_path / "none.json").write_text("{}")
    with pytest.raises(rankflavor.errors.InputError, match="holds no results"):
        rankflavor.evaluate(qrels, tmp_path / "none.json", "ndcg@10")


def test_the_mean_is_unweighted() -> None:
    """PrecisionAtKTests.testCombine / RecallAtKTests.testCombine: the mean of 0.1, 0.2 and 0.6 is 0.3.
    Three requests whose precision@10 is 1/10, 2/10 and 6/10."""
    qrels = {q: {f"{q}{i}": 1 for i in range(n)} for q, n in (("a", 1), ("b", 2), ("c", 6))}
    run = {q: {f"{q}{i}": 10.0 - i for i in range(10)} for q in "abc"}
    mean = rankflavor.evaluate(qrels, run, "precision(ignore_unlabeled=false)", preset="elasticsearch")[0].mean
    assert mean == pytest.approx(0.3, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# The dialect


@pytest.mark.parametrize(("text", "metric", "k", "knobs"), [
    ("dcg", "dcg", 10, {}),
    ('{"dcg": {"k": 5, "normalize": true, "unknown_doc_rating": 1}}', "ndcg", 5, {"unjudged_grade": "1"}),
    ("precision", "P", 10, {"p_divisor": "hits", "rel": "1"}),
    ("precision@3(relevant_rating_threshold=2,ignore_unlabeled=true)", "P", 3, {"p_divisor": "judged", "rel": "2"}),
    ('{"recall": {"relevant_rating_threshold": 0}}', "recall", 10, {"rel": "0"}),
    ("mean_reciprocal_rank@7", "RR", 7, {}),
    ('{"expected_reciprocal_rank": {"maximum_relevance": 4, "k": 20}}', "ERR", 20, {"max_grade": "4"}),
])
def test_rank_eval_names(text: str, metric: str, k: int, knobs: dict[str, Any]) -> None:
    (m,), _ = resolve_measures([text], "elasticsearch", {})
    assert (m.metric, m.k) == (metric, k)
    for knob, v in knobs.items():
        assert getattr(m.flavor, knob) == v, knob


@pytest.mark.parametrize(("text", "why"), [
    ("expected_reciprocal_rank", "requires maximum_relevance"),
    ("precision(normalize=true)", "takes k, relevant_rating_threshold, ignore_unlabeled"),
    ("recall(k=0)", "k must be >= 1"),
    ("precision(relevant_rating_threshold=-1)", ">= 0"),
    ("precision(ignore_unlabeled=yes)", "true or false"),
    ("dcg(normalize=1)", "true or false"),
    ("precision(k=2.5)", "an integer"),
    ("precision(k=3,k=4)", "given twice"),
    ('{"precision": {"k": 2}, "recall": {}}', "looks like"),
    ('{"ndcg": {"k": 2}}', "is not one of"),
    ('{"precision": ', "not valid JSON"),
    ("precision(k)", "name=value"),
])
def test_rank_eval_refusals(text: str, why: str) -> None:
    with pytest.raises(FlavorError, match=why):
        resolve_measures([text], "elasticsearch", {})


def test_canonical_names_read_as_rank_eval_metrics() -> None:
    """``elasticsearch:P@5`` is _rank_eval's precision at 5 (divided by the hits returned), not
    trec_eval's; a name _rank_eval lacks is refused with what to write."""
    for canonical, tool in (("P@5", "precision@5"), ("recall@5", "recall@5"), ("RR@5", "mean_reciprocal_rank@5"),
                            ("ndcg@5", "dcg@5(normalize=true)"), ("dcg@5", "dcg@5")):
        (a,), _ = resolve_measures([canonical], "elasticsearch", {})
        (b,), _ = resolve_measures([tool], "elasticsearch", {})
        assert (a.metric, a.k, a.flavor) == (b.metric, b.k, b.flavor), canonical
    with pytest.raises(FlavorError, match="maximum_relevance"):
        resolve_measures(["ERR@10"], "elasticsearch", {})
    with pytest.raises(FlavorError, match="elasticsearch has no bpref"):
        resolve_measures(["bpref"], "elasticsearch", {})
