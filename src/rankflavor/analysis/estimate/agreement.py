"""How far to trust a judge: its grades against human grades, and the metric computed both ways.

On the (query, document) pairs both judgments grade (:func:`grade_agreement`):

* Cohen's kappa, unweighted (:func:`rankflavor.raters.agreement`, which also gives the ordinal
  Krippendorff's alpha), and weighted, linear and quadratic: ``1 - sum(w O) / sum(w E)`` on the
  confusion matrix ``O`` and the chance matrix ``E`` of its margins, ``w_ij = |i - j|`` or
  ``(i - j)^2`` on the grades' positions in the category list (Cohen 1968; scikit-learn's
  ``cohen_kappa_score(weights=...)`` with ``labels`` the same list);
* Krippendorff's alpha, ordinal and interval (``krippendorff.alpha``);
* the confusion matrix (rows the human grade, columns the judge's);
* the mean grade bias ``judge - human`` with a (1 - alpha) interval clustered by query (the pairs
  of one query are not independent): the CR1 standard error
  ``sqrt(G / (G - 1) * sum_q (sum_{i in q} e_i)^2) / n`` and Student's t with ``G - 1`` degrees of
  freedom, the interval of statsmodels' ``OLS(d, 1).fit(cov_type="cluster", use_t=True)``.

The categories are the grades either side gave, with a label scale's grades added when one is
given. With runs and a measure (:func:`rankflavor.analysis.estimate.judge_agreement`), the metric is
computed under each judgments on the queries both give a value, and their paired difference
(judge - human) gets a bootstrap interval (:func:`rankflavor.stats.bootstrap_ci`).

References
----------
.. [1] J. Cohen. "Weighted kappa: nominal scale agreement with provision for scaled disagreement
   or partial credit". Psychological Bulletin 70(4): 213-220, 1968.
.. [2] K. Krippendorff. "Computing Krippendorff's alpha-reliability". 2011.
.. [3] A. C. Cameron, D. L. Miller. "A practitioner's guide to cluster-robust inference".
   Journal of Human Resources 50(2): 317-372, 2015.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankflavor.base.finite import json_number, undefined
from rankflavor.io.tables import Qrels

WEIGHTS = ("none", "linear", "quadratic")


@dataclass(frozen=True)
class GradeAgreement:
    """The judge's grades against the human grades, on the pairs both graded.

    Attributes
    ----------
    grades : the categories (ascending): rows and columns of ``confusion``.
    pairs : pairs both graded; only_human, only_judge : pairs one side graded.
    queries : queries with a pair both graded; queries_only_human, queries_only_judge : queries
        only one side judges.
    kappa, kappa_linear, kappa_quadratic : Cohen's kappa, unweighted and weighted.
    alpha_ordinal, alpha_interval : Krippendorff's alpha.
    confusion : counts, rows the human grade, columns the judge's.
    bias, bias_low, bias_high, bias_se : mean of judge - human over the pairs, its query-clustered
        interval and standard error.
    level : the interval's confidence level.
    undefined : field -> why it is not a finite number.
    """

    grades: tuple[float, ...]
    pairs: int
    only_human: int
    only_judge: int
    queries: int
    queries_only_human: int
    queries_only_judge: int
    kappa: float
    kappa_linear: float
    kappa_quadratic: float
    alpha_ordinal: float
    alpha_interval: float
    confusion: tuple[tuple[int, ...], ...]
    bias: float
    bias_low: float
    bias_high: float
    bias_se: float
    level: float
    undefined: dict[str, str] = field(default_factory=dict)

    def statistics(self) -> dict[str, float]:
        """The agreement statistics by name, in the order every format shows them."""
        return {"kappa": self.kappa, "kappa_linear": self.kappa_linear, "kappa_quadratic": self.kappa_quadratic,
                "alpha_ordinal": self.alpha_ordinal, "alpha_interval": self.alpha_interval, "bias": self.bias,
                "bias_low": self.bias_low, "bias_high": self.bias_high, "bias_se": self.bias_se}

    def to_dict(self) -> dict[str, Any]:
        return {"grades": list(self.grades), "pairs": self.pairs, "only_human": self.only_human,
                "only_judge": self.only_judge, "queries": self.queries, "queries_only_human": self.queries_only_human,
                "queries_only_judge": self.queries_only_judge,
                **{k: json_number(v) for k, v in self.statistics().items()}, "level": self.level,
                "confusion": [list(r) for r in self.confusion], **undefined(self.undefined)}


def pair_grades(human: Qrels, judge: Qrels) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, int]]:
    """The pairs both judgments grade: their query ids, human grades and judge grades (in
    (query, doc) order), and the counts of pairs and queries one side alone judges.

    Raises
    ------
    InputError
        A (query, doc) pair graded twice in one judgments, naming its file and lines.
    """
    from rankflavor.align.duplicates import resolve_duplicates

    keys = [np.asarray([f"{q}\x00{d}" for q, d in zip(t.query.to_pylist(), t.doc.to_pylist(), strict=True)],
                       dtype=object) for t in (human, judge)]
    _, codes = np.unique(np.concatenate(keys), return_inverse=True)
    codes_h, codes_j = codes[:len(keys[0])], codes[len(keys[0]):]
    for t, c in ((human, codes_h), (judge, codes_j)):
        resolve_duplicates(c, t.grade, "error", t, scope=" in these judgments", tally="in this file",
                           fix="agreement compares one grade per pair on each side: keep one of them")
    both, hi, ji = np.intersect1d(codes_h, codes_j, assume_unique=True, return_indices=True)
    q_of = np.asarray([k.split("\x00", 1)[0] for k in keys[0][hi]], dtype=object).astype(str)
    qh = set(human.query.to_pylist()) if len(keys[0]) else set()
    qj = set(judge.query.to_pylist()) if len(keys[1]) else set()
    counts = {"only_human": len(codes_h) - len(both), "only_judge": len(codes_j) - len(both),
              "queries_only_human": len(qh - qj), "queries_only_judge": len(qj - qh)}
    return q_of, human.grade[hi].astype(np.float64), judge.grade[ji].astype(np.float64), counts


def weighted_kappa(table: np.ndarray, weights: str = "linear") -> float:
    """Cohen's kappa of a confusion matrix, unweighted or weighted on the categories' positions.

    Examples
    --------
    >>> t = np.array([[2, 1, 0], [0, 2, 1], [0, 0, 2]])
    >>> round(weighted_kappa(t, "none"), 4), round(weighted_kappa(t, "linear"), 4)
    (0.6279, 0.7143)

    Raises
    ------
    UsageError
        ``weights`` is not one of :data:`WEIGHTS`, or ``table`` is not a square matrix.
    """
    from rankflavor.errors import UsageError

    if weights not in WEIGHTS:
        raise UsageError(f"weights: expected one of {', '.join(WEIGHTS)}, received {weights!r}")
    if table.ndim != 2 or table.shape[0] != table.shape[1]:
        raise UsageError(f"weighted_kappa: expected a square confusion matrix, received one of shape {table.shape}")
    k = table.shape[0]
    i, j = np.indices((k, k))
    w = {"none": (i != j).astype(np.float64), "linear": np.abs(i - j).astype(np.float64),
         "quadratic": ((i - j) ** 2).astype(np.float64)}[weights]
    n = table.sum()
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / n if n else np.zeros_like(table, dtype=np.float64)
    denominator = float((w * expected).sum())
    if denominator == 0:
        return math.nan
    return 1.0 - float((w * table).sum()) / denominator


def _alpha_interval(human: np.ndarray, judge: np.ndarray) -> float:
    """Krippendorff's interval alpha of the two rows of grades; NaN with fewer than two grades.

    Interval alpha is a ratio of mean squared differences, so it is the same for the grades
    divided by the largest of their sizes: those cannot overflow when squared (krippendorff
    squares the grades as given: ``1e200`` would give ``inf / inf``), and two different grades
    stay different (the largest becomes ``±1`` exactly, any smaller one less than 1 in size), so
    the expected disagreement is never 0.
    """
    import krippendorff

    data = np.vstack([human, judge])
    if len(np.unique(data)) < 2:
        return math.nan
    return float(krippendorff.alpha(reliability_data=data / np.abs(data).max(), level_of_measurement="interval"))


def clustered_mean(d: np.ndarray, groups: np.ndarray, alpha: float) -> tuple[float, float, float, float]:
    """The mean of ``d`` with its (1 - alpha) interval clustered by ``groups`` (CR1 standard error,
    Student's t with ``G - 1`` degrees of freedom): ``(mean, low, high, se)``, NaN where undefined.

    Examples
    --------
    >>> m, lo, hi, se = clustered_mean(np.array([1.0, 1.0, 0.0, -1.0]), np.array(["a", "a", "b", "b"]), 0.05)
    >>> round(m, 4), round(se, 4)
    (0.25, 0.75)
    """
    from scipy.special import stdtrit

    n = d.size
    if n == 0:
        return math.nan, math.nan, math.nan, math.nan
    mean = float(d.mean())
    _, g = np.unique(groups, return_inverse=True)
    big_g = int(g.max()) + 1
    if big_g < 2:
        return mean, math.nan, math.nan, math.nan
    sums = np.bincount(g, weights=d - mean, minlength=big_g)
    se = float(np.sqrt(big_g / (big_g - 1) * float((sums ** 2).sum())) / n)
    t = float(stdtrit(big_g - 1, 1 - alpha / 2))
    return mean, mean - t * se, mean + t * se, se


def grade_agreement(human: Qrels, judge: Qrels, grades: Any = None, alpha: float = 0.05) -> GradeAgreement:
    """Agreement of ``judge`` with ``human`` on the pairs both graded (see the module doc).

    Parameters
    ----------
    human, judge : Qrels
    grades : sequence of numbers, optional
        A label scale's grades, added to the categories.
    alpha : the bias interval's error level.
    """
    from rankflavor.raters import Ratings, agreement

    queries, h, j, counts = pair_grades(human, judge)
    domain = np.unique(np.concatenate([h, j, np.asarray(grades if grades is not None else [], dtype=np.float64)]))
    table = np.zeros((len(domain), len(domain)), dtype=np.int64)
    np.add.at(table, (np.searchsorted(domain, h), np.searchsorted(domain, j)), 1)
    rows = [(q, str(i), who, g) for i, (q, gh, gj) in enumerate(zip(queries, h, j, strict=True))
            for who, g in (("human", gh), ("judge", gj))]
    raters = agreement(Ratings.from_rows(rows, "pairs both graded"), domain).overall
    kappa = math.nan if raters.cohen_kappa is None else raters.cohen_kappa
    bias, low, high, se = clustered_mean(j - h, queries, alpha)
    out = GradeAgreement(
        tuple(float(g) for g in domain), len(h), counts["only_human"], counts["only_judge"], len(set(queries)),
        counts["queries_only_human"], counts["queries_only_judge"], kappa, weighted_kappa(table, "linear"),
        weighted_kappa(table, "quadratic"), raters.krippendorff_alpha, _alpha_interval(h, j),
        tuple(tuple(int(x) for x in r) for r in table), bias, low, high, se, 1.0 - alpha)
    return GradeAgreement(**{**out.__dict__, "undefined": _reasons(out)})


def _reasons(a: GradeAgreement) -> dict[str, str]:
    why = {}
    for name, x in a.statistics().items():
        if not math.isnan(x):
            continue
        if a.pairs == 0:
            why[name] = "nan: no (query, doc) pair is graded by both judgments"
        elif name.startswith("bias"):
            why[name] = "nan: the pairs both graded are of one query; a query-clustered interval needs two"
        else:  # with a pair, a kappa or an alpha is 0/0 only when both sides gave one grade
            why[name] = "nan: both sides gave one and the same grade, so chance agreement is perfect: 0/0"
    return why


__all__ = ["WEIGHTS", "GradeAgreement", "clustered_mean", "grade_agreement", "pair_grades", "weighted_kappa"]
