"""Multiple-comparison corrections of p-values: Holm, Bonferroni, Benjamini–Hochberg."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankflavor.errors import EvaluationError, UsageError

METHODS = ("holm", "bonferroni", "bh", "none")


def correct(pvalues: ArrayLike, method: str = "holm") -> NDArray[np.float64]:
    """Adjust p-values for multiple comparisons.

    With ``m`` p-values sorted ascending, ``p_(1) <= ... <= p_(m)``:

    - ``"bonferroni"``: ``min(1, m p_i)`` (controls the family-wise error rate);
    - ``"holm"`` (Holm–Bonferroni, step-down): ``max_{j <= i} min(1, (m - j + 1) p_(j))``
      (controls the family-wise error rate, uniformly more powerful than Bonferroni);
    - ``"bh"`` (Benjamini–Hochberg, step-up): ``min_{j >= i} min(1, m p_(j) / j)`` (controls
      the false discovery rate under independence or positive dependence);
    - ``"none"``: the p-values unchanged.

    These are the adjusted p-values of ``statsmodels.stats.multitest.multipletests`` with
    ``method="bonferroni"``, ``"holm"`` and ``"fdr_bh"``. Reject where an adjusted value is at
    most alpha.

    Parameters
    ----------
    pvalues : array_like
        1-D p-values in ``[0, 1]`` (may be empty).
    method : {"holm", "bonferroni", "bh", "none"}
        The correction.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, in the input's order.

    Raises
    ------
    EvaluationError
        A p-value that is NaN or outside ``[0, 1]``.
    UsageError
        An unknown method.

    References
    ----------
    .. [1] Holm (1979). "A simple sequentially rejective multiple test procedure".
       *Scandinavian Journal of Statistics* 6(2): 65-70.
    .. [2] Benjamini & Hochberg (1995). "Controlling the false discovery rate: a practical and
       powerful approach to multiple testing". *JRSS B* 57(1): 289-300.

    Examples
    --------
    >>> correct([0.01, 0.04, 0.03], "holm").round(4).tolist()
    [0.03, 0.06, 0.06]
    >>> correct([0.01, 0.04, 0.03], "bh").round(4).tolist()
    [0.03, 0.04, 0.04]
    """
    if method not in METHODS:
        raise UsageError(f"correction must be one of {', '.join(METHODS)}, got {method!r}")
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise UsageError(f"pvalues must be a 1-D array, got shape {p.shape}")
    bad = ~((p >= 0.0) & (p <= 1.0))
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise EvaluationError(f"p-values must lie in [0, 1]; got {p[first]!r} at position {first}")
    m = p.size
    if m == 0 or method == "none":
        return p.copy()
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)
    order = np.argsort(p, kind="stable")
    ps = p[order]
    if method == "holm":
        adjusted = np.maximum.accumulate(ps * (m - np.arange(m)))
    else:
        # p / (i / m), not p * m / i: the same rounding as statsmodels, down to subnormal p-values
        adjusted = np.minimum.accumulate((ps / (np.arange(1, m + 1) / float(m)))[::-1])[::-1]
    out = np.empty(m, dtype=np.float64)
    out[order] = np.minimum(adjusted, 1.0)
    return out
