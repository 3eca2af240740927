"""The edges of NDCG's and ERR's ideals the random references do not reach: the scale's top grade,
the slot limits of ideal=max, huge cutoffs, refusals word for word, explain's ideal lists and
fractional grades under ideal=as_supplied. Expected values are the definitions written out by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import rankflavor
from rankflavor.errors import FlavorError, InputError
from rankflavor.metrics import ndcg

QRELS = {"q": {"a": 2, "b": 0, "c": 3, "e": 1}}
RUN = {"q": {"a": 4.0, "u": 3.0, "b": 2.0, "c": 1.0}}  # ranks: a 2, u unjudged, b 0, c 3; e never retrieved
L3, L5 = math.log2(3), math.log2(5)


@pytest.mark.parametrize(("measure", "top"), [
    ("ERR@4", 3), ("nERR@4", 3), ("ERR_gain@4", 3), ("nERR_gain@4", 3), ("ndcg@4[ideal=max]", 3),
    ("ERR_gain@4[gain=binary]", None), ("nERR_gain@4[gain=binary]", None), ("ndcg@4", None), ("dcg@4", None),
    ("RBP@4", 3), ("RBP@4[gain=binary]", None),
])
def test_a_scale_gives_its_top_grade_where_it_changes_the_value(measure: str, top: int | None) -> None:
    """trec_dl's G = 3 is set exactly where the metric reads G; the value is the one written with it."""
    (res,) = rankflavor.evaluate(QRELS, RUN, measure, scale="trec_dl")
    assert res.measure.knobs.get("max_grade") == (None if top is None else str(top))
    if top is not None:
        at = measure.index("@")
        written = measure[: at + 2] + ("[max_grade=3]" if "[" not in measure else measure[at + 2:-1] + ",max_grade=3]")
        assert res.mean == rankflavor.evaluate(QRELS, RUN, written, rel="2")[0].mean


def test_nerr_ideal_max_at_a_huge_cutoff_is_the_series_limit() -> None:
    """R_top = 7/8 in every one of 2**40 slots: sum R (1-R)^(i-1) / i = -R ln R / (1 - R) long
    before the last slot (the running sum stops where its terms no longer change it)."""
    r = 7 / 8
    err = 3 / 8 + (5 / 8) * (7 / 8) / 4  # a (2) at rank 1, c (3) at rank 4
    got = rankflavor.evaluate(QRELS, RUN, f"nERR@{2**40}[max_grade=3,ideal=max]")[0].mean
    assert got == pytest.approx(err / (-r * math.log(r) / (1 - r)), rel=1e-12)


def test_the_slot_limits_of_ideal_max(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ndcg, "MAX_SUMMED_SLOTS", 6)
    monkeypatch.setattr(ndcg, "MAX_LISTED_SLOTS", 5)
    ideal6 = sum(3 / math.log2(i + 1) for i in range(1, 7))
    assert rankflavor.evaluate(QRELS, RUN, "ndcg@6[ideal=max,max_grade=3]")[0].mean == pytest.approx(
        (2 + 3 / L5) / ideal6, abs=1e-12)  # 6 slots: at the limit, summed
    with pytest.raises(FlavorError) as err:
        rankflavor.evaluate(QRELS, RUN, "ndcg@7[ideal=max,max_grade=3]")
    assert str(err.value) == (
        "ndcg@7: ideal=max puts the top grade in every one of its 7 slots (ideal_cut=k at k=7), more than the 6 "
        "slots its ideal DCG is summed over (rankflavor.metrics.ndcg.MAX_SUMMED_SLOTS); use a cutoff of at most 6, "
        "or ideal_cut=hits (the slots the run retrieved)")
    monkeypatch.setattr(ndcg, "MAX_SUMMED_SLOTS", 3)
    with pytest.raises(FlavorError) as err:
        rankflavor.evaluate(QRELS, RUN, "ndcg[ideal=max,max_grade=3]")  # uncut: one slot per retrieved document
    assert str(err.value) == (
        "ndcg: ideal=max puts the top grade in every one of its 4 slots (no cutoff: one per document retrieved), "
        "more than the 3 slots its ideal DCG is summed over (rankflavor.metrics.ndcg.MAX_SUMMED_SLOTS); use a "
        "cutoff of at most 3")
    monkeypatch.setattr(ndcg, "MAX_SUMMED_SLOTS", 100)
    assert len(rankflavor.explain(QRELS, RUN, "q", "ndcg@5[ideal=max,max_grade=3]").ideal) == 5  # at the limit
    with pytest.raises(FlavorError) as err:
        rankflavor.explain(QRELS, RUN, "q", "ndcg@6[ideal=max,max_grade=3]")
    assert str(err.value) == (
        "ndcg@6: ideal=max puts the top grade in every one of its 6 slots (ideal_cut=k at k=6), more than the 5 "
        "slots its listed ideal holds (rankflavor.metrics.ndcg.MAX_LISTED_SLOTS); use a cutoff of at most 5, "
        "or ideal_cut=hits (the slots the run retrieved)")


@pytest.mark.parametrize("metric", ["ndcg", "dcg"])
def test_a_grade_above_max_grade_is_refused_word_for_word(metric: str) -> None:
    with pytest.raises(InputError) as err:
        rankflavor.evaluate(QRELS, RUN, f"{metric}@2[max_grade=0]")
    assert str(err.value).startswith("qrels dict: ")  # where the judgments came from
    assert str(err.value).endswith(
        f"3 judgment(s) have a grade above max_grade=0 (largest 3); {metric}@2 rejects them as its tool does. "
        "Raise max_grade or remap the grades")
    assert rankflavor.evaluate(QRELS, RUN, f"{metric}@2[max_grade=3]")[0].mean > 0  # 3 is not above 3


def test_explain_lists_the_ideal_each_kind_names() -> None:
    as_supplied = rankflavor.explain(QRELS, RUN, "q", "ndcg@4[ideal=as_supplied]")
    assert [(s.doc, s.grade) for s in as_supplied.ideal] == [("a", 2), ("b", 0), ("c", 3), ("e", 1)]  # docno order
    assert as_supplied.idcg == pytest.approx(2 + 0 / L3 + 3 / 2 + 1 / L5, abs=1e-12)
    top = rankflavor.explain(QRELS, RUN, "q", "ndcg@3[ideal=max,max_grade=3]")
    assert [(s.doc, s.grade, s.retrieved_rank) for s in top.ideal] == [(None, 3, None)] * 3
    assert "ideal=max: grade 3 in every slot" in top.notes
    local = rankflavor.explain(QRELS, RUN, "q", "ndcg@4[ideal=local]")
    assert [(s.doc, s.grade, s.retrieved_rank) for s in local.ideal] == [("c", 3, 4), ("a", 2, 1)]


def test_fractional_grades_truncated_under_the_as_supplied_ideal() -> None:
    """-0.5 truncates to a judged 0 that keeps its slot; kept, it is a negative grade (unjudged)."""
    qrels = {"q": {"a": -0.5, "b": 2.7, "c": 1.0}}
    run = {"q": {"c": 2.0, "b": 1.0}}
    got = rankflavor.evaluate(qrels, run, "ndcg@3[ideal=as_supplied,fractional=truncate]")[0].mean
    assert got == pytest.approx((1 + 2 / L3) / (0 + 2 / L3 + 1 / 2), abs=1e-12)  # a 0, b 2, c 1
    kept = rankflavor.evaluate(qrels, run, "ndcg@3[ideal=as_supplied]")[0].mean
    assert kept == pytest.approx((1 + 2.7 / L3) / (2.7 + 1 / L3), abs=1e-12)  # b 2.7, c 1


def test_dcg_has_no_empty_queries() -> None:
    (res,) = rankflavor.evaluate({"q": {"a": 0}, "r": {"b": 1}}, {"q": {"a": 1.0}, "r": {"b": 1.0}}, "dcg@2",
                                 empty="nan")
    assert res.per_query() == {"q": 0.0, "r": 1.0}
    assert res.mean == 0.5


def test_labelled_groups_keep_their_own_order_under_as_supplied() -> None:
    """Arrays have no docnos: ideal=as_supplied reads each query's labels in the order given (Spark's
    label array as the caller built it), here rows of two queries interleaved (XGBoost's qid), so
    that a sort of the rows by query that is not stable would move them."""
    from rankflavor.training.rescore import Rescorer

    qid = [(i * i + i // 3) % 2 for i in range(60)]
    labels = [(7 * i + i // 5) % 4 for i in range(60)]
    scores = [((11 * i) % 17) / 17 + i * 1e-6 for i in range(60)]
    got = Rescorer(labels, qid=qid, metrics=["ndcg@25[ideal=as_supplied]"]).results(scores)[0].per_query()

    def by_hand(q: int) -> float:
        lab = [g for g, x in zip(labels, qid, strict=True) if x == q]
        sc = [s for s, x in zip(scores, qid, strict=True) if x == q]
        ranked = [g for _, g in sorted(zip(sc, lab, strict=True), key=lambda t: -t[0])]
        dcg = sum(g / math.log2(i + 2) for i, g in enumerate(ranked[:25]))
        return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(lab[:25]))

    assert list(got.values()) == pytest.approx([by_hand(0), by_hand(1)], abs=1e-12)


def test_shared_tables_are_made_once_per_ranking_and_dropped_with_it() -> None:
    """common.shared: ``build()`` once per live ranking and key; the entry leaves with the ranking,
    and the finalizer raises nothing (sys.unraisablehook sees no exception)."""
    import gc
    import sys

    from rankflavor.metrics import common

    class Ranking:
        pass

    r, other = Ranking(), Ranking()
    assert common.shared(r, ("t", 1), lambda: [1]) == [1]
    assert common.shared(r, ("t", 1), lambda: [2]) == [1]  # made once
    assert common.shared(r, ("t", 2), lambda: [3]) == [3]  # another key
    assert common.shared(other, ("t", 1), lambda: [4]) == [4]  # another ranking
    full = (id(r), "t", 1)
    assert common._SHARED[full][1] == [1] and common._SHARED[full][0]() is r
    seen: list[object] = []
    hook, sys.unraisablehook = sys.unraisablehook, seen.append
    try:
        del r
        gc.collect()
    finally:
        sys.unraisablehook = hook
    assert full not in common._SHARED and (id(other), "t", 1) in common._SHARED
    assert seen == []


def test_params_refusals_word_for_word() -> None:
    from rankflavor.metrics import common
    from rankflavor.metrics.measure import parse_measure

    with pytest.raises(FlavorError) as err:
        common.params(parse_measure("RBP"), None)
    assert str(err.value) == "metric 'RBP' needs its parameter: set param=N, e.g. RBP[param=0.5]"
    with pytest.raises(FlavorError) as err:
        common.params(parse_measure("RBP[param=(0.5,0.6)]"), (0.8,), count=1)
    assert str(err.value) == "metric 'RBP' takes 1 parameter value(s) in param, received (0.5,0.6)"
    assert common.params(parse_measure("RBP[param=(0.5,0.6)]"), None, count=2) == (0.5, 0.6)
    assert common.params(parse_measure("RBP"), (0.8,), count=1) == (0.8,)


def test_judged_of_a_query_with_nothing_left_is_zero() -> None:
    """The run's only document is the query itself, dropped under self_hits=drop: judged@k is 0."""
    (res,) = rankflavor.evaluate({"q": {"a": 1}}, {"q": {"q": 1.0}}, "judged@3[self_hits=drop]")
    assert res.per_query() == {"q": 0.0}


def test_measures_of_one_ranking_share_only_what_they_have_in_common() -> None:
    """The global ideal's lists and IDCG are shared by the measures of one alignment keyed by what
    they depend on: measures that differ in gain, floor or cut each get their own, equal to the
    measure evaluated alone (and to the hand value)."""
    qrels = {"q": {"a": 2, "b": 0, "c": 3, "e": 1, "f": 2}}
    run = {"q": {"a": 4.0, "u": 3.0, "b": 2.0, "c": 1.0}}
    measures = ["ndcg@3", "ndcg@3[gain=exp2]", "ndcg@3[min_grade=2]", "ndcg@3[gain={2:5}]", "ndcg@2",
                "ndcg@3[discount=reciprocal]", "ndcg@3[ideal_cut=none]", "ndcg@3[max_grade=3]"]
    together = [m.mean for m in rankflavor.evaluate(qrels, run, measures)]
    alone = [rankflavor.evaluate(qrels, run, m)[0].mean for m in measures]
    assert together == alone
    assert together[0] == pytest.approx(2 / (3 + 2 / L3 + 2 / 2), abs=1e-12)  # ideal 3 2 2
    assert together[1] == pytest.approx(3 / (7 + 3 / L3 + 3 / 2), abs=1e-12)


def test_precision_divides_by_what_was_retrieved_and_scores_a_query_answered_with_nothing_0() -> None:
    """trec_eval's set_P (no cutoff) is relevant retrieved / retrieved, and P@k[p_divisor=hits]
    (Quepid, Elasticsearch) relevant in the top k / min(k, retrieved); a query the run lists with
    nothing retrieved (``{}``: in the run, as pytrec_eval scores it) divides by 0 and scores 0.
    Worked by hand: q1 retrieves d1 (relevant) and x; q3 retrieves a, z, b (a, b relevant); q2
    nothing. (Found by the mutation run: only the doctests, which it does not run, checked these.)"""

    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"a": 1, "b": 1}}
    run = {"q1": {"d1": 1.0, "x": 0.5}, "q2": {}, "q3": {"a": 3.0, "z": 2.0, "b": 1.0}}
    for measure, want in (("P", [1 / 2, 0.0, 2 / 3]), ("P@5[p_divisor=hits]", [1 / 2, 0.0, 2 / 3]),
                          ("P@2[p_divisor=hits]", [1 / 2, 0.0, 1 / 2]), ("P@2", [1 / 2, 0.0, 1 / 2])):
        got = rankflavor.evaluate(qrels, run, [measure])[0]
        assert got.queries.tolist() == ["q1", "q2", "q3"] and got.status.tolist() == ["ok", "ok", "ok"], measure
        assert got.values.dtype == np.float64 and got.values.tolist() == want, (measure, got.values.tolist())
