"""explain: the documents left out and why, the query checks, the one-query alignment, the ideal's notes.

Oracles: tiny inputs worked by hand (every Ignored entry's doc, score, grade, kind, reason and run
file line written out from the definitions of the knobs); rankflavor.evaluate() for a query's value
where the explained value is not the point; the refusals' wording for queries evaluate() leaves out.
"""

from __future__ import annotations

import math

import pytest

import rankflavor
from rankflavor.analysis.explain.result import Ignored
from rankflavor.errors import UsageError
from rankflavor.metrics.measure import Measure

LOG2_3 = math.log2(3)


def _value(qrels, run, query, measure):  # type: ignore[no-untyped-def]
    return rankflavor.evaluate(qrels, run, [measure])[0].per_query()[query]


# ---------------------------------------------------------------------------------------------
# explain(): the default measure and the knobs


def test_the_default_measure_is_ndcg_at_10() -> None:
    qrels = {"q": {"a": 1}}
    run = {"q": {d: 20.0 - i for i, d in enumerate("bcdefghijka")}}  # a at rank 11: outside @10
    e = rankflavor.explain(qrels, run, "q")
    assert e.measure == Measure("ndcg", 10)
    assert (e.dcg, e.idcg, e.value) == (0.0, 1.0, 0.0)


def test_knobs_reach_the_measure() -> None:
    qrels = {"q": {"a": 2, "b": 1}}
    run = {"q": {"b": 0.9, "a": 0.5}}
    e = rankflavor.explain(qrels, run, "q", "ndcg@2", gain="exp2")
    assert e.measure.flavor.gain == "exp2"
    # exp2 gains: b = 2^1 - 1 = 1, a = 2^2 - 1 = 3; DCG = 1 + 3/log2(3), IDCG = 3 + 1/log2(3)
    assert e.dcg == pytest.approx(1 + 3 / LOG2_3, abs=1e-12)
    assert e.idcg == pytest.approx(3 + 1 / LOG2_3, abs=1e-12)
    assert e.value == pytest.approx((1 + 3 / LOG2_3) / (3 + 1 / LOG2_3), abs=1e-12)


# ---------------------------------------------------------------------------------------------
# One query alone: the other queries set off no policy


def test_other_queries_set_off_no_policy() -> None:
    # q2 judged and answered, q3 listed by the qrels with no judgment and answered: evaluate()
    # scores all three under missing=error, run_only=error (nothing is missing nor run-only).
    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}, "q3": {}}
    run = {"q1": {"a": 0.9, "b": 0.5}, "q2": {"c": 0.3, "x": 0.2}, "q3": {"y": 0.1}}
    m = "ndcg@2[missing=error,run_only=error]"
    e = rankflavor.explain(qrels, run, "q1", m)
    # DCG = 1 + 2/log2(3), IDCG = 2 + 1/log2(3)
    expected = (1 + 2 / LOG2_3) / (2 + 1 / LOG2_3)
    assert e.value == pytest.approx(expected, abs=1e-12)
    assert e.value == _value(qrels, run, "q1", m)
    assert not any("refuses" in n for n in e.notes)


def test_integer_docno_ties_read_the_querys_own_docnos() -> None:
    # Canonical integer docnos; q2's rows come after q1's. q2: 3 and 7 tie, docno_desc puts 7
    # (grade 1) first: DCG = 1 = IDCG, NDCG 1 (3 first would give 1/log2(3)).
    qrels = {"q1": {"9": 1}, "q2": {"7": 1, "3": 0}}
    run = {"q1": {"9": 1.0, "1": 0.5}, "q2": {"3": 1.0, "7": 1.0}}
    e = rankflavor.explain(qrels, run, "q2", "ndcg@2")
    assert [(r.rank, r.doc) for r in e.rows] == [(1, "7"), (2, "3")]
    assert e.value == 1.0


# ---------------------------------------------------------------------------------------------
# Queries evaluate() leaves out, and those it scores under run_only=include

LISTED = "is listed by the qrels with no judgment, and missing=skip leaves such a query out of the judgments, " \
         "so evaluate\\(\\) leaves it out \\(missing=zero would score it\\)"
RUN_ONLY = "is only in the run; it has no judgments, so evaluate\\(\\) leaves it out \\(run_only=include would score it\\)"


def test_a_listed_query_without_judgment_under_missing_skip() -> None:
    qrels = {"q1": {"a": 1}, "q2": {}}
    run = {"q1": {"a": 1.0}, "q2": {"x": 0.5, "y": 0.2}}
    # In the run, run_only=include: evaluate() scores it as a query with nothing relevant (empty=one).
    m = "ndcg@2[missing=skip,run_only=include,empty=one]"
    e = rankflavor.explain(qrels, run, "q2", m)
    assert (e.status, e.value) == ("empty", 1.0)
    assert e.value == _value(qrels, run, "q2", m)
    assert [r.doc for r in e.rows] == ["x", "y"]
    with pytest.raises(UsageError, match="'q2' " + LISTED):
        rankflavor.explain(qrels, run, "q2", "ndcg@2[missing=skip]")
    with pytest.raises(UsageError, match="'q2' " + LISTED):
        rankflavor.explain(qrels, run, "q2", "ndcg@2[missing=skip,run_only=error]")
    # Not in the run: nothing to score, run_only=include or not.
    absent = {"q1": {"a": 1.0}}
    with pytest.raises(UsageError, match="'q2' " + LISTED):
        rankflavor.explain(qrels, absent, "q2", m)
    assert "q2" not in rankflavor.evaluate(qrels, absent, [m])[0].per_query()


def test_a_run_only_query() -> None:
    qrels = {"q1": {"a": 1}}
    run = {"q1": {"a": 1.0}, "q9": {"x": 0.5}}
    m = "ndcg@2[run_only=include,empty=one]"
    e = rankflavor.explain(qrels, run, "q9", m)
    assert (e.status, e.value) == ("empty", 1.0)
    assert e.value == _value(qrels, run, "q9", m)
    for refused in ("ndcg@2", "ndcg@2[run_only=skip]", "ndcg@2[run_only=error]"):
        with pytest.raises(UsageError, match="'q9' " + RUN_ONLY):
            rankflavor.explain(qrels, run, "q9", refused)


# ---------------------------------------------------------------------------------------------
# The ideal's notes


def test_the_ideal_cut_note_counts_the_candidates_left_out() -> None:
    qrels = {"q": {"a": 1, "b": 2, "c": 1, "d": 3}}
    run = {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}}
    # global ideal: the 4 judgments, cut at k=2: 4 - 2 = 2 left out
    e = rankflavor.explain(qrels, run, "q", "ndcg@2")
    assert [n for n in e.notes if n.startswith("ideal list cut")] == [
        "ideal list cut at 2 slot(s) (ideal_cut=k); 2 more candidate(s) left out"]
    # recall@3: the top 3 retrieved (a, b, c), cut at 2: 1 left out
    e = rankflavor.explain(qrels, run, "q", "ndcg@2[ideal=recall@3]")
    assert [n for n in e.notes if n.startswith("ideal list cut")] == [
        "ideal list cut at 2 slot(s) (ideal_cut=k); 1 more candidate(s) left out"]
    # nothing cut: no note
    for m in ("ndcg@5", "ndcg@2[ideal_cut=none]", "ndcg@4"):
        e = rankflavor.explain(qrels, run, "q", m)
        assert not any(n.startswith("ideal list cut") for n in e.notes), m
        assert len(e.ideal) == 4


def test_ideal_max_with_a_top_grade_of_zero() -> None:
    qrels = {"q": {"a": 0, "b": 0}}
    run = {"q": {"a": 0.5, "b": 0.4}}
    e = rankflavor.explain(qrels, run, "q", "ndcg@2[ideal=max,max_grade=0]")
    assert "ideal=max: grade 0 in every slot" in e.notes
    assert [(s.doc, s.grade, s.gain) for s in e.ideal] == [(None, 0.0, 0.0), (None, 0.0, 0.0)]


# ---------------------------------------------------------------------------------------------
# The documents left out


def test_every_document_left_out_from_trec_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    qp.write_text("q 0 a 2\nq 0 q 1\nq 0 c 1\nq 0 e 3\nq 0 d 1\n")
    rp.write_text(
        "q Q0 q 1 0.95 t\n"  # line 1: named like the query (judged 1): self-hit, dropped first
        "q Q0 a 2 0.9 t\n"  # line 2: rank 1
        "q Q0 u 3 0.8 t\n"  # line 3: unjudged, within the depth: condensed away
        "q Q0 c 4 0.7 t\n"  # line 4: rank 2
        "q Q0 a 5 0.65 t\n"  # line 5: a again: duplicates=first keeps line 2
        "q Q0 e 6 0.6 t\n"  # line 6: rank 3 > k=2: cutoff
        "q Q0 d 7 0.5 t\n"  # line 7: 5th row once the self-hit left: below depth 4
    )
    m = "ndcg@2[self_hits=drop,unjudged=condensed,depth=4,duplicates=first]"
    e = rankflavor.explain(str(qp), str(rp), "q", m)
    assert [(r.rank, r.doc, r.line) for r in e.rows] == [(1, "a", 2), (2, "c", 4), (3, "e", 6)]
    assert list(e.ignored) == [
        Ignored("a", 0.65, None, "duplicate", "duplicate line for this document (duplicates=first: another line kept)", 5),
        Ignored("q", 0.95, 1.0, "self_hit", "document id equals the query id (self_hits=drop)", 1),
        Ignored("u", 0.8, None, "condensed", "unjudged, removed before ranking (unjudged=condensed)", 3),
        Ignored("d", 0.5, 1.0, "depth", "below depth 4 (depth=4)", 7),
        Ignored("e", 0.6, 3.0, "cutoff", "rank 3 > k=2: outside the cutoff", 6),
    ]
    assert e.dcg == pytest.approx(2 + 1 / LOG2_3, abs=1e-12)  # a (2) at rank 1, c (1) at rank 2
    assert e.value == _value(str(qp), str(rp), "q", m)


def test_self_hits_kept_leave_nothing_out() -> None:
    qrels = {"q": {"a": 2, "q": 1}}
    run = {"q": {"q": 0.95, "a": 0.9}}
    e = rankflavor.explain(qrels, run, "q", "ndcg@2")
    assert [r.doc for r in e.rows] == ["q", "a"] and e.ignored == ()


def test_the_cutoff_reason_says_when_a_document_stays_a_candidate_for_the_ideal() -> None:
    qrels = {"q": {"a": 1, "b": 2, "c": 1, "d": 3}}
    run = {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}}
    out = "rank {} > k=2: outside the cutoff"
    still = " (still a candidate for the ideal: ideal={})"
    cases = {
        "ndcg@2": [out.format(3), out.format(4)],
        "ndcg@2[ideal=local]": [out.format(3) + still.format("local"), out.format(4) + still.format("local")],
        # recall@3 re-sorts the top 3 retrieved: rank 3 is in it, rank 4 is not
        "ndcg@2[ideal=recall@3]": [out.format(3) + still.format("recall@3"), out.format(4)],
        "dcg@2": [out.format(3), out.format(4)],
    }
    for m, reasons in cases.items():
        e = rankflavor.explain(qrels, run, "q", m)
        assert list(e.ignored) == [
            Ignored("c", 0.7, 1.0, "cutoff", reasons[0], None),
            Ignored("d", 0.6, 3.0, "cutoff", reasons[1], None),
        ], m
