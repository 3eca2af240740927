"""Statistics of paired comparisons: significance tests, corrections, intervals, effect sizes.

Every function takes per-query values paired by query (same queries, same order: the caller
aligns them by query id) and every p-value is two-sided. Resampling functions take an explicit
``seed`` for ``np.random.default_rng``: the same seed gives the same output. Degenerate input
(fewer than 2 queries, non-finite values, all differences zero) raises
:class:`rankflavor.errors.EvaluationError`.

=========================  ==================================================================
``paired_t``               Student's paired t-test (``scipy.stats.ttest_rel``)
``wilcoxon``               Wilcoxon signed-rank (``scipy.stats.wilcoxon``)
``sign_test``              sign test (``scipy.stats.binomtest`` on wins among non-ties)
``permutation``            paired randomization test, sign flips, Smyth–Phipson p-value
``permutation_many``       the same for many pairs sharing one batched sign matrix
``bootstrap_test``         paired bootstrap test, studentized, shifted to the null
``bootstrap_test_many``    the same for many pairs sharing the resampled queries
``bootstrap_ci``           bootstrap CI of a mean (``scipy.stats.bootstrap``; BCa by default)
``bootstrap_ci_many``      the same for many rows sharing the resampled queries
``cohens_d_paired``        effect size ``d_z = mean(d) / std(d, ddof=1)``
``correct``                Holm, Bonferroni, Benjamini–Hochberg (statsmodels ``multipletests``)
``tukey_hsd_randomized``   all-pairs randomized Tukey HSD (Carterette 2012)
``wins_losses_ties``       per-query wins, losses and ties
=========================  ==================================================================
"""

from __future__ import annotations

from rankflavor.stats.bootstrap import bootstrap_ci, bootstrap_ci_many, bootstrap_test, bootstrap_test_many
from rankflavor.stats.classical import cohens_d_paired, paired_t, sign_test, wilcoxon, wins_losses_ties
from rankflavor.stats.multiple import correct
from rankflavor.stats.randomization import permutation, permutation_many
from rankflavor.stats.result import TestResult
from rankflavor.stats.tukey import tukey_hsd_randomized

__all__ = [
    "TestResult",
    "bootstrap_ci",
    "bootstrap_ci_many",
    "bootstrap_test",
    "bootstrap_test_many",
    "cohens_d_paired",
    "correct",
    "paired_t",
    "permutation",
    "permutation_many",
    "sign_test",
    "tukey_hsd_randomized",
    "wilcoxon",
    "wins_losses_ties",
]
