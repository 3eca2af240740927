"""explain_tables: every field of an Explanation, on tiny hand-built queries.

Oracles: the DCG arithmetic worked out by hand in each test (linear gain, log2(rank + 1)
discount unless said), rankflavor.evaluate() for each query's value, and the definitions of the
knobs (what a note says follows from the flavor and the query's kind: ok, empty, missing,
listed with no judgment, only in the run).
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

import rankflavor
from rankflavor.errors import InputError
from rankflavor.metrics import REGISTRY

TIE_NOTE = "ties=docno_desc: equal scores ordered by docno, descending (trec_eval); 1 tie group(s) among the kept rows"

# a=2, u unjudged, b=0 tied with u, c=1 below the cutoff; z=1 judged, not retrieved.
QRELS = {"q": {"a": 2, "b": 0, "c": 1, "z": 1}}
RUN = {"q": {"a": 0.9, "u": 0.8, "b": 0.8, "c": 0.5}}


def _value(qrels: dict, run: dict, query: str, measure: str) -> float | None:
    return rankflavor.evaluate(qrels, run, [measure])[0].per_query().get(query)


def test_every_field_of_an_ok_query() -> None:
    e = rankflavor.explain(QRELS, RUN, "q", "ndcg@3")
    # ties=docno_desc: u and b tie at 0.8, docno descending puts u (rank 2) before b (rank 3).
    assert [(r.rank, r.doc) for r in e.rows] == [(1, "a"), (2, "u"), (3, "b"), (4, "c")]
    assert [r.grade for r in e.rows] == [2.0, None, 0.0, 1.0]
    judged = [r.judged for r in e.rows]
    assert all(type(j) is bool for j in judged) and judged == [True, False, True, True]
    assert [r.raw_gain for r in e.rows] == [2.0, 0.0, 0.0, 1.0]
    assert [r.in_cut for r in e.rows] == [True, True, True, False]
    assert [r.tie_group for r in e.rows] == [None, "T1", "T1", None]
    assert [r.line for r in e.rows] == [None] * 4  # dicts have no lines
    # DCG@3 = 2/log2(2) + 0/log2(3) + 0/log2(4) = 2 (c at rank 4 is outside the cutoff).
    assert e.dcg == 2.0
    # IDCG@3 (global ideal: a=2, c=1, z=1) = 2/1 + 1/log2(3) + 1/2.
    idcg = 2.0 + 1.0 / math.log2(3.0) + 0.5
    assert e.idcg == pytest.approx(idcg, abs=1e-12)
    assert e.ndcg == pytest.approx(2.0 / idcg, abs=1e-12)
    assert e.value == e.ndcg == _value(QRELS, RUN, "q", "ndcg@3")
    assert (e.query, e.status, e.ideal_cut) == ("q", "ok", 3)
    assert [(s.doc, s.retrieved_rank) for s in e.ideal] == [("a", 1), ("c", 4), ("z", None)]
    # One tie group; no negative or fractional grade; an ordinary judged query: nothing else to say.
    assert e.notes == (TIE_NOTE,)
    d = e.to_dict()
    assert (d["query"], d["status"], d["ideal_cut"]) == ("q", "ok", 3)


def test_the_ideal_cut_is_reported_as_a_count_or_none() -> None:
    assert rankflavor.explain(QRELS, RUN, "q", "ndcg@2").ideal_cut == 2  # ideal_cut=k
    assert rankflavor.explain(QRELS, RUN, "q", "ndcg@2[ideal_cut=none]").ideal_cut is None  # every slot
    # a=3, b=2, c=1, d=1 relevant; @2 with ideal_cut=k keeps 2 ideal slots and leaves 2 out.
    qrels, run = {"q": {"a": 3, "b": 2, "c": 1, "d": 1}}, {"q": {"a": 0.9, "x": 0.5}}
    e = rankflavor.explain(qrels, run, "q", "ndcg@2")
    assert e.ideal_cut == 2 and [s.doc for s in e.ideal] == ["a", "b"]
    assert e.idcg == pytest.approx(3.0 + 2.0 / math.log2(3.0), abs=1e-12)
    assert e.notes == ("ideal list cut at 2 slot(s) (ideal_cut=k); 2 more candidate(s) left out",)


def test_dcg_has_no_ideal_and_no_ndcg() -> None:
    e = rankflavor.explain(QRELS, RUN, "q", "dcg@3")
    assert e.dcg == 2.0 and e.value == 2.0 == _value(QRELS, RUN, "q", "dcg@3")
    assert (e.idcg, e.ndcg, e.ideal_cut, e.ideal) == (None, None, None, ())
    assert e.notes == (TIE_NOTE,)
    d = e.to_dict()
    assert (d["idcg"], d["ndcg"], d["value"], d["ideal_cut"]) == (None, None, 2.0, None)


def test_the_ideal_is_shown_only_for_a_metric_that_divides_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """A spec's breakdown may carry ideal functions; without ``uses_ideal`` explain shows no ideal."""
    dcg, ndcg = REGISTRY["dcg"], REGISTRY["ndcg"]
    assert not dcg.uses_ideal and ndcg.breakdown is not None
    monkeypatch.setitem(REGISTRY, "dcg", replace(dcg, breakdown=ndcg.breakdown))
    e = rankflavor.explain(QRELS, RUN, "q", "dcg@3")
    assert e.dcg == 2.0 and e.value == 2.0
    assert (e.idcg, e.ndcg, e.ideal_cut, e.ideal) == (None, None, None, ())


def test_unjudged_grade_reaches_the_raw_gain_of_unjudged_rows_only() -> None:
    qrels, run = {"q": {"a": 2, "b": 0}}, {"q": {"a": 0.9, "u": 0.8, "b": 0.7}}
    e = rankflavor.explain(qrels, run, "q", "ndcg@3[unjudged_grade=1]")
    # a judged 2, u absent from the qrels earns grade 1's gain, b judged 0.
    assert [r.raw_gain for r in e.rows] == [2.0, 1.0, 0.0]
    assert [r.gain for r in e.rows] == [2.0, 1.0, 0.0]
    # DCG = 2 + 1/log2(3) + 0; the ideal never sees the assumed grade: IDCG = 2.
    assert e.dcg == pytest.approx(2.0 + 1.0 / math.log2(3.0), abs=1e-12)
    assert e.idcg == 2.0
    assert e.value == _value(qrels, run, "q", "ndcg@3[unjudged_grade=1]")


def test_negative_grades_are_counted_in_a_note() -> None:
    # b is judged -1 (negative), u and v are not in the qrels (unjudged, no grade).
    qrels = {"q": {"a": 2, "b": -1, "c": 1}}
    run = {"q": {"a": 0.9, "b": 0.8, "u": 0.5, "v": 0.4}}
    e = rankflavor.explain(qrels, run, "q", "ndcg@4")
    assert [(r.doc, r.grade, r.judged) for r in e.rows] == [
        ("a", 2.0, True), ("b", -1.0, False), ("u", None, False), ("v", None, False)]
    assert e.notes == ("1 document(s) have a negative grade, treated as unjudged (negatives=unjudged)",)
    zero = rankflavor.explain(qrels, run, "q", "ndcg@4[negatives=zero]")
    assert zero.rows[1].judged is True and zero.notes == ()


def test_fractional_grades_are_counted_under_truncate_only() -> None:
    qrels, run = {"q": {"a": 1.5, "b": 2}}, {"q": {"a": 0.9, "b": 0.8, "u": 0.5}}
    e = rankflavor.explain(qrels, run, "q", "ndcg@3[fractional=truncate]")
    assert e.notes == ("1 document(s) have a fractional grade, gaining its whole part "
                       "(fractional=truncate: trec_eval's atol)",)
    # a gains trunc(1.5) = 1: DCG = 1 + 2/log2(3), IDCG = 2 + 1/log2(3).
    assert e.ndcg == pytest.approx((1.0 + 2.0 / math.log2(3.0)) / (2.0 + 1.0 / math.log2(3.0)), abs=1e-12)
    assert rankflavor.explain(qrels, run, "q", "ndcg@3").notes == ()  # kept as given: nothing to say
    # whole grades under truncate: nothing truncated, no note
    assert rankflavor.explain(QRELS, RUN, "q", "ndcg@3[fractional=truncate]").notes == (TIE_NOTE,)


def test_run_lines_and_duplicates_first(tmp_path: Path) -> None:
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text("q 0 a 1\nq 0 b 2\n")
    rp.write_text("q Q0 a 1 1.0 t\nq Q0 b 2 2.0 t\nq Q0 a 3 3.0 t\n")
    m = "ndcg@3[duplicates=first]"
    e = rankflavor.explain(str(qp), str(rp), "q", m)
    # first keeps a's line 1 (score 1.0): b (2.0, line 2) ranks 1st, a (1.0, line 1) 2nd.
    assert [(r.rank, r.doc, r.score, r.line) for r in e.rows] == [(1, "b", 2.0, 2), (2, "a", 1.0, 1)]
    assert [(i.doc, i.kind, i.score, i.line) for i in e.ignored] == [("a", "duplicate", 3.0, 3)]
    # DCG = 2/1 + 1/log2(3) = IDCG: NDCG 1.
    assert e.dcg == pytest.approx(2.0 + 1.0 / math.log2(3.0), abs=1e-12)
    assert e.ndcg == 1.0 == rankflavor.evaluate(str(qp), str(rp), m)[0].per_query()["q"]
    # duplicates=error (the default) refuses the repeated line, as evaluate() does.
    with pytest.raises(InputError, match="more than once"):
        rankflavor.evaluate(str(qp), str(rp), "ndcg@3")
    with pytest.raises(InputError, match="more than once"):
        rankflavor.explain(str(qp), str(rp), "q", "ndcg@3")


# --- the query's kind and the policies: status, value and notes ------------------------------

KINDS_QRELS = {"q": {"a": 2}, "e": {"a": 0}, "m": {"a": 1}, "l": {}}
KINDS_RUN = {"q": {"a": 0.9}, "e": {"a": 1.0, "x": 0.5}, "o": {"a": 1.0}, "l": {"a": 1.0}}


@pytest.mark.parametrize(("query", "measure", "status", "value", "notes"), [
    # e: judged but nothing relevant (IDCG = 0)
    ("e", "ndcg@3[empty=skip,missing=zero]", "empty", None, ("this query is left out of the mean (empty=skip)",)),
    ("e", "ndcg@3[empty=one]", "empty", 1.0, ("IDCG is 0 (nothing relevant): value set by empty=one",)),
    ("e", "ndcg@3[empty=zero]", "empty", 0.0, ("IDCG is 0 (nothing relevant): value set by empty=zero",)),
    # m: judged, not in the run
    ("m", "ndcg@3[missing=skip,empty=zero]", "missing", None, ("this query is left out of the mean (missing=skip)",)),
    ("m", "ndcg@3[missing=zero,empty=one]", "missing", 0.0,
     ("the run does not answer this query: value set by missing=zero",)),
    # o: only in the run, scored as a query with nothing relevant
    ("o", "ndcg@3[run_only=include]", "empty", 0.0,
     ("the query has no judgments; run_only=include scores it as a query with nothing relevant",
      "IDCG is 0 (nothing relevant): value set by empty=zero")),
    ("o", "ndcg@3[run_only=include,empty=skip]", "empty", None,
     ("the query has no judgments; run_only=include scores it as a query with nothing relevant",
      "this query is left out of the mean (empty=skip)")),
    # l: listed by the qrels with no judgment, made a judged query by missing=zero
    ("l", "ndcg@3[missing=zero,empty=one]", "empty", 1.0,
     ("the qrels list the query with no judgment; missing=zero makes it one of theirs, with nothing relevant",
      "IDCG is 0 (nothing relevant): value set by empty=one")),
    # q: an ordinary query under the same policies: nothing to say
    ("q", "ndcg@3[missing=zero,empty=skip,run_only=include]", "ok", 1.0, ()),
    ("q", "ndcg@3[missing=skip,empty=one]", "ok", 1.0, ()),
])
def test_status_value_and_notes_follow_the_policies(query: str, measure: str, status: str, value: float | None,
                                                    notes: tuple[str, ...]) -> None:
    e = rankflavor.explain(KINDS_QRELS, KINDS_RUN, query, measure)
    assert (e.query, e.status, e.value, e.ndcg) == (query, status, value, value)
    assert value == _value(KINDS_QRELS, KINDS_RUN, query, measure)
    assert e.notes == notes
