"""ERR, nERR, ERR_gain and nERR_gain over every knob they read, against the cascade written out.

The reference is Chapelle et al.'s definition (CIKM 2009) for one ranked list:
ERR@k = sum over ranks r <= k of R_r / r * prod_{i<r} (1 - R_i), with R(g) = (2^g - 1) / 2^G
(ERR, nERR) or gain(g) / (gain(G) + 1) under the ``gain`` knob (ERR_gain, nERR_gain; binary:
1/2 at grade >= rel), NTCIREVAL's form (mpkato/pyNTCIREVAL metrics/grade_metric.py). nERR divides
by the same sum over the ideal list NDCG's ``ideal`` / ``ideal_cut`` knobs name, of the
stopping probabilities. Small random queries (hypothesis, bounded examples).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankflavor
from rankflavor.errors import FlavorError

from .test_metrics_ndcg_reference import NO_SHRINK, Query, agrees, ideal_values, ours, queries

TABLE = {1: 1.0, 2: 4.0, 3: 9.0}


def stop_of(metric: str, knobs: dict[str, str]) -> object:
    top = int(knobs.get("max_grade", "0"))
    gain = knobs.get("gain", "linear")
    rel = int(knobs.get("rel", "1"))

    def chapelle(g: float) -> float:
        return (2.0 ** max(g, 0) - 1) / 2.0**top

    def by_gain(g: float) -> float:
        if gain == "binary":
            return 0.5 if g >= rel else 0.0
        v = {"linear": lambda x: float(x), "exp2": lambda x: 2.0**x - 1, "{1:1,2:4,3:9}": lambda x: TABLE.get(x, x)}[gain]
        return v(g) / (v(top) + 1)

    return by_gain if metric.endswith("_gain") else chapelle


def cascade(stops: list[float]) -> float:
    value, reach = 0.0, 1.0
    for r, p in enumerate(stops, start=1):
        value += reach * p / r
        reach *= 1 - p
    return value


def reference(q: Query, metric: str, k: int | None, knobs: dict[str, str]) -> float:
    qrels, ranked = q
    R = stop_of(metric, knobs)
    depth = int(knobs["depth"]) if "depth" in knobs else None
    rows = ranked if depth is None else ranked[:depth]
    assumed = int(knobs["unjudged_grade"]) if "unjudged_grade" in knobs else None

    def row_stop(d: str) -> float:
        if d not in qrels:
            return 0.0 if assumed is None else R(assumed)  # type: ignore[operator]
        return R(qrels[d]) if qrels[d] >= 0 else 0.0  # type: ignore[operator]

    top = rows if k is None else rows[:k]
    err = cascade([row_stop(d) for d, _ in top])
    if not metric.startswith("n"):
        positive = sum(R(g) > 0 for g in qrels.values() if g >= 0)  # type: ignore[operator]
        if assumed is not None and R(assumed) > 0:  # type: ignore[operator]
            positive += sum(d not in qrels for d, _ in top)
        return math.nan if positive == 0 else err
    r_top = (lambda: 0.5) if knobs.get("gain") == "binary" else (lambda: R(int(knobs["max_grade"])))  # type: ignore[operator]
    best = cascade(ideal_values(qrels, rows, k, knobs, R, r_top))  # type: ignore[arg-type]
    return math.nan if best <= 0 else err / best


@st.composite
def flavors(draw: st.DrawFn) -> tuple[str, int | None, dict[str, str]]:
    metric = draw(st.sampled_from(["ERR", "nERR", "ERR_gain", "nERR_gain"]))
    k = draw(st.one_of(st.none(), st.integers(1, 7)))
    knobs: dict[str, str] = {}
    if metric.endswith("_gain"):
        knobs["gain"] = draw(st.sampled_from(["linear", "exp2", "binary", "{1:1,2:4,3:9}"]))
        if knobs["gain"] == "binary":
            knobs["rel"] = draw(st.sampled_from(["1", "2", "3"]))
    if knobs.get("gain") != "binary":
        knobs["max_grade"] = "3" if knobs.get("gain") == "{1:1,2:4,3:9}" else draw(st.sampled_from(["3", "4"]))
    if not metric.startswith("n") and draw(st.booleans()):
        knobs["unjudged_grade"] = draw(st.sampled_from(["0", "1", "3"]))
    if draw(st.booleans()):
        knobs["depth"] = draw(st.sampled_from(["1", "3", "5"]))
    if metric.startswith("n"):
        knobs["ideal"] = draw(st.sampled_from(["global", "local", "recall@1", "recall@3", "max", "as_supplied"]))
        knobs["ideal_cut"] = draw(st.sampled_from(["k", "hits", "none"]))
    return metric, k, knobs


@settings(max_examples=80, deadline=None, phases=NO_SHRINK)
@given(queries(), st.lists(flavors(), min_size=4, max_size=4))
def test_err_family_equals_the_cascade(q: Query, cases: list[tuple[str, int | None, dict[str, str]]]) -> None:
    agrees(q, cases, lambda m, k, kn: reference(q, m, k, kn))


# By hand (rank: doc grade): 1: a 1, 2: u (unjudged), 3: b 3, 4: c 0; judged, never retrieved: e 2.
FIXED = ({"a": 1, "b": 3, "c": 0, "e": 2}, [("a", 4.0), ("u", 3.0), ("b", 2.0), ("c", 1.0)])


@pytest.mark.parametrize(("measure", "want"), [
    ("ERR@4[max_grade=3]", 1 / 8 + (7 / 8) * (7 / 8) / 3),
    ("ERR@2[max_grade=3,unjudged_grade=1]", 1 / 8 + (7 / 8) * (1 / 8) / 2),
    ("ERR_gain@4[max_grade=3]", 1 / 4 + (3 / 4) * (3 / 4) / 3),
    ("ERR_gain@4[gain=binary,rel=3]", 0.5 / 3),
    ("nERR@4[max_grade=3]", (1 / 8 + (7 / 8) * (7 / 8) / 3) / (7 / 8 + (1 / 8) * (3 / 8) / 2 + (1 / 8) * (5 / 8) * (1 / 8) / 3)),
    ("nERR@1[max_grade=3,ideal=max]", (1 / 8) / (7 / 8)),
    ("nERR@2[max_grade=3,ideal=max]", (1 / 8) / (7 / 8 + (1 / 8) * (7 / 8) / 2)),
    ("nERR_gain@2[gain=binary,ideal=max]", 0.5 / (0.5 + 0.25 / 2)),
    ("nERR_gain@3[gain=binary,rel=3,ideal=max]", (0.5 / 3) / (0.5 + 0.25 / 2 + 0.125 / 3)),
    ("nERR@4[max_grade=3,ideal=as_supplied]",  # a b c e: 1/8 7/8 0 3/8
     (1 / 8 + (7 / 8) * (7 / 8) / 3) / (1 / 8 + (7 / 8) * (7 / 8) / 2 + (7 / 8) * (1 / 8) * (3 / 8) / 4)),
])
def test_a_case_by_hand(measure: str, want: float) -> None:
    assert ours(FIXED, [measure])[0] == pytest.approx(want, abs=1e-12)


def test_refusals_name_what_is_wrong() -> None:
    with pytest.raises(FlavorError) as err:
        ours(FIXED, ["ERR@4[max_grade=2]"])
    assert str(err.value) == "ERR@4: a grade 3 exceeds max_grade=2"
    # grade 2 (e) is judged, never retrieved: ERR's value does not read it, but a judgment the
    # measure cannot hold is refused whichever run is scored (before, ERR took it and nERR refused)
    with pytest.raises(FlavorError) as err:
        ours(FIXED, ["ERR_gain@4[max_grade=3,gain={1:1,2:4,3:0.5}]"])
    assert "ERR_gain@4: grade 2 has stopping probability 2.66667, outside [0, 1)" in str(err.value)
    with pytest.raises(FlavorError) as err:
        ours(({"a": 1, "e": 3}, [("a", 1.0)]), ["ERR@1[max_grade=2]"])  # e, above G, is never retrieved
    assert str(err.value) == "ERR@1: a grade 3 exceeds max_grade=2"
    with pytest.raises(FlavorError) as err:
        ours(FIXED, ["nERR_gain@4[max_grade=3,gain={1:1,2:4,3:0.5}]"])
    assert "nERR_gain@4: grade 2 has stopping probability 2.66667, outside [0, 1): R(g) = gain(g) / (gain(G) + 1)" \
        " needs 0 <= gain(g) <= gain(G)" in str(err.value)
    with pytest.raises(FlavorError) as err:
        ours(FIXED, ["nERR@4[max_grade=2,ideal=max]"])  # b (3) is retrieved, e (2) is not
    assert str(err.value) == "nERR@4: a grade 3 exceeds max_grade=2"
    with pytest.raises(FlavorError) as err:
        ours(({"a": 1, "e": 3}, [("a", 1.0)]), ["nERR@1[max_grade=2]"])  # e, above G, is never retrieved
    assert str(err.value) == "nERR@1: a grade 3 exceeds max_grade=2"
    with pytest.raises(FlavorError) as err:
        ours(FIXED, ["ERR_gain@4[max_grade=3,gain={1:-1,3:9}]"])
    assert "grade 1 has stopping probability -0.1, outside [0, 1)" in str(err.value)
    with pytest.raises(FlavorError) as err:
        ours(FIXED, ["ERR_gain@4[max_grade=3,gain={3:-1}]"])
    assert str(err.value) == "ERR_gain@4: the top grade max_grade=3 has a negative gain"
    with pytest.raises(FlavorError) as err:
        ours(FIXED, ["nERR@4"])
    assert str(err.value).startswith("nERR@4 needs the top grade G of the label scale: set max_grade (gdeval uses 4, Quepid 3)")


def test_the_stopping_rules_are_named_in_the_registry() -> None:
    from rankflavor.metrics.registry import lookup

    for name in ("ERR", "nERR", "ERR_gain", "nERR_gain"):
        assert rankflavor.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, f"{name}@1[max_grade=1]")[0].mean > 0
    assert [lookup(a).name for a in ("err", "nerr", "nerr_cut", "err_gain", "nerr_gain")] == ["ERR", "nERR", "nERR", "ERR_gain", "nERR_gain"]  # type: ignore[union-attr]


def test_the_edges_of_the_stopping_probability() -> None:
    # a grade above G under ERR_gain is named as such (not by its stopping probability)
    with pytest.raises(FlavorError) as err:
        ours(({"a": 5}, [("a", 1.0)]), ["ERR_gain@1[max_grade=3]"])
    assert str(err.value) == "ERR_gain@1: a grade 5 exceeds max_grade=3"
    with pytest.raises(FlavorError) as err:
        ours(({"a": 3.5}, [("a", 1.0)]), ["ERR_gain@1[max_grade=3]"])  # R = 3.5 / 4 would be < 1
    assert str(err.value) == "ERR_gain@1: a grade 3.5 exceeds max_grade=3"
    # R = 1 exactly (gain 4 over gain(G) + 1 = 4) is outside [0, 1): every user would stop there
    with pytest.raises(FlavorError) as err:
        ours(({"a": 1}, [("a", 1.0)]), ["ERR_gain@1[max_grade=3,gain={1:4,3:3}]"])
    assert str(err.value).startswith("ERR_gain@1: grade 1 has stopping probability 1, outside [0, 1)")
    # an unjudged row has no grade to check against G: max_grade=0 with a grade-0 judgment is fine
    # (n, graded -1, is pooled but unjudged: a row of the kernel, with no grade)
    (res,) = rankflavor.evaluate({"q": {"a": 0, "n": -1}}, {"q": {"a": 1.0, "n": 0.5, "u": 0.2}}, "ERR@2[max_grade=0]",
                                 empty="nan")
    assert math.isnan(res.per_query()["q"])  # nothing stops anyone: empty


def test_a_top_grade_gaining_zero_is_allowed_and_a_negative_one_refused() -> None:
    """ERR_gain's R(g) = gain(g) / (gain(G) + 1) is a probability for any gain(G) >= 0: a table
    whose top grade gains 0 makes every R 0 (the user stops nowhere), so ERR is 0, not an error;
    gain(G) < 0 would put R outside [0, 1) and is refused naming the top grade."""
    qrels, run = {"q": {"a": 3, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}}
    got = rankflavor.evaluate(qrels, run, ["ERR_gain[max_grade=3,gain={1:0,2:0,3:0}]"])
    assert got[0].mean == 0.0
    with pytest.raises(FlavorError, match=r"the top grade max_grade=3 has a negative gain"):
        rankflavor.evaluate(qrels, run, ["ERR_gain[max_grade=3,gain={1:1,2:2,3:-1}]"])
