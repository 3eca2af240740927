"""C/W/L measures (metrics/cwl.py) beyond the ir_measures comparisons: the defaults of ``param``,
its bounds and refusals, the [0, 1] range of the scaled gains, and runs of more queries than one
dense block (2,048) holds. Expected values are worked by hand from the C/W/L definition
(W_i = C_i / sum_j C_j over ranks 1..1000, C_1 = 1, C_i = prod_{m<i} c_m; value sum_i W_i r_i).
"""

from __future__ import annotations

import math
import re

import pytest

import rankflavor
from rankflavor.errors import FlavorError

N = 1000  # cwl_eval's max_n: the weights run over 1000 ranks


def _value(measure: str, qrels: dict[str, dict[str, float]], run: dict[str, dict[str, float]]) -> dict[str, float]:
    return rankflavor.evaluate(qrels, run, [measure])[0].per_query()


def _refused(measure: str, message: str, qrels: dict[str, dict[str, float]] | None = None) -> None:
    qrels = qrels if qrels is not None else {"q": {"a": 1}}
    run = {"q": {d: 3.0 - i for i, d in enumerate(qrels["q"])}}
    with pytest.raises(FlavorError, match="^" + re.escape(message) + "$"):
        rankflavor.evaluate(qrels, run, [measure])


# ---------------------------------------------------------------------------------------------
# param: defaults


def test_rbp_cwl_default_persistence_is_0_8() -> None:
    """c_i = p: C_i = p^(i-1), the one relevant document at rank 2, so the value is
    p / sum_{i<=1000} p^(i-1) = p (1 - p) / (1 - p^1000), with p = 0.8 when param is not set."""
    qrels, run = {"q": {"a": 1}}, {"q": {"x": 2.0, "a": 1.0}}
    want = 0.8 * 0.2 / (1.0 - 0.8**N)
    assert _value("RBP_cwl[gain=binary]", qrels, run)["q"] == pytest.approx(want, abs=1e-12)
    assert _value("RBP_cwl[gain=binary,param=0.8]", qrels, run)["q"] == pytest.approx(want, abs=1e-12)


def test_nerr10_default_persistence_is_0_9() -> None:
    """c_i = p (1 - r_i), relevant at rank 2 only: c_1 = p, c_2 = 0, so C = (1, p, 0, ...) and
    the value is p / (1 + p) = 0.9 / 1.9 with the default p = 0.9."""
    qrels, run = {"q": {"a": 1, "b": 0}}, {"q": {"b": 2.0, "a": 1.0}}
    assert _value("NERR10[max_grade=1]", qrels, run)["q"] == pytest.approx(0.9 / 1.9, abs=1e-12)
    assert _value("NERR10[max_grade=1,param=0.5]", qrels, run)["q"] == pytest.approx(0.5 / 1.5, abs=1e-12)


def test_insq_default_target_is_1() -> None:
    """INSQ: c_i = ((i + 2T - 1) / (i + 2T))^2; with T = 1 the product telescopes to
    C_i = (2 / (i + 1))^2, so a relevant document at rank 1 alone scores 1 / sum_i 4 / (i + 1)^2;
    with T = 2, C_i = (4 / (i + 3))^2 and the value is 1 / sum_i 16 / (i + 3)^2."""
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 2.0, "x": 1.0}}
    t1 = 1.0 / math.fsum(4.0 / (i + 1) ** 2 for i in range(1, N + 1))
    t2 = 1.0 / math.fsum(16.0 / (i + 3) ** 2 for i in range(1, N + 1))
    assert _value("INSQ[gain=binary]", qrels, run)["q"] == pytest.approx(t1, abs=1e-12)
    assert _value("INSQ[gain=binary,param=2]", qrels, run)["q"] == pytest.approx(t2, abs=1e-12)
    assert abs(t1 - t2) > 0.05


# ---------------------------------------------------------------------------------------------
# param: bounds and refusals


def test_rbp_cwl_persistence_1_is_allowed_and_weights_1000_ranks_alike() -> None:
    """p = 1 (the top of 0 < p <= 1): every C_i = 1, W_i = 1/1000, the value is the number of
    relevant documents in the top 1000 over 1000."""
    qrels = {"q": {"a": 1, "b": 1, "c": 0}}
    run = {"q": {"a": 3.0, "c": 2.0, "b": 1.0}}
    assert _value("RBP_cwl[gain=binary,param=1]", qrels, run)["q"] == pytest.approx(2 / N, abs=1e-15)


@pytest.mark.parametrize(("measure", "message"), [
    ("RBP_cwl[gain=binary,param=0]", "RBP_cwl: param is the persistence p, 0 < value <= 1, received 0"),
    ("RBP_cwl[gain=binary,param=1.5]", "RBP_cwl: param is the persistence p, 0 < value <= 1, received 1.5"),
    ("NERR10[gain=binary,param=0]", "NERR10: param is the persistence p, 0 < value <= 1, received 0"),
    ("NERR10[gain=binary,param=1.25]", "NERR10: param is the persistence p, 0 < value <= 1, received 1.25"),
    ("INST[gain=binary,param=0]", "INST: param is the target gain T, 0 < value <= inf, received 0"),
    ("INSQ[gain=binary,param=-2]", "INSQ: param is the target gain T, 0 < value <= inf, received -2"),
])  # fmt: skip
def test_param_out_of_range_is_refused_with_its_bounds(measure: str, message: str) -> None:
    _refused(measure, message)


@pytest.mark.parametrize("measure", ["RBP_cwl[gain=binary,param=(0.5,0.6)]", "INST[gain=binary,param=(1,2)]"])
def test_param_takes_one_value(measure: str) -> None:
    name = measure.split("[")[0]
    with pytest.raises(FlavorError, match=re.escape(f"metric '{name}' takes 1 parameter value(s) in param")):
        rankflavor.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [measure])


# ---------------------------------------------------------------------------------------------
# scaled gains r = gain(g) / gain(G)


def test_missing_top_grade_names_ir_measures_max_rel() -> None:
    _refused("NERR10", "NERR10 scales gains by the top grade G of the label scale (r = gain(g) / gain(G), "
                       "ir_measures' max_rel): set max_grade, declare a scale, or use gain=binary")


@pytest.mark.parametrize(("table", "received"), [
    ("{0:0,1:3,2:2}", "1..1.5"),    # b: gain(1) / gain(2) = 3 / 2 = 1.5 > 1; a: 2 / 2 = 1
    ("{0:0,1:2.5,2:1}", "1..2.5"),  # b: 2.5 / 1
    ("{0:0,1:-1,2:2}", "-0.5..1"),  # b: -1 / 2 = -0.5 < 0
])  # fmt: skip
def test_scaled_gains_outside_0_1_are_refused(table: str, received: str) -> None:
    """Two judged documents retrieved, a (grade 2 = G) then b (grade 1): r of each is
    gain(g) / gain(2), and the message gives the smallest and largest."""
    _refused(f"NERR10[max_grade=2,gain={table}]",
             f"NERR10: C/W/L gains r = gain(g) / gain(G) must lie in [0, 1], received {received}",
             qrels={"q": {"a": 2, "b": 1}})


def test_scaled_gains_at_the_ends_of_0_1_are_accepted() -> None:
    """gain table {1:2,2:2}: b (grade 1) has r = 1 like a; NERR10 p = 0.5: c_1 = p (1 - 1) = 0,
    so the user stops at rank 1 and the value is r_1 = 1."""
    qrels, run = {"q": {"a": 2, "b": 1}}, {"q": {"b": 2.0, "a": 1.0}}
    assert _value("NERR10[max_grade=2,gain={0:0,1:2,2:2},param=0.5]", qrels, run)["q"] == 1.0


# ---------------------------------------------------------------------------------------------
# more queries than one dense block


def test_more_queries_than_one_block() -> None:
    """2,100 queries (blocks of 2,048): query j has its one relevant document at rank
    j % 3 + 1, so RBP_cwl with p = 0.5 gives (1 - p) / (1 - p^1000) * p^(j % 3) for every query,
    those of the second block included."""
    p = 0.5
    qrels = {f"q{j:04d}": {"a": 1} for j in range(2100)}
    run = {f"q{j:04d}": {**{f"x{k}": 10.0 - k for k in range(j % 3)}, "a": 1.0} for j in range(2100)}
    got = _value(f"RBP_cwl[gain=binary,param={p}]", qrels, run)
    scale = (1 - p) / (1 - p**N)
    assert got == pytest.approx({f"q{j:04d}": scale * p ** (j % 3) for j in range(2100)}, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# the knobs read under gain=binary


def test_binary_gain_reads_rel_not_max_grade() -> None:
    """Under gain=binary r is 1 for a relevant document whatever the scale's top grade, so
    max_grade changes nothing and is refused; under a graded gain rel is the one refused."""
    qrels, run = {"q": {"a": 2, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}}
    with pytest.raises(FlavorError, match=re.escape("knob 'max_grade' does not change RBP_cwl in")):
        rankflavor.evaluate(qrels, run, ["RBP_cwl[gain=binary,max_grade=3]"])
    with pytest.raises(FlavorError, match=re.escape("knob 'rel' does not change RBP_cwl in")):
        rankflavor.evaluate(qrels, run, ["RBP_cwl[max_grade=3,rel=2]"])
    # rel=2 under gain=binary: only a counts, at rank 1, so the value is (1 - p) / (1 - p^1000)
    assert _value("RBP_cwl[gain=binary,rel=2,param=0.5]", qrels, run)["q"] == pytest.approx(0.5 / (1 - 0.5**N))
