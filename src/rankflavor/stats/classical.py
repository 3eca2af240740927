"""Classical paired tests: Student's t, Wilcoxon signed-rank, the sign test, and effect size.

Each takes two paired per-query arrays ``a`` and ``b`` (same queries, same order) and tests the
differences ``d = a - b``; every p-value is two-sided. The numbers follow SciPy's definitions
(``scipy.stats.ttest_rel``, ``wilcoxon`` with its default ``method="auto"``, ``binomtest``)
and are computed here from the differences, so the tests can check them against SciPy.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import bdtr, ndtr, stdtr

from rankflavor.errors import EvaluationError, UsageError
from rankflavor.stats.result import TestResult, differences, values

ZERO_METHODS = ("wilcox", "pratt", "zsplit")

#: Above this many pairs Wilcoxon uses the normal approximation (SciPy's ``method="auto"`` rule).
EXACT_MAX = 50
#: With ties or zeros, up to this many pairs the sign flips are enumerated (``2**13`` outcomes).
ENUMERATE_MAX = 13


def paired_t(a: ArrayLike, b: ArrayLike) -> TestResult:
    """Paired Student's t-test of the mean difference.

    ``t = mean(d) / (std(d, ddof=1) / sqrt(n))`` with ``n - 1`` degrees of freedom, ``d = a - b``.

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
    d = differences(a, b)
    n = d.size
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(n))
    p = float(2.0 * stdtr(n - 1, -abs(t)))
    return TestResult("paired t-test", float(t), min(p, 1.0), n, {"df": n - 1, "mean_difference": mean})


def average_ranks(x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """1-based ranks of ``x`` with ties given their average rank, and the size of each tie group.

    Examples
    --------
    >>> r, t = average_ranks(np.array([3.0, 1.0, 3.0]))
    >>> r.tolist(), t.tolist()
    ([2.5, 1.0, 2.5], [1, 2])
    """
    n = x.size
    order = np.argsort(x, kind="stable")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    counts = np.diff(np.r_[starts, n])
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = np.repeat(starts + (counts + 1) / 2.0, counts)
    return ranks, counts


def wilcoxon(a: ArrayLike, b: ArrayLike, zero_method: str = "wilcox") -> TestResult:
    """Wilcoxon signed-rank test of the differences ``d = a - b``.

    The absolute differences are ranked (ties get the average rank); ``R+`` and ``R-`` sum
    the ranks of the positive and the negative differences. The p-value follows SciPy's
    ``method="auto"``: the exact null distribution when ``n <= 50`` with no ties and no zero
    differences; otherwise, when ``n <= 13``, all ``2**n`` sign flips enumerated; otherwise
    the normal approximation (with the tie correction, without continuity correction).

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
    ranked = d[~zeros] if zero_method == "wilcox" else d
    ranks, ties = average_ranks(np.abs(ranked))
    positive, negative = ranked > 0, ranked < 0
    r_plus = float(ranks[positive].sum())
    r_minus = float(ranks[negative].sum())
    if zero_method == "zsplit":
        half = float(ranks[ranked == 0].sum()) / 2.0
        r_plus += half
        r_minus += half
    has_ties = bool((ties > 1).any())
    details: dict[str, object] = {"r_plus": r_plus, "r_minus": r_minus, "zero_method": zero_method, "zeros": n_zero}

    if n <= EXACT_MAX and not has_ties and n_zero == 0:
        p = _wilcoxon_exact(r_plus, n)
        details["method"] = "exact"
    elif n <= ENUMERATE_MAX:
        # R+ under the null: each non-zero difference keeps or flips its sign, its rank fixed.
        base = r_plus - float((ranks * positive).sum())
        moving = ranks[ranked != 0]
        bits = (np.arange(2 ** moving.size)[:, None] >> np.arange(moving.size)) & 1
        null = base + bits @ moving
        gamma = abs(np.finfo(np.float64).eps * 100 * r_plus)
        p = 2.0 * min(float(np.mean(null <= r_plus + gamma)), float(np.mean(null >= r_plus - gamma)))
        details["method"] = "enumerated"
    else:
        count = float(ranked.size)
        mean = count * (count + 1.0) * 0.25
        var = count * (count + 1.0) * (2.0 * count + 1.0)
        if zero_method == "pratt":
            nz = float(n_zero)
            mean -= nz * (nz + 1.0) * 0.25
            var -= nz * (nz + 1.0) * (2.0 * nz + 1.0)
            ties = average_ranks(np.abs(d[~zeros]))[1]  # zeros are no tie group for the correction
        tie_term = float(np.sum(ties.astype(np.float64) ** 3 - ties))
        se = np.sqrt((var - tie_term / 2.0) / 24.0)
        z = (r_plus - mean) / se
        p = float(2.0 * ndtr(-abs(z)))
        details["method"] = "asymptotic"
        details["z"] = float(-abs(z))
    return TestResult("Wilcoxon signed-rank", min(r_plus, r_minus), float(min(p, 1.0)), n, details)


def _wilcoxon_exact(r_plus: float, n: int) -> float:
    """Two-sided exact p-value of ``R+`` for ``n`` untied non-zero differences."""
    total = n * (n + 1) // 2
    counts = np.zeros(total + 1, dtype=np.float64)
    counts[0] = 1.0
    for k in range(1, n + 1):  # subsets of {1..n} by their sum; n <= 50 here
        counts[k:] = counts[k:] + counts[:-k].copy()
    pmf = counts / 2.0**n
    lower = float(pmf[: int(np.ceil(r_plus)) + 1].sum())
    upper = float(pmf[int(np.floor(r_plus)) :].sum())
    return min(1.0, 2.0 * min(lower, upper))


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
    pairs is tested against Binomial(n, 1/2), two-sided: ``p = min(1, 2 P(X <= min(w, l)))``,
    which is ``scipy.stats.binomtest(wins, n, 0.5)``'s p-value.

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
    p = 1.0 if wins == losses else min(1.0, 2.0 * float(bdtr(min(wins, losses), n, 0.5)))
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
