"""Edges of the judgments command and the bounds that the mutation run of issue #32 found
unpinned: the ``empty`` policies where NDCG's ideal can or cannot be empty, Dinkelbach's search
where the chains are held to one positive hole or the queries hold different numbers of holes,
how runs are given and named, the relevance threshold, the pool-bias boundaries, ids that
contain the key separator, and the attributes of the results. Expected values come from the
definitions (worked in the comments) or from brute force over every grading
(``tests/analysis/judgments/brute_bounds.py``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rankflavor.analysis.judgments import bounds, judgments, ratio
from rankflavor.analysis.judgments.coverage import pool_bias
from rankflavor.errors import EvaluationError, FlavorError, UsageError

from .brute_bounds import check

ZERO_GAINS = "{0:0,1:0,2:0,3:0}"
Q = {"q": {"a": 0}}
R = {"q": {"a": 1.0, "u": 0.5}}


@pytest.mark.parametrize(("measure", "kept"), [
    (f"ndcg@2[ideal=max,empty=nan,gain={ZERO_GAINS}]", []),  # the fixed ideal gains nothing: IDCG = 0 always
    (f"ndcg@2[empty=nan,gain={ZERO_GAINS}]", []),  # no grade gains anything: IDCG = 0 always (r too)
    ("ndcg@2[ideal=recall@1,empty=nan]", ["r"]),  # the ideal is the top 1 (a, judged 0); u at rank 2 is outside
])
def test_a_query_empty_under_every_grading_is_not_refused(measure, kept):  # type: ignore[no-untyped-def]
    """Nothing to find under every grading of u: empty=nan leaves the query NaN whatever u is, so
    the mean's queries do not depend on the grading and the bounds are defined (NaN)."""
    b = bounds(Q, R, measure, scale="trec_dl")[0]
    assert b.queries.tolist() == ["q"] and np.isnan(b.lower[0]) and np.isnan(b.upper[0]) and np.isnan(b.value[0])
    skip = bounds({**Q, "r": {"b": 3}}, {**R, "r": {"b": 1.0}}, measure.replace("empty=nan", "empty=skip"),
                  scale="trec_dl")[0]
    assert skip.queries.tolist() == kept
    if kept:  # r: b (3) alone at rank 1 is its own ideal
        assert (skip.lower_mean, skip.upper_mean) == (1.0, 1.0)


def test_a_query_whose_grading_decides_emptiness_is_refused_under_binary_gain():
    """gain=binary (grades >= 2 gain 1): a judged 1 gains nothing, u graded 2 or 3 makes IDCG > 0
    and graded 0 or 1 leaves it 0, so empty=nan would move the query out of the mean."""
    with pytest.raises(EvaluationError, match="on query q whether anything is relevant depends"):
        bounds({"q": {"a": 1}}, R, "ndcg@2[gain=binary,empty=nan]", scale="trec_dl")


@pytest.mark.parametrize("limit", [0, 10**9])
@pytest.mark.parametrize("measure", [
    "ndcg@4[ideal=recall@2,gain=binary]",  # one positive gain level, nothing relevant judged, B holes at 3, 4
    "ndcg@4[ideal=recall@2,gain=binary,empty=one]",
    "ndcg@4[ideal=recall@2,gain=exp2,empty=one]",
    "ndcg@3[ties=pessimistic]", "ndcg@3[ties=optimistic]", "ndcg@4[ties=pessimistic,gain=exp2]",
])
def test_chain_searches_on_uneven_queries(limit, measure, monkeypatch):  # type: ignore[no-untyped-def]
    """Both searches (Dinkelbach: limit 0) against brute force, on queries searched together that
    hold different numbers of holes (one, three), tie groups shared by holes and judged rows, and
    a query with nothing relevant judged whose B holes lie outside a recall ideal."""
    monkeypatch.setattr(ratio, "ENUMERATE", limit)
    qrels = {"one": {"a": 3, "b": 1}, "three": {"c": 2, "d": 0}, "none": {"e": 0, "f": 1}}
    runs = {"one": [("a", 2.0), ("h1", 1.0), ("b", 1.0)],
            "three": [("c", 3.0), ("h2", 2.0), ("d", 2.0), ("h3", 2.0), ("h4", 1.0)],
            "none": [("h5", 3.0), ("e", 2.0), ("h6", 1.0), ("h7", 0.5), ("f", 0.2)]}
    check(qrels, runs, measure)


def test_pool_bias_boundaries():
    """BIAS_RULE: u - median >= 0.05 and u >= 2 x median, both inclusive."""
    assert pool_bias({"a": 0.0, "b": 0.05}) == ["b"]  # the margin exactly
    assert pool_bias({"a": 0.1, "b": 0.2}) == ["b"]  # twice the median exactly
    assert pool_bias({"a": 0.01, "b": 0.045}) == []  # 0.035 above: under the margin (though 0.055 is the sum)
    assert pool_bias({"a": 0.0}) == []


def test_runs_given_every_way_and_named():
    qrels = {"q1": {"a": 2}}
    run = {"q1": {"a": 1.0, "u": 0.5}}
    one = judgments(qrels, run, ["P@1"], scale="trec_dl")  # one run as {query: {doc: score}}
    assert [r.name for r in one.runs] == ["run dict"] and one.runs[0].queries.tolist() == ["q1"]
    two = judgments(qrels, [run, run], ["P@1"], scale="trec_dl")  # two of one name: the second numbered
    assert [r.name for r in two.runs] == ["run dict", "run dict#2"]
    three = judgments(qrels, [run, run, run], ["P@1"], scale="trec_dl")
    assert [r.name for r in three.runs] == ["run dict", "run dict#2", "run dict#3"]
    df = pd.DataFrame({"query": ["q1", "q1"], "doc": ["a", "u"], "score": [1.0, 0.5]})
    frame = judgments(qrels, df, ["P@2"], scale="trec_dl")
    assert [r.name for r in frame.runs] == ["run DataFrame"] and frame.runs[0].unjudged.tolist() == [1]
    for empty in ({}, []):
        with pytest.raises(UsageError) as refused:
            judgments(qrels, empty, ["P@1"], scale="trec_dl")
        assert str(refused.value) == "runs: give at least one run"
    with pytest.raises(KeyError, match="nope"):
        one.run("nope")


def test_the_relevance_threshold():
    """rel given wins over the scale's; without either it is 1."""
    qrels = {"q1": {"a": 2}, "q2": {"b": 3}, "q3": {"c": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"c": 1.0}}
    assert judgments(qrels, run, ["P@1"], scale="trec_dl", rel=3).no_relevant == ["q1", "q3"]
    assert judgments(qrels, run, ["P@1"], scale="trec_dl").no_relevant == ["q3"]
    plain = judgments({"q1": {"a": 0}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}, ["RBP@1[max_grade=3]"])
    assert plain.rel == 1.0 and plain.no_relevant == ["q1"]
    assert [str(m) for m in plain.measures] == [str(plain.runs[0].bounds[0].measure)]
    assert plain.runs[0].bounds.qrels.source == "qrels dict" and plain.runs[0].bounds.scale is None


def test_never_retrieved_is_per_query_even_with_the_separator_in_ids():
    """A relevant document another query retrieved is still never retrieved for its own; a query id
    and a docno holding the key separator (\\x1f) do not pass for another pair."""
    cov = judgments({"q1": {"c": 2}, "q2": {"c": 2, "d": 0}}, {"q2": {"c": 1.0, "d": 0.5}}, ["P@1"], scale="trec_dl")
    assert cov.never_retrieved == {"q1": ["c"]}
    odd = judgments({"xXX\x1fXX": {"y": 2}, "x": {"XX\x1fXXy": 0}}, {"x": {"XX\x1fXXy": 1.0, "z": 0.5}}, ["P@1"],
                    scale="trec_dl")  # (x's judged row and the relevant pair would join to one key with "XX\x1fXX")
    assert odd.never_retrieved == {"xXX\x1fXX": ["y"]}


def test_a_cutoff_free_measure_names_no_k():
    cov = judgments({"q": {"a": 2}}, {"q": {"a": 1.0, "u": 0.5}}, ["P"], scale="trec_dl")
    r = cov.runs[0]
    assert r.k is None and r.shown.tolist() == [2] and r.unjudged_ranks == [[2]]
    from rankflavor.render.judgmentsfmt import render_judgments

    head = next(line for line in render_judgments(cov, width=120).splitlines() if line.startswith("┃"))
    assert head.replace("┃", " ").split()[:3] == ["run", "judged", "unjudged"]
    d = r.bounds.to_dict()
    assert list(d) == ["run", "scale", "measures"] and d["run"] == "run dict" and d["scale"] == "trec_dl"
    assert d["measures"][0]["lower"] == 0.5 and d["measures"][0]["upper"] == 1.0  # u at 0: 1/2; at 2 or 3: 2/2
    assert bounds({"q": {"a": 2}}, {"q": {"a": 1.0}}, "RBP@1[max_grade=2]").to_dict()["scale"] is None


def test_duplicates_first_counts_the_first_line(tmp_path):  # type: ignore[no-untyped-def]
    """duplicates=first: a document listed twice counts once, at its first line's score."""
    run = tmp_path / "dup.run"
    run.write_text("q Q0 u 1 0.9 t\nq Q0 a 2 0.8 t\nq Q0 u 3 0.1 t\nq Q0 v 4 0.05 t\n")
    cov = judgments({"q": {"a": 2}}, {"r": str(run)}, ["P@3[duplicates=first]"], scale="trec_dl")
    r = cov.runs[0]
    assert r.shown.tolist() == [3] and r.unjudged_ranks == [[1, 3]]  # u, a, v
    b = r.bounds[0]
    assert (b.lower[0], b.upper[0]) == (pytest.approx(1 / 3), pytest.approx(1.0))
    assert math.isclose(b.value[0], 1 / 3)


def test_a_scale_is_checked_and_its_errors_are_worded():
    from rankflavor.analysis.judgments import Scale
    from rankflavor.errors import FlavorError, InputError
    from rankflavor.presets.scales import scale_named

    s = Scale("s", (2, 0, 1), rel=1, top=2)
    assert s.grades == (0.0, 1.0, 2.0) and type(s.rel) is float and type(s.top) is float
    assert Scale("z", (0, 1), rel=1, top=1, negatives="zero").negatives == "zero"
    for grades, top, words in [((), 0, "grades must be non-negative and not empty"),
                               ((-1, 0, 1), 1, "grades must be non-negative and not empty"),
                               ((0, 1, 2), 3, "the top grade G=3 must be its largest grade")]:
        with pytest.raises(FlavorError, match=f"scale 'x': {words}"):
            Scale("x", grades, rel=1, top=top)
    with pytest.raises(FlavorError, match="scale 'x': negatives must be unjudged, zero or error"):
        Scale("x", (0, 1), rel=1, top=1, negatives="skip")
    err = scale_named("trec_dl").off_scale("q.txt", 7, 5.0, 2)
    assert isinstance(err, InputError) and str(err).startswith("q.txt:7: grade 5 is not on the trec_dl scale "
                                                               "(grades 0, 1, 2, 3 (or a negative label)); 2 judgment(s)")
    strict = Scale("strict", (0, 1), rel=1, top=1, negatives="error")
    assert "(grades 0, 1); 1 judgment(s) are off it" in str(strict.off_scale("q.txt", 1, -1.0, 1))
    assert strict.describe() == "strict: grades {0,1}, relevant >= 1, G = 1"


def test_undefined_values_are_null_in_json():
    b = bounds(Q, R, "ndcg@2[ideal=recall@1,empty=nan]", scale="trec_dl")[0]
    d = b.to_dict()
    assert d["lower"] is None and d["upper"] is None and d["value"] is None and d["condensed"] is None
    assert d["per_query"]["q"] == {"lower": None, "value": None, "upper": None, "condensed": None}


def test_scope_text_of_ideals_without_a_cutoff_and_local_ties():
    from rankflavor.analysis.judgments import Scale
    from rankflavor.analysis.judgments.bounds import scope_text

    s = Scale("s", (0, 1, 2, 3), rel=2, top=3)
    assert scope_text(s.measure("ndcg[ideal=recall@5]")) == "the whole ranking"
    assert scope_text(s.measure("ndcg@10[ideal=local,ties=pessimistic]")) == "the whole ranking"
    assert scope_text(s.measure("ndcg@10[ideal=recall@20,ties=pessimistic]")) == (
        "the top 20 and the rest of the tie group at its end")


def test_document_table_is_sorted_by_gap_then_query_then_rank():
    """Equal gaps: query ids ascending (not docnos), then ranks. P@2, one hole in each of two
    queries beside a relevant judged document: judging the hole closes [1/2, 1] whatever its
    grade, a gap of 1/2 each."""
    qrels = {"b": {"r1": 3}, "a": {"r2": 3}}
    run = {"b": {"r1": 1.0, "a1": 0.5}, "a": {"r2": 1.0, "z1": 0.5}}
    table = bounds(qrels, run, "P@2", scale="trec_dl").document_table()
    assert [(q, d, g) for q, d, _, _, _, _, g in table] == [("a", "z1", 0.5), ("b", "a1", 0.5)]


def test_document_table_ties_broken_by_rank_then_measure_name():
    """Query b, one judged relevant document x never retrieved: holes b1 (rank 1) and b0 (rank 2).
    P@2 is [0, 1]; judging either hole leaves a width of 1/2 whatever its grade: gap 1/2 each.
    RR@2 is [0, 1]; b1 relevant closes it, not relevant leaves [0, 1/2]: gap 1/2; b0 not relevant
    leaves [0, 1]: gap 0. Equal gaps go by rank, then by measure name (here given RR@2 first)."""
    table = bounds({"b": {"x": 2}}, {"b": {"b0": 0.0, "b1": 2.1}}, ["RR@2", "P@2"], scale="trec_dl").document_table()
    assert [(d, m, rank, gap) for _, d, m, rank, _, _, gap in table] == [
        ("b1", "P@2", 1, 0.5), ("b1", "RR@2", 1, 0.5), ("b0", "P@2", 2, 0.5), ("b0", "RR@2", 2, 0.0)]
    # AP@2 and RR@2 on one hole b0 above a judged relevant b1: both [1/2, 1], closed by judging b0
    # (AP with b0 relevant: R = 2, (1/1 + 2/2) / 2 = 1; not: (1/2) / 1)
    both = bounds({"b": {"b1": 3}}, {"b": {"b0": 3.0, "b1": 0.1}}, ["RR@2", "AP@2"], scale="trec_dl").document_table()
    assert [(m, gap) for _, _, m, _, _, _, gap in both] == [("AP@2", 0.5), ("RR@2", 0.5)]


def test_duplicates_best_keeps_the_highest_scored_line(tmp_path):  # type: ignore[no-untyped-def]
    """duplicates=best: a judged document listed twice counts once, at its higher score (rank 1
    here, not 3); the top-2 histogram holds its grade and the unjudged u."""
    run = tmp_path / "dup.run"
    run.write_text("q Q0 a 1 0.1 t\nq Q0 u 2 0.5 t\nq Q0 b 3 0.05 t\nq Q0 a 4 0.9 t\n")
    cov = judgments({"q": {"a": 3, "b": 1, "c": 2}}, {"r": str(run)}, ["P@2[duplicates=best]"], scale="trec_dl")
    r = cov.runs[0]
    assert r.shown.tolist() == [2] and r.unjudged_ranks == [[2]]  # a, u
    assert r.top_grades == {"3": 1, "unjudged": 1}
    assert cov.never_retrieved == {"q": ["c"]}
    b = r.bounds[0]
    assert (b.lower[0], b.upper[0]) == (0.5, 1.0)


@pytest.mark.parametrize("measure", ["P@2", "P@2[ties=pessimistic]"])  # (the prefix, every row ranked)
def test_a_duplicate_in_a_query_without_judgments_is_kept(measure, tmp_path):  # type: ignore[no-untyped-def]
    """trec_eval refuses a repeated document only in a judged query: a query of the run the
    judgments lack may repeat one (duplicates=error), and the judged query's coverage and
    top-2 grades are read as if it were absent."""
    run = tmp_path / "dup.run"
    run.write_text("a0 Q0 z 1 0.9 t\na0 Q0 z 2 0.8 t\na0 Q0 y 3 0.7 t\n"
                   "q Q0 u 1 0.9 t\nq Q0 b 2 0.5 t\nq Q0 a 3 0.4 t\n")
    cov = judgments({"q": {"a": 3, "b": 1}}, {"r": str(run)}, [measure], scale="trec_dl")
    r = cov.runs[0]
    assert r.queries.tolist() == ["q"] and r.unjudged_ranks == [[1]]
    assert r.top_grades == {"1": 1, "unjudged": 1}


@pytest.mark.parametrize("measure", ["AP[ties=pessimistic]", "AP[ties=optimistic]", "AP@3[ties=pessimistic]",
                                     "AP[ties=optimistic,rel=1]", "AP[ties=pessimistic,rel=4,empty=one]"])
def test_average_precision_with_holes_inside_tie_groups(measure):  # type: ignore[no-untyped-def]
    """AP's search where a hole shares a grade-ordered tie group (every count of relevant holes
    scored in full), against brute force: a judged relevant document on top, so the greatest AP
    makes no hole relevant (each one raises R); holes tied with judged rows and with each other."""
    qrels = {"q": {"a": 3, "b": 0, "c": 1}, "r": {"e": 2, "f": 0}}
    runs = {"q": [("a", 2.0), ("b", 1.0), ("u", 1.0), ("c", 0.5), ("v", 0.5), ("w", 0.5)],
            "r": [("h", 1.0), ("e", 1.0), ("f", 0.5), ("i", 0.2)]}
    check(qrels, runs, measure)


@pytest.mark.parametrize("measure", ["P@2[depth=2]", "P@2[depth=2,ties=pessimistic]"])
def test_a_repeat_below_the_depth_is_kept_at_its_best_rank(measure, tmp_path):  # type: ignore[no-untyped-def]
    """duplicates=error refuses a repeat only where both copies are in the top ``depth`` (trec_eval):
    a's copies score 0.9 and 0.1, so the ranking is a, u | b, a and only the first a is read.
    Top 2: a (3) and u (unjudged); P@2 is [1/2, 1]."""
    run = tmp_path / "dup.run"
    run.write_text("q Q0 a 1 0.1 t\nq Q0 u 2 0.5 t\nq Q0 b 3 0.3 t\nq Q0 a 4 0.9 t\n")
    cov = judgments({"q": {"a": 3, "b": 1}}, {"r": str(run)}, [measure], scale="trec_dl")
    r = cov.runs[0]
    assert r.unjudged_ranks == [[2]] and r.top_grades == {"3": 1, "unjudged": 1}
    assert (r.bounds[0].lower[0], r.bounds[0].upper[0]) == (0.5, 1.0)


def test_ids_holding_the_separator_do_not_pass_for_another_pair():
    """Bug found by the mutation run: the (query, doc) keys were query + "\\x1f" + doc, so the
    relevant ("x\\x1fb", "y"), which no run retrieved, joined to the same key as x's retrieved and
    judged "b\\x1fy" and was not reported. Ids are untrusted text."""
    cov = judgments({"x\x1fb": {"y": 2}, "x": {"b\x1fy": 0}}, {"x": {"b\x1fy": 1.0}}, ["P@1"], scale="trec_dl")
    assert cov.never_retrieved == {"x\x1fb": ["y"]}
    # Nor can the length alone (no separator) tell the pairs apart: "1" + "2dabcdefghijk" + "x" and
    # "12" + "d" + "abcdefghijkx" are one string; with the separator after the length they differ.
    q2 = "abcdefghijkx"
    cov = judgments({q2: {"d": 2}, "x": {"2dabcdefghijk": 0}}, {"x": {"2dabcdefghijk": 1.0}}, ["P@1"], scale="trec_dl")
    assert cov.never_retrieved == {q2: ["d"]}


def test_document_table_across_queries_and_measures_and_the_default_measure():
    """Queries a and b each: a judged non-relevant row, then a hole at rank 2. P@2 and RR@2 are
    [0, 1/2] on each query, and judging the hole closes the interval: four rows of gap 1/2 at
    rank 2, ordered by query, then measure. document_gaps() is the first measure's."""
    b = bounds({"a": {"a0": 0}, "b": {"b0": 0}}, {"a": {"a0": 1.0, "ha": 0.5}, "b": {"b0": 1.0, "hb": 0.5}},
               ["P@2", "RR@2"], scale="trec_dl")
    assert [(q, d, m, rank, gap) for q, d, m, rank, _, _, gap in b.document_table()] == [
        ("a", "ha", "P@2", 2, 0.5), ("a", "ha", "RR@2", 2, 0.5), ("b", "hb", "P@2", 2, 0.5), ("b", "hb", "RR@2", 2, 0.5)]
    assert b.document_gaps() == [("a", "ha", b.run, 0.5), ("b", "hb", b.run, 0.5)] == b.document_gaps("P@2")
    two = bounds({"a": {"a0": 0}}, {"a": {"a0": 1.0, "ha": 0.5}}, ["P@2", "RR@1"], scale="trec_dl")
    assert two.document_gaps() == [("a", "ha", two.run, 0.5)] and two.document_gaps(1) == []  # RR@1 reads a0 only
    assert b[0].grade == 3.0 and b[0].grades == (0.0, 1.0, 2.0, 3.0)  # G, the top grade of the scale


def test_pool_bias_ratio_and_rule_text():
    from rankflavor.analysis.judgments.coverage import BIAS_RULE

    assert pool_bias({"a": 0.2, "b": 0.3}) == []  # 0.1 above the median, but under twice it
    assert BIAS_RULE == ("a run is named when its mean unjudged@k exceeds the median of the other runs' by >= 0.05 "
                         "(of the top k) and is >= 2x that median")


def test_duplicate_judgments_under_duplicates_first(tmp_path):  # type: ignore[no-untyped-def]
    """duplicates=first applies to the judgments too: a document judged twice keeps its first
    grade (2, relevant), where duplicates=error refuses the file."""
    q = tmp_path / "qrels.txt"
    q.write_text("q 0 a 2\nq 0 a 0\nq 0 b 1\n")
    run = {"q": {"a": 1.0, "u": 0.5}}
    b = bounds(str(q), run, "P@2[duplicates=first]", scale="trec_dl")[0]
    assert (b.lower[0], b.upper[0]) == (0.5, 1.0)
    from rankflavor.errors import InputError

    with pytest.raises(InputError, match="appears more than once"):
        bounds(str(q), run, "P@2", scale="trec_dl")


def test_a_measure_not_bounded_is_a_key_error_naming_it():
    b = bounds({"q": {"a": 2}}, {"q": {"a": 1.0, "u": 0.5}}, ["P@2", "RR@2"], scale="trec_dl")
    assert b["P@2"] is b[0] and b["RR@2"] is b[1] and b[str(b[1].measure)] is b[1]
    with pytest.raises(KeyError) as err:
        b["ndcg@10"]
    assert err.value.args == ("ndcg@10",)


@pytest.mark.parametrize("flavor", ["ndcg@10", "ndcg@10[discount=jk(2)]", "ndcg@10[discount=reciprocal]"])
def test_reciprocal_discounts_are_those_of_ranks_0_to_n_whatever_was_asked_before(flavor: str) -> None:
    """Rules.reciprocal_discounts keeps what it computed; asked for ranks 0..n it gives exactly
    n + 1 values, 1 / the kernel's denominators, also right after a call whose cache ends at n."""
    from rankflavor.analysis.judgments.scope import Rules
    from rankflavor.metrics import gains as K
    from rankflavor.metrics.measure import parse_measure

    measure = parse_measure(flavor)
    rules = Rules.of(measure, np.array([0.0, 1.0, 2.0, 3.0]))
    for n in (1, 8, 16, 17, 5, 33, 34, 68, 69, 3):
        got = rules.reciprocal_discounts(n)
        want = 1.0 / K.discount_denominators(measure.flavor, n)
        assert len(got) == n + 1, (n, len(got))
        np.testing.assert_array_equal(got[1:], want[1:])


@pytest.mark.parametrize("measure", ["AP[ties=pessimistic,nonpositive=nonrelevant]", "P@3[nonpositive=nonrelevant]",
                                     "RR[nonpositive=nonrelevant]"])
def test_bounds_under_nonpositive_nonrelevant_are_refused_not_wrong(measure: str) -> None:
    # Under nonpositive=nonrelevant a document scored <= 0 is not relevant whatever its grade, but
    # its grade still counts in AP's R: the bounds read grades only. They gave AP's check an
    # internal failure ("derived as 0.0 but ... 1.0") and P@3 a gap of 0 where brute force gives
    # 1/3 for h (a hole at rank 2 of a run whose every score is positive): refused, naming why.
    qrels = {"q": {"a": 2, "b": 0}, "p": {"x": 2}}
    run = {"q": {"a": 1.0, "h": 0.5, "b": 0.4, "i": 0.3}, "p": {"x": 1.0}}
    with pytest.raises(FlavorError, match=r"nonpositive=nonrelevant .* bounds are derived under nonpositive=keep"):
        bounds(qrels, run, measure, scale="trec_dl")


@pytest.mark.parametrize("measure", ["AP[ap_divisor=found]", "AP[relevant_set=retrieved]", "RR[relevant_set=retrieved,empty=one]",
                                     "P@2[nonpositive=nonrelevant]"])
def test_knobs_the_bounds_do_not_derive_are_refused_whatever_the_data(measure: str) -> None:
    # A flavor is refused by what it is, before any work, not only when some query holds an
    # unjudged document: here every retrieved document is judged, and the refusal still names it.
    qrels = {"q": {"a": 2, "b": 0}, "p": {"x": 1}}
    run = {"q": {"a": 1.0, "b": 0.5}, "p": {"x": 1.0}}
    with pytest.raises(FlavorError, match=r"(not derived with|nonpositive=nonrelevant makes)"):
        bounds(qrels, run, measure, scale="trec_dl")
