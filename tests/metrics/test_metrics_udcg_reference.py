"""UDCG over every knob it reads, against the authors' formula written out.

Trappolini et al. 2025 (github.com/GiovanniTRA/UDCG ``src/compute_udcg_scores.py``): a context of
n = min(k, retrieved) passages scores sigmoid((1/n) sum_i w_i u_i), u = 1 for a relevant passage
and ``penalty`` for a distractor (label utility) or the grade's positive / negative size
(grade utility); an empty context scores 0. The positional form (``param`` = a_1..a_k, b_1..b_k)
is sigmoid(sum_i a_i u+_i + b_i u-_i). Small random queries (hypothesis, bounded examples).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankflavor.errors import FlavorError

from .test_metrics_ndcg_reference import NO_SHRINK, Query, agrees, ours, queries


def reference(q: Query, k: int | None, knobs: dict[str, str]) -> float:
    qrels, ranked = q
    depth = int(knobs["depth"]) if "depth" in knobs else None
    rows = ranked if depth is None else ranked[:depth]
    rows = rows if k is None else rows[:k]
    if not rows:
        return 0.0
    rel = int(knobs.get("rel", "1"))
    dg = int(knobs["distractor_grade"]) if "distractor_grade" in knobs else None
    plus, minus = [], []
    for d, _ in rows:
        raw = qrels.get(d)
        if knobs.get("utility") == "grade":
            u = 0.0 if raw is None else float(raw)
            plus.append(max(u, 0.0))
            minus.append(max(-u, 0.0))
        else:
            distractor = dg is not None and raw == dg
            plus.append(float(raw is not None and raw >= 0 and raw >= rel and not distractor))
            minus.append(float(distractor))
    if "param" in knobs:
        w = [float(x) for x in knobs["param"].strip("()").split(",")]
        assert k is not None
        x = sum(w[i] * plus[i] + w[k + i] * minus[i] for i in range(len(rows)))
    else:
        penalty = float(knobs.get("penalty", str(-1 / 3)))
        x = sum(p + penalty * m for p, m in zip(plus, minus, strict=True)) / len(rows)
    return 1 / (1 + math.exp(-x))


@st.composite
def flavors(draw: st.DrawFn) -> tuple[str, int | None, dict[str, str]]:
    k = draw(st.one_of(st.none(), st.integers(1, 5)))
    knobs: dict[str, str] = {}
    if draw(st.booleans()):
        knobs["utility"] = "grade"
    else:
        if draw(st.booleans()):
            knobs["distractor_grade"] = draw(st.sampled_from(["-1", "0", "2"]))
        if draw(st.booleans()):
            knobs["rel"] = draw(st.sampled_from(["1", "2", "3"]))
    if k is not None and draw(st.booleans()):
        ws = draw(st.lists(st.sampled_from([-2.0, -0.5, 0.25, 1.0, 3.0]), min_size=2 * k, max_size=2 * k))
        knobs["param"] = "(" + ",".join(str(w) for w in ws) + ")"
    elif draw(st.booleans()):
        knobs["penalty"] = draw(st.sampled_from(["-0.5", "-0.333", "-2"]))
    if draw(st.booleans()):
        knobs["depth"] = draw(st.sampled_from(["1", "3"]))
    return "UDCG", k, knobs


@settings(max_examples=80, deadline=None, phases=NO_SHRINK)
@given(queries(), st.lists(flavors(), min_size=4, max_size=4))
def test_udcg_equals_the_formula(q: Query, cases: list[tuple[str, int | None, dict[str, str]]]) -> None:
    agrees(q, cases, lambda _m, k, kn: reference(q, k, kn))


def test_an_empty_context_scores_zero() -> None:
    """Nothing left to read (the one passage is unjudged and condensed away): 0, not sigmoid(0)."""
    q = ({"a": 1}, [("x", 1.0)])
    assert ours(q, ["UDCG@2[unjudged=condensed]", "UDCG@1[param=(1,1),unjudged=condensed]", "UDCG@2"]) == [
        0.0, 0.0, 0.5]


@pytest.mark.parametrize(("measure", "message"), [
    ("UDCG@2[param=(1,2,3)]", "UDCG@2: param gives the positional weights (a_1..a_k, b_1..b_k) of relevant and "
                              "distracting passages, 2k numbers for UDCG@k; received 3"),
    ("UDCG[param=(1,2)]", "UDCG: param gives the positional weights (a_1..a_k, b_1..b_k) of relevant and "
                          "distracting passages, 2k numbers for UDCG@k; received 2 and no cutoff"),
])
def test_bad_weights_are_refused_word_for_word(measure: str, message: str) -> None:
    with pytest.raises(FlavorError) as err:
        ours(({"a": 1}, [("a", 1.0)]), [measure])
    assert str(err.value) == message
