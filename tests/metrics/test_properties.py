"""Property tests (hypothesis): invariants every flavor must keep, on small random collections.

Each property states where it holds; where a flavor legitimately breaks it, the exclusion is
named and explained next to the strategy that leaves it out.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import rankflavor

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Doc ids whose byte order differs from numeric and case-insensitive order, so the docno
#: tie-break is exercised.
DOC_IDS = ["d1", "d10", "d2", "D3", "a", "B", "b9", "z", "Z0", "é", "d1x", "_"]
QUERY_IDS = ["q1", "q10", "q2", "Q"]
SCORES = [0.0, 0.5, 1.0, 2.0, 3.0, 1.0 + 1e-12]  # ties are common; the last ties 1.0 in float32
GRADES = [None, None, -1, 0, 0, 1, 2, 3]  # None: retrieved but not judged

#: Core metric families (binary.py, counts.py, ndcg.py); cutoffs are filled in per test.
BINARY = ["AP", "P", "recall", "RR", "Rprec", "bpref", "success", "judged"]
COUNTS = ["num_ret", "num_rel", "num_rel_ret"]


@st.composite
def collections(draw: st.DrawFn, grades: list[Any] = GRADES) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A small qrels and run as long DataFrames (one row per line, like the files)."""
    qrels_rows: list[tuple[str, str, float]] = []
    run_rows: list[tuple[str, str, float]] = []
    for query in draw(st.lists(st.sampled_from(QUERY_IDS), min_size=1, max_size=4, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=len(DOC_IDS), unique=True))
        for doc in docs:
            grade = draw(st.sampled_from(grades))
            retrieved = grade is None or draw(st.booleans())
            if grade is not None:
                qrels_rows.append((query, doc, float(grade)))
            if retrieved:
                run_rows.append((query, doc, draw(st.sampled_from(SCORES))))
    # A query in both: with none, evaluate refuses (test_errors.py checks that).
    assume({q for q, _, _ in qrels_rows} & {q for q, _, _ in run_rows})
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    return qrels, run


GAINS_NON_NEGATIVE = ["linear", "exp2", "binary", "{0:0,1:1,2:3,3:7}", "{1:5,2:1}"]
DISCOUNTS = ["log2", "jk(2)", "jk(3.5)", "reciprocal"]
TIES = ["docno_desc", "docno_asc", "input_order", "averaged", "pessimistic", "optimistic"]


def input_knobs() -> st.SearchStrategy[dict[str, str]]:
    """Knobs that decide what is ranked and how (every metric reads them)."""
    return st.fixed_dictionaries(
        {
            "unjudged": st.sampled_from(["zero", "condensed"]),
            "negatives": st.sampled_from(["unjudged", "zero"]),
            "ties": st.sampled_from(TIES),
            "precision": st.sampled_from(["float64", "float32"]),
            "depth": st.sampled_from(["none", "2", "5"]),
            "rel": st.sampled_from(["1", "2", "0.5"]),
        }
    )


def _per_query(results: rankflavor.Results) -> dict[str, dict[str, float]]:
    return {m.flavor: m.per_query() for m in results}


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


# ---------------------------------------------------------------------------------------------
# NDCG bounds


@st.composite
def bounded_ndcg_flavors(draw: st.DrawFn) -> dict[str, str]:
    """Flavors under which NDCG is guaranteed to lie in [0, 1] for non-negative gains.

    Left out, because the bound does not hold there by definition:

    * ``ideal=as_supplied`` (Spark triples: the ideal is not sorted, so it can be beaten);
    * ``unjudged_grade`` set (Elasticsearch: unjudged documents gain in the DCG, never in the ideal);
    * ``ideal=recall@K`` with K < k (documents ranked K+1..k gain but are not in the ideal), and
      ``recall@K`` with ``ties=averaged`` (a tie group straddling rank K lends the DCG gain
      from documents below K that the ideal never sees);
    * ``ideal=max`` with a gain table that is not monotone in the grade (the top grade is then not
      the top gain); grades above ``max_grade`` are rejected as input, so they cannot occur.
    """
    knobs = draw(input_knobs())
    ideal = draw(st.sampled_from(["global", "local", "max", "recall@2", "recall@5", "recall@12"]))
    gain = draw(st.sampled_from(GAINS_NON_NEGATIVE))
    if ideal == "max" and gain == "{1:5,2:1}":
        gain = "exp2"
    if ideal.startswith("recall@") and knobs["ties"] == "averaged":
        knobs["ties"] = "docno_desc"
    knobs.update(
        gain=gain,
        discount=draw(st.sampled_from(DISCOUNTS)),
        ideal=ideal,
        ideal_cut=draw(st.sampled_from(["k", "hits", "none"])),
        max_grade="3",
        empty=draw(st.sampled_from(["zero", "one", "nan"])),
    )
    return knobs


@SETTINGS
@given(collections(), bounded_ndcg_flavors(), st.sampled_from([1, 2, 5, 20]))
def test_ndcg_between_zero_and_one(data: tuple[pd.DataFrame, pd.DataFrame], knobs: dict[str, str], k: int) -> None:
    qrels, run = data
    recall_depth = int(knobs["ideal"].split("@")[1]) if knobs["ideal"].startswith("recall@") else None
    metrics = ["ndcg"] + ([f"ndcg@{k}"] if recall_depth is None or recall_depth >= k else [])
    if recall_depth is not None:
        metrics = [m for m in metrics if m != "ndcg"]  # uncut: every retrieved row counts, K does not
        assume(metrics)
    res = rankflavor.evaluate(qrels, run, metrics, **knobs)
    for m in res:
        values = m.values[~np.isnan(m.values)]
        assert ((values >= 0) & (values <= 1 + 1e-12)).all(), (m.flavor, m.per_query())


def test_recall_ideal_above_k_exceeds_one_so_the_exclusion_is_needed() -> None:
    """The documented exclusion is real: recall@K with K < k can exceed 1."""
    qrels = {"q": {"a": 1, "b": 3}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    value = rankflavor.evaluate(qrels, run, "ndcg@2[ideal=recall@1]")[0].values[0]
    assert value == 1 + 3 / math.log2(3)


# ---------------------------------------------------------------------------------------------
# Perfect rankings


@st.composite
def perfect_rankings(draw: st.DrawFn) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Every judged document retrieved, scored by its grade; nothing unjudged retrieved."""
    qrels: dict[str, dict[str, float]] = {}
    for query in draw(st.lists(st.sampled_from(QUERY_IDS), min_size=1, max_size=4, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=len(DOC_IDS), unique=True))
        qrels[query] = {d: float(draw(st.sampled_from([-1, 0, 1, 2, 3]))) for d in docs}
    run = {q: dict(docs) for q, docs in qrels.items()}
    return qrels, run


@SETTINGS
@given(
    perfect_rankings(),
    st.sampled_from(["global", "local"]),
    st.sampled_from(["linear", "exp2", "binary", "{0:0,1:1,2:3,3:7}"]),
    st.sampled_from(DISCOUNTS),
    st.sampled_from(["k", "hits", "none"]),
    st.sampled_from(TIES),
    st.sampled_from(["unjudged", "zero"]),
    st.sampled_from(["zero", "condensed"]),
    st.sampled_from([1, 3, 50]),
)
def test_perfect_ranking_scores_one(
    data: tuple[dict, dict], ideal: str, gain: str, discount: str, cut: str, ties: str, negatives: str,
    unjudged: str, k: int,
) -> None:
    """Scores = grades with every judged document retrieved: NDCG = 1 under a global or local
    ideal, whatever the gain (monotone in the grade), discount, tie rule or condensing, and for
    NDCG@k whenever the ideal is cut where the list is (``ideal_cut=k`` or ``hits``).
    ``empty=one`` makes queries without a positive grade 1 as well, so every value must be 1."""
    qrels, run = data
    knobs = dict(ideal=ideal, gain=gain, discount=discount, ideal_cut=cut, ties=ties, negatives=negatives,
                 unjudged=unjudged, empty="one")
    # An uncut ideal under a cut DCG is below 1 by design (trec_eval -M 3 -m ndcg, flavor-facts §2.1).
    metrics = ["ndcg"] if cut == "none" else ["ndcg", f"ndcg@{k}"]
    res = rankflavor.evaluate(qrels, run, metrics, **knobs)
    for m in res:
        assert np.allclose(m.values, 1.0, rtol=0, atol=1e-12), (m.flavor, m.per_query())
        assert len(m.values) == len(qrels)


# ---------------------------------------------------------------------------------------------
# Gains


@SETTINGS
@given(collections(grades=[None, -1, 0, 1]), input_knobs(), st.sampled_from(DISCOUNTS),
       st.sampled_from(["global", "local", "max", "recall@3"]), st.sampled_from(["k", "hits", "none"]))
def test_linear_exp2_and_binary_gain_agree_on_binary_grades(
    data: tuple[pd.DataFrame, pd.DataFrame], knobs: dict[str, str], discount: str, ideal: str, cut: str
) -> None:
    qrels, run = data
    knobs.update(discount=discount, ideal=ideal, ideal_cut=cut, max_grade="1", rel="1")
    by_gain = {}
    for gain in ("linear", "exp2", "binary"):
        res = rankflavor.evaluate(qrels, run, ["ndcg", "ndcg@3", "dcg@3"], gain=gain, **knobs)
        by_gain[gain] = [m.per_query() for m in res]
    assert by_gain["linear"] == by_gain["exp2"] == by_gain["binary"]


# ---------------------------------------------------------------------------------------------
# Line order


def _all_core_metrics(k: int) -> list[str]:
    return ["ndcg", f"ndcg@{k}", f"dcg@{k}", "AP", f"AP@{k}", f"P@{k}", f"recall@{k}", "RR", "Rprec",
            "bpref", f"success@{k}", f"judged@{k}", *COUNTS]


@SETTINGS
@given(collections(), input_knobs(), st.sampled_from(["global", "local"]), st.sampled_from([1, 3, 10]),
       st.randoms(use_true_random=False))
def test_results_do_not_depend_on_line_order(
    data: tuple[pd.DataFrame, pd.DataFrame], knobs: dict[str, str], ideal: str, k: int, rnd: Any
) -> None:
    """Shuffling the lines of both files changes nothing, for every tie rule except
    ``input_order`` (whose whole point is the file order)."""
    qrels, run = data
    assume(knobs["ties"] != "input_order")
    knobs["ideal"] = ideal
    metrics = _all_core_metrics(k)
    before = rankflavor.evaluate(qrels, run, metrics, **knobs)
    seed = rnd.randrange(2**32 - 1)  # seed + 1 must stay a valid NumPy seed too
    shuffled_qrels = qrels.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    shuffled_run = run.sample(frac=1.0, random_state=seed + 1).reset_index(drop=True)
    after = rankflavor.evaluate(shuffled_qrels, shuffled_run, metrics, **knobs)
    for a, b in zip(before, after, strict=True):
        pa, pb = a.per_query(), b.per_query()
        assert pa.keys() == pb.keys()
        assert all(_same(pa[q], pb[q]) for q in pa), (a.flavor, pa, pb)
        assert _same(a.summary, b.summary)
    assert before.counts == after.counts


def test_line_order_property_can_fail() -> None:
    """The shuffle test would notice an order dependence: input_order ties do depend on it."""
    run_a = pd.DataFrame([("q", "a", 1.0), ("q", "b", 1.0)], columns=["query_id", "doc_id", "score"])
    run_b = run_a.iloc[::-1].reset_index(drop=True)
    qrels = {"q": {"a": 1}}
    one = rankflavor.evaluate(qrels, run_a, "RR[ties=input_order]")[0].values[0]
    two = rankflavor.evaluate(qrels, run_b, "RR[ties=input_order]")[0].values[0]
    assert (one, two) == (1.0, 0.5)


# ---------------------------------------------------------------------------------------------
# Cutoffs beyond the list


@SETTINGS
@given(collections(), input_knobs(), st.sampled_from(["global", "local", "max", "recall@20"]),
       st.sampled_from(["k", "hits", "none"]), st.sampled_from(["linear", "exp2"]))
def test_cutoff_beyond_the_list_equals_no_cutoff(
    data: tuple[pd.DataFrame, pd.DataFrame], knobs: dict[str, str], ideal: str, cut: str, gain: str
) -> None:
    """With k at least every list length, metric@k = metric for everything that only reads the
    top k (AP, recall, RR, success, bpref, judged, DCG), and for NDCG where the flavor says the
    ideal ignores k: ``ideal_cut=none``, ``ideal_cut=hits`` (min(k, hits) = hits) or an ideal
    built from the list itself (``local``; ``recall@K`` with K >= the list). Not P@k: it divides
    by k, not by what was retrieved."""
    qrels, run = data
    knobs.update(ideal=ideal, ideal_cut=cut, gain=gain, max_grade="3")
    k = len(DOC_IDS)  # no list is longer
    metrics = ["AP", "recall", "RR", "success", "bpref", "judged", "dcg"]
    ideal_ignores_k = cut in ("none", "hits") or ideal in ("local", "recall@20")
    if ideal_ignores_k:
        metrics.append("ndcg")
    res = rankflavor.evaluate(qrels, run, [*metrics, *(f"{m}@{k}" for m in metrics)], **knobs)
    n = len(metrics)
    for uncut, cut_k in zip(list(res)[:n], list(res)[n:], strict=True):
        pu, pk = uncut.per_query(), cut_k.per_query()
        assert pu.keys() == pk.keys()
        assert all(_same(pu[q], pk[q]) for q in pu), (cut_k.flavor, pu, pk)


def test_ndcg_cut_at_k_keeps_a_k_long_ideal_on_short_lists() -> None:
    """The exclusion above is real: ideal_cut=k with a global ideal is not the uncut NDCG.
    flavor-facts §1.4: one of three equally graded relevant documents at rank 1, ndcg_cut_10 0.4693."""
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    run = {"q": {"a": 1.0}}
    res = rankflavor.evaluate(qrels, run, ["ndcg@10", "ndcg"], preset="trec_eval")
    assert round(res[0].values[0], 4) == 0.4693
    assert round(res[1].values[0], 4) == 0.4693  # trec_eval ndcg: ideal uncut, the same here
    res = rankflavor.evaluate(qrels, run, ["ndcg@10[ideal=local]"])
    assert res[0].values[0] == 1.0


# ---------------------------------------------------------------------------------------------
# Binary metrics bounds


@SETTINGS
@given(collections(), input_knobs(), st.sampled_from([1, 2, 5, 20]),
       st.sampled_from(["zero", "one", "nan", "skip"]), st.sampled_from(["k", "hits"]))
def test_binary_metrics_between_zero_and_one(
    data: tuple[pd.DataFrame, pd.DataFrame], knobs: dict[str, str], k: int, empty: str, divisor: str
) -> None:
    qrels, run = data
    metrics = [*BINARY, *(f"{m}@{k}" for m in BINARY if m != "Rprec")]
    res = rankflavor.evaluate(qrels, run, metrics, empty=empty, p_divisor=divisor, **knobs)
    for m in res:
        values = m.values[~np.isnan(m.values)]
        assert ((values >= 0) & (values <= 1)).all(), (m.flavor, m.per_query())
        assert math.isnan(m.summary) or 0 <= m.summary <= 1


# ---------------------------------------------------------------------------------------------
# Condensed lists


def _unjudged_rows(qrels: pd.DataFrame, run: pd.DataFrame, negatives: str) -> np.ndarray:
    """Run rows without a usable judgment: absent from the qrels, or (negatives=unjudged) judged < 0."""
    usable = qrels if negatives == "zero" else qrels[qrels["relevance"] >= 0]
    keys = set(zip(usable["query_id"], usable["doc_id"], strict=True))
    return np.array([(q, d) not in keys for q, d in zip(run["query_id"], run["doc_id"], strict=True)], dtype=bool)


@SETTINGS
@given(collections(), input_knobs(), st.sampled_from(["global", "local", "recall@3"]), st.sampled_from([1, 3, 10]),
       st.sampled_from(["zero", "one", "nan"]))
def test_condensed_equals_deleting_unjudged_documents(
    data: tuple[pd.DataFrame, pd.DataFrame], knobs: dict[str, str], ideal: str, k: int, empty: str
) -> None:
    """``unjudged=condensed`` = evaluating the run with its unjudged rows deleted (Sakai 2007),
    for every metric that reads the knob (Judged@k does not: it measures judgment coverage).
    Depth is off: trec_eval applies -M before -J, so with a depth the two differ by design.
    A query left with nothing retrieved is absent from the deleted run; there every
    ratio metric must be 0 (nothing retrieved) or the empty policy's value."""
    qrels, run = data
    knobs.update(depth="none", ideal=ideal, empty=empty, missing="zero")
    metrics = [m for m in _all_core_metrics(k) if not m.startswith("judged")]
    condensed = rankflavor.evaluate(qrels, run, metrics, **{**knobs, "unjudged": "condensed"})
    kept = run[~_unjudged_rows(qrels, run, knobs["negatives"])]
    assume(len(kept))
    deleted = rankflavor.evaluate(qrels, kept.reset_index(drop=True), metrics, **{**knobs, "unjudged": "zero"})
    left = set(kept["query_id"])
    for a, b in zip(condensed, deleted, strict=True):
        pa, pb = a.per_query(), b.per_query()
        for q, value in pa.items():
            if q in left:
                assert _same(value, pb[q]), (a.flavor, q, value, pb[q])
            elif a.measure.metric not in ("num_rel",):
                empty_value = {"zero": 0.0, "one": 1.0, "nan": math.nan}[empty]
                assert _same(value, 0.0) or _same(value, empty_value), (a.flavor, q, value)


# ---------------------------------------------------------------------------------------------
# Regressions found by the properties above


def _both_orders(qrels: dict, rows: list[tuple[str, str, float]], measure: str) -> tuple[float, float]:
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    backwards = run.iloc[::-1].reset_index(drop=True)
    return (rankflavor.evaluate(qrels, run, measure)[0].values[0],
            rankflavor.evaluate(qrels, backwards, measure)[0].values[0])


def test_averaged_ties_order_rows_by_docno_for_metrics_that_do_not_average() -> None:
    """Regression: ``ties=averaged`` left tied rows in file order, so P@1, AP, RR and Judged@1
    changed when the run's lines were reordered (the fast-path rewrite of order.py skipped the
    docno tie-break for ``averaged``). Only NDCG/DCG average; the rest use trec_eval's order."""
    qrels = {"q": {"a": 1, "b": 0}}
    rows = [("q", "a", 1.0), ("q", "b", 1.0), ("q", "c", 1.0)]
    for measure in ("P@1[ties=averaged]", "RR[ties=averaged]", "AP[ties=averaged]", "judged@1[ties=averaged]"):
        forwards, backwards = _both_orders(qrels, rows, measure)
        assert forwards == backwards, measure
        assert forwards == rankflavor.evaluate(qrels, {"q": {"a": 1.0, "b": 1.0, "c": 1.0}},
                                               measure.replace("averaged", "docno_desc"))[0].values[0]
    # docno descending puts c (unjudged) first: RR = 1/3, Judged@1 = 0
    assert _both_orders(qrels, rows, "RR[ties=averaged]")[0] == 1 / 3


@given(st.sampled_from(["pessimistic", "optimistic"]))
@settings(max_examples=2, deadline=None)
def test_grade_tie_rules_break_equal_grades_by_docno(ties: str) -> None:
    """Regression: ``ties=pessimistic``/``optimistic`` ordered rows of equal score and equal
    grade by file order, so Judged@1 depended on the line order when an unjudged document tied
    a judged grade-0 one. Equal grades now fall back to docno descending (trec_eval's order)."""
    qrels = {"q": {"a": 0, "z": 2}}
    rows = [("q", "a", 1.0), ("q", "b", 1.0), ("q", "z", 0.5)]
    forwards, backwards = _both_orders(qrels, rows, f"judged@1[ties={ties}]")
    assert forwards == backwards == 0.0  # b (unjudged) > a in docno order, so b is ranked first
