"""RBP and its residual (Moffat & Zobel 2008) against references written here from the formulas:
trec_eval-style binary RBP (r_i = 1 when grade >= rel), graded RBP, and the residual as the weight
of the unjudged ranks plus p^d for the ranks past the run's end."""

from __future__ import annotations

import numpy as np
import pytest

import rankflavor
from rankflavor.errors import FlavorError

from .cascade_cases import distinct_case, ranked_grades


def rbp(grades: list[int | None], p: float, k: int | None, r) -> float:  # type: ignore[no-untyped-def]
    """(1 - p) * sum_{i <= d} r(g_i) p^(i-1), d = min(k, retrieved); unjudged and negative: 0."""
    top = grades[:k] if k else grades
    return (1 - p) * sum(p ** (i - 1) * (0.0 if g is None or g < 0 else r(g)) for i, g in enumerate(top, start=1))


def residual(grades: list[int | None], p: float, k: int | None) -> float:
    """What ranks of unknown grade could add: the unjudged ranks within d, and every rank past d."""
    top = grades[:k] if k else grades
    unjudged = sum(p ** (i - 1) for i, g in enumerate(top, start=1) if g is None or g < 0)
    return (1 - p) * unjudged + p ** len(top)


@pytest.mark.parametrize(("p", "k", "rel"), [(0.8, None, 1), (0.5, 5, 1), (0.95, 20, 2)])
def test_binary_rbp_and_residual_random(p: float, k: int | None, rel: int) -> None:
    qrels, run = distinct_case(11 + rel, 80, 3, negatives=True)
    at = "" if k is None else f"@{k}"
    got = rankflavor.evaluate(qrels, run, [f"RBP{at}[param={p},gain=binary,rel={rel}]", f"RBP_resid{at}[param={p}]"])
    value, resid = got[0].per_query(), got[1].per_query()
    answered = [q for q in run if run[q] and q in qrels]
    assert len(answered) > 40
    for q in answered:
        grades = ranked_grades(qrels, run, q)
        assert value[q] == pytest.approx(rbp(grades, p, k, lambda g: float(g >= rel)), abs=1e-12)
        assert resid[q] == pytest.approx(residual(grades, p, k), abs=1e-12)
    assert max(value.values()) > 0.2 and max(resid.values()) > 0.2  # neither is all zeros


@pytest.mark.parametrize("gain", ["linear", "exp2", "{1:1,2:2.5,3:4}"])
def test_graded_rbp_random(gain: str) -> None:
    qrels, run = distinct_case(21, 60, 3)
    got = rankflavor.evaluate(qrels, run, f"RBP@10[param=0.7,max_grade=3,gain={gain}]")[0].per_query()
    r = {"linear": lambda g: g / 3, "exp2": lambda g: (2 ** g - 1) / 7,
         "{1:1,2:2.5,3:4}": lambda g: {0: 0, 1: 1, 2: 2.5, 3: 4}[g] / 4}[gain]
    answered = [q for q in run if run[q] and q in qrels]
    for q in answered:
        assert got[q] == pytest.approx(rbp(ranked_grades(qrels, run, q), 0.7, 10, r), abs=1e-12)
    assert max(got[q] for q in answered) > 0.1


def test_rbp_interval_holds_every_grading_of_the_unjudged() -> None:
    """[RBP, RBP + residual] holds binary RBP whatever grades the unjudged ranks and a run extended
    past its end get (the property that makes the residual the residual)."""
    rng = np.random.default_rng(3)
    qrels, run = distinct_case(31, 40, 1)
    low = rankflavor.evaluate(qrels, run, ["RBP@15[param=0.6,gain=binary]", "RBP_resid@15[param=0.6]"])
    value, resid = low[0].per_query(), low[1].per_query()
    for q in (q for q in run if run[q] and q in qrels):
        grades = ranked_grades(qrels, run, q)[:15]
        for _ in range(20):
            filled = [int(rng.integers(0, 2)) if g is None or g < 0 else g for g in grades]
            filled += [int(rng.integers(0, 2)) for _ in range(15 - len(filled))]
            full = rbp(filled, 0.6, 15, lambda g: float(g >= 1))
            assert value[q] - 1e-12 <= full <= value[q] + resid[q] + 1e-12


def test_rbp_worked_example_and_refusals() -> None:
    qrels = {"q": {"a": 3, "b": 0, "c": 1}}
    run = {"q": {"a": 0.9, "x": 0.8, "c": 0.7}}
    got = [m.mean for m in rankflavor.evaluate(qrels, run, ["RBP[param=0.5,gain=binary]", "RBP_resid[param=0.5]"])]
    # a relevant at rank 1, x unjudged at rank 2, c relevant at rank 3; then the ranks past the end
    assert got == pytest.approx([0.5 * (1 + 0.25), 0.5 * 0.5 + 0.5 ** 3])
    with pytest.raises(FlavorError, match="persistence"):
        rankflavor.evaluate(qrels, run, "RBP[param=1.5,gain=binary]")
    with pytest.raises(FlavorError, match="max_grade"):
        rankflavor.evaluate(qrels, run, "RBP[param=0.5]")  # graded RBP divides by gain(G)
