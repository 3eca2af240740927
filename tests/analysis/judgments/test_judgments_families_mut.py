"""The mutation run's survivors in ``judgments/families.py`` (the kernel's view of a grading) and
``judgments/regrade.py`` (the engine's confirming pass): what each hole contributes through its
grade, the refusal of a falling gain inside a tie group, the synthetic ranking's scores, the
batches of the confirming pass, the judgment lines it copies, and its check. Expected values come
from the definitions (worked in the comments) or from brute force over every grading
(``tests/analysis/judgments/brute_bounds.py``: each grading scored by ``rankflavor.evaluate``)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from rankflavor.analysis.judgments import Scale, bounds, families, regrade
from rankflavor.analysis.judgments.scope import Rules
from rankflavor.errors import EvaluationError, FlavorError
from rankflavor.metrics.measure import parse_measure

from .brute_bounds import brute, check

GRID = np.array([[0.0, 1.0, 2.0], [3.0, 2.0, 0.0]])  # two gradings of three holes


def _rules(measure: str) -> Rules:
    return Rules.of(parse_measure(measure), np.arange(4.0))


@pytest.mark.parametrize(("measure", "want"), [
    ("ndcg@3", GRID),  # linear gain: gain(g) = g
    ("ndcg@3[gain=exp2]", 2.0**GRID - 1),  # gain(g) = 2^g - 1
    ("dcg@3[gain={0:0,1:3,2:1,3:2}]", np.array([[0.0, 3.0, 1.0], [2.0, 1.0, 0.0]])),  # the table, read off
    ("P@3[rel=2]", (GRID >= 2).astype(float)),  # relevance: grade >= rel
    ("RR[rel=1]", (GRID >= 1).astype(float)),
    ("ERR@3[max_grade=3]", (2.0**GRID - 1) / 2.0**3),  # Chapelle: R(g) = (2^g - 1) / 2^G, G = 3
    ("ERR_gain@3[max_grade=3]", GRID / (3 + 1)),  # R(g) = gain(g) / (gain(G) + 1), linear gain
])
def test_level_is_each_grades_contribution_in_the_shape_given(measure: str, want: np.ndarray) -> None:
    """families.level: gain, relevance or ERR's stopping probability of every grade, for a grid
    of gradings at once (the shape kept); families.gain is the gain of each, whatever the level."""
    rules = _rules(measure)
    got = families.level(rules, GRID)
    assert got.shape == GRID.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
    g = families.gain(rules, GRID)
    assert g.shape == GRID.shape
    if rules.bound.level == "gain":
        np.testing.assert_allclose(g, want, rtol=0, atol=1e-15)


def test_err_bounds_on_a_grade_whose_stopping_probability_is_zero() -> None:
    """A scale with a positive grade of 1e-17: its gain is positive, but ERR's stopping probability
    (2^1e-17 - 1) / 2 rounds to 0 in float64, so such a document stops no reader and a query
    holding only it has nothing to find. Under empty=one the least value of q (a judged 0, holes
    h and i at ranks 2 and 3) is one hole at grade 1 (R = 1/2) at rank 3: 1/2 * 1/3 = 1/6, not
    the 1 a grade-1e-17 hole (empty) would score; brute force over every grading agrees."""
    scale = Scale("tiny", (0, 1e-17, 1), rel=1, top=1)
    qrels = {"q": {"a": 0.0}, "p": {"x": 1.0}}
    runs = {"q": [("a", 1.0), ("h", 0.5), ("i", 0.2)], "p": [("x", 1.0)]}
    for measure in ("ERR@3[empty=one]", "ERR@3"):
        check(qrels, runs, measure, scale=scale, grades=scale.grades)
    b = bounds(qrels, {q: dict(r) for q, r in runs.items()}, "ERR@3[empty=one]", scale=scale)[0]
    assert b.lower[b.queries.tolist().index("q")] == pytest.approx(1 / 6, abs=1e-12)


@pytest.mark.parametrize("measure", [
    "ndcg@3[ties=pessimistic,gain={0:0,1:3,2:1,3:2}]", "ndcg@3[ties=optimistic,gain={0:0,1:3,2:1,3:2}]",
    "dcg@3[ties=pessimistic,gain={0:0,1:3,2:1,3:2}]", "RBP@3[ties=optimistic,gain={0:0,1:3,2:1,3:2}]",
])
def test_a_falling_gain_is_bounded_where_no_tie_group_holds_a_hole_and_another_row(measure: str) -> None:
    """The refusal of a gain that falls as the grade rises (grade 1 gains 3, grade 2 gains 1) is
    for a grade-ordered tie group holding a hole and another document. Here the judged a and b
    share a tie group and the hole u is alone in its own: nothing is refused, and the interval
    is brute force's."""
    qrels = {"q": {"a": 2, "b": 1, "c": 3}, "p": {"x": 3}}
    runs = {"q": [("a", 1.0), ("b", 1.0), ("u", 0.5), ("c", 0.2)], "p": [("y", 1.0), ("x", 0.5)]}
    check(qrels, runs, measure)


@pytest.mark.parametrize("measure", ["ndcg@3[max_grade=2,ties=pessimistic,gain={1.5:5}]",
                                     "dcg@3[max_grade=2,ties=optimistic,gain={1.5:5}]"])
def test_a_judged_grade_off_the_scale_in_the_holes_tie_group_counts_in_the_refusal(measure: str) -> None:
    """Without a scale the holes take the grades 0, 1, 2 (max_grade=2), on which the gain (the
    grade, but 1.5 gains 5) rises. The judged a (grade 1.5) shares the hole u's tie group, and
    from 1.5 to 2 the gain falls (5 to 2): the order inside that group is not the order of the
    gains, so the bound is refused, naming the query. With the 1.5 outside the group nothing is
    refused."""
    run = {"q": {"a": 1.0, "u": 1.0, "b": 0.2}}
    with pytest.raises(FlavorError, match=r"on query q ties=\w+ orders a tie group .*a higher grade contributes less"):
        bounds({"q": {"a": 1.5, "b": 1}}, run, measure)
    b = bounds({"q": {"a": 2, "b": 1.5}}, run, measure)[0]
    # a (2) and u tie above b (1.5: gain 5 at rank 3, 5/log2(4)); u graded g = 0, 1, 2 gains g and
    # comes after a under optimistic (grade descending), before it under pessimistic (at g = 2 the
    # order of equal grades changes nothing); the global ideal is the gains 5, 2, g
    first_u = "pessimistic" in measure
    dcg = [(g + 2 / math.log2(3) if first_u else 2 + g / math.log2(3)) + 5 / 2 for g in (0, 1, 2)]
    want = dcg if measure.startswith("dcg") else [d / (5 + 2 / math.log2(3) + g / 2) for d, g in zip(dcg, (0, 1, 2), strict=True)]
    assert (b.lower[0], b.upper[0]) == pytest.approx((min(want), max(want)), abs=1e-12)


def _gaps_against_brute(qrels, runs, measure):  # type: ignore[no-untyped-def]
    """Document table of ``measure`` against brute force (test_bounds_exact's rule)."""
    b = bounds(qrels, {q: dict(r) for q, r in runs.items()}, measure, scale="trec_dl")
    mb = b[0]
    where = {str(q): j for j, q in enumerate(mb.queries)}
    want = brute(qrels, runs, measure)
    for q, (lo, up) in want.items():
        assert (mb.lower[where[q]], mb.upper[where[q]]) == pytest.approx((lo, up), abs=1e-12)
    table = b.document_table()
    assert table
    for q, d, _, _, if_zero, if_top, gap in table:
        j = where[q]
        width = mb.upper[j] - mb.lower[j]
        after = [brute(qrels, runs, measure, fixed=(q, d, float(g)))[q] for g in range(4)]
        assert gap == pytest.approx(min(width - (up - lo) for lo, up in after), abs=1e-12)
        assert if_zero == pytest.approx(mb.upper[j] - after[0][1], abs=1e-12)
        assert if_top == pytest.approx(after[-1][0] - mb.lower[j], abs=1e-12)


def test_measures_of_different_duplicates_policies_are_confirmed_on_their_own_rankings(write) -> None:  # type: ignore[no-untyped-def]
    """The run lists h twice for q (scores 2.0, then 4.0). duplicates=first keeps the first line
    (h at rank 2), duplicates=best the higher score (h at rank 1): two rankings, whose gradings
    the engine must score each on its own. Each interval is brute force's on the run with the
    duplicate resolved by hand."""
    run = write("dup.run", "q Q0 a 1 3.0 t\nq Q0 h 2 2.0 t\nq Q0 b 3 1.5 t\nq Q0 h 4 4.0 t\nq Q0 c 5 1.0 t\n"
                           "p Q0 x 1 2.0 t\np Q0 u 2 1.0 t\n")
    qrels = {"q": {"a": 2, "b": 0, "c": 3}, "p": {"x": 2}}
    resolved = {"first": {"q": [("a", 3.0), ("h", 2.0), ("b", 1.5), ("c", 1.0)], "p": [("x", 2.0), ("u", 1.0)]},
                "best": {"q": [("h", 4.0), ("a", 3.0), ("b", 1.5), ("c", 1.0)], "p": [("x", 2.0), ("u", 1.0)]}}
    measures = ["ndcg@3[duplicates=first]", "ndcg@3[duplicates=best]", "P@2[duplicates=first]", "P@2[duplicates=best]"]
    b = bounds(qrels, run, measures, scale="trec_dl")
    for measure, mb in zip(measures, b, strict=True):
        want = brute(qrels, resolved[measure.split("=")[1].rstrip("]")], measure)
        got = {str(q): (lo, up) for q, lo, up in zip(mb.queries, mb.lower, mb.upper, strict=True)}
        assert got == pytest.approx(want, abs=1e-12), measure
    assert b[0].upper[1] != pytest.approx(b[1].upper[1])  # (the two rankings do differ on q)


def test_bounds_on_judgments_that_name_their_source(write) -> None:  # type: ignore[no-untyped-def]
    """A qrels file with a fifth field (each judgment's source): the bounds are those of the same
    judgments without it (brute force); the gradings of holes carry no source."""
    qrels_path = write("sourced.qrels", "q 0 a 2 human:x\nq 0 b 0 human:x\np 0 x 3 human:y\n")
    run = {"q": {"a": 3.0, "h": 2.0, "b": 1.0}, "p": {"y": 2.0, "x": 1.0}}
    qrels = {"q": {"a": 2, "b": 0}, "p": {"x": 3}}
    measures = ["ndcg@3", "P@2", "AP"]
    b = bounds(qrels_path, run, measures, scale="trec_dl")
    for measure, mb in zip(measures, b, strict=True):
        want = brute(qrels, {q: list(r.items()) for q, r in run.items()}, measure)
        got = {str(q): (lo, up) for q, lo, up in zip(mb.queries, mb.lower, mb.upper, strict=True)}
        assert got == pytest.approx(want, abs=1e-12), measure


@pytest.mark.parametrize("measure", ["ndcg@2[duplicates=first]", "P@2[duplicates=first]", "AP[duplicates=first]"])
def test_a_document_judged_twice_keeps_its_first_line_in_the_confirming_pass(write, measure: str) -> None:  # type: ignore[no-untyped-def]
    """duplicates=first keeps a document's first judgment line: q's a is judged 3 on the first
    line and 0 three q-lines later, the lines of q and p interleaved. The engine's pass over the
    gradings must read q's lines in file order (a = 3), as brute force does with a = 3."""
    lines = ["q 0 a 3"]
    for i in range(8):
        lines += [f"p 0 x{i} 1", f"q 0 z{i} 1" if i != 2 else "q 0 a 0"]
    lines.append("q 0 z2 1")
    qrels_path = write("twice.qrels", "\n".join(lines) + "\n")
    run = {"q": [("a", 1.0), ("h", 0.5), ("b", 0.2)], "p": [("x0", 1.0), ("u", 0.5)]}
    qrels = {"q": {"a": 3.0, **{f"z{i}": 1.0 for i in range(8)}}, "p": {f"x{i}": 1.0 for i in range(8)}}
    mb = bounds(qrels_path, {q: dict(r) for q, r in run.items()}, measure, scale="trec_dl")[0]
    want = brute(qrels, run, measure)
    got = {str(q): (lo, up) for q, lo, up in zip(mb.queries, mb.lower, mb.upper, strict=True)}
    assert got == pytest.approx(want, abs=1e-12)


def _offset(monkeypatch, delta: float, only: str | None = None) -> None:  # type: ignore[no-untyped-def]
    """The engine's values in the confirming pass moved by ``delta`` (``only``: on that query's
    gradings alone)."""
    real = regrade.evaluate_tables

    def off(*args, **kwargs):  # type: ignore[no-untyped-def]
        res = real(*args, **kwargs)
        for m in res.measures:
            mine = np.array([only is None or str(q).split("\x1f")[0] == only for q in m.queries], dtype=bool)
            m.values[mine] = np.asarray(m.values, dtype=np.float64)[mine] + delta
        return res

    monkeypatch.setattr(regrade, "evaluate_tables", off)


Q43 = ({"q": {"d1": 3, "d2": 2, "d3": 0, "d4": 1, "d5": 3, "d6": 0, "d7": 2}},
       {"q": {"d2": 9.0, "d3": 8.0, "d1": 7.0, "d4": 6.0, "dU": 5.0, "d6": 4.0, "d7": 3.0, "d5": 2.0}})


def test_the_engine_check_tolerates_1e_9_and_no_more(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """TOLERANCE = 1e-9, absolute and relative: NDCG values (at most 1) off by 5e-10 pass, off by
    5e-9 (more than 1e-9 + 1e-9 x 1) are an internal error."""
    assert regrade.TOLERANCE == 1e-9
    _offset(monkeypatch, 5e-10)
    bounds(*Q43, "ndcg@5", scale="trec_dl")
    _offset(monkeypatch, 5e-9)
    with pytest.raises(EvaluationError, match="internal check failed: the bound of ndcg@5"):
        bounds(*Q43, "ndcg@5", scale="trec_dl")


def test_the_engine_check_names_the_pick_that_disagrees(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Two queries each with a hole; the engine is made to disagree on b's gradings only: the
    error names b, and the two values it quotes differ by the 1e-6 put in."""
    qrels = {"a": {"d1": 3, "d2": 1}, "b": {"d1": 2, "d3": 0}}
    run = {"a": {"d1": 3.0, "u": 2.0, "d2": 1.0}, "b": {"d1": 3.0, "v": 2.0, "d3": 1.0}}
    _offset(monkeypatch, 1e-6, only="b")
    with pytest.raises(EvaluationError, match="on query b was derived as") as exc:
        bounds(qrels, run, "ndcg@3", scale="trec_dl")
    number = r"(?:np\.float64\()?([-+0-9.e]+)\)?"
    m = re.search(f"derived as {number} but the measure on that grading is {number};", str(exc.value))
    assert m is not None, str(exc.value)
    assert float(m.group(2)) - float(m.group(1)) == pytest.approx(1e-6, abs=1e-12)
