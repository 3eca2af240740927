"""NDCG's exact search (``rankflavor.analysis.judgments.ratio``) and the AP / emptiness rules of
``rankflavor.analysis.judgments.extremes`` on cases the mutation run found unpinned: the ideal cut at the
rows retrieved, a fixed ideal that gains nothing, grade-ordered tie groups at the edge of a local
or recall ideal, judged grades between (or above) the gains of the scale, a scale whose grades all
gain the same, the searches' choice of method and its quiet arithmetic, and the knobs of P, RR and
AP the derivations do not cover. Expected values come from brute force over every grading
(``tests/analysis/judgments/brute_bounds.py``) or are worked in the comments."""

from __future__ import annotations

import math
import warnings

import pytest

from rankflavor.analysis.judgments import bounds, ratio
from rankflavor.errors import EvaluationError, FlavorError

from .brute_bounds import TREC_DL, brute, check

LOG2_3 = math.log2(3)


def test_ideal_cut_hits_cuts_the_ideal_at_the_rows_retrieved():
    """ideal_cut=hits: the ideal has min(k, rows retrieved) = 1 slot, not k = 3. q retrieves only
    the hole h; its judgments x, y (3, 3) fill the one slot: IDCG = 3. h graded 3: DCG 3, NDCG 1;
    graded 0: NDCG 0. (With k = 3 slots, of 3, 3, 3, it would be 3 / (3 + 3/log2 3 + 3/2) = 0.47.)"""
    b = check({"q": {"x": 3, "y": 3}}, {"q": [("h", 1.0)]}, "ndcg@3[ideal_cut=hits]")[0]
    assert (b.lower[0], b.upper[0]) == pytest.approx((0.0, 1.0))


@pytest.mark.parametrize("empty", ["zero", "one"])
def test_a_max_ideal_of_a_top_grade_without_gain_leaves_nothing_to_find(empty):  # type: ignore[no-untyped-def]
    """ideal=max fills every slot with the gain of the top grade G = 3, which this table makes 0:
    IDCG = 0 under every grading, so every grading scores the empty policy's value, although a
    hole graded 1 or 2 gains 1 in the DCG."""
    want = {"zero": 0.0, "one": 1.0}[empty]
    b = check({"q": {"a": 0}}, {"q": [("h", 1.0), ("a", 0.5)]}, f"ndcg@2[ideal=max,gain={{0:0,1:1,2:1,3:0}},empty={empty}]")[0]
    assert (b.lower[0], b.upper[0]) == (want, want)


def test_a_judged_tie_group_across_a_recall_ideal_is_not_refused():
    """ties=pessimistic, ideal=recall@2: the judged tie group {b, c} lies across the edge of the
    ideal (rank 2 in it, rank 3 out), but it holds no unjudged document (the hole h is alone at
    rank 1), so its order is fixed and the bound is derived."""
    qrels = {"q": {"b": 2, "c": 0, "x": 1}}
    runs = {"q": [("h", 2.0), ("b", 1.0), ("c", 1.0), ("d", 0.5)]}
    check(qrels, runs, "ndcg@2[ideal=recall@2,ties=pessimistic]")


@pytest.mark.parametrize("measure", ["ndcg@3[ideal=local,ties=pessimistic]", "ndcg@3[ideal=local,ties=optimistic]",
                                     "ndcg@2[ideal=recall@3,ties=optimistic]"])
def test_a_hole_in_a_tie_group_inside_a_local_or_recall_ideal(measure):  # type: ignore[no-untyped-def]
    """The tie group {a, h} holds a hole and lies wholly inside the ideal's list: not refused, and
    exact."""
    qrels = {"q": {"a": 1, "b": 3, "c": 0}}
    runs = {"q": [("b", 2.0), ("a", 1.0), ("h", 1.0), ("c", 0.5)]}
    check(qrels, runs, measure)


def test_a_tie_group_holding_a_hole_across_a_local_ideal_is_refused():
    """ideal=local with depth=2: the ideal is made of the two rows kept, and the tie group {h, b}
    (ranks 2, 3) holds a hole and lies across that edge, so where h lands decides whether it is in
    the ideal: refused, naming the query."""
    qrels = {"q": {"a": 3, "b": 1}}
    runs = {"q": {"a": 2.0, "h": 1.0, "b": 1.0}}
    with pytest.raises(FlavorError, match=r"on query q a tie group ordered by grade \(ties=pessimistic\) holding an "
                                          r"unjudged document lies across the edge of the list the ideal is made of"):
        bounds(qrels, runs, "ndcg@3[ideal=local,ties=pessimistic,depth=2]", scale="trec_dl")


@pytest.mark.parametrize("measure", ["ndcg@2[max_grade=2]", "ndcg@2[max_grade=2,gain=exp2]"])
def test_a_judged_grade_between_the_grades_of_the_scale(measure):  # type: ignore[no-untyped-def]
    """Without a scale the grades are 0, 1, 2 and a judged 1.5 is kept: its gain lies between two
    gains of S, so the ideal has a threshold of its own. Linear gain by hand: a (1.5) at rank 1, h
    at rank 2; h graded 2 gives DCG 1.5 + 2/log2 3 over IDCG 2 + 1.5/log2 3, the least value; h
    graded 0 or 1 leaves a first: 1."""
    qrels = {"q": {"a": 1.5}}
    runs = {"q": [("a", 1.0), ("h", 0.5)]}
    b = check(qrels, runs, measure, scale=None, grades=(0, 1, 2))[0]  # type: ignore[arg-type]
    if "exp2" not in measure:
        assert b.lower[0] == pytest.approx((1.5 + 2 / LOG2_3) / (2 + 1.5 / LOG2_3))
        assert b.upper[0] == 1.0


def test_a_judged_grade_gaining_more_than_every_grade_of_the_scale():
    """The table gives grades 0-2 no gain and 3 a gain of 1, and an unlisted grade keeps its own
    value: a judged 1.5 gains 1.5, above every gain a hole can get. By hand, h at rank 1, a at 2:
    h graded 3: DCG 1 + 1.5/log2 3, IDCG 1.5 + 1/log2 3; h graded 0-2: DCG 1.5/log2 3, IDCG 1.5."""
    measure = "ndcg@2[max_grade=3,gain={0:0,1:0,2:0,3:1}]"
    b = check({"q": {"a": 1.5}}, {"q": [("h", 1.0), ("a", 0.5)]}, measure, scale=None)[0]  # type: ignore[arg-type]
    assert b.lower[0] == pytest.approx(1 / LOG2_3)
    assert b.upper[0] == pytest.approx((1 + 1.5 / LOG2_3) / (1.5 + 1 / LOG2_3))


@pytest.mark.parametrize("empty", ["zero", "one"])
@pytest.mark.parametrize("ties", ["pessimistic", "optimistic"])
def test_a_scale_whose_grades_all_gain_nothing_with_a_hole_in_a_tie_group(ties, empty):  # type: ignore[no-untyped-def]
    """One gain level (every grade gains 0): nothing is ever found, every grading scores the empty
    policy's value, also where a hole shares a grade-ordered tie group with a judged document."""
    qrels = {"q": {"a": 2, "b": 1}}
    runs = {"q": [("a", 1.0), ("h", 1.0), ("b", 0.5)]}
    b = check(qrels, runs, f"ndcg@3[ties={ties},gain={{0:0,1:0,2:0,3:0}},empty={empty}]")[0]
    want = {"zero": 0.0, "one": 1.0}[empty]
    assert (b.lower[0], b.upper[0]) == (want, want)


@pytest.mark.parametrize("measure", ["ndcg@3[ideal=local,ties=optimistic]", "ndcg@3[ideal=local,ties=pessimistic]"])
def test_grade_ordered_groups_past_the_cutoff_in_a_local_ideal(measure):  # type: ignore[no-untyped-def]
    """ideal=local reads every kept row, so holes past k = 3 are in the ideal with no discount of
    their own: the hole h shares the tie group at ranks 3-4 with the judged a (2), the hole u lies
    in the group at ranks 5-6 with c. Under optimistic ties the group at 3-4 earns max(2, h) at
    rank 3, so the least value puts a high grade on u, not on h: the least-value chain must follow
    the ranks (reversed), not the equal (zero) discounts of h and u."""
    qrels = {"q": {"x": 3, "y": 1, "a": 2, "c": 0}}
    runs = {"q": [("x", 5.0), ("y", 4.0), ("a", 3.0), ("h", 3.0), ("u", 2.0), ("c", 2.0)]}
    check(qrels, runs, measure)


@pytest.mark.parametrize("limit", [0, 10**9])
@pytest.mark.parametrize(("scale", "grades"), [("trec_dl", (0, 1, 2, 3)), ("msmarco", (0, 1))])
def test_nothing_in_the_ideal_and_no_hole_in_it(limit, scale, grades, monkeypatch):  # type: ignore[no-untyped-def]
    """ideal=recall@1 holds only a (judged 0), the hole u (rank 2) is outside it: IDCG = 0 under
    every grading, so both ends are the empty policy's 0, by either search (Dinkelbach: limit 0;
    the search is held to chains with a positive hole in the ideal, and there is none), and no
    arithmetic warning escapes (0 / 0 and x / 0 are the searches' own business). On msmarco the
    gains are 1 and 0: a single chain level."""
    monkeypatch.setattr(ratio, "ENUMERATE", limit)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = check({"q": {"a": 0}}, {"q": [("a", 1.0), ("u", 0.5)]}, "ndcg@2[ideal=recall@1]", scale=scale,
                  grades=grades)[0]
    assert (b.lower[0], b.upper[0]) == (0.0, 0.0)


@pytest.mark.parametrize("limit", [0, 10**9])
@pytest.mark.parametrize("empty", ["zero", "one"])
def test_a_max_ideal_without_gain_warns_of_nothing(limit, empty, monkeypatch):  # type: ignore[no-untyped-def]
    """As in test_a_max_ideal_of_a_top_grade_without_gain_leaves_nothing_to_find, by either search:
    the ideal is 0, the DCG of the greatest grading 1 (1 / 0) and of the least 0 (0 / 0), and no
    RuntimeWarning escapes."""
    monkeypatch.setattr(ratio, "ENUMERATE", limit)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = check({"q": {"a": 0}}, {"q": [("h", 1.0), ("a", 0.5)]},
                  f"ndcg@2[ideal=max,gain={{0:0,1:1,2:1,3:0}},empty={empty}]")[0]
    want = {"zero": 0.0, "one": 1.0}[empty]
    assert (b.lower[0], b.upper[0]) == (want, want)


@pytest.mark.parametrize(("limit", "search"), [(20, "_enumerated"), (19, "_dinkelbach"), (10**9, "_enumerated"),
                                               (0, "_dinkelbach")])
def test_every_chain_is_scored_up_to_enumerate_chains(limit, search, monkeypatch):  # type: ignore[no-untyped-def]
    """ratio.ENUMERATE's contract (what the tests that force each search rely on): up to that many
    chains every chain is scored, beyond it Dinkelbach's method runs. q holds 3 holes in a global
    ideal and trec_dl has 4 gains (0, 1, 2, 3): a chain is a multiset of 3 gains of 4, and there
    are C(3 + 4 - 1, 3) = 20 of them. Either way the ends are the brute-force ones."""
    assert math.comb(3 + 4 - 1, 3) == 20
    called: list[str] = []
    for name in ("_enumerated", "_dinkelbach"):
        real = getattr(ratio, name)

        def spy(*args, _real=real, _name=name):  # type: ignore[no-untyped-def]
            called.append(_name)
            return _real(*args)

        monkeypatch.setattr(ratio, name, spy)
    monkeypatch.setattr(ratio, "ENUMERATE", limit)
    qrels = {"q": {"a": 2, "b": 0}}
    runs = {"q": [("h1", 4.0), ("a", 3.0), ("h2", 2.0), ("b", 1.0), ("h3", 0.5)]}
    check(qrels, runs, "ndcg@5")
    assert called and set(called) == {search}


def test_the_refusal_of_an_empty_policy_names_why():
    """empty=skip on a query whose only judgment is not relevant: graded relevant, the hole gives
    it something to find, graded 0 it has nothing; the refusal says what to use instead."""
    with pytest.raises(EvaluationError, match="on query q whether anything is relevant depends on how its unjudged "
                                              "documents are graded, and empty=skip would take the query out of the "
                                              "mean for some gradings, so no interval of the mean is defined; use "
                                              "empty=zero or empty=one"):
        bounds({"q": {"a": 0}}, {"q": {"a": 1.0, "h": 0.5}}, "P@2[empty=skip]", scale="trec_dl")


#: q: nothing relevant is judged among the rows retrieved (a: 0; the relevant x is not retrieved),
#: two holes h, i below a; p: a second query for the mean.
KNOB_QRELS = {"q": {"a": 0, "x": 3}, "p": {"z": 3}}
KNOB_RUNS = {"q": [("a", 1.0), ("h", 0.9), ("i", 0.8)], "p": [("z", 1.0)]}


@pytest.mark.parametrize(("measure", "knob"), [
    ("AP@2[ap_divisor=min_k_relevant]", "ap_divisor=min_k_relevant"), ("AP[ap_divisor=found]", "ap_divisor=found"),
    ("AP[relevant_set=retrieved]", "relevant_set=retrieved"),
    ("RR[relevant_set=retrieved,empty=one]", "relevant_set=retrieved"),
    ("P@3[relevant_set=retrieved,empty=skip]", "relevant_set=retrieved"),
])
def test_knobs_the_derivation_does_not_cover_are_refused(measure, knob):  # type: ignore[no-untyped-def]
    """Found while triaging the mutants of extremes.py: the emptiness rules read R from every
    judgment and AP's search sums over R relevant judgments, relevance read from the grade. Under
    relevant_set=retrieved R counts the retrieved ones only: in q, with h and i graded 0 nothing
    retrieved is relevant, so RR is 1 under empty=one, and its least value is 1/3 (i alone
    relevant), where the search gave 1/2 (h alone); empty=skip would drop q for some gradings.
    AP's closed form ignored ap_divisor and relevant_set (its value disagreed with the engine's, an
    internal check failure). Each is refused, naming the knob."""
    with pytest.raises(FlavorError, match=f"not derived with {knob}"):
        bounds(KNOB_QRELS, {q: dict(r) for q, r in KNOB_RUNS.items()}, measure, scale="trec_dl")


@pytest.mark.parametrize("measure", ["P@3[relevant_set=retrieved]", "RR[relevant_set=retrieved]"])
def test_relevant_set_retrieved_is_kept_where_it_changes_no_end(measure):  # type: ignore[no-untyped-def]
    """Under empty=zero a query with nothing relevant retrieved scores P and RR 0 whichever R the
    knob counts: these bounds are exact (brute force), and so is what judging each document does."""
    for qrels, runs in [(KNOB_QRELS, KNOB_RUNS),
                        ({"q": {"a": 2, "b": 0, "x": 3}, "p": {"z": 3}},
                         {"q": [("h", 1.0), ("a", 0.9), ("i", 0.8), ("b", 0.7)], "p": [("z", 1.0)]})]:
        b = check(qrels, runs, measure)
        mb = b[0]
        where = {str(q): j for j, q in enumerate(mb.queries)}
        table = b.document_table()
        assert {(q, d) for q, d, *_ in table} == {("q", "h"), ("q", "i")}
        for q, d, _, _, _, _, gap in table:
            width = mb.upper[where[q]] - mb.lower[where[q]]
            after = [brute(qrels, runs, measure, fixed=(q, d, float(g)))[q] for g in TREC_DL]
            assert gap == pytest.approx(min(width - (up - lo) for lo, up in after), abs=1e-12)
