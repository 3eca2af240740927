"""Classical paired tests: Student's t, Wilcoxon signed-rank, the sign test, and effect size.

Each takes two paired per-query arrays ``a`` and ``b`` (same queries, same order) and tests the
differences ``d = a - b``; every p-value is two-sided. The numbers are SciPy's:
``scipy.stats.ttest_rel``, ``scipy.stats.wilcoxon`` and ``scipy.stats.binomtest`` are called
on the checked input. What rankflavor adds is a thin layer: the checks and the errors worded for
users (:mod:`rankflavor.stats.result`), the tolerance that makes near-equal scores ties in the
sign test, and the details a report prints (Wilcoxon's ``R+`` and ``R-`` and which of its null
distributions was used).

Wilcoxon's method is chosen here, pair by pair, by the rule of SciPy's ``method="auto"``, then
passed to SciPy explicitly, so ``details["method"]`` names what was computed. Testing many pairs
at once with ``scipy.stats.wilcoxon(..., axis=-1)`` would not give each pair its own rule: SciPy
decides once for the whole array (a tie or a zero in one pair takes every pair off the exact
null; from 14 queries, to the normal approximation). With ties or zeros among at most 13 pairs,
``wilcoxon`` enumerates the sign flips through ``scipy.stats.permutation_test`` with a statistic
that re-ranks the data in a Python loop, once per sign vector: 0.87 s for 13 pairs. The same
``permutation_test`` on the signed ranks, with ``R+`` as a vectorized sum, gives the same p-value
in 0.026 s (``python3 bench/bench_stats_scipy.py --only Wilcoxon``).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.stats as ss
from numpy.typing import ArrayLike, NDArray

from rankflavor.errors import EvaluationError, UsageError
from rankflavor.stats.result import TestResult, differences, paired, values

ZERO_METHODS = ("wilcox", "pratt", "zsplit")

#: Above this many pairs Wilcoxon uses the normal approximation (SciPy's ``method="auto"`` rule).
EXACT_MAX = 50
#: With ties or zeros, up to this many pairs the sign flips are enumerated (``2**13`` outcomes).
ENUMERATE_MAX = 13


def paired_t(a: ArrayLike, b: ArrayLike) -> TestResult:
    """Paired Student's t-test of the mean difference.

    ``t = mean(d) / (std(d, ddof=1) / sqrt(n))`` with ``n - 1`` degrees of freedom, ``d = a - b``:
    ``scipy.stats.ttest_rel(a, b)``.

    Parameters
    ----------
    a, b : array_like
        Paired per-query values (1-D, same length, same query order).

    Returns
    -------
    TestResult
        ``statistic`` is t; ``details`` holds ``df`` and ``mean_difference``. When every
        difference is the same non-zero number, ``t`` is ``±inf`` and the p-value ``0.0``.

    Raises
    ------
    EvaluationError
        Fewer than 2 pairs, non-finite values, different lengths, or all differences zero.

    References
    ----------
    .. [1] Student (1908). "The probable error of a mean". *Biometrika* 6(1): 1-25.
    .. [2] Smucker, Allan & Carterette (2007). "A comparison of statistical significance tests
       for information retrieval evaluation". CIKM.

    Examples
    --------
    >>> r = paired_t([0.5, 0.6, 0.7, 0.9], [0.4, 0.6, 0.5, 0.6])
    >>> round(r.statistic, 4), round(r.pvalue, 4), r.details["df"]
    (2.3238, 0.1027, 3)
    """
    xa, xb = paired(a, b)
    with warnings.catch_warnings():
        # constant differences: SciPy warns of "precision loss" and returns the documented ±inf
        warnings.simplefilter("ignore", RuntimeWarning)
        r = ss.ttest_rel(xa, xb)
    return TestResult("paired t-test", float(r.statistic), float(r.pvalue), xa.size,
                      {"df": int(r.df), "mean_difference": float((xa - xb).mean())})


def wilcoxon(a: ArrayLike, b: ArrayLike, zero_method: str = "wilcox") -> TestResult:
    """Wilcoxon signed-rank test of the differences ``d = a - b``.

    The absolute differences are ranked (ties get the average rank); ``R+`` and ``R-`` sum
    the ranks of the positive and the negative differences. The p-value is
    SciPy's, by the rule of ``scipy.stats.wilcoxon``'s ``method="auto"``: the exact null
    distribution (``wilcoxon(method="exact")``) when ``n <= 50`` with no ties and no zero
    differences; otherwise, when ``n <= 13``, all ``2**n`` sign flips enumerated (what
    ``wilcoxon`` computes with a ``PermutationMethod``, here by ``scipy.stats.permutation_test``
    directly); otherwise the normal approximation (``wilcoxon(method="asymptotic")``: with the
    tie correction, without continuity correction).

    Parameters
    ----------
    a, b : array_like
        Paired per-query values.
    zero_method : {"wilcox", "pratt", "zsplit"}
        Zero differences: dropped before ranking (Wilcoxon), ranked then dropped (Pratt), or
        ranked and split half to each sign.

    Returns
    -------
    TestResult
        ``statistic`` is ``min(R+, R-)``; ``details`` holds ``r_plus``, ``r_minus``,
        ``method`` (``"exact"``, ``"enumerated"`` or ``"asymptotic"``), ``z`` for the latter,
        and ``zeros``. ``n`` is the number of pairs including zeros.

    Raises
    ------
    EvaluationError
        Fewer than 2 pairs, non-finite values, different lengths, or all differences zero.
    UsageError
        An unknown ``zero_method``.

    References
    ----------
    .. [1] Wilcoxon (1945). "Individual comparisons by ranking methods". *Biometrics Bulletin*
       1(6): 80-83.
    .. [2] Pratt (1959). "Remarks on zeros and ties in the Wilcoxon signed rank procedures".
       *JASA* 54(287): 655-667.

    Examples
    --------
    >>> r = wilcoxon([0.5, 0.6, 0.7, 0.9, 0.3], [0.4, 0.65, 0.5, 0.6, 0.1])
    >>> r.statistic, r.pvalue, r.details["method"]
    (1.0, 0.125, 'exact')
    """
    if zero_method not in ZERO_METHODS:
        raise UsageError(f"zero_method must be one of {', '.join(ZERO_METHODS)}, got {zero_method!r}")
    d = differences(a, b)
    n = d.size
    zeros = d == 0
    n_zero = int(zeros.sum())
    kept = ~zeros if zero_method == "wilcox" else np.ones(n, dtype=bool)
    ranks = np.zeros(n)
    ranks[kept] = ss.rankdata(np.abs(d[kept]))
    half = float(ranks[zeros].sum()) / 2.0 if zero_method == "zsplit" else 0.0
    r_plus = float(ranks[d > 0].sum()) + half
    r_minus = float(ranks[d < 0].sum()) + half
    details: dict[str, object] = {"r_plus": r_plus, "r_minus": r_minus, "zero_method": zero_method, "zeros": n_zero}
    if n <= ENUMERATE_MAX and (n_zero > 0 or np.unique(ranks[kept]).size < kept.sum()):
        details["method"] = "enumerated"
        return TestResult("Wilcoxon signed-rank", min(r_plus, r_minus), _enumerated(np.sign(d) * ranks), n, details)
    method = "exact" if n <= EXACT_MAX and n_zero == 0 and np.unique(ranks).size == n else "asymptotic"
    r = ss.wilcoxon(d, zero_method=zero_method, method=method)
    details["method"] = method
    if method == "asymptotic":
        details["z"] = float(r.zstatistic)
    return TestResult("Wilcoxon signed-rank", float(r.statistic), float(r.pvalue), n, details)


def _enumerated(signed_ranks: NDArray[np.float64]) -> float:
    """Two-sided p-value of ``R+`` over all ``2**n`` sign flips of the signed ranks (zeros: rank 0 or sign 0).

    ``R+`` of flipped signed ranks is the sum of the positive ones: the statistic SciPy's
    ``wilcoxon`` hands ``permutation_test``, vectorized. (Zsplit's half of the zeros' ranks adds
    the same constant to every outcome, which leaves the p-value as it is.)
    """
    def r_plus(x: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
        return np.asarray(np.maximum(x, 0.0).sum(axis=axis))

    res = ss.permutation_test((signed_ranks,), r_plus, permutation_type="samples", vectorized=True,
                              n_resamples=2**signed_ranks.size, alternative="two-sided")
    return float(res.pvalue)


def wins_losses_ties(a: ArrayLike, b: ArrayLike, tolerance: float = 0.0) -> tuple[int, int, int]:
    """Count the queries where ``a`` beats, loses to, or ties ``b``.

    A win is ``a - b > tolerance``, a loss ``a - b < -tolerance``, anything else a tie.

    Parameters
    ----------
    a, b : array_like
        Paired per-query values.
    tolerance : float
        Differences no larger than this in magnitude count as ties.

    Returns
    -------
    tuple of int
        ``(wins, losses, ties)``, summing to the number of queries.

    References
    ----------
    .. [1] Sakai (2014). "Statistical reform in information retrieval?" *SIGIR Forum* 48(1).

    Examples
    --------
    >>> wins_losses_ties([0.5, 0.2, 0.3], [0.4, 0.2, 0.6])
    (1, 1, 1)
    """
    if not np.isfinite(tolerance) or tolerance < 0:
        raise UsageError(f"tolerance must be a finite non-negative number, got {tolerance!r}")
    xa = values(a, "a", minimum=1)
    xb = values(b, "b", minimum=1)
    if xa.shape != xb.shape:
        raise EvaluationError(f"a and b must be paired per-query values of the same length, got {xa.size} and {xb.size}")
    d = xa - xb
    wins = int(np.count_nonzero(d > tolerance))
    losses = int(np.count_nonzero(d < -tolerance))
    return wins, losses, d.size - wins - losses


def sign_test(a: ArrayLike, b: ArrayLike, *, tolerance: float = 0.0) -> TestResult:
    """Sign test: are wins and losses equally likely?

    Ties (``|a - b| <= tolerance``) are dropped; the number of wins among the ``n`` remaining
    pairs is tested against Binomial(n, 1/2), two-sided: the p-value is
    ``scipy.stats.binomtest(wins, n, 0.5)``'s, ``min(1, 2 P(X <= min(w, l)))``.

    Parameters
    ----------
    a, b : array_like
        Paired per-query values.
    tolerance : float
        Differences no larger than this in magnitude count as ties.

    Returns
    -------
    TestResult
        ``statistic`` is the number of wins; ``n`` the wins plus losses; ``details`` holds
        ``wins``, ``losses`` and ``ties``.

    Raises
    ------
    EvaluationError
        Fewer than 2 pairs, non-finite values, different lengths, or no pair outside the ties.

    References
    ----------
    .. [1] Conover (1999). *Practical Nonparametric Statistics*, 3rd ed., section 3.4. Wiley.

    Examples
    --------
    >>> r = sign_test([0.5, 0.6, 0.7, 0.9, 0.3], [0.4, 0.65, 0.5, 0.6, 0.1])
    >>> r.statistic, r.n, round(r.pvalue, 4)
    (4.0, 5, 0.375)
    """
    differences(a, b)
    wins, losses, ties = wins_losses_ties(a, b, tolerance)
    n = wins + losses
    if n == 0:
        raise EvaluationError(f"all {ties} pairs are ties within tolerance {tolerance}: the sign test has no data")
    p = float(ss.binomtest(wins, n, 0.5).pvalue)
    return TestResult("sign test", float(wins), p, n, {"wins": wins, "losses": losses, "ties": ties})


def cohens_d_paired(a: ArrayLike, b: ArrayLike) -> float:
    """Standardized effect size of paired samples, Cohen's ``d_z``.

    ``d_z = mean(d) / std(d, ddof=1)`` with ``d = a - b``: the mean difference in units of the
    standard deviation of the differences (not of the scores), so ``t = d_z * sqrt(n)``.
    When every difference is the same non-zero number it is ``±inf``.

    Raises
    ------
    EvaluationError
        Fewer than 2 pairs, non-finite values, different lengths, or all differences zero.

    References
    ----------
    .. [1] Cohen (1988). *Statistical Power Analysis for the Behavioral Sciences*, 2nd ed.,
       section 2.3.5 (the ``d_z`` of paired observations). Erlbaum.
    .. [2] Lakens (2013). "Calculating and reporting effect sizes to facilitate cumulative
       science". *Frontiers in Psychology* 4: 863.

    Examples
    --------
    >>> round(cohens_d_paired([0.5, 0.6, 0.7, 0.9], [0.4, 0.6, 0.5, 0.6]), 4)
    1.1619
    """
    d = differences(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(d.mean() / d.std(ddof=1))
