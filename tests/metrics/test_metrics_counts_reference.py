"""trec_eval's counts (num_ret, num_rel, num_rel_ret) against their definitions and pytrec_eval, and
num_rel's summary under total=qrels_positive (trec_eval -c: every qrels line with rel > 0)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankflavor

from .test_metrics_ndcg_reference import NO_SHRINK, Query, ours, queries


@settings(max_examples=60, deadline=None, phases=NO_SHRINK)
@given(queries(), st.sampled_from([1, 2]), st.sampled_from([None, 2]))
def test_counts_equal_their_definitions(q: Query, rel: int, depth: int | None) -> None:
    qrels, ranked = q
    rows = ranked if depth is None else ranked[:depth]
    d = "" if depth is None else f",depth={depth}"
    got = ours(q, ["num_ret" + ("" if depth is None else f"[depth={depth}]"), f"num_rel[rel={rel}]",
                   f"num_rel_ret[rel={rel}{d}]"])
    assert got == [len(rows), sum(g >= rel for g in qrels.values()), sum(qrels.get(x, -1) >= rel for x, _ in rows)]


@settings(max_examples=30, deadline=None, phases=NO_SHRINK)
@given(queries())
def test_counts_are_trec_eval(q: Query) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, ranked = q
    want = pytrec_eval.RelevanceEvaluator({"q": qrels}, {"num_ret", "num_rel", "num_rel_ret"}).evaluate(
        {"q": dict(ranked)})["q"]
    assert ours(q, ["num_ret", "num_rel", "num_rel_ret"]) == [want["num_ret"], want["num_rel"], want["num_rel_ret"]]


def test_num_rel_totals() -> None:
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"d": 1.5, "e": 0.5}, "q3": {"f": 3}}  # q3 not in the run
    run = {"q1": {"a": 1.0}, "q2": {"d": 1.0}}
    sums = [m.mean for m in rankflavor.evaluate(qrels, run, [
        "num_rel", "num_rel[total=qrels_positive]", "num_rel[total=qrels_positive,fractional=truncate]",
        "num_rel[rel=2,total=qrels_positive]"])]
    # by query: q1 2 (a, c), q2 1 (d: 1.5 >= 1); -c: positive lines a c d e f = 5 (whatever rel), truncated
    # e (0.5) is 0: 4
    assert sums == [3.0, 5.0, 4.0, 5.0]
