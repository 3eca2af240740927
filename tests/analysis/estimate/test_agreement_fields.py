"""``rankflavor.analysis.estimate.agreement`` from outside, where ``tests/analysis/estimate/test_agreement.py`` compares formats
with each other: the JSON field names, every reason and error message word for word, the
statistics by hand and against scikit-learn, krippendorff and statsmodels on the edge cases
(one pair, two grades, grades too large to square, rows in another order, a scale's grades given
as exact fractions), and no warning escaping."""

from __future__ import annotations

import json
import math
import re
import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from rankflavor.analysis.estimate.agreement import GradeAgreement, grade_agreement, weighted_kappa
from rankflavor.errors import InputError, UsageError
from rankflavor.io.inputs import as_qrels
from rankflavor.io.tables import Qrels

krippendorff = pytest.importorskip("krippendorff")
metrics = pytest.importorskip("sklearn.metrics")
sm = pytest.importorskip("statsmodels.api")

STATISTICS = ["kappa", "kappa_linear", "kappa_quadratic", "alpha_ordinal", "alpha_interval", "bias", "bias_low",
              "bias_high", "bias_se"]
NO_PAIR = "nan: no (query, doc) pair is graded by both judgments"
ONE_QUERY = "nan: the pairs both graded are of one query; a query-clustered interval needs two"
ONE_GRADE = "nan: both sides gave one and the same grade, so chance agreement is perfect: 0/0"


def _agree(human: dict, judge: dict, **options: Any) -> GradeAgreement:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a NaN is reported with its reason, never as a warning
        return grade_agreement(as_qrels(human), as_qrels(judge), **options)


def test_json_names_every_field_and_the_values_are_those_by_hand() -> None:
    # Pairs both graded: (q1, a) 0/0, (q1, b) 1/2, (q1, c) 2/2; x and y only human, e only judge.
    # Confusion (rows human 0, 1, 2; columns judge): [[1, 0, 0], [0, 0, 1], [0, 0, 1]].
    # Unweighted: p_o = 2/3, margins rows (1, 1, 1), columns (1, 0, 2): p_e = 3/9, kappa = (1/3) / (2/3) = 1/2.
    # Linear: sum |i-j| O = 1; E = rows x columns / 3, each row (1/3, 0, 2/3): sum |i-j| E = 4/3 + 1 + 2/3 = 3,
    # kappa = 1 - 1/3. Quadratic: sum (i-j)^2 O = 1, sum (i-j)^2 E = 8/3 + 1 + 4/3 = 5, kappa = 1 - 1/5.
    # Interval alpha (Krippendorff 2011): values 0 0 1 2 2 2, D_o = (1/6) 2 (2-1)^2 = 1/3,
    # D_e = (2/30) (6 * 13 - 7^2) = 29/15: 1 - 5/29. Ordinal: n = (2, 1, 3), delta_01 = (3 - 1.5)^2,
    # delta_12 = (4 - 2)^2, delta_02 = (6 - 2.5)^2; D_o = (1/6) 2 * 4, D_e = (1/15)(2 * 2.25 + 3 * 4 + 6 * 12.25) = 6:
    # 1 - (4/3) / 6 = 7/9. Bias: judge - human = (0, 1, 0), mean 1/3; one query, so no interval.
    human = {"q1": {"a": 0, "b": 1, "c": 2, "x": 1}, "q9": {"y": 2}}
    judge = {"q1": {"a": 0, "b": 2, "c": 2}, "q3": {"e": 0}}
    g = _agree(human, judge)
    assert list(g.statistics()) == STATISTICS
    d = json.loads(json.dumps(g.to_dict(), allow_nan=False))
    assert list(d) == ["grades", "pairs", "only_human", "only_judge", "queries", "queries_only_human",
                       "queries_only_judge", *STATISTICS, "level", "confusion", "undefined"]
    assert d["grades"] == [0.0, 1.0, 2.0]
    assert [d[k] for k in ("pairs", "only_human", "only_judge", "queries", "queries_only_human",
                           "queries_only_judge")] == [3, 2, 1, 1, 1, 1]
    assert d["confusion"] == [[1, 0, 0], [0, 0, 1], [0, 0, 1]]
    assert [d[k] for k in STATISTICS] == pytest.approx([1 / 2, 2 / 3, 4 / 5, 7 / 9, 24 / 29, 1 / 3, None, None, None],
                                                       abs=1e-12)
    assert d["level"] == 0.95
    assert d["undefined"] == {"bias_low": ONE_QUERY, "bias_high": ONE_QUERY, "bias_se": ONE_QUERY}


def test_the_level_and_the_interval_follow_alpha_the_default_0_05() -> None:
    # Rows in another order on each side (the judge's by query 2, 3, 1, 2, 1): the clusters are the
    # human rows' queries whichever order the judge's rows come in.
    rows_h = [("q1", "a", 0), ("q1", "b", 2), ("q2", "c", 1), ("q2", "d", 3), ("q3", "e", 1), ("q3", "f", 0)]
    judge_grade = {"a": 1, "b": 2, "c": 3, "d": 3, "e": 2, "f": 3}
    order_j = ["c", "e", "a", "d", "b", "f"]
    q_of = {doc: q for q, doc, _ in rows_h}
    human = Qrels(pa.array([q for q, _, _ in rows_h]), pa.array([doc for _, doc, _ in rows_h]),
                  np.array([g for _, _, g in rows_h], dtype=np.float64))
    judge = Qrels(pa.array([*(q_of[doc] for doc in order_j), "q0"]), pa.array([*order_j, "z"]),
                  np.array([judge_grade[doc] for doc in order_j] + [1], dtype=np.float64))
    d = np.array([judge_grade[doc] - g for _, doc, g in rows_h], dtype=np.float64)
    fit = sm.OLS(d, np.ones(len(d))).fit(cov_type="cluster", cov_kwds={"groups": np.array([1, 1, 2, 2, 3, 3])},
                                         use_t=True)
    for alpha, options in ((0.05, {}), (0.2, {"alpha": 0.2})):
        g = grade_agreement(human, judge, **options)  # type: ignore[arg-type]
        assert g.level == pytest.approx(1 - alpha, abs=1e-15)
        assert (g.bias, g.bias_se) == pytest.approx((float(fit.params[0]), float(fit.bse[0])), abs=1e-12)
        assert (g.bias_low, g.bias_high) == pytest.approx(tuple(fit.conf_int(alpha)[0]), abs=1e-10)


def test_every_reason_word_for_word_and_no_warning() -> None:
    none = _agree({"q1": {"a": 1}}, {"q1": {"b": 1}, "q2": {"a": 1}}, grades=(0, 1, 2, 3))
    assert none.pairs == 0 and none.grades == (0.0, 1.0, 2.0, 3.0) and none.confusion == ((0,) * 4,) * 4
    assert none.to_dict()["undefined"] == dict.fromkeys(STATISTICS, NO_PAIR)
    # one grade on both sides: every kappa and alpha is 0/0, with the scale's other grades or without
    same = {"q1": {"a": 1}, "q2": {"b": 1}}
    for grades in (None, (0, 1), (0, 1, 2, 3)):
        g = _agree(same, same, grades=grades)
        assert g.undefined == dict.fromkeys(STATISTICS[:5], ONE_GRADE)
        assert (g.bias, g.bias_low, g.bias_high, g.bias_se) == (0.0, 0.0, 0.0, 0.0)


def test_one_pair_and_two_grades_equal_krippendorff() -> None:
    # one pair graded 0 and 1: D_o = (1/2) 2 * 1 = 1, D_e = (1/2) 2 * 1 = 1, alpha = 0 (either level)
    one = _agree({"q": {"a": 0}}, {"q": {"a": 1}})
    assert (one.alpha_interval, one.alpha_ordinal) == (0.0, 0.0)
    assert krippendorff.alpha(reliability_data=[[0], [1]], level_of_measurement="interval") == 0.0
    h, j = [0, 1, 1, 0, 1, 0, 0, 1], [0, 1, 0, 0, 1, 1, 0, 1]
    two = _agree({"q": {f"d{i}": x for i, x in enumerate(h)}}, {"q": {f"d{i}": x for i, x in enumerate(j)}})
    for level, ours in (("interval", two.alpha_interval), ("ordinal", two.alpha_ordinal)):
        assert ours == pytest.approx(krippendorff.alpha(reliability_data=[h, j], level_of_measurement=level), abs=1e-12)


def test_grades_too_large_to_square_give_the_alpha_of_the_scaled_grades() -> None:
    # Interval alpha is a ratio of mean squared differences: grades 1e200 times (0, 1, 2) have the
    # alpha of (0, 1, 2), though squaring 1e200 overflows a float (krippendorff itself gives NaN).
    h, j = [0, 1, 2, 2, 1], [0, 2, 2, 1, 1]
    g = _agree({"q": {f"d{i}": 1e200 * x for i, x in enumerate(h)}}, {"q": {f"d{i}": 1e200 * x for i, x in enumerate(j)}})
    assert g.alpha_interval == pytest.approx(krippendorff.alpha(reliability_data=[h, j], level_of_measurement="interval"),
                                             abs=1e-12)
    assert "alpha_interval" not in g.undefined


def test_a_scale_given_as_exact_fractions_is_the_judgments_float_grades() -> None:
    # a scale in thirds: its grade 1/3 is the category of the grade 0.333... a file holds
    thirds = (Fraction(0), Fraction(1, 3), Fraction(2, 3), Fraction(1))
    g = _agree({"q": {"a": 1 / 3, "b": 1.0}}, {"q": {"a": 1 / 3, "b": 2 / 3}}, grades=thirds)
    assert g.grades == (0.0, 1 / 3, 2 / 3, 1.0)
    assert g.confusion == ((0, 0, 0, 0), (0, 1, 0, 0), (0, 0, 0, 0), (0, 0, 1, 0))


def test_weighted_kappa_equals_sklearn_and_linear_is_the_default() -> None:
    table = np.array([[2, 1, 0], [0, 2, 1], [1, 0, 2]])
    h = [i for i in range(3) for j in range(3) for _ in range(table[i, j])]
    j = [j for i in range(3) for j in range(3) for _ in range(table[i, j])]
    for weights, sk in (("none", None), ("linear", "linear"), ("quadratic", "quadratic")):
        assert weighted_kappa(table, weights) == pytest.approx(metrics.cohen_kappa_score(h, j, weights=sk), abs=1e-12)
    assert weighted_kappa(table) == weighted_kappa(table, "linear")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no pair: 0/0, NaN without a warning
        assert math.isnan(weighted_kappa(np.zeros((3, 3), dtype=np.int64), "quadratic"))


def test_weighted_kappa_refuses_unknown_weights_and_a_table_that_is_not_square() -> None:
    with pytest.raises(UsageError, match=r"^weights: expected one of none, linear, quadratic, received 'cubic'$"):
        weighted_kappa(np.eye(2), "cubic")
    for shape in ((3, 1), (2, 3), (4,)):
        said = f"weighted_kappa: expected a square confusion matrix, received one of shape {shape}"
        with pytest.raises(UsageError, match=f"^{re.escape(said)}$"):
            weighted_kappa(np.ones(shape), "linear")


@pytest.mark.parametrize("which", ["human", "judge"])
def test_a_pair_graded_twice_is_refused_word_for_word(tmp_path: Path, which: str) -> None:
    files = {"human": tmp_path / "h.qrels", "judge": tmp_path / "j.qrels"}
    for name, path in files.items():
        path.write_text("q1 0 a 1\nq1 0 b 0\nq1 0 a 2\n" if name == which else "q1 0 a 1\n")
    with pytest.raises(InputError) as caught:
        grade_agreement(as_qrels(files["human"]), as_qrels(files["judge"]))
    assert str(caught.value) == (
        f"{files[which]}:3: document 'a' appears more than once for query 'q1' (also at line 1) in these judgments; "
        "trec_eval rejects this. 1 duplicate row(s) in this file; agreement compares one grade per pair on each "
        "side: keep one of them.")  # (not the duplicates knob, which agreement does not take)


def test_judgments_whose_columns_differ_in_length_are_refused() -> None:
    """A Qrels built by hand with columns of different lengths is refused where it is built, naming
    the three lengths (not a bare zip() error in whatever reads it first)."""
    with pytest.raises(ValueError, match=r"columns of different lengths \(3 query ids, 2 docnos, 3 grades\)"):
        Qrels(pa.array(["q", "q", "q"]), pa.array(["a", "b"]), np.array([1.0, 0.0, 2.0]))
    with pytest.raises(ValueError, match=r"\(2 query ids, 2 docnos, 1 grades\)"):
        Qrels(pa.array(["q", "q"]), pa.array(["a", "b"]), np.array([1.0]))
