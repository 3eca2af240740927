"""Means with (1 - alpha) intervals from per-query values: classical, and prediction-powered.

Three estimators of a mean, each a :class:`Interval`:

* :func:`classical_mean` - the mean of the human-labelled values ``Y`` with the central-limit
  interval ``mean +- z * std(Y) / sqrt(n)`` (``std`` with ``ddof=0``: the interval of
  ``ppi_py.classical_mean_ci``, so its width is comparable with the PPI interval's);
* the same function on the LLM values of every query: an interval for the LLM-judged metric,
  which is not the human-judged one;
* :func:`ppi_mean` - prediction-powered inference (PPI, [1]_) with PPI++'s power tuning [2]_:
  ``theta = lam * mean(Yhat_u) + mean(Y - lam * Yhat)`` and the interval
  ``theta +- z * sqrt(lam^2 var(Yhat_u) / N + var(Y - lam * Yhat) / n)`` (population variances),
  ``lam = 1`` for plain PPI, else the variance-minimising
  ``lam = cov(Y, Yhat) / ((1 + n / N) var(Yhat, Yhat_u))`` clipped to [0, 1] (the covariance with
  ``ddof=0`` over the labelled queries, the variance with ``ddof=1`` over every LLM value): the
  choice ``ppi_py.ppi_mean_ci(..., lam=None)`` makes.

Degenerate inputs have one meaning each, with the reason stated (:data:`REASONS`): no labelled
value, no point estimate; one labelled value, a point but no interval (one value shows no spread);
no unlabelled value, PPI is the classical estimate (``lam = 0``: the LLM labels add nothing); every
LLM value the same (tested as such: the variance of equal floats can round to 1e-36 rather than 0),
or their variance 0 in floating point, the tuned ``lam`` (0/0) is 0. An interval of zero width (a
sample without spread) is returned as such, with a note.

References
----------
.. [1] A. N. Angelopoulos, S. Bates, C. Fannjiang, M. I. Jordan, T. Zrnic. "Prediction-powered
   inference". Science 382(6671): 669-674, 2023.
.. [2] A. N. Angelopoulos, J. C. Duchi, T. Zrnic. "PPI++: Efficient prediction-powered
   inference". arXiv:2311.01453, 2023.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rankflavor.base.finite import json_number, undefined
from rankflavor.errors import UsageError

ALTERNATIVES = ("two-sided", "larger", "smaller")

#: Why a number is missing or degenerate; the key is what the result's ``undefined``/notes say.
REASONS = {
    "no_labelled": "nan: no labelled query (no query has a value under both the human judgments and the run)",
    "one_labelled": "nan: one labelled query shows no spread, so there is no interval",
    "no_values": "nan: no query has a value",
    "one_value": "nan: one value shows no spread, so there is no interval",
    "no_unlabelled": "no query only the LLM judgments judge: the LLM labels add nothing, so PPI is the "
                     "human-only estimate (lambda = 0)",
    "constant_llm": "the LLM values show no spread, so the tuned lambda is 0/0: taken as 0 (the LLM values carry "
                    "no information), which makes PPI the human-only estimate",
    "zero_width": "every value it reads is the same: the interval has zero width (a central-limit interval "
                  "cannot see spread its sample did not show)",
    "larger": "inf: a one-sided interval (alternative=larger) has no upper bound",
    "smaller": "-inf: a one-sided interval (alternative=smaller) has no lower bound",
}


@dataclass(frozen=True)
class Interval:
    """A point estimate of a mean with its (1 - alpha) interval.

    Attributes
    ----------
    point, low, high : float
        The estimate and the interval's bounds (NaN where undefined; +-inf for the open side of a
        one-sided interval).
    se : float
        The standard error the interval is built from (NaN where undefined).
    n : int
        Labelled values read (human-only, PPI) or every value read (LLM-only).
    n_unlabelled : int
        Unlabelled values read (PPI), else 0.
    lam : float or None
        PPI's lambda (None for the classical estimators).
    undefined : dict
        Field -> why it is not a finite number (:mod:`rankflavor.base.finite`).
    notes : tuple of str
        What else a reader must know (a zero-width interval, lambda taken as 0).
    """

    point: float
    low: float
    high: float
    se: float
    n: int
    n_unlabelled: int = 0
    lam: float | None = None
    undefined: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def width(self) -> float:
        return self.high - self.low

    def to_dict(self) -> dict[str, Any]:
        return {"point": json_number(self.point), "low": json_number(self.low), "high": json_number(self.high),
                "se": json_number(self.se), "n": self.n, "n_unlabelled": self.n_unlabelled,
                "lambda": json_number(self.lam), "notes": list(self.notes), **undefined(self.undefined)}


def check_alpha(alpha: float, alternative: str) -> None:
    """Refuse an ``alpha`` outside (0, 1) or an unknown ``alternative``."""
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise UsageError(f"alpha: expected a number in (0, 1), received {alpha!r}")
    if alternative not in ALTERNATIVES:
        raise UsageError(f"alternative: expected one of {', '.join(ALTERNATIVES)}, received {alternative!r}")


def z_bounds(point: float, se: float, alpha: float, alternative: str = "two-sided") -> tuple[float, float]:
    """The normal interval of ``point`` with standard error ``se`` (statsmodels' ``_zconfint_generic``
    rule, which ``ppi_py`` uses): two-sided ``point +- z_{1-alpha/2} se``; ``larger``
    ``[point - z_{1-alpha} se, inf)``; ``smaller`` ``(-inf, point + z_{1-alpha} se]``.

    Examples
    --------
    >>> [round(b, 4) for b in z_bounds(0.5, 0.1, 0.1)]
    [0.3355, 0.6645]
    """
    from scipy.special import ndtri

    if alternative == "two-sided":
        z = float(ndtri(1 - alpha / 2.0))
        return point - z * se, point + z * se
    z = float(ndtri(1 - alpha))
    return (point - z * se, math.inf) if alternative == "larger" else (-math.inf, point + z * se)


def _vector(x: ArrayLike, name: str) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as e:  # text, a ragged list, a complex number: not a traceback
        raise UsageError(f"{name}: every value must be a finite number ({e})") from None
    if not np.isfinite(a).all():
        raise UsageError(f"{name}: every value must be a finite number")
    return a


def _open_side(alternative: str) -> dict[str, str]:
    if alternative == "larger":
        return {"high": REASONS["larger"]}
    if alternative == "smaller":
        return {"low": REASONS["smaller"]}
    return {}


def classical_mean(y: ArrayLike, alpha: float = 0.1, alternative: str = "two-sided", *,
                   labelled: bool = True) -> Interval:
    """The mean of ``y`` with its central-limit (1 - alpha) interval (``ppi_py.classical_mean_ci``).

    Parameters
    ----------
    y : array_like
        Per-query values.
    alpha : float
        Error level: the interval targets coverage ``1 - alpha``.
    alternative : {"two-sided", "larger", "smaller"}
    labelled : bool
        Whether ``y`` are labelled values (what a reason for no estimate says).

    Examples
    --------
    >>> r = classical_mean([0.2, 0.4, 0.6, 0.8], alpha=0.1)
    >>> round(r.point, 4), round(r.low, 4), round(r.high, 4)
    (0.5, 0.3161, 0.6839)
    """
    check_alpha(alpha, alternative)
    v = _vector(y, "y")
    n = v.size
    if n == 0:
        why = REASONS["no_labelled" if labelled else "no_values"]
        return Interval(math.nan, math.nan, math.nan, math.nan, 0,
                        undefined={k: why for k in ("point", "low", "high", "se")})
    point = float(v.mean())
    if n == 1:
        why = REASONS["one_labelled" if labelled else "one_value"]
        return Interval(point, math.nan, math.nan, math.nan, 1, undefined={k: why for k in ("low", "high", "se")})
    se = float(v.std() / np.sqrt(n))
    low, high = z_bounds(point, se, alpha, alternative)
    notes = (REASONS["zero_width"],) if se == 0 else ()
    return Interval(point, low, high, se, n, undefined=_open_side(alternative), notes=notes)


def tuned_lambda(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> tuple[float, tuple[str, ...]]:
    """PPI++'s power-tuning lambda for a mean [2]_ (``ppi_py``'s ``_calc_lam_glm`` with an identity
    Hessian, ``clip=True``): ``cov(Y, Yhat) / ((1 + n / N) var(Yhat, Yhat_u))`` clipped to [0, 1],
    and the notes that explain a lambda taken as 0.

    Examples
    --------
    >>> lam, _ = tuned_lambda(np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.array([0.0, 1.0]))
    >>> round(lam, 4)
    0.375
    """
    n, big_n = y.size, yhat_u.size
    if big_n == 0:
        return 0.0, (REASONS["no_unlabelled"],)
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    llm = np.concatenate([yhat, yhat_u])
    var = float(np.var(llm, ddof=1))
    if llm.min() == llm.max() or var == 0:  # equal values' variance can round to 1e-36, not 0
        return 0.0, (REASONS["constant_llm"],)
    return float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0)), ()


def ppi_mean(y: ArrayLike, yhat: ArrayLike, yhat_unlabelled: ArrayLike, alpha: float = 0.1,
             lam: float | None = None, alternative: str = "two-sided") -> Interval:
    """Prediction-powered estimate of a mean with its (1 - alpha) interval ([1]_, [2]_).

    Parameters
    ----------
    y : array_like
        The human-judged values of the labelled queries.
    yhat : array_like
        The LLM-judged values of the same queries, in the same order.
    yhat_unlabelled : array_like
        The LLM-judged values of the queries no human judged.
    alpha : float
        Error level.
    lam : float in [0, 1] or None
        None: PPI++'s power tuning (:func:`tuned_lambda`); 1: plain PPI; 0: the classical estimate.
    alternative : {"two-sided", "larger", "smaller"}

    Returns
    -------
    Interval
        Equal to ``ppi_py.ppi_mean_pointestimate`` and ``ppi_py.ppi_mean_ci`` with the same
        ``lam`` (None included) and ``alternative`` on non-degenerate inputs (tests/analysis/estimate/test_estimate_ppi.py).

    Examples
    --------
    Two labelled queries, where the judge overrates by 0.1, and two it alone judged:

    >>> r = ppi_mean([0.5, 0.7], [0.6, 0.8], [0.3, 0.9], lam=1.0)
    >>> round(r.point, 4)
    0.5
    """
    check_alpha(alpha, alternative)
    if lam is not None and not (isinstance(lam, (int, float)) and 0 <= lam <= 1):
        raise UsageError(f"lambda: expected None (tuned) or a number in [0, 1], received {lam!r}")
    y, yhat, yhat_u = _vector(y, "y"), _vector(yhat, "yhat"), _vector(yhat_unlabelled, "yhat_unlabelled")
    if y.size != yhat.size:
        raise UsageError(f"y and yhat pair the same queries: received {y.size} and {yhat.size} values")
    n, big_n = y.size, yhat_u.size
    if n == 0:
        why = REASONS["no_labelled"]
        return Interval(math.nan, math.nan, math.nan, math.nan, 0, big_n, None,
                        {k: why for k in ("point", "low", "high", "se", "lambda")})
    notes: tuple[str, ...] = ()
    if big_n == 0:  # the classical estimate itself (lambda = 0), not a float-rounded copy of it
        h = classical_mean(y, alpha, alternative)
        return Interval(h.point, h.low, h.high, h.se, n, 0, 0.0, h.undefined, (REASONS["no_unlabelled"], *h.notes))
    if lam is None:
        lam_used, notes = tuned_lambda(y, yhat, yhat_u)
    else:
        lam_used = float(lam)
    imputed = lam_used * float(yhat_u.mean())
    rectifier = y - lam_used * yhat
    point = imputed + float(rectifier.mean())
    if n == 1:
        why = REASONS["one_labelled"]
        return Interval(point, math.nan, math.nan, math.nan, 1, big_n, lam_used,
                        {k: why for k in ("low", "high", "se")}, notes)
    imputed_var = (lam_used * yhat_u).var() / big_n
    se = float(np.sqrt(imputed_var + rectifier.var() / n))
    low, high = z_bounds(point, se, alpha, alternative)
    if se == 0:
        notes += (REASONS["zero_width"],)
    return Interval(point, low, high, se, n, big_n, lam_used, _open_side(alternative), notes)


def effective_n(human: Interval, ppi: Interval) -> float:
    """The labelled queries the classical interval would need for PPI's width:
    ``n * (se_human / se_ppi)^2`` (NaN when either standard error is undefined or 0)."""
    if not (math.isfinite(human.se) and math.isfinite(ppi.se)) or ppi.se == 0 or human.se == 0:
        return math.nan
    return human.n * (human.se / ppi.se) ** 2


__all__ = ["ALTERNATIVES", "REASONS", "Interval", "classical_mean", "effective_n", "ppi_mean", "tuned_lambda",
           "z_bounds"]
