"""The mean estimators of rankflavor.analysis.estimate.ppi against ppi_py (ppi-python 0.2.3), by hand, and
their degenerate inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankflavor.analysis.estimate.ppi import REASONS, classical_mean, effective_n, ppi_mean, tuned_lambda
from rankflavor.errors import UsageError

ppi_py = pytest.importorskip("ppi_py")


def _draw(seed: int, n: int, big_n: int, bias: float, noise: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-query values in [0, 1] (NDCG-like) and a judge's values: the truth plus bias and noise."""
    rng = np.random.default_rng(seed)
    truth = rng.beta(2, 2, n + big_n)
    judged = np.clip(truth + bias + rng.normal(0, noise, n + big_n), 0, 1)
    return truth[:n], judged[:n], judged[n:]


def _ours_and_theirs(y, yhat, yu, alpha, lam, alternative="two-sided"):  # type: ignore[no-untyped-def]
    ours = ppi_mean(y, yhat, yu, alpha, lam, alternative)
    point = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, yhat, yu, lam=lam)))
    low, high = (float(np.squeeze(b)) for b in ppi_py.ppi_mean_ci(y, yhat, yu, alpha=alpha, lam=lam,
                                                                   alternative=alternative))
    return ours, (point, low, high)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("lam", [None, 1.0, 0.4])
def test_ppi_equals_ppi_py_two_sided(seed: int, lam: float | None) -> None:
    y, yhat, yu = _draw(seed, n=15 + 7 * seed, big_n=40 + 30 * seed, bias=0.05 * (seed % 3), noise=0.1 + 0.05 * seed)
    alpha = (0.1, 0.05, 0.2)[seed % 3]
    ours, (point, low, high) = _ours_and_theirs(y, yhat, yu, alpha, lam)
    assert ours.point == pytest.approx(point, abs=1e-9)
    assert ours.low == pytest.approx(low, abs=1e-9)
    assert ours.high == pytest.approx(high, abs=1e-9)
    if lam is None:
        assert 0 <= ours.lam <= 1
    else:
        assert ours.lam == lam


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("alternative", ["larger", "smaller"])
def test_one_sided_intervals_equal_ppi_py_given_the_same_lambda(seed: int, alternative: str) -> None:
    # ppi_py 0.2.3's ppi_mean_ci(lam=None) tunes lambda and then calls itself without passing
    # `alternative` on (ppi_py/ppi.py, ppi_mean_ci), so its tuned one-sided interval is two-sided;
    # the one-sided interval is compared here at a given lambda: 1, and the lambda we tuned (whose
    # value the two-sided test above checks).
    y, yhat, yu = _draw(100 + seed, n=25, big_n=200, bias=0.1, noise=0.15)
    tuned = ppi_mean(y, yhat, yu, 0.1).lam
    for lam in (1.0, tuned):
        ours, (point, low, high) = _ours_and_theirs(y, yhat, yu, 0.1, lam, alternative)
        assert ours.point == pytest.approx(point, abs=1e-9)
        if alternative == "larger":
            assert ours.low == pytest.approx(low, abs=1e-9) and ours.high == math.inf == high
            assert "high" in ours.undefined
        else:
            assert ours.high == pytest.approx(high, abs=1e-9) and ours.low == -math.inf == low
            assert "low" in ours.undefined


@pytest.mark.parametrize("seed", range(5))
def test_classical_equals_ppi_py_classical_mean_ci(seed: int) -> None:
    y, _, _ = _draw(200 + seed, n=10 + 10 * seed, big_n=0, bias=0, noise=0.1)
    ours = classical_mean(y, 0.1)
    low, high = ppi_py.classical_mean_ci(y, alpha=0.1)
    assert (ours.low, ours.high) == pytest.approx((low, high), abs=1e-12)
    assert ours.point == pytest.approx(float(y.mean()), abs=1e-15)


def test_a_hand_checked_example() -> None:
    # Y = [.5, .7], Yhat = [.6, .8] (the judge overrates by .1), Yhat_u = [.3, .9].
    # lambda = 1: theta = mean(Yhat_u) + mean(Y - Yhat) = .6 - .1 = .5;
    #   se^2 = var0(Yhat_u) / 2 + var0(Y - Yhat) / 2 = .09 / 2 + 0 = .045; z_.95 = 1.6448536;
    #   half-width = 1.6448536 * sqrt(.045) = .3489254.
    r = ppi_mean([0.5, 0.7], [0.6, 0.8], [0.3, 0.9], alpha=0.1, lam=1.0)
    assert r.point == pytest.approx(0.5, abs=1e-12)
    assert r.se == pytest.approx(math.sqrt(0.045), abs=1e-12)
    assert (r.low, r.high) == pytest.approx((0.5 - 0.3489261, 0.5 + 0.3489261), abs=1e-7)
    # Tuned: cov0(Y, Yhat) = (.01 + .01) / 2 = .01; var1(.6, .8, .3, .9) = .21 / 3 = .07;
    # lambda = .01 / ((1 + 2/2) * .07) = 1/14; theta = .6/14 + (.6 - .7/14) = .6 - .1/14.
    t = ppi_mean([0.5, 0.7], [0.6, 0.8], [0.3, 0.9], alpha=0.1)
    assert t.lam == pytest.approx(1 / 14, abs=1e-12)
    assert t.point == pytest.approx(0.6 - 0.1 / 14, abs=1e-12)


def test_tuned_lambda_is_clipped_to_zero_and_one() -> None:
    y = np.array([0.1, 0.5, 0.9, 0.3])
    assert tuned_lambda(y, 1 - y, np.array([0.2, 0.8]))[0] == 0.0  # negative covariance
    assert tuned_lambda(y, 10 * y, np.array([10 * 0.5]))[0] <= 1.0


# --- degenerate inputs: one meaning each, with a reason ---------------------------------------


def test_no_labelled_query() -> None:
    r = ppi_mean([], [], [0.2, 0.4])
    assert math.isnan(r.point) and r.undefined["point"] == REASONS["no_labelled"]
    h = classical_mean([])
    assert math.isnan(h.point) and "no labelled query" in h.undefined["point"]
    assert math.isnan(effective_n(h, r))


def test_one_labelled_query_has_a_point_but_no_interval() -> None:
    r = ppi_mean([0.5], [0.6], [0.2, 0.4], lam=1.0)
    assert r.point == pytest.approx(0.3 + (0.5 - 0.6))
    assert math.isnan(r.low) and math.isnan(r.high) and r.undefined["low"] == REASONS["one_labelled"]
    h = classical_mean([0.5])
    assert h.point == 0.5 and math.isnan(h.high) and h.undefined["high"] == REASONS["one_labelled"]


def test_no_unlabelled_query_makes_ppi_the_human_only_estimate() -> None:
    y, yhat = [0.2, 0.5, 0.9], [0.3, 0.5, 0.7]
    for lam in (None, 1.0):
        r = ppi_mean(y, yhat, [], lam=lam)
        h = classical_mean(y)
        assert (r.point, r.low, r.high, r.lam) == (h.point, h.low, h.high, 0.0)
        assert REASONS["no_unlabelled"] in r.notes


def test_constant_llm_values_take_lambda_zero() -> None:
    y = [0.2, 0.5, 0.9]
    r = ppi_mean(y, [0.4, 0.4, 0.4], [0.4, 0.4])
    h = classical_mean(y)
    assert r.lam == 0.0 and REASONS["constant_llm"] in r.notes
    assert (r.point, r.low, r.high) == pytest.approx((h.point, h.low, h.high), abs=1e-15)
    # ppi_py's tuning divides 0 by 0 here (its interval is NaN): the defined meaning is ours
    with np.errstate(all="ignore"):
        assert math.isnan(float(np.squeeze(ppi_py.ppi_mean_ci(np.array(y), np.full(3, 0.4), np.full(2, 0.4))[0])))


def test_zero_spread_gives_a_zero_width_interval_with_a_note() -> None:
    r = classical_mean([0.5, 0.5, 0.5])
    assert r.low == r.high == 0.5 and REASONS["zero_width"] in r.notes
    p = ppi_mean([0.5, 0.5], [0.5, 0.5], [0.5, 0.5], lam=1.0)
    assert p.low == p.high == 0.5 and REASONS["zero_width"] in p.notes


def test_bad_arguments_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="alpha"):
        ppi_mean([0.1, 0.2], [0.1, 0.2], [0.3], alpha=1.5)
    with pytest.raises(UsageError, match="lambda"):
        ppi_mean([0.1, 0.2], [0.1, 0.2], [0.3], lam=2.0)
    with pytest.raises(UsageError, match="same queries"):
        ppi_mean([0.1, 0.2], [0.1], [0.3])
    with pytest.raises(UsageError, match="alternative"):
        classical_mean([0.1, 0.2], alternative="both")
    with pytest.raises(UsageError, match="finite"):
        classical_mean([0.1, float("nan")])


values = st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=12)


@settings(max_examples=60, deadline=None)
@given(values, st.data())
def test_lambda_zero_is_the_classical_interval_and_tuning_never_widens_much(y: list[float], data: st.DataObject) -> None:
    yhat = data.draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=len(y), max_size=len(y)))
    yu = data.draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=12))
    zero, h = ppi_mean(y, yhat, yu, lam=0.0), classical_mean(y)
    assert zero.point == pytest.approx(h.point, abs=1e-12)
    assert zero.se == pytest.approx(h.se, abs=1e-12)
    tuned = ppi_mean(y, yhat, yu)
    assert 0.0 <= tuned.lam <= 1.0
    with np.errstate(all="ignore"):
        lo, hi = ppi_py.ppi_mean_ci(np.array(y), np.array(yhat), np.array(yu), alpha=0.1, lam=tuned.lam)
    assert tuned.low == pytest.approx(float(np.squeeze(lo)), abs=1e-9)
    assert tuned.high == pytest.approx(float(np.squeeze(hi)), abs=1e-9)


def test_effective_n_by_hand_and_where_it_is_undefined() -> None:
    from rankflavor.analysis.estimate.ppi import Interval

    human, ppi = Interval(0.5, 0.3, 0.7, 0.2, 20), Interval(0.5, 0.4, 0.6, 0.1, 20, 100)
    assert effective_n(human, ppi) == pytest.approx(80.0)  # 20 * (0.2 / 0.1)^2
    assert effective_n(Interval(0.5, 0.3, 0.7, 0.3, 10), ppi) == pytest.approx(90.0)  # 10 * 3^2
    for h, p in ((human, Interval(0.5, 0.5, 0.5, 0.0, 20, 100)), (Interval(0.5, 0.5, 0.5, 0.0, 20), ppi),
                 (Interval(0.5, math.nan, math.nan, math.nan, 1), ppi), (human, Interval(0.5, 0.4, 0.6, math.inf, 2))):
        assert math.isnan(effective_n(h, p))


@pytest.mark.parametrize("labelled", [True, False])
def test_classical_mean_of_no_value_and_of_one_value_says_why(labelled: bool) -> None:
    none, one = classical_mean([], labelled=labelled), classical_mean([0.3], labelled=labelled)
    why0 = REASONS["no_labelled" if labelled else "no_values"]
    why1 = REASONS["one_labelled" if labelled else "one_value"]
    assert all(math.isnan(x) for x in (none.point, none.low, none.high, none.se)) and none.n == 0
    assert none.undefined == dict.fromkeys(("point", "low", "high", "se"), why0)
    assert one.point == 0.3 and all(math.isnan(x) for x in (one.low, one.high, one.se)) and one.n == 1
    assert one.undefined == dict.fromkeys(("low", "high", "se"), why1)


@pytest.mark.parametrize("alternative", ["larger", "smaller"])
def test_classical_mean_one_sided_equals_ppi_py_and_names_its_open_side(alternative: str) -> None:
    y = np.array([0.1, 0.4, 0.35, 0.9, 0.6, 0.2])
    got = classical_mean(y, 0.1, alternative)
    low, high = ppi_py.classical_mean_ci(y, alpha=0.1, alternative=alternative)
    assert got.low == pytest.approx(low, abs=1e-12) and got.high == pytest.approx(high, abs=1e-12)
    open_side = "high" if alternative == "larger" else "low"
    assert got.undefined == {open_side: REASONS[alternative]} and math.isinf(getattr(got, open_side))


def test_a_zero_width_classical_interval_carries_its_note() -> None:
    flat, spread = classical_mean([0.5, 0.5, 0.5]), classical_mean([0.4, 0.6])
    assert (flat.low, flat.high, flat.se) == (0.5, 0.5, 0.0) and flat.notes == (REASONS["zero_width"],)
    assert spread.notes == () and spread.undefined == {}
