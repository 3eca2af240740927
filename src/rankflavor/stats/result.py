"""The value every paired test returns, and the checks every test runs on its input first."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankflavor.errors import EvaluationError, UsageError


@dataclass(frozen=True)
class TestResult:
    """The outcome of one two-sided paired test.

    Attributes
    ----------
    name : str
        The test, e.g. ``"paired t-test"``.
    statistic : float
        The test statistic (its definition is the test's; see the function that made it).
    pvalue : float
        Two-sided p-value.
    n : int
        Number of paired observations the test used (after dropping ties where the test does).
    details : dict
        Everything needed to reproduce or report the test: degrees of freedom, seed, number of
        resamples, whether the null distribution was enumerated exactly, the p-value rule.

    Examples
    --------
    >>> TestResult("demo", 1.0, 0.5, 3, {}).pvalue
    0.5
    """

    __test__ = False  # a dataclass named Test* is not a pytest test class

    name: str
    statistic: float
    pvalue: float
    n: int
    details: dict[str, Any] = field(default_factory=dict)


def values(x: ArrayLike, what: str = "x", *, minimum: int = 2) -> NDArray[np.float64]:
    """``x`` as a 1-D float64 array, refusing NaN, infinities and fewer than ``minimum`` values.

    Examples
    --------
    >>> values([1, 2]).dtype
    dtype('float64')
    """
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise UsageError(f"{what} must be a 1-D array of per-query values, got shape {arr.shape}")
    if arr.size < minimum:
        raise EvaluationError(f"{what} has {arr.size} value(s); a paired test needs at least {minimum} queries")
    bad = ~np.isfinite(arr)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise EvaluationError(
            f"{what} has {int(bad.sum())} non-finite value(s) (first at position {first}: {arr[first]!r}); "
            "per-query values must be finite numbers"
        )
    return arr


def paired(a: ArrayLike, b: ArrayLike, *, minimum: int = 2) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``a`` and ``b`` as float64 arrays after checking both are paired per-query arrays of the same length.

    Raises :class:`~rankflavor.errors.EvaluationError` when they differ in length, hold
    NaN, have fewer than ``minimum`` queries, or every difference is zero (the systems are
    identical on these queries; there is nothing to test).

    Examples
    --------
    >>> [x.tolist() for x in paired([1, 2], [0.5, 2.5])]
    [[1.0, 2.0], [0.5, 2.5]]
    """
    xa = values(a, "a", minimum=minimum)
    xb = values(b, "b", minimum=minimum)
    if xa.shape != xb.shape:
        raise EvaluationError(
            f"a and b must be paired per-query values of the same length, got {xa.size} and {xb.size}"
        )
    if (xa == xb).all():
        raise EvaluationError(
            f"all {xa.size} paired differences are zero: the two systems score identically on every query"
        )
    return xa, xb


def differences(a: ArrayLike, b: ArrayLike, *, minimum: int = 2) -> NDArray[np.float64]:
    """``a - b`` after the checks of :func:`paired`.

    Examples
    --------
    >>> differences([1.0, 2.0], [0.5, 2.5]).tolist()
    [0.5, -0.5]
    """
    xa, xb = paired(a, b, minimum=minimum)
    return xa - xb


def seed_of(seed: int | None) -> int:
    """Check a seed is a non-negative integer (``None`` is refused: results must be reproducible).

    Examples
    --------
    >>> seed_of(7)
    7
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise UsageError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def resamples_of(n_resamples: int) -> int:
    """Check a number of resamples is a positive integer.

    Examples
    --------
    >>> resamples_of(10)
    10
    """
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer) or n_resamples < 1:
        raise UsageError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    return int(n_resamples)


def diff_matrix(diffs: ArrayLike) -> NDArray[np.float64]:
    """Per-query differences of many pairs as a 2-D float64 array (pairs × queries), checked.

    A 1-D array is one pair. Refuses fewer than 2 queries, non-finite values and a pair whose
    differences are all zero, as :func:`differences` does for one pair.

    Examples
    --------
    >>> diff_matrix([0.5, -0.5]).shape
    (1, 2)
    """
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim == 1:
        d = d[None, :]
    if d.ndim != 2:
        raise UsageError(f"diffs must be a 2-D array (pairs × queries), got shape {d.shape}")
    if d.shape[1] < 2:
        raise EvaluationError(f"diffs has {d.shape[1]} query column(s); a paired test needs at least 2 queries")
    bad = ~np.isfinite(d)
    if bad.any():
        row, col = (int(i[0]) for i in np.nonzero(bad))
        raise EvaluationError(f"diffs has {int(bad.sum())} non-finite value(s) (first at pair {row}, query {col})")
    zero = ~d.any(axis=1)
    if zero.any():
        raise EvaluationError(
            f"{int(zero.sum())} pair(s) have all {d.shape[1]} differences zero (first: pair {int(np.flatnonzero(zero)[0])});"
            " identical systems cannot be tested"
        )
    return d
