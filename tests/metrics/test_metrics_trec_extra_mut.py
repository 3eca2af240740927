"""Edges of trec_eval's further measures (rankflavor.metrics.trec_extra) the other tests left open.

Expected values are worked by hand from trec_eval 9.0.8's definitions (``m_utility.c``,
``m_Rprec_mult.c``, ``m_infap.c``, ``m_relstring.c``), with pytrec_eval (trec_eval's own C code)
as a second oracle where it reports the measure. The shared example query is the module's: ``a``
(grade 2), ``e`` (grade -1: pooled, unjudged), ``b`` (0), ``c`` (1), ``f`` (not pooled) retrieved
in that order, ``d`` (1) not retrieved: R = 3, 5 retrieved, 2 relevant retrieved (a, c).
"""

from __future__ import annotations

import math

import pytest

from rankflavor import evaluate
from rankflavor.errors import FlavorError

QRELS = {"q": {"a": 2, "b": 0, "c": 1, "d": 1, "e": -1}}
RUN = {"q": {"a": 0.9, "e": 0.8, "b": 0.7, "c": 0.6, "f": 0.5}}


def _value(measure: str, qrels: dict = QRELS, run: dict = RUN, query: str = "q") -> object:
    return evaluate(qrels, run, [measure])[0].per_query()[query]


# --- parameter counts --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("measure", "count"),
    [
        ("Rprec_mult[param=(1,2)]", 1),
        ("IPrec[param=(0.5,1)]", 1),
        ("utility[param=(1,-1,0)]", 4),
        ("utility[param=(1,-1,0,0,2)]", 4),
    ],
)
def test_a_wrong_number_of_parameters_is_a_flavor_error(measure: str, count: int) -> None:
    # params(count=...) refuses it with the typed error naming how many the metric takes (not a
    # bare ValueError from unpacking the tuple).
    with pytest.raises(FlavorError, match=rf"takes {count} parameter value\(s\) in param"):
        evaluate(QRELS, RUN, [measure])


# --- utility -----------------------------------------------------------------------------------


def test_utility_every_coefficient_counts() -> None:
    # m_utility.c: a*rel_ret + b*(ret - rel_ret) + c*(R - rel_ret) + d*(N + rel_ret - ret - R),
    # collection size N = 0. With (a, b, c, d) = (2, -1, 3, 5), rel_ret = 2, ret = 5, R = 3:
    # 2*2 + (-1)*3 + 3*1 + 5*(0 + 2 - 5 - 3) = 4 - 3 + 3 - 30 = -26.
    assert _value("utility[param=(2,-1,3,5)]") == pytest.approx(-26.0)
    # Only c and only d, each alone: 3*(3 - 2) = 3 and 5*(2 - 5 - 3) = -30.
    assert _value("utility[param=(0,0,3,0)]") == pytest.approx(3.0)
    assert _value("utility[param=(0,0,0,5)]") == pytest.approx(-30.0)


# --- Rprec_mult --------------------------------------------------------------------------------


def test_rprec_mult_with_rank_cutoff_zero_is_zero() -> None:
    # (long)(0.01 * 3 + 0.9) = (long)0.93 = 0: m_Rprec_mult.c leaves the value 0 (no precision
    # at rank 0), although R = 3 > 0 (not an empty query).
    assert _value("Rprec_mult[param=0.01]") == 0.0
    # and at a multiple that gives rank 1: a is relevant, 1/1.
    assert _value("Rprec_mult[param=0.1]") == 1.0  # (long)(0.3 + 0.9) = 1


def test_rprec_mult_rank_zero_agrees_with_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    ev = pytrec_eval.RelevanceEvaluator(QRELS, {"Rprec_mult.0.01"})
    expected = ev.evaluate(RUN)["q"]["Rprec_mult_0.01"]
    assert _value("Rprec_mult[param=0.01]") == expected == 0.0


# --- infAP -------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("error")
def test_inf_ap_relevant_at_rank_one_raises_no_numpy_warning() -> None:
    # a (rank 1) contributes 1; c (rank 4, j = 3 above: a relevant, e unjudged, b non-relevant)
    # contributes 1/4 + (3/4) * (3/3) * ((1 + eps) / (2 + 2 eps)) = 1/4 + 3/8 = 0.625.
    # infAP = (1 + 0.625) / 3 = 0.541666... The rank-1 term's 0/0 stays internal: no RuntimeWarning.
    assert _value("infAP") == pytest.approx(1.625 / 3, abs=1e-6)


# --- relstring ---------------------------------------------------------------------------------


def test_relstring_nine_is_a_digit_and_ten_is_above() -> None:
    # m_relstring.c: a grade above 9 prints '>', 0..9 print the digit.
    qrels = {"q": {"a": 9, "b": 10, "c": 11, "d": 0}}
    run = {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}}
    assert _value("relstring", qrels, run) == "9>>0"


def test_relstring_at_one_is_the_first_character() -> None:
    # The example's top document is a (grade 2).
    assert _value("relstring@1") == "2"
    assert _value("relstring@2") == "2."


def test_relstring_with_nothing_left_to_show_is_empty_text() -> None:
    # unjudged=condensed drops the only retrieved document (not pooled): every query of the run is
    # evaluated over an empty list, so its string is empty.
    qrels = {"q": {"a": 1}, "p": {"z": 2}}
    run = {"q": {"x": 1.0}, "p": {"y": 0.5, "w": 0.2}}
    result = evaluate(qrels, run, ["relstring[unjudged=condensed]"])[0].per_query()
    assert result == {"q": "", "p": ""}
    assert evaluate(qrels, run, ["relstring@3[unjudged=condensed]"])[0].per_query() == {"q": "", "p": ""}


@pytest.mark.filterwarnings("error")
def test_relstring_of_a_huge_grade_is_above_nine_without_warning() -> None:
    # A grade far beyond int64 is still "> 9"; the digit is never computed from it.
    qrels = {"q": {"a": 1e30, "b": 3}}
    run = {"q": {"a": 0.9, "b": 0.8, "x": 0.1}}
    assert _value("relstring", qrels, run) == ">3-"


# --- F (set_F) ---------------------------------------------------------------------------------


def test_f_default_is_beta_one() -> None:
    # m_set_F.c's default param is 1.0: F = 2PR / (P + R). P = 2/5, recall = 2/3:
    # 2 * (2/5) * (2/3) / (2/5 + 2/3) = (8/15) / (16/15) = 0.5. (beta^2 = 2 would give
    # 3 * (4/15) / (4/5 + 2/3) = (4/5) / (22/15) = 6/11.)
    assert _value("F") == pytest.approx(0.5)
    assert _value("F") == pytest.approx(_value("F[param=1]"))


@pytest.mark.filterwarnings("error")
def test_f_with_nothing_relevant_retrieved_is_zero_without_warning() -> None:
    # m_set_F.c computes F only when rel_ret > 0; otherwise it stays 0 (here P = R = 0, whose
    # 0 / 0 stays internal: no RuntimeWarning).
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"b": 0.9, "x": 0.5}}
    assert _value("F", qrels, run) == 0.0
    assert _value("F[param=0.25]", qrels, run) == 0.0


@pytest.mark.filterwarnings("error")
def test_f_with_a_zero_denominator_is_infinite_without_warning() -> None:
    # 1 relevant of 2 retrieved, R = 4: P = 1/2, recall = 1/4. With x = -0.5 the denominator
    # x P + recall = -1/4 + 1/4 = 0 exactly and the numerator (x + 1) P recall = 1/16 > 0, so the
    # C double division gives +inf; numpy's x / 0 is kept quiet as the 0 / 0 above.
    qrels = {"q": {"a": 1, "b": 1, "c": 1, "d": 1, "e": 0}}
    run = {"q": {"a": 0.9, "e": 0.5}}
    assert _value("F[param=-0.5]", qrels, run) == math.inf


# --- relative_P --------------------------------------------------------------------------------


def test_relative_p_divides_by_the_smaller_of_k_and_r() -> None:
    # relative_P@k = relevant in top k / min(k, R).
    # R = 1, the relevant a at rank 2: @1 -> 0 / min(1, 1) = 0; @2 -> 1 / min(2, 1) = 1.
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"b": 0.9, "a": 0.5, "x": 0.1}}
    assert _value("relative_P@1", qrels, run) == 0.0
    assert _value("relative_P@2", qrels, run) == 1.0
    assert _value("relative_P", qrels, run) == 1.0  # set_relative_P: 1 / min(3, 1)
    # One retrieved document, relevant: @1 = 1 / min(1, R = 3) = 1, and the set form 1 / min(1, 3) = 1.
    one = {"q": {"a": 0.9}}
    assert _value("relative_P@1", QRELS, one) == 1.0
    assert _value("relative_P", QRELS, one) == 1.0


def test_relative_p_with_nothing_left_retrieved_is_zero() -> None:
    # unjudged=condensed (trec_eval -J) drops q's two unjudged documents: nothing retrieved, R = 1,
    # so set_relative_P is 0 (m_set_relative_P.c leaves it 0 when num_ret is 0); pytrec_eval
    # (judged_docs_only_flag=True) reports 0.0 too.
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"x": 1.0, "y": 0.5}}
    assert _value("relative_P[unjudged=condensed]", qrels, run) == 0.0
    assert _value("F[unjudged=condensed]", qrels, run) == 0.0


# --- iprec_at_recall ---------------------------------------------------------------------------


@pytest.mark.filterwarnings("error")
def test_iprec_with_nothing_left_retrieved_keeps_trec_evals_nan_without_warning() -> None:
    # -J leaves q nothing retrieved (R = 1 > 0): trec_eval starts from num_rel_ret / num_ret =
    # 0 / 0 = NaN, kept at recall 0 (rank cutoff (long)(0 * 1 + 0.9) = 0); at recall 0.5 the cutoff
    # (long)(1.4) = 1 exceeds the 0 relevant retrieved: 0. p keeps d (0, rank 1), c (1, rank 2):
    # precision 1/2 at its only relevant document, for both levels.
    qrels = {"q": {"a": 1, "b": 0}, "p": {"c": 1, "d": 0, "e": 1}}
    run = {"q": {"x": 1.0, "y": 0.5}, "p": {"d": 0.9, "c": 0.5, "z": 0.1}}
    at0 = evaluate(qrels, run, ["IPrec[param=0,unjudged=condensed]"])[0].per_query()
    assert math.isnan(at0["q"])
    assert at0["p"] == 0.5
    at_half = evaluate(qrels, run, ["IPrec[param=0.5,unjudged=condensed]"])[0].per_query()
    assert at_half == {"q": 0.0, "p": 0.5}


def test_iprec_nan_agrees_with_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"q": {"a": 1, "b": 0}, "p": {"c": 1, "d": 0, "e": 1}}
    run = {"q": {"x": 1.0, "y": 0.5}, "p": {"d": 0.9, "c": 0.5, "z": 0.1}}
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall.0.00"}, judged_docs_only_flag=True)
    expected = ev.evaluate(run)
    mine = evaluate(qrels, run, ["IPrec[param=0,unjudged=condensed]"])[0].per_query()
    assert math.isnan(expected["q"]["iprec_at_recall_0.00"]) and math.isnan(mine["q"])
    assert mine["p"] == expected["p"]["iprec_at_recall_0.00"]


def test_iprec_at_recall_zero_with_one_relevant_retrieved() -> None:
    # One relevant document retrieved, at rank 2: the max precision over the list is 1/2.
    qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    run = {"q": {"b": 0.9, "a": 0.5, "x": 0.1}}
    assert _value("IPrec[param=0]", qrels, run) == 0.5
    # and with two queries, the second with nothing relevant retrieved, each keeps its own value.
    two = {"q": {"b": 0.9, "a": 0.5, "x": 0.1}, "r": {"x": 0.9}}
    both = evaluate({**qrels, "r": {"z": 1}}, two, ["IPrec[param=0]"])[0].per_query()
    assert both == {"q": 0.5, "r": 0.0}


def test_iprec_query_with_nothing_relevant_follows_the_empty_policy() -> None:
    # R = 0 for p (only a grade 0 judgment): empty, so empty=skip leaves it out and empty=one gives 1.
    qrels = {"q": {"a": 1}, "p": {"b": 0}}
    run = {"q": {"a": 0.9}, "p": {"b": 0.9}}
    assert evaluate(qrels, run, ["IPrec[param=0.5,empty=skip]"])[0].per_query() == {"q": 1.0}
    assert evaluate(qrels, run, ["IPrec[param=0.5,empty=one]"])[0].per_query() == {"q": 1.0, "p": 1.0}
