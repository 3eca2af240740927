"""The knobs the peer presets added, against a reference written from their definitions.

``ap_divisor`` (R, min(k, R), the relevant documents found), ``relevant_set`` (R from the qrels or
from the retrieved documents), ``nonpositive`` (a document scored <= 0 is not relevant),
``p_divisor=judged``, the ``fallout`` metric and ERR's ``unjudged_grade``: every combination on small
random queries (hypothesis), each value and each empty flag (``empty=nan``) equal to a plain
Python computation over the ranked list.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor.errors import FlavorError

Query = tuple[dict[str, int], list[tuple[str, float]]]


@st.composite
def queries(draw: st.DrawFn) -> Query:
    """One query: up to 8 retrieved documents with distinct scores (0.0 and negatives among them),
    judged -1 (pooled, unjudged: trec_eval's negatives) to 3 or not at all, and up to 3 judged
    documents never retrieved."""
    n = draw(st.integers(1, 8))
    scores = draw(st.lists(st.integers(-4, 6), min_size=n, max_size=n, unique=True))
    grades = draw(st.lists(st.one_of(st.none(), st.integers(-1, 3)), min_size=n, max_size=n))
    extra = draw(st.lists(st.integers(0, 3), max_size=3))
    qrels = {f"d{i}": g for i, g in enumerate(grades) if g is not None}
    qrels.update({f"x{i}": g for i, g in enumerate(extra)})
    ranked = sorted(((f"d{i}", s * 0.5) for i, s in enumerate(scores)), key=lambda t: -t[1])
    return qrels, ranked


def reference(q: Query, metric: str, k: int | None, t: int, knobs: dict[str, str]) -> float:
    """The value of ``metric`` (NaN where the query is empty) from the definitions."""
    qrels, ranked = q
    top = ranked if k is None else ranked[:k]
    rel = [qrels.get(d, -1) >= t for d, _ in ranked]
    scored = [r and (s > 0 or knobs.get("nonpositive", "keep") == "keep") for r, (_, s) in zip(rel, ranked, strict=True)]
    R = sum(rel) if knobs.get("relevant_set") == "retrieved" else sum(g >= t for g in qrels.values())
    cut = len(top)
    if metric == "fallout":
        total = sum(not r for r in rel)
        return math.nan if total == 0 else sum(not r for r in rel[:cut]) / total
    if R == 0:
        return math.nan
    if metric == "P":
        found = sum(scored[:cut])
        how = knobs.get("p_divisor", "k")
        if how == "judged":
            rated = sum(d in qrels for d, _ in top)
            return found / rated if rated else 0.0
        if k is None:
            return found / len(ranked)
        return found / (min(k, len(ranked)) if how == "hits" else k)
    if metric == "recall":
        return sum(scored[:cut]) / R
    if metric == "RR":
        return next((1 / (i + 1) for i in range(cut) if scored[i]), 0.0)
    if metric == "Rprec":
        return sum(rel[:R]) / R
    if metric == "success":
        return float(any(rel[:cut]))
    assert metric == "AP"
    total, hits = 0.0, 0
    for i in range(cut):
        if scored[i]:
            hits += 1
            total += hits / (i + 1)
    how = knobs.get("ap_divisor", "relevant")
    divisor = hits if how == "found" else min(k, R) if how == "min_k_relevant" and k is not None else R
    return total / divisor if divisor else 0.0


def ours(q: Query, measure: str) -> float:
    qrels, ranked = q
    run = {d: s for d, s in ranked}
    # another query, so that a query without judgments (run only, included) still meets the qrels
    both = {"q": qrels, "z": {"a": 1}} if qrels else {"z": {"a": 1}}
    return rankflavor.evaluate(both, {"q": run, "z": {"a": 1.0}}, measure, empty="nan", run_only="include",
                               ties="input_order")[0].per_query()["q"]


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


KNOB_SETS = [
    {}, {"relevant_set": "retrieved"}, {"nonpositive": "nonrelevant"},
    {"relevant_set": "retrieved", "nonpositive": "nonrelevant"},
]


@settings(max_examples=40, deadline=None)
@given(queries(), st.one_of(st.none(), st.integers(1, 6)), st.sampled_from([1, 2]))
def test_binary_metrics_under_the_new_knobs(q: Query, k: int | None, t: int) -> None:
    for knobs in KNOB_SETS:
        cases = [("P", {}), ("P", {"p_divisor": "hits"}), ("P", {"p_divisor": "judged"}), ("recall", {}), ("RR", {}),
                 ("AP", {}), ("AP", {"ap_divisor": "min_k_relevant"}), ("AP", {"ap_divisor": "found"}),
                 ("success", {})]
        for metric, extra in cases:
            if metric == "success" and k is None:
                continue
            read = {**knobs, **extra}
            if metric == "success":
                read.pop("nonpositive", None)  # hit rate reads no score
            text = f"{metric}{'' if k is None else f'@{k}'}[rel={t}" + "".join(f",{a}={b}" for a, b in read.items()) + "]"
            want = reference(q, metric, k, t, read)
            assert same(ours(q, text), want), (text, q, ours(q, text), want)
    for knobs in ({}, {"relevant_set": "retrieved"}):
        text = f"Rprec[rel={t}" + "".join(f",{a}={b}" for a, b in knobs.items()) + "]"
        assert same(ours(q, text), reference(q, "Rprec", None, t, knobs)), (text, q)


@settings(max_examples=60, deadline=None)
@given(queries(), st.one_of(st.none(), st.integers(1, 6)), st.sampled_from([1, 2]))
def test_fallout(q: Query, k: int | None, t: int) -> None:
    text = f"fallout{'' if k is None else f'@{k}'}[rel={t}]"
    assert same(ours(q, text), reference(q, "fallout", k, t, {})), (text, q)
    assert same(ours(q, text.replace("fallout", "fall_out")), reference(q, "fallout", k, t, {}))  # the alias


def chapelle(grades: list[float | None], top: int) -> float:
    value, reach = 0.0, 1.0
    for r, g in enumerate(grades, start=1):
        p = 0.0 if g is None else (2 ** g - 1) / 2 ** top
        value += reach * p / r
        reach *= 1 - p
    return value


@settings(max_examples=60, deadline=None)
@given(queries(), st.integers(1, 6), st.sampled_from([None, 0, 1, 3]))
def test_err_with_an_assumed_grade(q: Query, k: int, assumed: int | None) -> None:
    qrels, ranked = q
    # a negative grade is pooled but unjudged: it stops no one, and takes no assumed grade
    grades = [None if qrels.get(d, assumed) is not None and qrels.get(d, 0) < 0 else qrels.get(d, assumed)
              for d, _ in ranked[:k]]
    nothing = all(g in (None, 0) for g in grades) and not any(g > 0 for g in qrels.values())
    want = math.nan if nothing else chapelle(grades, 3)
    knob = "" if assumed is None else f",unjudged_grade={assumed}"
    assert same(ours(q, f"ERR@{k}[max_grade=3{knob}]"), want), (q, k, assumed)
    assert same(ours(q, f"ERR_gain@{k}[max_grade=3,gain=exp2{knob}]"), want), (q, k, assumed)


def test_nonpositive_refuses_a_run_of_ranks_only(tmp_path: Path) -> None:
    """A rank-only run has no scores (they are minus the ranks): the filter would drop everything."""
    (tmp_path / "run.tsv").write_text("q\ta\t1\nq\tb\t2\n")
    (tmp_path / "qrels.txt").write_text("q 0 a 1\n")
    for measure in ("RR[nonpositive=nonrelevant]", "P@2[nonpositive=nonrelevant]"):
        with pytest.raises(FlavorError, match=r": nonpositive=nonrelevant reads each document's score, and this run has "
                           r"ranks only \(order=rank\); give a run with scores, or nonpositive=keep$"):
            rankflavor.evaluate(tmp_path / "qrels.txt", tmp_path / "run.tsv", measure)
    assert rankflavor.evaluate(tmp_path / "qrels.txt", tmp_path / "run.tsv", "RR")[0].mean == 1.0
