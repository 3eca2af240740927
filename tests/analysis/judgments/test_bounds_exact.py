"""The bounds are exact: each per-query end equals the least / greatest value of the measure over
every grading of the unjudged documents in scope, found by brute force (``tests/analysis/judgments/brute_bounds.py``:
every assignment of the scale's grades, each scored by ``rankflavor.evaluate`` on the judgments so
extended), on small random queries, for every bounded metric and the flavors that change how the
extremes are found; so are the document gaps; and both ways of searching NDCG's chains (every
chain at once, Dinkelbach's method) are checked. The examples are derandomised, so a run of the
tests (and of a mutation tool) sees the same cases every time.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankflavor.analysis.judgments import Scale, bounds, ratio
from rankflavor.analysis.judgments.extremes import extremes
from rankflavor.errors import FlavorError
from rankflavor.metrics.measure import parse_measure

from .brute_bounds import TREC_DL, brute, check, ranked, scope_holes

_SETTINGS = {"deadline": None, "derandomize": True,
             "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture]}


@st.composite
def query(draw, max_docs: int = 7, max_holes: int = 4):  # type: ignore[no-untyped-def]
    """A small query: a run with tied scores, some documents judged on trec_dl (a -1 label is pooled,
    not judged), some judged documents never retrieved; always at least one judgment line."""
    n = draw(st.integers(1, max_docs))
    docs = draw(st.permutations([f"d{i}" for i in range(n)]))
    scores = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    run = [(d, float(s)) for d, s in zip(docs, scores, strict=True)]
    qrels: dict[str, float] = {}
    holes = 0
    for d in docs:
        if holes < max_holes and draw(st.booleans()):
            holes += 1
            if draw(st.integers(0, 4)) == 0:
                qrels[d] = -1.0
        else:
            qrels[d] = float(draw(st.sampled_from(TREC_DL)))
    for i in range(draw(st.integers(0 if qrels else 1, 2))):
        qrels[f"x{i}"] = float(draw(st.sampled_from(TREC_DL)))
    return qrels, run


def _cases(draw, n_queries: int = 2):  # type: ignore[no-untyped-def]
    qs = [draw(query()) for _ in range(n_queries)]
    return {f"q{i}": q for i, (q, _) in enumerate(qs)}, {f"q{i}": r for i, (_, r) in enumerate(qs)}


NDCG_FLAVORS = [
    "ndcg@3", "ndcg@5[gain=exp2]", "ndcg", "ndcg@3[ideal=local]", "ndcg@2[ideal=recall@4]", "ndcg@4[ideal=recall@2]",
    "ndcg@3[ideal=max]", "ndcg@3[ideal_cut=hits]", "ndcg@3[ideal_cut=none]", "ndcg@3[discount=jk(2)]",
    "ndcg@3[discount=reciprocal]", "ndcg@4[discount=log(3)]", "ndcg@3[ties=averaged]", "ndcg@3[ties=pessimistic]",
    "ndcg@3[ties=optimistic]", "ndcg@3[ties=docno_asc]", "ndcg@3[ties=input_order]", "ndcg@3[depth=2]",
    "ndcg@5[depth=3,ties=pessimistic]", "ndcg@3[gain={0:0,1:4,2:1,3:2}]", "ndcg@3[gain={0:-1,1:0,2:1,3:3}]",
    "ndcg@3[gain=binary,rel=2]", "ndcg@3[min_grade=2]", "ndcg@3[empty=one]", "ndcg[ideal=local,ties=averaged]",
    "ndcg@3[ideal=local,ties=optimistic]", "ndcg@3[precision=float32]", "ndcg@4[ties=averaged,ideal=recall@2]",
    "ndcg@3[ties=pessimistic,gain=exp2]", "ndcg@2[ideal=max,ideal_cut=none]", "ndcg@4[ties=averaged,depth=3]",
    "ndcg@3[ties=optimistic,gain={0:0,1:4,2:1,3:2}]", "ndcg@3[ideal=max,empty=one,gain={0:0,1:0,2:0,3:0}]",
    "ndcg@3[ties=pessimistic,gain={0:2,1:0,2:1,3:3}]", "ndcg@3[gain={0:0,1:0,2:0,3:0},empty=one]",
]
OTHER_FLAVORS = [
    "dcg@3", "dcg@3[ties=pessimistic]", "dcg@3[ties=averaged,gain=exp2]", "dcg[gain={0:0,1:3,2:1,3:2}]",
    "P@3", "P@5[p_divisor=hits]", "P", "P@3[ties=pessimistic]", "P@3[rel=1,empty=one]", "P@3[depth=2]",
    "AP", "AP@3", "AP@3[ties=optimistic]", "AP[empty=one]", "AP@4[ties=pessimistic,rel=1]", "AP@3[rel=0]",
    "RR", "RR@3", "RR@3[empty=one]", "RR@4[ties=pessimistic]", "P@3[rel=4,empty=one]",
    "ERR@3", "ERR", "ERR_gain@3[gain={0:0,1:1,2:2,3:3}]", "ERR_gain@3[gain=exp2]", "ERR@3[empty=one]", "ERR@4[ties=optimistic]",
    "RBP@3", "RBP[param=0.5]", "RBP@4[ties=averaged]", "RBP@3[gain=binary]", "RBP@4[ties=pessimistic,param=0.6]",
    "ERR_gain@3[ties=pessimistic,gain={0:0,1:3,2:1,3:4}]", "dcg@3[ties=optimistic,gain={0:0,1:3,2:1,3:2}]",
]


def _checked(qrels, runs, measure):  # type: ignore[no-untyped-def]
    try:
        check(qrels, runs, measure)
    except FlavorError as exc:  # refused, naming why: only where the derivation does not hold
        assert "not derived" in str(exc), exc
        assert "ties=" in measure, measure


@settings(max_examples=150, **_SETTINGS)
@given(data=st.data(), measure=st.sampled_from(NDCG_FLAVORS))
def test_ndcg_bounds_are_the_brute_force_extremes(data, measure):  # type: ignore[no-untyped-def]
    _checked(*_cases(data.draw), measure)


@settings(max_examples=150, **_SETTINGS)
@given(data=st.data(), measure=st.sampled_from(OTHER_FLAVORS))
def test_other_metrics_bounds_are_the_brute_force_extremes(data, measure):  # type: ignore[no-untyped-def]
    _checked(*_cases(data.draw), measure)


@pytest.mark.parametrize("limit", [0, 10**9])
@settings(max_examples=60, **_SETTINGS)
@given(data=st.data(), measure=st.sampled_from(NDCG_FLAVORS))
def test_both_chain_searches_are_exact(limit, data, measure, monkeypatch):  # type: ignore[no-untyped-def]
    """Dinkelbach's method (limit 0) and the search of every chain (no limit), each against brute force."""
    monkeypatch.setattr(ratio, "ENUMERATE", limit)
    _checked(*_cases(data.draw), measure)


@settings(max_examples=25, **_SETTINGS)
@given(data=st.data(), measure=st.sampled_from(["ndcg", "ndcg[gain=exp2]", "ndcg[ideal=local]", "ndcg@8",
                                                "ndcg[ties=pessimistic]", "ndcg[empty=one,ideal=recall@6]"]))
def test_dinkelbach_agrees_with_every_chain_on_long_lists(data, measure, monkeypatch):  # type: ignore[no-untyped-def]
    """Many holes (too many gradings to enumerate; the reduction to chains is what the brute-force
    tests check): the two searches of the chains give the same values."""
    n = data.draw(st.integers(8, 16))
    docs = [f"d{i:02d}" for i in range(n)]
    run = {"q": {d: float(data.draw(st.integers(0, 5))) for d in docs}}
    qrels = {"q": {d: float(data.draw(st.sampled_from(TREC_DL))) for d in docs if data.draw(st.booleans())}}
    qrels["q"]["x"] = float(data.draw(st.sampled_from(TREC_DL)))
    monkeypatch.setattr(ratio, "ENUMERATE", 10**9)
    every = bounds(qrels, run, measure, scale="trec_dl")[0]
    monkeypatch.setattr(ratio, "ENUMERATE", 0)
    dink = bounds(qrels, run, measure, scale="trec_dl")[0]
    assert dink.lower == pytest.approx(every.lower, abs=1e-12) and dink.upper == pytest.approx(every.upper, abs=1e-12)


GAP_FLAVORS = ["ndcg@3", "ndcg@3[ideal=local]", "ndcg@3[ties=pessimistic]", "ndcg@3[ties=averaged,gain=exp2]", "P@3",
               "AP", "RR@3[empty=one]", "ERR@3", "RBP@3", "dcg@3", "P", "P@4[p_divisor=hits]", "RR", "ERR",
               "AP@3[ties=pessimistic]", "RBP@4[ties=averaged]", "dcg@3[ties=optimistic]", "ndcg[ideal=max]"]


@settings(max_examples=90, **_SETTINGS)
@given(data=st.data(), measure=st.sampled_from(GAP_FLAVORS))
def test_document_table_is_what_judging_does(data, measure):  # type: ignore[no-untyped-def]
    """Per unjudged document d and grade g: the interval once d is judged g is the brute-force one
    over the other holes; gap = min over g of the width it loses, if_zero / if_top the moves of
    each end at the least grade and at G. Two queries, both may hold holes (the case that raised)."""
    qrels, runs = _cases(data.draw)
    b = bounds(qrels, {q: dict(r) for q, r in runs.items()}, measure, scale="trec_dl")
    mb = b[0]
    where = {str(q): j for j, q in enumerate(mb.queries)}
    table = b.document_table()
    want_docs = {(q, d) for q in runs if qrels.get(q) for d in scope_holes(qrels[q], runs[q], measure)}
    assert {(q, d) for q, d, *_ in table} == want_docs
    assert [r[6] for r in table] == sorted((r[6] for r in table), reverse=True)
    for q, d, name, rank, if_zero, if_top, gap in table:
        assert name == mb.measure.name
        j = where[q]
        width = mb.upper[j] - mb.lower[j]
        after = [brute(qrels, runs, measure, fixed=(q, d, float(g)))[q] for g in TREC_DL]
        assert gap == pytest.approx(min(width - (up - lo) for lo, up in after), abs=1e-9)
        assert if_zero == pytest.approx(mb.upper[j] - after[0][1], abs=1e-9)
        assert if_top == pytest.approx(after[-1][0] - mb.lower[j], abs=1e-9)
        order = [x for x, _ in ranked(runs[q], str(parse_measure(measure).flavor.ties), qrels[q])]
        assert rank == order.index(d) + 1  # the rank evaluate gives it (zero-imputed order)
    assert b.document_gaps() == [(q, d, b.run, g) for q, d, _, _, _, _, g in table]


@pytest.mark.parametrize(("scale", "grades"), [("msmarco", (0, 1)), ("beir", (0, 1, 2)), ("ecommerce", (0, 1, 2, 3, 4)),
                                               (Scale("no_zero", (1, 2, 4), rel=2, top=4), (1, 2, 4))])
@settings(max_examples=20, **_SETTINGS)
@given(data=st.data(), measure=st.sampled_from(["ndcg@3", "ndcg@3[gain=exp2,ties=optimistic]", "AP", "P@2", "ERR@3",
                                                "RR", "RBP@3", "ndcg@3[empty=one]", "RR[empty=one]"]))
def test_other_scales(data, measure, scale, grades):  # type: ignore[no-untyped-def]
    """The grades the interval ranges over are the scale's (no grade 0 at all in the last one)."""
    qs = [data.draw(query()) for _ in range(2)]
    qrels = {f"q{i}": {d: (grades[min(int(g), len(grades) - 1)] if g >= 0 else g) for d, g in q.items()}
             for i, (q, _) in enumerate(qs)}
    runs = {f"q{i}": r for i, (_, r) in enumerate(qs)}
    check(qrels, runs, measure, scale=scale, grades=grades)


@settings(max_examples=20, **_SETTINGS)
@given(data=st.data(), measure=st.sampled_from(["ndcg@3[max_grade=2]", "ERR@3[max_grade=2]", "RBP@3[max_grade=2]"]))
def test_without_a_scale_the_grades_are_0_to_max_grade(data, measure):  # type: ignore[no-untyped-def]
    qs = [data.draw(query()) for _ in range(2)]
    qrels = {f"q{i}": {d: min(g, 2.0) for d, g in q.items()} for i, (q, _) in enumerate(qs)}
    runs = {f"q{i}": r for i, (_, r) in enumerate(qs)}
    b = bounds(qrels, {q: dict(r) for q, r in runs.items()}, measure)[0]
    want = brute(qrels, runs, measure, grades=(0, 1, 2), scale=Scale("g2", (0, 1, 2), rel=1, top=2))
    for q, lo, up in zip(b.queries, b.lower, b.upper, strict=True):
        assert (lo, up) == pytest.approx(want[str(q)], abs=1e-9)
    assert b.grades == (0.0, 1.0, 2.0)


def test_one_scope_and_a_batch_agree():
    """extremes() of one query (the gaps' path) gives what the batch of every query gives."""
    qrels = {"a": {"d1": 3, "d3": 1, "x": 2}, "b": {"d2": 0, "x": 3}}
    run = {"a": {"d1": 3.0, "d2": 2.0, "d3": 1.0, "d4": 0.5}, "b": {"d1": 1.0, "d2": 0.9, "d3": 0.8}}
    mb = bounds(qrels, run, "ndcg@3", scale="trec_dl")[0]
    assert mb.detail is not None
    rules = mb.detail.scopes.rules
    for j, scope, found in mb.detail.found:
        alone = extremes(rules, scope)
        assert found is not None
        assert (alone.lower, alone.upper) == pytest.approx((found.lower, found.upper), abs=1e-15)
        assert (alone.lower, alone.upper) == pytest.approx((mb.lower[j], mb.upper[j]), abs=1e-12)
    np.testing.assert_allclose(mb.gap, mb.upper - mb.lower)


#: Fixed queries that reach every special case: nothing relevant judged (whether anything is
#: found depends on the grading), holes inside tie groups of judged documents, holes past the
#: cutoff and in a longer list, a pooled but unjudged (-1) label, a relevant document never
#: retrieved.
CORNERS = (
    {"q1": {"x0": 0.0, "d1": 0.0, "d4": -1.0},
     "q2": {"d0": 2.0, "d1": 0.0, "d3": 3.0, "d5": 1.0, "x0": 3.0},
     "q3": {"d1": 3.0, "d2": 1.0, "d3": 0.0, "d5": 2.0, "d6": 3.0, "x0": 2.0}},
    {"q1": [("d0", 3.0), ("d1", 2.0), ("d2", 1.0), ("d4", 0.5)],
     "q2": [("d0", 3.0), ("d1", 2.0), ("d2", 2.0), ("d3", 2.0), ("d4", 1.0), ("d5", 1.0), ("d6", 0.0)],
     "q3": [("d0", 5.0), ("d1", 4.0), ("d2", 3.0), ("d3", 2.0), ("d4", 1.0), ("d5", 0.5), ("d6", 0.2)]},
)


@pytest.mark.parametrize("measure", NDCG_FLAVORS + OTHER_FLAVORS)
def test_corner_cases_against_brute_force(measure):  # type: ignore[no-untyped-def]
    _checked(*CORNERS, measure)


@pytest.mark.parametrize("measure", ["ndcg@3", "AP", "P@2", "ERR@3"])
def test_a_query_every_grading_makes_relevant_is_refused_under_skip(measure):  # type: ignore[no-untyped-def]
    """On a scale without a non-relevant grade, a query judged only by a pooled (-1) label has
    nothing to find zero-imputed (so empty=skip leaves it out) but something under every grading:
    the mean's queries would not be the zero-imputed ones."""
    from rankflavor.errors import EvaluationError

    scale = Scale("all_relevant", (1, 2), rel=1, top=2)
    qrels = {"q": {"a": -1.0}, "r": {"b": 2.0}}
    run = {"q": {"a": 1.0}, "r": {"b": 1.0}}
    with pytest.raises(EvaluationError, match="empty=skip would take the query out of the mean"):
        bounds(qrels, run, f"{measure}[empty=skip]", scale=scale)
    b = bounds(qrels, run, f"{measure}[empty=zero]", scale=scale)[0]
    assert b.lower[0] > 0  # every grading finds a


@pytest.mark.parametrize("measure", ["AP[ties=optimistic]", "AP[ties=pessimistic]", "AP@3[ties=optimistic]",
                                     "AP[ties=pessimistic,rel=1]"])
def test_ap_bounds_with_a_tie_group_of_judged_grades(measure: str) -> None:
    """Found by the mutation run: a tie group of judged documents of three grades (a 2, b 0, c 1)
    ordered by the grade-reading tie rule, with holes below it; the closed form for AP must keep
    the group in the rule's direction (optimistic: grade descending), which the random cases of
    the tests above rarely draw."""
    qrels = {"q": {"a": 2, "b": 0, "c": 1}, "p": {"x": 3}}
    runs = {"q": [("a", 1.0), ("b", 1.0), ("c", 1.0), ("h", 0.5), ("i", 0.2)], "p": [("y", 1.0), ("x", 0.5)]}
    check(qrels, runs, measure)


@pytest.mark.parametrize("measure", ["AP[empty=one]", "AP", "AP@2[empty=one]"])
def test_ap_bounds_where_the_least_grading_leaves_nothing_relevant(measure: str) -> None:
    """Found by the mutation run: q holds one judged non-relevant row and a hole. Graded below
    rel, the hole leaves q with nothing relevant, which empty=one scores 1, above AP's 1/2 with
    the hole relevant: the upper end is the empty policy's value. The closed form's 0/0 there is
    the policy's, and warns of nothing."""
    import warnings

    qrels = {"q": {"a": 0}, "p": {"x": 2}}
    runs = {"q": [("a", 1.0), ("h", 0.5)], "p": [("x", 1.0), ("k", 0.5)]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(qrels, runs, measure)


@pytest.mark.parametrize("measure", ["dcg@2[gain={0:1,1:0,2:2,3:3}]", "RBP@2[max_grade=3,gain={0:1,1:0,2:2,3:3}]"])
def test_the_least_end_grades_holes_at_the_least_gain_not_the_least_grade(measure: str) -> None:
    """Found by the mutation run: under a gain table where grade 1 gains less than grade 0, the
    lower end puts every hole at grade 1, not at the scale's first grade."""
    check({"q": {"a": 2}}, {"q": [("a", 1.0), ("h", 0.5)]}, measure)


def test_the_lower_end_under_empty_one_takes_the_least_positive_level() -> None:
    """Found by the mutation run: with nothing judged relevant and empty=one, every hole at the
    least level scores 1, so the least value has one hole at the least *positive* level, which a
    gain table can give to grade 2 (gain 1, R = 1/4: ERR 1/8) rather than grade 1 (gain 2, 1/4)."""
    check({"q": {"a": 0}}, {"q": [("a", 1.0), ("h", 0.5)]}, "ERR_gain@2[max_grade=3,gain={1:2,2:1,3:3},empty=one]")


@pytest.mark.parametrize("measure", ["P@2[empty=skip]", "RR@2[empty=nan]"])
def test_a_query_with_a_judged_relevant_document_has_an_interval_under_any_empty_policy(measure: str) -> None:
    """Found by the mutation run: q holds a judged relevant document, so no grading of its hole
    leaves it empty and empty=skip or nan has an interval; only a query whose relevance depends
    on the holes is refused under those policies."""
    check({"q": {"a": 2, "b": 0}}, {"q": [("a", 1.0), ("h", 0.5)]}, measure)


@pytest.mark.parametrize("measure", ["ndcg@2[ties=optimistic]", "ndcg@2[ties=pessimistic]", "ndcg@3[ties=optimistic,gain=exp2]",
                                     "ndcg@2[ties=pessimistic,ideal=local]", "ndcg@2[ties=optimistic,ideal=recall@3]"])
def test_ndcg_bounds_with_a_hole_inside_a_tie_group_of_judged_grades(measure: str) -> None:
    """A case the random draws above rarely give (looked for while triaging the mutants of
    ``ratio._Batch.dcg``'s order inside a tie group): a tie group at the top holds a hole and
    judged documents of grades 1 and 3, and the cutoff falls inside it, so which documents make
    the top k depends on the grade the hole gets and on the rule's direction (optimistic: grade
    descending)."""
    qrels = {"q": {"a": 1, "b": 3, "c": 0, "d": 2}, "p": {"x": 3}}
    runs = {"q": [("a", 1.0), ("h", 1.0), ("b", 1.0), ("c", 0.5), ("d", 0.4), ("i", 0.3)],
            "p": [("y", 1.0), ("x", 0.5)]}
    check(qrels, runs, measure)


@pytest.mark.parametrize("measure", ["ndcg@3[ties=optimistic]", "ndcg@3[ties=pessimistic]", "ndcg@4[ties=optimistic,gain=exp2]",
                                     "ndcg@3[ties=optimistic,ideal=local]"])
def test_ndcg_bounds_with_a_tie_group_of_judged_grades_above_a_hole(measure: str) -> None:
    """Found by the mutation run (``ratio._Batch.dcg`` ordering tie groups ascending under every
    rule): a tie group of judged documents of grades 1 and 3 above a hole. The search's base DCG
    must order such a group by the rule's direction (optimistic: grade descending), as the engine
    does; the random cases above rarely draw a group of unequal judged grades."""
    qrels = {"q": {"a": 1, "b": 3, "c": 0, "d": 2}, "p": {"x": 3}}
    runs = {"q": [("a", 1.0), ("b", 1.0), ("h", 0.7), ("c", 0.5), ("d", 0.4)], "p": [("y", 1.0), ("x", 0.5)]}
    check(qrels, runs, measure)


@pytest.mark.parametrize("measure", ["ndcg@1[ideal=max,gain=binary,rel=2]", "ndcg@2[ideal=max,gain=binary,rel=3,empty=one]",
                                     "ndcg@1[ideal=max,gain={0:0,1:0,2:0,3:1}]",
                                     "ndcg@2[ideal=max,empty=one,gain={0:0,1:0,2:0,3:0}]",
                                     "ndcg@2[ideal=max,empty=zero,gain={0:0,1:0,2:0,3:0}]",
                                     "ndcg@5[ideal=max,ideal_cut=hits]", "ndcg@5[ideal=max,ideal_cut=hits,gain=exp2]"])
def test_ndcg_bounds_under_the_max_ideal_of_a_unit_or_no_gain(measure: str) -> None:
    """Found by the mutation run: under ``ideal=max`` the ideal is fixed (the top gain in every
    slot): an IDCG of exactly 1 (one slot of gain 1) is something to find, and an IDCG of 0 (no
    grade gains) leaves nothing to find whatever the grading, the ``empty`` policy's value; the
    random cases above drew neither reliably. Under ``ideal_cut=hits`` the max ideal has as many
    slots as the query retrieved (3 and 2 here, below k = 5)."""
    qrels = {"q": {"a": 3, "b": 0}, "p": {"x": 1}}
    runs = {"q": [("h", 1.0), ("a", 0.5), ("b", 0.2)], "p": [("y", 1.0), ("x", 0.5)]}
    check(qrels, runs, measure)
