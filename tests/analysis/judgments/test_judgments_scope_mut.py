"""What the bounds read and the label scale, at the edges the mutation run of the judgments
group left unpinned (``rankflavor.analysis.judgments.scope`` and ``.scale``): the refusals' wording, the
scope's tie-group edge at a cutoff of 1 and its last row, the queries without judgments, one
ranking per ordering and per duplicates policy, large integer docnos, the documented attributes
of a scope, and a Scale applied to a Measure and checking grades. Expected values are worked by
hand in the comments or come from brute force over every grading (``tests/analysis/judgments/brute_bounds.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from rankflavor.analysis.judgments import Scale, bounds
from rankflavor.analysis.judgments.scope import docnos_of
from rankflavor.errors import FlavorError, InputError
from rankflavor.io.columns import to_strings
from rankflavor.io.tables import Qrels
from rankflavor.metrics.measure import parse_measure
from rankflavor.presets.scales import scale_named

from .brute_bounds import check

Q = {"q": {"a": 2}}
R = {"q": {"a": 1.0, "u": 0.5}}


# -- refusals, worded -------------------------------------------------------------------------------

def test_a_measure_not_bounded_is_refused_listing_the_bounded_metrics():
    with pytest.raises(FlavorError) as err:
        bounds(Q, R, "recall@2", scale="trec_dl")
    assert str(err.value) == ("recall@2: bounds under unjudged documents are derived for ndcg, dcg, RBP, P, AP, RR, "
                              "ERR, ERR_gain only (each proved exact in rankflavor.analysis.judgments.extremes); recall is not "
                              "bounded")


def test_the_as_supplied_ideal_is_refused_naming_the_ideals_bounded():
    with pytest.raises(FlavorError) as err:
        bounds(Q, R, "ndcg@2[ideal=as_supplied]", scale="trec_dl")
    assert str(err.value) == ("ndcg@2: ideal=as_supplied reads the judgments in file order, and a document judged now "
                              "has no place in that order; bounds are derived for the global, local, recall@K and max "
                              "ideals")


def test_without_a_scale_the_grades_need_a_whole_max_grade_and_the_refusals_say_so():
    with pytest.raises(FlavorError) as err:
        bounds(Q, R, "ndcg@2")
    assert str(err.value) == ("the bounds of ndcg@2 range over the grades of the label scale: pass scale= (trec_dl, "
                              "msmarco, beir, ecommerce or a Scale) or set max_grade; G is never taken from the data")
    with pytest.raises(FlavorError) as err:
        bounds(Q, R, "ndcg@2[ideal=max,max_grade=2.5]")
    assert str(err.value) == ("ndcg@2: max_grade=2.5 without a scale leaves the grades unknown (0, 1, ..., G needs a "
                              "whole G): declare the scale")


def test_an_unknown_scale_name_lists_the_named_scales():
    with pytest.raises(FlavorError) as err:
        scale_named("nope")
    assert str(err.value).startswith("unknown label scale 'nope'; named scales: trec_dl, msmarco, beir, ecommerce.")


# -- the scope --------------------------------------------------------------------------------------

@pytest.mark.parametrize("measure", ["P@1[ties=optimistic]", "P@1[ties=pessimistic,rel=1]", "ndcg@1[ties=optimistic]"])
def test_a_tie_group_across_a_cutoff_of_one_is_in_scope(measure):  # type: ignore[no-untyped-def]
    """k = 1, the judged a tied with the unjudged u. P@1[ties=optimistic], a judged 1 (not
    relevant at rel=2): u at 0 or 1 sorts below a (P@1 = 0), u at 2 or 3 above it (P@1 = 1), so
    [0, 1] though zero-imputed u sits at rank 2. Checked against brute force."""
    b = check({"q": {"a": 1}}, {"q": [("a", 1.0), ("u", 1.0)]}, measure)
    if measure == "P@1[ties=optimistic]":
        assert (b[0].lower[0], b[0].upper[0]) == (0.0, 1.0)


@pytest.mark.parametrize("measure", ["ndcg@2", "AP@2", "P@2", "ndcg@2[ties=pessimistic]", "ndcg@2[ties=averaged]"])
def test_a_hole_just_below_the_scope_is_outside_it(measure):  # type: ignore[no-untyped-def]
    """The top 2 (a: 3, b: 0) hold no hole; u at rank 3 is below the scope: nothing to grade, the
    interval is the zero-imputed value (NDCG@2 = 1, the ideal [3, 0] being the run's own top 2;
    a global ideal with u at 3 would be [3, 3], but u is outside the scope). Brute force agrees."""
    b = check({"q": {"a": 3, "b": 0}}, {"q": [("a", 3.0), ("b", 2.0), ("u", 1.0)]}, measure)
    assert b[0].lower[0] == b[0].upper[0] == b[0].value[0]
    assert b.document_table() == []
    assert b[0].detail.scopes.scopes == []  # (one scope per query holding a hole: none here)


def test_a_query_the_judgments_lack_has_no_scope():
    """r is retrieved but not judged: it is not in the mean, and its unjudged x is no hole. Under
    empty=nan that matters: grading x would decide whether r has anything to find."""
    b = bounds(Q, {**R, "r": {"x": 1.0}}, "ndcg@2[empty=nan]", scale="trec_dl")[0]
    assert b.queries.tolist() == ["q"]
    assert [s.qid for s in b.detail.scopes.scopes] == ["q"]
    # u at 3 (rank 2): DCG 2 + 3/log2(3) over the ideal [3, 2], 3 + 2/log2(3)
    assert b.lower[0] == pytest.approx((2 + 3 / np.log2(3)) / (3 + 2 / np.log2(3)))
    assert b.upper[0] == 1.0  # u at 0, 1 or 2: the run's order is the ideal


def test_each_ordering_is_ranked_on_its_own():
    """One call, two tie rules on the tied a (judged 3) and b (unjudged). docno_desc puts b
    first: P@1 in [0, 1]; docno_asc puts a first: P@1 = 1 whatever b is."""
    qrels = {"q": {"a": 3}}
    run = {"q": {"a": 1.0, "b": 1.0}}
    b = bounds(qrels, run, ["P@1", "P@1[ties=docno_asc]"], scale="trec_dl")
    assert (b[0].lower[0], b[0].upper[0]) == (0.0, 1.0)
    assert (b[1].lower[0], b[1].upper[0]) == (1.0, 1.0)
    assert [d for _, d, *_ in b.document_table()] == ["b"]
    flipped = bounds(qrels, run, ["P@1[ties=docno_asc]", "P@1"], scale="trec_dl")
    assert (flipped[0].lower[0], flipped[0].upper[0]) == (1.0, 1.0)
    assert (flipped[1].lower[0], flipped[1].upper[0]) == (0.0, 1.0)


def test_the_scope_is_of_the_ranking_under_the_measures_duplicates_policy(tmp_path):  # type: ignore[no-untyped-def]
    """a is listed at 0.1, then again at 0.9. duplicates=first keeps 0.1: u (0.5) ranks first,
    a hole, P@1 in [0, 1]; duplicates=best keeps 0.9: a (judged 3) ranks first, P@1 = 1."""
    run = tmp_path / "dup.run"
    run.write_text("q Q0 a 1 0.1 t\nq Q0 u 2 0.5 t\nq Q0 a 3 0.9 t\n")
    b = bounds({"q": {"a": 3}}, str(run), ["P@1[duplicates=first]", "P@1[duplicates=best]"], scale="trec_dl")
    assert (b[0].lower[0], b[0].upper[0]) == (0.0, 1.0)
    assert (b[1].lower[0], b[1].upper[0]) == (1.0, 1.0)
    assert [(d, m) for _, d, m, *_ in b.document_table()] == [("u", "P@1")]


def test_a_run_left_empty_by_self_hits_under_a_grade_ordered_tie_rule():
    """self_hits=drop takes q's only row (docno q): nothing is ranked, so nothing is in scope and
    P@2 is 0 on both queries."""
    b = bounds({"q": {"a": 2}, "r": {"x": 1}}, {"q": {"q": 1.0}}, "P@2[ties=pessimistic,self_hits=drop]",
               scale="trec_dl")[0]
    assert b.queries.tolist() == ["q", "r"]
    assert b.lower.tolist() == b.upper.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("docs", [("1000", "1001"), ("100000000000000000", "100000000000000001")])
def test_large_integer_docnos_are_named_exactly(docs):  # type: ignore[no-untyped-def]
    """Canonical integer docnos are coded less an offset (their least value); the document table
    names the hole by its own docno, also past 2**53 (where a float would round it)."""
    judged, hole = docs
    b = bounds({"q": {judged: 2}}, {"q": {judged: 1.0, hole: 0.5}}, "P@2", scale="trec_dl")
    assert [(q, d) for q, d, *_ in b.document_table()] == [("q", hole)]
    assert b[0].detail.scopes.scopes[0].hole_docs == (hole,)


def test_a_scopes_rows_groups_and_ideal_flags():
    """p and q each rank a (1.0), then v and u tied at 0.5 (docno_desc: v first). The scope of
    ndcg@3 on each: the rows at each rank name a, v, u; ranks 2 and 3 share a tie group; a global
    ideal is made of the judgments, so no row is flagged as in a local or recall ideal. Under
    ideal=local every kept row is; under recall@2 the top 2."""
    qrels = {"p": {"a": 2, "b": 1}, "q": {"a": 2, "b": 1}}
    run = {"p": {"a": 1.0, "u": 0.5, "v": 0.5}, "q": {"a": 1.0, "u": 0.5, "v": 0.5}}
    for measure, flags in [("ndcg@3", [False] * 3), ("ndcg@3[ideal=local]", [True] * 3),
                           ("ndcg@3[ideal=recall@2]", [True, True, False])]:
        mb = bounds(qrels, run, measure, scale="trec_dl")[0]
        sset = mb.detail.scopes
        assert [s.qid for s in sset.scopes] == ["p", "q"]
        for scope in sset.scopes:
            assert to_strings(docnos_of(sset.ranked.aligned, scope.row)) == ["a", "v", "u"]
            assert scope.group[1] == scope.group[2] != scope.group[0]
            assert scope.in_ideal.dtype == bool and scope.in_ideal.tolist() == flags
            assert sorted(scope.judgments.tolist()) == [1.0, 2.0]


# -- the scale --------------------------------------------------------------------------------------

def test_a_scale_applied_to_a_measure_fills_only_the_knobs_left_at_their_defaults():
    trec_dl = scale_named("trec_dl")
    plain = trec_dl.measure(parse_measure("P@10"))
    assert plain.knobs["rel"] == "2"  # the scale's threshold
    own = trec_dl.measure(parse_measure("P@10[rel=3]"))
    assert own.knobs["rel"] == "3"  # the measure's own wins
    assert str(trec_dl.measure(parse_measure("P@10"))) == str(trec_dl.measure("P@10"))
    beir = scale_named("beir")
    assert beir.measure(parse_measure("P@5[negatives=zero]")).knobs == {**beir.measure("P@5").knobs,
                                                                       "negatives": "zero"}


def _qrels(grades: list[float]) -> Qrels:
    import pyarrow as pa

    return Qrels(query=pa.array(["q"] * len(grades)), doc=pa.array([f"d{i}" for i in range(len(grades))]),
                 grade=np.asarray(grades, dtype=np.float64), source="q.txt")


def test_a_scale_check_counts_the_grades_off_it():
    """trec_dl: grades 0..3, a negative label allowed. 0.5 and 4 are off it (2 of 5); -1 is not."""
    s = scale_named("trec_dl")
    s.check(_qrels([0, 3, -1, 2, 1]))
    with pytest.raises(InputError, match=r"grade 0\.5 is not on the trec_dl scale .*; 2 judgment\(s\) are off it"):
        s.check(_qrels([2, 0.5, -1, 4, 3]))
    with pytest.raises(InputError, match=r"grade 4 is not on the trec_dl scale .*; 1 judgment\(s\) are off it"):
        s.check(_qrels([0, 1, 2, 3, 4, 0, 1]))
    high = Scale("high", (1, 2), rel=2, top=2)  # no grade 0: a 0 is off this scale
    with pytest.raises(InputError, match=r"grade 0 is not on the high scale .*; 1 judgment\(s\) are off it"):
        high.check(_qrels([1, 0, 2]))
    high.check(_qrels([1, 2, -1]))
