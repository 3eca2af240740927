"""The quepid preset reproduces the values of Quepid's own scorer tests.

Oracle: o19s/quepid ``test/services/javascript_scorer_test.rb``, which runs the shipped scorers
(``db/scorers/p@10.js``, ``ap@10.js``, ``ndcg@10.js``, ``rr@10.js``, ``err@10.js``) on small lists
and compares with ``assert_in_delta`` (0.001) against values Quepid rounds to the scorer's 2
decimals. ``docs`` there is the ranked list with its ratings, ``best_docs`` every rated document
of the query (the judgments).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import rankflavor
from rankflavor.errors import FlavorError
from rankflavor.presets import resolve_measures


def quepid(qrels: dict[str, dict[str, int]], ranked: dict[str, list[str]], name: str) -> dict[str, float]:
    run = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in ranked.items()}
    return rankflavor.evaluate(qrels, run, name, preset="quepid")[0].per_query()


def test_javascript_scorer_test_values() -> None:
    # p@10 'runs simple': ratings 1, 0
    assert quepid({"q": {"1": 1, "2": 0}}, {"q": ["1", "2"]}, "P@10")["q"] == pytest.approx(0.5, abs=1e-3)
    # ap@10 'runs simple': ranked 0, 1; rated 2: 1, 1: 0, 3: 1 (3 never returned)
    assert quepid({"q": {"2": 1, "1": 0, "3": 1}}, {"q": ["1", "2"]}, "AP@10")["q"] == pytest.approx(0.25, abs=1e-3)
    # ap@10 'situation produces NaN': every rating 0
    nan = quepid({"q": {"77193049": 0, "77031393": 0, "2120998": 0}},
                 {"q": ["77383738", "77502729", "77031393", "78106266"]}, "AP@10")["q"]
    assert math.isnan(nan)
    # ndcg@10 'runs simple': ranked 0, 3, 1; the scorer rounds to 2 decimals
    got = quepid({"q": {"1": 0, "2": 3, "3": 1}}, {"q": ["1", "2", "3"]}, "nDCG@10")["q"]
    assert round(got, 2) == pytest.approx(0.64, abs=1e-3)
    # rr@10 'runs simple': ranked 0, 0, 1
    assert round(quepid({"q": {"1": 0, "2": 0, "3": 1}}, {"q": ["1", "2", "3"]}, "RR@10")["q"], 2) == 0.33
    # 'exposes max from the scorer scale to err@10': ranked 3, 0, unrated on a 0-3 scale
    got = quepid({"q": {"1": 3, "2": 0, "4": 2}}, {"q": ["1", "2", "3"]}, "ERR@10")["q"]
    assert round(got, 2) == pytest.approx(0.88, abs=1e-3)


def test_a_query_nobody_rated_scores_zero_and_counts() -> None:
    """p@10 'runs even though no scores provided': two unrated results score 0.0. The query is in
    the case (the snapshot), so it counts in the mean (``run_only=include``); AP@10 divides 0 by 0."""
    qrels = {"rated": {"a": 3}}
    ranked = {"unrated": ["1", "2"], "rated": ["a"]}
    for name in ("P@10", "nDCG@10", "NDCG_CUT@10", "RR@10", "ERR@10"):
        res = rankflavor.evaluate(qrels, {q: {d: 2.0 - i for i, d in enumerate(v)} for q, v in ranked.items()}, name,
                                  preset="quepid")[0]
        assert res.per_query()["unrated"] == 0.0 and res.n_queries == 2, name
    assert math.isnan(quepid(qrels, ranked, "AP@10")["unrated"])


def test_quepid_exports_with_an_unrated_query(tmp_path: Path) -> None:
    """Quepid's ratings export writes an unrated query as a row of its text alone; its snapshot
    lists the query's results. The query scores 0 and counts."""
    (tmp_path / "ratings.csv").write_text("query,docid,rating\nred shoes,,\nblue shoes,d1,3\n")
    (tmp_path / "snapshot.csv").write_text(
        "Snapshot Name,Snapshot Time,Case ID,Query Text,Doc ID,Doc Position\n"
        "base,2026-12-02,8,red shoes,d7,1\nbase,2026-12-02,8,red shoes,d8,2\nbase,2026-12-02,8,blue shoes,d1,1\n")
    res = rankflavor.evaluate(tmp_path / "ratings.csv", tmp_path / "snapshot.csv", ["nDCG@10", "P@10"], preset="quepid")
    for m in res:
        assert m.per_query() == {"blue shoes": 1.0, "red shoes": 0.0} and m.mean == 0.5, m.measure.display


def test_quepid_names() -> None:
    for canonical, tool in (("ndcg@10", "nDCG@10"), ("P@5", "p@5"), ("AP@10", "AP@10"), ("RR@10", "rr@10"),
                            ("ERR@10", "ERR@10")):
        (a,), _ = resolve_measures([canonical], "quepid", {})
        (b,), _ = resolve_measures([tool], "quepid", {})
        assert (a.metric, a.k, a.flavor) == (b.metric, b.k, b.flavor), canonical
    (cut,), _ = resolve_measures(["NDCG_CUT@10"], "quepid", {})
    (uncut,), _ = resolve_measures(["nDCG@10"], "quepid", {})
    assert (cut.flavor.ideal_cut, uncut.flavor.ideal_cut) == ("k", "none")
    for name in ("DCG@10", "CG@10", "dcg@5"):
        with pytest.raises(FlavorError, match="not reproduced"):
            resolve_measures([name], "quepid", {})
    with pytest.raises(FlavorError, match="quepid has no bpref"):
        resolve_measures(["bpref"], "quepid", {})
