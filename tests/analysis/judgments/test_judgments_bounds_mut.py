"""Outputs of ``rankflavor.analysis.judgments.bounds`` that the mutation run found unpinned: the refusal of an
empty measure list, measures given as objects without a scale, RBP's residual under its own
``param``, the per-query status of the bounds, what :func:`matched` aligns and refuses, the scale of
an ``irds:`` reference, and P's ``p_divisor=judged`` (a bug the triage found: a hole judged 0
counts in P's divisor there, so the zero-imputed value is not the value of the all-zero grading).
Expected values are worked by hand in the comments or found by brute force over every grading
(``tests/analysis/judgments/brute_bounds.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankflavor.analysis.judgments import bounds
from rankflavor.analysis.judgments.bounds import matched
from rankflavor.engine.plan import Evaluation
from rankflavor.errors import EvaluationError, InputError, UsageError
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.metrics.measure import parse_measure

from .brute_bounds import brute, check

# -- resolve ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("metrics", [[], ()])
def test_an_empty_list_of_measures_is_refused_with_an_example(metrics):  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError) as refused:
        bounds({"q": {"a": 2}}, {"q": {"a": 1.0}}, metrics, scale="trec_dl")
    assert str(refused.value) == "metrics: give at least one measure, e.g. metrics=['ndcg@10']"


def test_measure_objects_are_taken_as_they_are_without_a_scale():
    """A Measure (not text) without a scale is used as given; max_grade=2 gives the grades 0..2.
    ndcg@2 on q: u (hole) above a (1). u at 0: DCG 1/log2(3) over the ideal [1]; u at 1 or 2 the
    ranking is its own ideal ([1, 1], [2, 1]): 1. ERR@1 reads u alone: its stopping probability
    (2^g - 1) / 2^G, 0 at grade 0, 3/4 at G = 2."""
    import math

    qrels, run = {"q": {"a": 1}}, {"q": {"u": 1.0, "a": 0.5}}
    one = bounds(qrels, run, parse_measure("ndcg@2[max_grade=2]"))[0]
    assert (one.lower[0], one.upper[0]) == (pytest.approx(1 / math.log2(3)), 1.0) and one.grades == (0.0, 1.0, 2.0)
    two = bounds(qrels, run, [parse_measure("ERR@1[max_grade=2]"), "ndcg@2[max_grade=2]"])
    assert [(b.lower_mean, b.upper_mean) for b in two] == [(0.0, 0.75), (pytest.approx(1 / math.log2(3)), 1.0)]


# -- _finished ---------------------------------------------------------------------------------------


def test_rbp_residual_under_its_own_persistence():
    """RBP@10[param=0.5] on q: a (3), u (hole), b (1), three rows retrieved (d = min(10, 3) = 3).
    Weights (1 - p) p^(r-1): 1/2, 1/4, 1/8; gains g / G. Zero-imputed: 1/2 * 1 + 1/8 * 1/3 = 0.541666...;
    u at G adds 1/4. Residual (Moffat & Zobel): u's weight 1/4 + p^d = 1/8, 0.375 (under the default
    p = 0.8 it would be 0.16 + 0.512 = 0.672)."""
    mb = bounds({"q": {"a": 3, "b": 1}}, {"q": {"a": 0.9, "u": 0.8, "b": 0.7}}, "RBP@10[param=0.5]",
                scale="trec_dl")[0]
    assert mb.lower[0] == pytest.approx(0.5 + 1 / 24, abs=1e-12)
    assert mb.upper[0] - mb.lower[0] == pytest.approx(0.25, abs=1e-12)
    assert mb.residual is not None and mb.residual[0] == pytest.approx(0.375, abs=1e-12)
    assert mb.residual_mean == pytest.approx(0.375, abs=1e-12)
    assert mb.to_dict()["residual"] == pytest.approx(0.375, abs=1e-12)


def test_the_status_of_each_query_is_the_zero_imputed_measures():
    """P@2: q1 holds a judged relevant document (status ok); q2 only a judged 0, so zero-imputed
    it has nothing relevant (status empty, scored 0 by empty=zero) though a grading of v can make
    it relevant: [0, 1/2]. The per-query table says so."""
    b = bounds({"q1": {"a": 2}, "q2": {"b": 0}}, {"q1": {"a": 1.0, "u": 0.5}, "q2": {"b": 1.0, "v": 0.5}}, "P@2",
               scale="trec_dl")
    mb = b[0]
    assert mb.queries.tolist() == ["q1", "q2"] and mb.status.tolist() == ["ok", "empty"]
    assert (mb.lower.tolist(), mb.upper.tolist()) == ([0.5, 0.0], [1.0, 0.5])
    table = b.to_arrow(per_query=True).to_pydict()
    assert table["query"] == ["q1", "q2", "all"] and table["status"] == ["ok", "empty", "summary"]


# -- matched ---------------------------------------------------------------------------------------

def _tables(tmp_path: Path, qrels: str, run: str):  # type: ignore[no-untyped-def]
    (tmp_path / "qrels.txt").write_text(qrels)
    (tmp_path / "other.run").write_text(run)
    return as_qrels(str(tmp_path / "qrels.txt")), as_run(str(tmp_path / "other.run"))


def test_matched_without_measures_names_the_run_sharing_no_query(tmp_path):  # type: ignore[no-untyped-def]
    """No measure: the default flavor's policies; a run sharing no query is named."""
    q, r = _tables(tmp_path, "1 0 a 2\n", "7 Q0 a 1 3.0 t\n")
    with pytest.raises(EvaluationError, match=r"other\.run: no query is both"):
        matched(Evaluation(q, r), [], r)
    matched(Evaluation(*_tables(tmp_path, "1 0 a 2\n", "1 Q0 a 1 3.0 t\n")), [], r)  # one shared: nothing to say


@pytest.mark.parametrize("measures", [[], ["P@2"], ["P@2", "P@2[duplicates=first]"]])
def test_matched_aligns_under_the_first_measures_duplicates_policy(measures, tmp_path):  # type: ignore[no-untyped-def]
    """A plan of a piece of the input (whole=False: no check of shared queries) still aligns in
    matched() under the policy of the first measure (none: the default flavor's, error), so a
    document judged twice for a query the run retrieves is refused there, naming its line;
    duplicates=first keeps the first judgment and aligns."""
    q, r = _tables(tmp_path, "1 0 a 2\n1 0 a 0\n1 0 b 1\n", "1 Q0 a 1 3.0 t\n1 Q0 u 2 2.0 t\n")
    with pytest.raises(InputError, match=r"qrels\.txt:2: document 'a' appears more than once for query '1'"):
        matched(Evaluation(q, r, whole=False), [parse_measure(m) for m in measures], r)
    matched(Evaluation(q, r, whole=False), [parse_measure("P@2[duplicates=first]")], r)


# -- bounds: the scale of an ir_datasets reference -----------------------------------------------------

def test_bounds_of_a_dataset_reference_range_over_its_documented_grades(monkeypatch):  # type: ignore[no-untyped-def]
    """``irds:x`` without a scale: the dataset's documented scale (faked: trec_dl), so ndcg@3 needs
    no max_grade and the hole ranges over 0..3. q1: d2 (hole), d1 (2), d3 (0); at 3 the ranking
    is ideal (upper 1); at 0 the DCG is 2 / log2(3) over the ideal 2."""
    import math

    from rankflavor.io import irds
    from rankflavor.presets import irds as irdsscale
    from rankflavor.presets.scales import scale_named

    class Line:
        def __init__(self, doc: str, grade: int) -> None:
            self.query_id, self.doc_id, self.relevance = "q1", doc, grade

    class Dataset:
        def qrels_iter(self):  # type: ignore[no-untyped-def]
            yield from (Line("d1", 2), Line("d3", 0))

    monkeypatch.setattr(irds, "_open", lambda dataset_id, what: Dataset())
    monkeypatch.setattr(irds, "describe", lambda dataset_id, dataset: {})
    monkeypatch.setattr(irdsscale, "dataset_scale", lambda dataset_id: scale_named("trec_dl"))
    b = bounds("irds:x", {"q1": {"d2": 3.0, "d1": 2.0, "d3": 1.0}}, "ndcg@3")
    assert b.scale is not None and b.scale.name == "trec_dl" and b[0].grades == (0.0, 1.0, 2.0, 3.0)
    assert b[0].upper[0] == pytest.approx(1.0) and b[0].lower[0] == pytest.approx(1 / math.log2(3))


# -- P@k[p_divisor=judged]: a bug found by the triage --------------------------------------------------

def test_p_divisor_judged_counts_a_hole_graded_zero_in_its_divisor():
    """Bug found while triaging the mutants of ``_as_zero_imputed``: the lower end of a monotone
    metric took the zero-imputed value for the grading with every hole at 0, but under
    p_divisor=judged a hole judged 0 joins the divisor while an unjudged one does not.
    q: a (3), u (hole), b (0); P@3 divides by the judged documents of the top 3. u unjudged:
    1 relevant / 2 judged = 1/2 (the value); u graded 0: 1/3; u graded 1..3: 2/3."""
    mb = bounds({"q": {"a": 3, "b": 0}}, {"q": {"a": 0.9, "u": 0.8, "b": 0.7}}, "P@3[p_divisor=judged]",
                scale="trec_dl")[0]
    assert mb.value[0] == pytest.approx(0.5)
    assert (mb.lower[0], mb.upper[0]) == (pytest.approx(1 / 3), pytest.approx(2 / 3))


@pytest.mark.parametrize("measure", ["P@3[p_divisor=judged]", "P@4[p_divisor=judged,ties=pessimistic]",
                                     "P[p_divisor=judged,rel=2]", "P@2[p_divisor=judged,depth=3]"])
def test_p_divisor_judged_against_brute_force(measure):  # type: ignore[no-untyped-def]
    """Holes beside judged rows, in tie groups, a pooled but unjudged (-1) label, a query with
    nothing judged in its top k but its holes."""
    qrels = {"q1": {"a": 3, "b": 0, "c": 1, "d": -1}, "q2": {"e": 0, "x": 2}, "q3": {"z": 3}}
    runs = {"q1": [("a", 2.0), ("h", 2.0), ("b", 1.0), ("d", 1.0), ("c", 0.5)],
            "q2": [("i", 1.0), ("e", 1.0), ("j", 0.2)], "q3": [("k", 1.0), ("l", 0.5)]}
    check(qrels, runs, measure)
    assert brute(qrels, runs, measure)["q3"] == (0.0, 1.0)  # (k, l at 0: no relevant of 2 judged)


# -- the two ends of a query whose value is the same under every grading: a bug found by the triage --

def _multiples(r: int) -> tuple[dict[str, float], list[tuple[str, float]]]:
    """3r rows: relevant judged documents at ranks r and 2r (r = 1: at rank 1 only), judged 0
    elsewhere, and one hole at rank 3r (r = 1: at rank 2). AP is 1/r whatever the hole's grade:
    non-relevant, (1/r + 2/(2r)) / 2 = 1/r; relevant, (1/r + 2/(2r) + 3/(3r)) / 3 = 1/r (r = 1:
    1/1, or (1/1 + 2/2) / 2)."""
    n = 3 * r if r > 1 else 2
    qrels = {f"d{i:03d}": (2.0 if (i + 1) % r == 0 else 0.0) for i in range(n - 1)}
    return qrels, [(f"d{i:03d}", float(1000 - i)) for i in range(n)]


@pytest.mark.parametrize("measure", ["AP", "AP[ties=pessimistic]", "AP[empty=one]"])
def test_the_lower_end_never_exceeds_the_upper_one(measure):  # type: ignore[no-untyped-def]
    """Bug found while triaging the mutants of ``_pending``'s roles: AP's closed form (whose sums
    run over the whole batch of queries) chose the grading of each end among equal values, and the
    engine scored the one chosen for the lower end an ulp above the one chosen for the upper end
    (1/11: 0.09090909090909091 against 0.0909090909090909), so ``lower > upper`` and the gap was
    negative. Each end is now the least (greatest) engine value of both chosen gradings: exactly
    the brute-force least and greatest value over every grading (the same engine, one
    pseudo-query per grading)."""
    r = {"a": 1, "b10": 10, "b11": 11, "b17": 17}
    qrels, runs = {}, {}
    for q, n in r.items():
        qrels[q], runs[q] = _multiples(n)
    # and c, whose interval is open: hole u above the relevant e: u non-relevant 1/2 / 1; relevant (1 + 2/2) / 2
    qrels["c"], runs["c"] = {"e": 3.0}, [("u", 2.0), ("e", 1.0)]
    mb = bounds(qrels, {q: dict(rows) for q, rows in runs.items()}, measure, scale="trec_dl")[0]
    want = brute(qrels, runs, measure)
    assert mb.queries.tolist() == [*r, "c"]
    for q, lo, up in zip(mb.queries.tolist(), mb.lower.tolist(), mb.upper.tolist(), strict=True):
        assert (lo, up) == want[q], q  # (exactly: the ends are engine values of gradings)
        if q in r:
            assert lo == pytest.approx(1 / r[q], rel=1e-12) and up == pytest.approx(lo, rel=1e-12)
            assert lo <= up, q
    assert (mb.lower[-1], mb.upper[-1]) == (0.5, 1.0)
    assert (mb.gap >= 0).all()
