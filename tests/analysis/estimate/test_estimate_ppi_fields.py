"""rankflavor.analysis.estimate.ppi from outside, where test_estimate_ppi.py does not look: the JSON
fields and reasons of every degenerate case, the error messages, the argument bounds, the input
types and shapes the estimators accept, and the power-tuning lambda at its clips and at one
unlabelled value (by hand, and against ppi_py 0.2.3)."""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from rankflavor.analysis.estimate.ppi import REASONS, classical_mean, ppi_mean, tuned_lambda, z_bounds
from rankflavor.errors import UsageError

ppi_py = pytest.importorskip("ppi_py")

FIELDS = {"point", "low", "high", "se", "n", "n_unlabelled", "lambda", "notes"}


def _ppi_py_point(y, yhat, yu, lam=None):  # type: ignore[no-untyped-def]
    return float(np.squeeze(ppi_py.ppi_mean_pointestimate(np.asarray(y, float), np.asarray(yhat, float),
                                                          np.asarray(yu, float), lam=lam)))


# --- the JSON object of an interval, in each degenerate case ---------------------------------


def test_an_interval_json_object_names_its_fields() -> None:
    # a regular interval: every field a number, nothing undefined, no note
    d = ppi_mean([0.5, 0.7], [0.6, 0.8], [0.3, 0.9], alpha=0.1, lam=1.0).to_dict()
    assert set(d) == FIELDS
    assert (d["n"], d["n_unlabelled"], d["lambda"], d["notes"]) == (2, 2, 1.0, [])
    # a one-sided interval: its open side is null, with the reason under "undefined"
    d = classical_mean([0.2, 0.4, 0.6], alternative="larger").to_dict()
    assert set(d) == FIELDS | {"undefined"}
    assert d["high"] is None and d["undefined"] == {"high": REASONS["larger"]} and d["lambda"] is None


def test_no_labelled_query_leaves_every_number_undefined_and_counts_the_unlabelled() -> None:
    r = ppi_mean([], [], [0.2, 0.4, 0.9])
    assert all(math.isnan(x) for x in (r.point, r.low, r.high, r.se))
    assert (r.n, r.n_unlabelled, r.lam, r.notes) == (0, 3, None, ())
    why = REASONS["no_labelled"]
    assert r.to_dict() == {"point": None, "low": None, "high": None, "se": None, "n": 0, "n_unlabelled": 3,
                           "lambda": None, "notes": [],
                           "undefined": dict.fromkeys(("point", "low", "high", "se", "lambda"), why)}


def test_one_labelled_query_keeps_its_lambda_counts_and_notes() -> None:
    # lambda = 1: theta = mean(Yhat_u) + (Y - Yhat) = 0.3 + (0.5 - 0.6) = 0.2; one value, no interval
    r = ppi_mean([0.5], [0.6], [0.2, 0.4], lam=1.0)
    assert r.point == pytest.approx(0.2, abs=1e-12) and all(math.isnan(x) for x in (r.low, r.high, r.se))
    why = REASONS["one_labelled"]
    assert r.to_dict() == {"point": pytest.approx(0.2, abs=1e-12), "low": None, "high": None, "se": None,
                           "n": 1, "n_unlabelled": 2, "lambda": 1.0, "notes": [],
                           "undefined": dict.fromkeys(("low", "high", "se"), why)}
    # tuned over constant LLM values: lambda is 0/0, taken as 0 and said so; theta = Y
    t = ppi_mean([0.5], [0.4], [0.4, 0.4])
    assert (t.point, t.n, t.n_unlabelled, t.lam, t.notes) == (0.5, 1, 2, 0.0, (REASONS["constant_llm"],))
    assert t.undefined == dict.fromkeys(("low", "high", "se"), why)


def test_a_zero_width_interval_keeps_the_tuning_note_before_its_own() -> None:
    # constant LLM values (lambda taken as 0) and constant human values (no spread): both notes
    r = ppi_mean([0.5, 0.5], [0.4, 0.4], [0.4, 0.4, 0.4])
    assert (r.point, r.low, r.high, r.se, r.lam) == (0.5, 0.5, 0.5, 0.0, 0.0)
    assert r.notes == (REASONS["constant_llm"], REASONS["zero_width"])


@pytest.mark.parametrize("alternative", ["larger", "smaller"])
def test_no_unlabelled_query_keeps_the_one_sided_alternative(alternative: str) -> None:
    y, yhat = np.array([0.1, 0.4, 0.35, 0.9, 0.6]), np.array([0.2, 0.4, 0.3, 0.8, 0.7])
    r = ppi_mean(y, yhat, [], alpha=0.1, alternative=alternative)
    low, high = ppi_py.classical_mean_ci(y, alpha=0.1, alternative=alternative)
    assert (r.low, r.high) == pytest.approx((float(low), float(high)), abs=1e-12)
    open_side = "high" if alternative == "larger" else "low"
    assert r.undefined == {open_side: REASONS[alternative]} and math.isinf(getattr(r, open_side))
    assert r.notes == (REASONS["no_unlabelled"],) and r.lam == 0.0


# --- arguments: bounds and the words of the errors -------------------------------------------


@pytest.mark.parametrize("alpha", [0, 0.0, 1, 1.0, -0.1, 1.5, "0.1", None])
def test_alpha_must_lie_strictly_between_zero_and_one(alpha: object) -> None:
    # alpha = 0 would be an infinite interval (z = inf), alpha = 1 a zero-width one (z = 0)
    message = f"alpha: expected a number in (0, 1), received {alpha!r}"
    for call in (lambda: classical_mean([0.1, 0.5, 0.9], alpha),  # type: ignore[arg-type]
                 lambda: ppi_mean([0.1, 0.5], [0.2, 0.4], [0.3, 0.6], alpha)):  # type: ignore[arg-type]
        with pytest.raises(UsageError, match=f"^{re.escape(message)}$"):
            call()


def test_alpha_just_inside_its_bounds_is_accepted() -> None:
    y = [0.1, 0.5, 0.9]
    for alpha in (1e-9, 1 - 1e-9):
        low, high = classical_mean(y, alpha).low, classical_mean(y, alpha).high
        assert (low, high) == pytest.approx(ppi_py.classical_mean_ci(np.array(y), alpha=alpha), abs=1e-12)


def test_an_unknown_alternative_lists_the_known_ones() -> None:
    message = "alternative: expected one of two-sided, larger, smaller, received 'both'"
    with pytest.raises(UsageError, match=f"^{re.escape(message)}$"):
        ppi_mean([0.1, 0.5], [0.2, 0.4], [0.3], alternative="both")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_value_names_its_argument(bad: float) -> None:
    def refused(name: str, call) -> None:  # type: ignore[no-untyped-def]
        with pytest.raises(UsageError, match=f"^{name}: every value must be a finite number$"):
            call()

    refused("y", lambda: classical_mean([0.1, bad]))
    refused("y", lambda: ppi_mean([0.1, bad], [0.1, 0.2], [0.3]))
    refused("yhat", lambda: ppi_mean([0.1, 0.2], [bad, 0.2], [0.3]))
    refused("yhat_unlabelled", lambda: ppi_mean([0.1, 0.2], [0.1, 0.2], [0.3, bad]))


@pytest.mark.parametrize(("bad", "why"), [(["high"], "could not convert string to float: 'high'"),
                                          ([[0.1, 0.2], [0.3]], "inhomogeneous shape"),
                                          ([0.5j], "not 'complex'"), ({"q1": 0.5}, "not 'dict'")])
def test_what_is_not_a_number_is_a_usage_error_naming_its_argument(bad: object, why: str) -> None:
    # (numpy raised a bare ValueError / TypeError here before)
    for name, call in (("y", lambda: classical_mean(bad)),  # type: ignore[arg-type]
                       ("yhat", lambda: ppi_mean([0.1, 0.2], bad, [0.3])),  # type: ignore[arg-type]
                       ("yhat_unlabelled", lambda: ppi_mean([0.1], [0.2], bad))):  # type: ignore[arg-type]
        with pytest.raises(UsageError, match=f"^{name}: every value must be a finite number \\(.*{re.escape(why)}"):
            call()


# --- inputs: any real numbers, any shape, the same result ------------------------------------


def test_exact_and_low_precision_numbers_give_the_float64_result() -> None:
    y, yhat, yu = [0.25, 0.5, 1.0, 0.75], [0.5, 0.5, 0.75, 1.0], [0.25, 0.5, 0.5]  # all exact in binary
    want = ppi_mean(y, yhat, yu)
    assert want.point == pytest.approx(_ppi_py_point(y, yhat, yu), abs=1e-12)
    as_types = (lambda v: [Fraction(x) for x in v], lambda v: [Decimal(str(x)) for x in v],
                lambda v: np.array(v, dtype=np.float32), lambda v: np.array(v, dtype=np.float16))
    for convert in as_types:
        got = ppi_mean(convert(y), convert(yhat), convert(yu))
        assert (got.point, got.low, got.high, got.se, got.lam) == (want.point, want.low, want.high, want.se, want.lam)
        c = classical_mean(convert(y))
        assert (c.point, c.low, c.high) == (classical_mean(y).point, classical_mean(y).low, classical_mean(y).high)
    # float32 arithmetic on 0.1-like values would round differently from float64's
    y32 = np.array([0.1, 0.7, 0.3, 0.9, 0.2], dtype=np.float32)
    c32, c64 = classical_mean(y32), classical_mean(y32.astype(np.float64))
    assert (c32.point, c32.se) == (c64.point, c64.se)
    assert isinstance(c32.point, float) and isinstance(c32.se, float)


def test_a_column_of_values_pairs_with_a_flat_list() -> None:
    # y as an (n, 1) column, yhat flat: the same queries in the same order, so the same estimate
    y, yhat, yu = [0.1, 0.5, 0.9, 0.4], [0.2, 0.6, 0.7, 0.5], [0.3, 0.8, 0.6]
    column = np.array(y).reshape(-1, 1)
    for lam in (None, 1.0):
        flat, col = ppi_mean(y, yhat, yu, lam=lam), ppi_mean(column, yhat, np.array(yu).reshape(1, -1), lam=lam)
        assert (col.point, col.low, col.high, col.lam) == (flat.point, flat.low, flat.high, flat.lam)
        lo, hi = ppi_py.ppi_mean_ci(np.array(y), np.array(yhat), np.array(yu), alpha=0.1, lam=lam)
        assert (col.low, col.high) == pytest.approx((float(np.squeeze(lo)), float(np.squeeze(hi))), abs=1e-12)
    # a lone number is one value
    one = classical_mean(0.3)  # type: ignore[arg-type]
    assert (one.point, one.n) == (0.3, 1)


def test_z_bounds_is_two_sided_unless_asked() -> None:
    want = stats.norm.interval(0.9, loc=0.5, scale=0.1)
    assert z_bounds(0.5, 0.1, 0.1) == pytest.approx(want, abs=1e-12)
    assert z_bounds(0.5, 0.1, 0.1, "larger") == (pytest.approx(stats.norm.ppf(0.1, 0.5, 0.1), abs=1e-12), math.inf)


# --- the power-tuning lambda --------------------------------------------------------------------


def test_tuned_lambda_without_unlabelled_values_is_zero_and_says_why() -> None:
    y = np.array([0.1, 0.5, 0.9])
    assert tuned_lambda(y, y, np.array([])) == (0.0, (REASONS["no_unlabelled"],))


def test_tuned_lambda_from_one_unlabelled_value_by_hand_and_ppi_py() -> None:
    # Y = Yhat = [0, 1], Yhat_u = [0.5]: cov0 = (0.25 + 0.25) / 2 = 0.25; var1(0, 1, 0.5) = 0.5 / 2
    # = 0.25; lambda = 0.25 / ((1 + 2/1) * 0.25) = 1/3; theta = (1/3) 0.5 + mean(Y - Yhat / 3) = 0.5
    y, yhat, yu = np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.array([0.5])
    assert tuned_lambda(y, yhat, yu) == (pytest.approx(1 / 3, abs=1e-12), ())
    # Y = [0, 1], Yhat = [0.2, 0.6], Yhat_u = [0.9]: cov0 = (0.1 + 0.1) / 2 = 0.1; the three LLM
    # values have mean 1.7 / 3 and var1 = 0.24667 / 2 = 0.12333; lambda = 0.1 / (3 * 0.12333) = 0.2703;
    # theta = lambda 0.9 + mean(Y) - lambda mean(Yhat)
    yhat2, yu2 = np.array([0.2, 0.6]), np.array([0.9])
    lam = 0.1 / (3 * np.var([0.2, 0.6, 0.9], ddof=1))
    r = ppi_mean(y, yhat2, yu2)
    assert r.lam == pytest.approx(lam, abs=1e-12) and 0 < lam < 1
    assert r.point == pytest.approx(_ppi_py_point(y, yhat2, yu2), abs=1e-12)
    assert r.point == pytest.approx(lam * 0.9 + 0.5 - lam * 0.4, abs=1e-12)


def test_tuned_lambda_is_clipped_to_one_from_far_above() -> None:
    # Y = [0, 1], Yhat = [0.4, 0.6] (the judge shrinks toward 0.5), Yhat_u = [0.5, 0.7] x 4:
    # cov0 = (0.05 + 0.05) / 2 = 0.05; the ten LLM values have mean 0.58 and squared deviations
    # 0.0324 + 0.0004 + 4 * 0.0064 + 4 * 0.0144 = 0.116, var1 = 0.116 / 9; 1 + n / N = 1.25;
    # unclipped lambda = 0.05 / (1.25 * 0.116 / 9) = 3.10, clipped to 1.
    # theta(lambda) = 0.6 lambda + 0.5 - 0.5 lambda = 0.5 + 0.1 lambda: 0.6 at lambda = 1.
    y, yhat, yu = np.array([0.0, 1.0]), np.array([0.4, 0.6]), np.array([0.5, 0.7] * 4)
    assert 0.05 / (1.25 * np.var(np.concatenate([yhat, yu]), ddof=1)) == pytest.approx(3.1034, abs=1e-4)
    assert tuned_lambda(y, yhat, yu) == (1.0, ())
    r = ppi_mean(y, yhat, yu)
    assert r.lam == 1.0 and r.point == pytest.approx(0.6, abs=1e-12)
    assert r.point == pytest.approx(_ppi_py_point(y, yhat, yu), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.floats(0, 1, allow_nan=False), st.integers(1, 9), st.integers(1, 9), st.data())
def test_equal_llm_values_always_take_lambda_zero_with_the_note(c: float, n: int, big_n: int,
                                                                  data: st.DataObject) -> None:
    # every LLM value the same: the LLM labels carry no information, lambda = 0/0 taken as 0. (The
    # variance of equal floats is not always 0: np.var([0.7] * 7, ddof=1) > 0, which once gave
    # lambda = 0.245 for Y = [0, 1, 0.2] and no note.)
    y = data.draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=n, max_size=n))
    r = ppi_mean(y, [c] * n, [c] * big_n)
    assert r.lam == 0.0 and REASONS["constant_llm"] in r.notes
    assert r.point == classical_mean(y).point


def test_seven_equal_llm_values_of_0_7_take_lambda_zero() -> None:
    assert np.var([0.7] * 7, ddof=1) > 0  # the case that once slipped through
    assert tuned_lambda(np.array([0.0, 1.0, 0.2]), np.full(3, 0.7), np.full(4, 0.7)) == (0.0, (REASONS["constant_llm"],))


def test_llm_values_whose_variance_underflows_take_lambda_zero() -> None:
    # 0 and 1e-170 differ, but their variance (about 5e-341) is 0 in float64: no spread to divide by
    yhat = np.array([0.0, 1e-170])
    assert np.var(np.concatenate([yhat, [0.0]]), ddof=1) == 0.0
    assert tuned_lambda(np.array([0.2, 0.6]), yhat, np.array([0.0])) == (0.0, (REASONS["constant_llm"],))
