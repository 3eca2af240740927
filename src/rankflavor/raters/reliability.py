"""Agreement between raters, overall and per query.

* Cohen's kappa (unweighted), only when there are exactly two raters, over the pairs both rated,
  on their contingency table (:func:`_cohen`);
* Fleiss' kappa over the pairs every rater rated (Fleiss' kappa needs the same number of ratings
  per item; :func:`_fleiss`);
* Krippendorff's alpha, ordinal: :func:`krippendorff.alpha` on the raters x pairs matrix, a
  missing rating left missing (alpha needs no complete design), the value domain the grades of
  the declared scale when one is given, else the grades observed.

A statistic that is undefined on the data is NaN, with the reason under ``undefined``: when the
design lacks what it needs (two raters; a pair both, or every, rater rated; a pair rated twice),
"needs ..."; when the design has it but every rating the statistic reads is the same grade, the
chance agreement is perfect and the statistic is 0/0.

The two kappas are computed here with the very operations of statsmodels'
``cohens_kappa``/``fleiss_kappa`` (tests/raters/test_raters.py checks them against statsmodels and
scikit-learn): importing statsmodels, and SciPy with it, took seconds of a command that
otherwise runs in a fraction of one.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankflavor.base.display import Shown
from rankflavor.base.finite import json_number, undefined
from rankflavor.errors import InputError
from rankflavor.raters.ratings import Ratings


@dataclass(frozen=True)
class Stats:
    """Agreement over one set of pairs (all of them, or one query's)."""

    pairs: int
    ratings: int
    raters: int
    complete_pairs: int
    cohen_kappa: float | None
    fleiss_kappa: float
    krippendorff_alpha: float
    #: statistic -> why it is NaN (JSON: null, and this reason under "undefined"; rankflavor.base.finite)
    undefined: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"pairs": self.pairs, "ratings": self.ratings, "raters": self.raters,
                "complete_pairs": self.complete_pairs, "cohen_kappa": json_number(self.cohen_kappa),
                "fleiss_kappa": json_number(self.fleiss_kappa),
                "krippendorff_alpha": json_number(self.krippendorff_alpha), **undefined(self.undefined)}


@dataclass(frozen=True)
class Agreement(Shown):
    """What :func:`agreement` returns: overall statistics, then one :class:`Stats` per query."""

    source: str
    raters: tuple[str, ...]
    overall: Stats
    per_query: dict[str, Stats] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "raters": list(self.raters), "overall": self.overall.to_dict(),
                "per_query": {q: s.to_dict() for q, s in self.per_query.items()}}


def agreement(ratings: Ratings, grades: Any = None) -> Agreement:
    """Inter-rater agreement of ``ratings``, overall and per query.

    Parameters
    ----------
    ratings : Ratings
    grades : sequence of numbers, optional
        The scale's grades (Krippendorff's value domain); default: the grades observed.

    Raises
    ------
    InputError
        A rating's grade is not among ``grades``.

    Examples
    --------
    >>> r = Ratings.from_rows([("q", d, rater, g) for d, ga, gb in [("a", 0, 0), ("b", 1, 1), ("c", 2, 1)]
    ...                        for rater, g in (("ann", ga), ("bob", gb))])
    >>> a = agreement(r)
    >>> round(a.overall.cohen_kappa, 4), a.overall.complete_pairs
    (0.5, 3)
    """
    codes, pair_query, _ = ratings.pairs()
    raters, rater_codes = np.unique(ratings.rater.astype(str), return_inverse=True)
    matrix = np.full((len(raters), len(pair_query)), np.nan)
    matrix[rater_codes, codes] = ratings.grade
    domain = np.unique(np.asarray(grades if grades is not None else ratings.grade, dtype=np.float64))
    off = ~np.isin(ratings.grade, domain)
    if off.any():  # a grade off the scale would be counted as its neighbour on it
        shown = ", ".join(f"{g:g}" for g in domain)
        raise InputError(ratings.source, None, f"grade {float(ratings.grade[off][0]):g} is not on the label scale "
                         f"(grades {shown}); {int(off.sum())} rating(s) off it")
    overall = _stats(matrix, domain)
    per_query = {}
    for q in np.unique(pair_query):
        cols = pair_query == q
        per_query[str(q)] = _stats(matrix[:, cols], domain)
    return Agreement(ratings.source, tuple(str(r) for r in raters), overall, per_query)


def _stats(matrix: np.ndarray, domain: np.ndarray) -> Stats:
    rated = ~np.isnan(matrix)
    active = rated.any(axis=1)
    m = matrix[active]
    complete = m[:, (~np.isnan(m)).all(axis=0)] if len(m) else m
    cohen = _cohen(complete, domain) if len(m) == 2 else None
    fleiss, alpha = _fleiss(complete, domain), _alpha(m, domain)
    twice = ((~np.isnan(m)).sum(axis=0) >= 2).any()  # a pair alpha can pair two values within
    why = {}
    # (statistic, value, whether the design has what it needs, what it needs). With what it needs,
    # a statistic is NaN only when its chance agreement is perfect, that is when every rating it
    # reads is the same grade (Cohen: both margins on one grade; Fleiss: the grades' shares;
    # alpha: no expected disagreement among the pairable values).
    for name, x, designed, needs in (
            ("cohen_kappa", cohen, complete.shape[1] > 0, "a pair both raters rated"),
            ("fleiss_kappa", fleiss, len(m) >= 2 and complete.shape[1] > 0, "two raters and a pair every rater rated"),
            ("krippendorff_alpha", alpha, twice, "two raters and a pair rated twice")):
        if x is None or not math.isnan(x):
            continue
        if designed:
            why[name] = "nan: every rating is the same grade, so the agreement expected by chance is perfect: 0/0"
        else:
            why[name] = f"nan: needs {needs}"
    return Stats(int(rated.any(axis=0).sum()), int(rated.sum()), int(active.sum()), int(complete.shape[1]),
                 cohen, fleiss, alpha, why)


def _cohen(complete: np.ndarray, domain: np.ndarray) -> float:
    """Unweighted Cohen's kappa of two raters' grades on the pairs both rated:
    ``(p_o - p_e) / (1 - p_e)`` on their contingency table, ``p_o`` the share of pairs on the
    diagonal and ``p_e`` the chance agreement of the margins (Cohen 1960). The operations (and so
    the float result) are those of :func:`statsmodels.stats.inter_rater.cohens_kappa` without its
    variance, which is not reported: importing statsmodels (and SciPy) would take seconds."""
    if complete.shape[1] < 1:
        return math.nan
    index = np.searchsorted(domain, complete)
    table = np.zeros((len(domain), len(domain)))
    np.add.at(table, (index[0], index[1]), 1)
    nobs = table.sum()
    agree = np.diag(table).sum()
    freq_row, freq_col = table.sum(1) / nobs, table.sum(0) / nobs
    agree_exp = np.diag(freq_col * freq_row[:, None]).sum()
    with np.errstate(invalid="ignore"):  # 0/0 on one grade only (nothing else divides by 0): NaN, as reported
        return float((agree / nobs - agree_exp) / (1 - agree_exp))


def _fleiss(complete: np.ndarray, domain: np.ndarray) -> float:
    """Fleiss' kappa (Fleiss 1971) of the pairs every rater rated: per pair the share of agreeing
    rater pairs, ``P_i = (sum_j n_ij^2 - n) / (n (n - 1))``, against the chance agreement
    ``sum_j p_j^2`` of the grades' shares; the operations of
    :func:`statsmodels.stats.inter_rater.fleiss_kappa` (``method="fleiss"``) on the table
    :func:`~statsmodels.stats.inter_rater.aggregate_raters` builds (pairs x grades, counts)."""
    if complete.shape[0] < 2 or complete.shape[1] < 1:
        return math.nan
    index = np.searchsorted(domain, complete).T  # subjects x raters, category codes
    table = np.zeros((index.shape[0], len(domain)))
    np.add.at(table, (np.repeat(np.arange(index.shape[0]), index.shape[1]), index.ravel()), 1)
    n_total = table.sum()
    n_rat = table.sum(1).max()
    p_cat = table.sum(0) / n_total
    p_rat = ((table * table).sum(1) - n_rat) / (n_rat * (n_rat - 1.0))
    p_mean_exp = (p_cat * p_cat).sum()
    with np.errstate(invalid="ignore"):  # 0/0 on one grade only (nothing else divides by 0)
        return float((p_rat.mean() - p_mean_exp) / (1 - p_mean_exp))


def _alpha(m: np.ndarray, domain: np.ndarray) -> float:
    import krippendorff

    # alpha needs two values in the domain and at least one pair rated twice (so two raters: a
    # rater rates a pair once).
    if len(domain) < 2 or not ((~np.isnan(m)).sum(axis=0) >= 2).any():
        return math.nan
    try:
        with warnings.catch_warnings():  # 0/0 when the expected disagreement is nil: NaN, reported as such
            warnings.simplefilter("ignore", RuntimeWarning)
            return float(krippendorff.alpha(reliability_data=m, value_domain=domain, level_of_measurement="ordinal"))
    except (ValueError, ZeroDivisionError):
        return math.nan
