"""RBP, RBP_gain and RBP_resid over every knob they read, against Moffat & Zobel's sums written out.

RBP = (1 - p) sum_{i <= d} r_i p^(i-1) with r_i = gain(g_i) / gain(G) (1 for a relevant document
under gain=binary), RBP_gain the same sum on unscaled gains, and the residual
1 - (1 - p) sum over the judged ranks i <= d of p^(i-1) (A. Moffat, J. Zobel, ACM TOIS 27(1),
2008). Small random queries (hypothesis, bounded examples).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankflavor.errors import FlavorError

from .test_metrics_ndcg_reference import GAINS, NO_SHRINK, Query, agrees, ours, queries


def reference(q: Query, metric: str, k: int | None, knobs: dict[str, str]) -> float:
    qrels, ranked = q
    p = float(knobs.get("param", "0.8"))
    depth = int(knobs["depth"]) if "depth" in knobs else None
    rows = (ranked if depth is None else ranked[:depth])
    rows = rows if k is None else rows[:k]
    gain_name = knobs.get("gain", "linear")
    rel = int(knobs.get("rel", "1"))
    floor = float(knobs["min_grade"]) if "min_grade" in knobs else None

    def gain(g: float) -> float:
        return 0.0 if floor is not None and g < floor else GAINS[gain_name](g, rel)

    weights = [(1 - p) * p ** (i - 1) for i in range(1, len(rows) + 1)]
    grades = [qrels.get(d, -1) for d, _ in rows]
    if metric == "RBP_resid":
        return 1 - sum(w for w, g in zip(weights, grades, strict=True) if g >= 0)
    gains = [gain(g) if g >= 0 else 0.0 for g in grades]
    top = 1.0 if metric == "RBP_gain" or gain_name == "binary" else gain(int(knobs["max_grade"]))
    return sum(w * v for w, v in zip(weights, gains, strict=True)) / top


@st.composite
def flavors(draw: st.DrawFn) -> tuple[str, int | None, dict[str, str]]:
    metric = draw(st.sampled_from(["RBP", "RBP_gain", "RBP_resid"]))
    k = draw(st.one_of(st.none(), st.integers(1, 7)))
    knobs: dict[str, str] = {}
    if draw(st.booleans()):
        knobs["param"] = draw(st.sampled_from(["0.5", "0.95", "0.1"]))
    if draw(st.booleans()):
        knobs["depth"] = draw(st.sampled_from(["1", "3"]))
    if metric != "RBP_resid":
        knobs["gain"] = draw(st.sampled_from(["linear", "exp2", "binary", "{2:5}"]))
        if knobs["gain"] == "binary":
            knobs["rel"] = draw(st.sampled_from(["1", "2"]))
        elif metric == "RBP":
            knobs["max_grade"] = draw(st.sampled_from(["3", "4"]))
        if metric == "RBP_gain" and draw(st.booleans()):
            knobs["min_grade"] = draw(st.sampled_from(["1", "2"]))
    return metric, k, knobs


@settings(max_examples=80, deadline=None, phases=NO_SHRINK)
@given(queries(), st.lists(flavors(), min_size=4, max_size=4))
def test_rbp_family_equals_the_sums(q: Query, cases: list[tuple[str, int | None, dict[str, str]]]) -> None:
    agrees(q, cases, lambda m, k, kn: reference(q, m, k, kn))


# rank: doc grade: 1 a 3, 2 x (unjudged), 3 c 1; b 0 never retrieved
FIXED = ({"a": 3, "b": 0, "c": 1}, [("a", 0.9), ("x", 0.8), ("c", 0.7)])


def test_by_hand() -> None:
    got = ours(FIXED, ["RBP[param=0.5,max_grade=3]", "RBP_resid[param=0.5]", "RBP_gain[param=0.5]",
                       "RBP[max_grade=3]", "RBP@1[param=0.5,max_grade=3]", "RBP_resid@2[param=0.5]",
                       "RBP[param=0.5,gain=binary,rel=2]", "RBP[param=0.5,max_grade=4,gain=exp2]"])
    assert got == pytest.approx([0.5 * (1 + 0.25 / 3), 0.5 * 0.5 + 0.125, 0.5 * (3 + 0.25), 0.2 * (1 + 0.64 / 3),
                                 0.5, 1 - 0.5, 0.5, 0.5 * (7 + 0.25) / 15], abs=1e-12)


@pytest.mark.parametrize(("measure", "message"), [
    ("RBP[param=1,max_grade=3]", "RBP: param is the persistence p, one number with 0 < p < 1"),
    ("RBP[param=0,max_grade=3]", "RBP: param is the persistence p, one number with 0 < p < 1"),
    ("RBP[param=(0.5,0.6),max_grade=3]", "RBP: param is the persistence p, one number with 0 < p < 1"),
    ("RBP", "RBP scales gains by the top grade G of the label scale (r = gain(g) / gain(G)): set max_grade, "
            "declare a scale, or use gain=binary"),
    ("RBP[max_grade=2]", "RBP: a grade 3 exceeds max_grade=2"),
    ("RBP[max_grade=3,gain={3:0}]", "RBP: the top grade max_grade=3 has no positive gain"),
])
def test_refusals_word_for_word(measure: str, message: str) -> None:
    with pytest.raises(FlavorError) as err:
        ours(FIXED, [measure])
    assert str(err.value) == message


def test_a_grade_at_the_top_is_not_above_it() -> None:
    assert ours(FIXED, ["RBP[param=0.5,max_grade=3,gain={3:1e-9}]"])[0] == pytest.approx(
        0.5 + 0.125 * 1e9, rel=1e-12)  # a: 1e-9 / 1e-9; c: gain 1 (not in the table) / 1e-9
    assert math.isfinite(ours(({"a": 1}, [("a", 1.0)]), ["RBP[max_grade=1]"])[0])


def test_averaged_ties_take_the_unjudged_rows_of_a_tie_group() -> None:
    """a (relevant) and u (unjudged) tie at the top: each gains the group's mean 1/2 (McSherry &
    Najork's tie-averaged gain), so RBP = (1 - p) (1/2 + p / 2)."""
    q = ({"a": 1}, [("a", 1.0), ("u", 1.0)])
    got = ours(q, ["RBP[param=0.5,gain=binary,ties=averaged]", "RBP_gain[param=0.5,ties=averaged]"])
    assert got == pytest.approx([0.5 * (0.5 + 0.25), 0.5 * (0.5 + 0.25)], abs=1e-12)
