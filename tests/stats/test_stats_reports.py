"""What rankflavor.stats reports besides its numbers: each test's name and details, every error's
type and full message, the progress it reports, and that it warns about nothing.

These are outputs too (``compare`` prints the names and details, the CLI prints the messages),
and mutation testing (docs/mutation.md) found each of them unpinned: a renamed detail key, a
message naming the wrong position, a spurious RuntimeWarning all passed the suite. Expected
texts are the documented ones; expected numbers come from SciPy or the definitions.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.stats as ss

from rankflavor.base.progress import Recorder
from rankflavor.errors import EvaluationError, UsageError
from rankflavor.stats import bootstrap as bootstrap_module
from rankflavor.stats import (
    bootstrap_ci,
    bootstrap_ci_many,
    bootstrap_test,
    bootstrap_test_many,
    cohens_d_paired,
    correct,
    paired_t,
    permutation,
    permutation_many,
    randomization,
    sign_test,
    tukey,
    tukey_hsd_randomized,
    wilcoxon,
    wins_losses_ties,
)

A = [0.5, 0.625, 0.75, 1.0, 0.375]
B = [0.25, 0.75, 0.5, 0.5, 0.125]  # d = [0.25, -0.125, 0.25, 0.5, 0.25], exact in binary


def test_names_and_details_of_every_test() -> None:
    d = np.subtract(A, B)
    t = paired_t(A, B)
    assert (t.name, t.n) == ("paired t-test", 5)
    assert t.details == {"df": 4, "mean_difference": pytest.approx(float(np.mean(d)), rel=1e-15)}
    assert t.statistic == pytest.approx(ss.ttest_rel(A, B).statistic, rel=1e-12)

    w = wilcoxon(A, B)
    # |d| ranks 1 (0.125), 3, 3, 3 (0.25 thrice), 5 (0.5): R- = 1, R+ = 14; ties: enumerated
    assert (w.name, w.n, w.statistic) == ("Wilcoxon signed-rank", 5, 1.0)
    assert w.details == {"r_plus": 14.0, "r_minus": 1.0, "zero_method": "wilcox", "zeros": 0, "method": "enumerated"}
    assert w.pvalue == pytest.approx(ss.wilcoxon(A, B).pvalue, rel=1e-12)

    s = sign_test(A, B)
    assert (s.name, s.n, s.statistic) == ("sign test", 5, 4.0)
    assert s.details == {"wins": 4, "losses": 1, "ties": 0}
    assert s.pvalue == pytest.approx(ss.binomtest(4, 5).pvalue, rel=1e-12)

    p = permutation(A, B, n_resamples=100)
    assert (p.name, p.n) == ("paired randomization", 5)
    assert p.statistic == pytest.approx(float(np.mean(d)), rel=1e-15)
    assert p.details == {"seed": 0, "n_resamples": 32, "exact": True, "pvalue_rule": "exact enumeration"}
    p = permutation(A, B, n_resamples=20, seed=4)
    assert p.details == {"seed": 4, "n_resamples": 20, "exact": False, "pvalue_rule": "(b + 1) / (m + 1)"}

    b = bootstrap_test(A, B, n_resamples=50, seed=2)
    assert (b.name, b.n) == ("paired bootstrap", 5)
    assert b.details == {"seed": 2, "n_resamples": 50, "mean_difference": pytest.approx(float(np.mean(d)), rel=1e-15),
                         "pvalue_rule": "(b + 1) / (m + 1)"}


def _msg(text: str) -> str:
    """The whole message; ``«x»`` is a float's repr, ``x`` or NumPy 2's ``np.float64(x)``."""
    pattern = re.escape(text)
    return "^" + re.sub("«([^»]*)»", lambda m: rf"(?:{m.group(1)}|np\.float64\({m.group(1)}\))", pattern) + "$"


ERRORS: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("1-D", lambda: paired_t([[0.1, 0.2]], [[0.1, 0.3]]), UsageError,
     "a must be a 1-D array of per-query values, got shape (1, 2)"),
    ("too few", lambda: paired_t([0.5], [0.4]), EvaluationError,
     "a has 1 value(s); a paired test needs at least 2 queries"),
    ("non-finite a", lambda: wilcoxon([0.5, 0.2, np.inf], [0.1, 0.1, 0.1]), EvaluationError,
     "a has 1 non-finite value(s) (first at position 2: «inf»); per-query values must be finite numbers"),
    ("non-finite b", lambda: sign_test([0.5, 0.2, 0.3], [np.nan, 0.1, np.nan]), EvaluationError,
     "b has 2 non-finite value(s) (first at position 0: «nan»); per-query values must be finite numbers"),
    ("lengths", lambda: cohens_d_paired([0.5, 0.2, 0.3], [0.1, 0.2]), EvaluationError,
     "a and b must be paired per-query values of the same length, got 3 and 2"),
    ("zeros", lambda: permutation([0.5, 0.2], [0.5, 0.2]), EvaluationError,
     "all 2 paired differences are zero: the two systems score identically on every query"),
    ("wlt a", lambda: wins_losses_ties([np.nan], [0.1]), EvaluationError,
     "a has 1 non-finite value(s) (first at position 0: «nan»); per-query values must be finite numbers"),
    ("wlt b", lambda: wins_losses_ties([0.1], []), EvaluationError,
     "b has 0 value(s); a paired test needs at least 1 queries"),
    ("wlt lengths", lambda: wins_losses_ties([0.1, 0.2], [0.3]), EvaluationError,
     "a and b must be paired per-query values of the same length, got 2 and 1"),
    ("tolerance", lambda: wins_losses_ties([0.1], [0.2], tolerance=-0.5), UsageError,
     "tolerance must be a finite non-negative number, got -0.5"),
    ("tolerance inf", lambda: sign_test([0.1, 0.3], [0.2, 0.1], tolerance=math.inf), UsageError,
     "tolerance must be a finite non-negative number, got inf"),
    ("sign ties", lambda: sign_test([0.5, 0.3, 0.2], [0.49, 0.31, 0.2], tolerance=0.05), EvaluationError,
     "all 3 pairs are ties within tolerance 0.05: the sign test has no data"),
    ("zero_method", lambda: wilcoxon(A, B, zero_method="nope"), UsageError,
     "zero_method must be one of wilcox, pratt, zsplit, got 'nope'"),
    ("seed", lambda: permutation(A, B, seed=True), UsageError, "seed must be a non-negative integer, got True"),
    ("seed negative", lambda: bootstrap_ci(A, seed=-1), UsageError, "seed must be a non-negative integer, got -1"),
    ("resamples bool", lambda: bootstrap_test(A, B, n_resamples=True), UsageError,
     "n_resamples must be a positive integer, got True"),
    ("resamples float", lambda: permutation_many([A], n_resamples=10.0), UsageError,
     "n_resamples must be a positive integer, got 10.0"),
    ("resamples zero", lambda: tukey_hsd_randomized(np.c_[A, B], n_resamples=0), UsageError,
     "n_resamples must be a positive integer, got 0"),
    ("ci method", lambda: bootstrap_ci(A, method="student"), UsageError,
     "method must be one of BCa, percentile, basic, got 'student'"),
    ("ci level", lambda: bootstrap_ci_many([A], level=1.0), UsageError, "level must be in (0, 1), got 1.0"),
    ("ci level 0", lambda: bootstrap_ci(A, level=0.0), UsageError, "level must be in (0, 1), got 0.0"),
    ("ci rows", lambda: bootstrap_ci_many(A), UsageError, "rows must be a 2-D array (rows × queries), got shape (5,)"),
    ("ci row", lambda: bootstrap_ci_many([A, [0.1, 0.2, np.nan, 0.3, 0.4]]), EvaluationError,
     "row 1 has 1 non-finite value(s) (first at position 2: «nan»); per-query values must be finite numbers"),
    ("ci x", lambda: bootstrap_ci([0.4]), EvaluationError, "x has 1 value(s); a paired test needs at least 2 queries"),
    ("diffs 3-D", lambda: permutation_many(np.zeros((1, 2, 2))), UsageError,
     "diffs must be a 2-D array (pairs × queries), got shape (1, 2, 2)"),
    ("diffs columns", lambda: bootstrap_test_many([[0.1], [0.2]]), EvaluationError,
     "diffs has 1 query column(s); a paired test needs at least 2 queries"),
    ("diffs non-finite", lambda: permutation_many([[0.1, 0.2, 0.3], [0.1, np.nan, np.inf]]), EvaluationError,
     "diffs has 2 non-finite value(s) (first at pair 1, query 1)"),
    ("diffs zero", lambda: permutation_many([[0.1, 0.2], [0.0, 0.0], [0.3, 0.1], [0.0, 0.0]]), EvaluationError,
     "2 pair(s) have all 2 differences zero (first: pair 1); identical systems cannot be tested"),
    ("correction", lambda: correct([0.1], "sidak"), UsageError,
     "correction must be one of holm, bonferroni, bh, none, got 'sidak'"),
    ("pvalues 2-D", lambda: correct([[0.1]]), UsageError, "pvalues must be a 1-D array, got shape (1, 1)"),
    ("pvalue range", lambda: correct([0.1, 1.5, -0.2]), EvaluationError,
     "p-values must lie in [0, 1]; got «1.5» at position 1"),
    ("pvalue negative", lambda: correct([0.1, -0.5]), EvaluationError,
     "p-values must lie in [0, 1]; got «-0.5» at position 1"),
    ("tukey 1-D", lambda: tukey_hsd_randomized(A), UsageError, "matrix must be 2-D (queries × systems), got shape (5,)"),
    ("tukey small", lambda: tukey_hsd_randomized([[0.1, 0.2, 0.3]]), EvaluationError,
     "Tukey HSD needs at least 2 queries and 2 systems, got 1 × 3"),
    ("tukey one system", lambda: tukey_hsd_randomized([[0.1], [0.2], [0.3]]), EvaluationError,
     "Tukey HSD needs at least 2 queries and 2 systems, got 3 × 1"),
    ("tukey non-finite", lambda: tukey_hsd_randomized([[0.1, 0.2, 0.3], [0.2, 0.1, np.nan], [np.inf, 0.0, 0.0]]),
     EvaluationError, "matrix has 2 non-finite value(s) (first at query 1, system 2)"),
    ("tukey identical", lambda: tukey_hsd_randomized([[0.1, 0.1, 0.1], [0.3, 0.3, 0.3]]), EvaluationError,
     "all 3 systems score identically on every one of the 2 queries"),
]


@pytest.mark.parametrize(("call", "kind", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_every_error_names_what_is_wrong(call: Callable[[], Any], kind: type[Exception], message: str) -> None:
    with pytest.raises(kind, match=_msg(message)):
        call()


def test_bca_undefined_is_the_documented_error_not_a_value_error() -> None:
    """Every resampled mean on one side of the observed one (here 9 zeros and a one, 3 resamples, the
    one drawn at least twice in each): the BCa bias correction is infinite and SciPy's interval NaN.
    rankflavor documents an EvaluationError; it raised numpy's bare ValueError from ``np.quantile``."""
    x = np.array([0.0] * 9 + [1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy warns about the degenerate distribution
        ref = ss.bootstrap((x,), np.mean, n_resamples=3, rng=np.random.default_rng(3)).confidence_interval
    assert math.isnan(ref.low) and math.isnan(ref.high)
    message = ("the BCa interval is undefined for these 10 values (every resampled mean lies on one side of the "
               "observed mean); use method='percentile'")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the error, and no RuntimeWarning before it
        with pytest.raises(EvaluationError, match=_msg(message)):
            bootstrap_ci(x, n_resamples=3, seed=3)
        with pytest.raises(EvaluationError, match=_msg(message)):
            bootstrap_ci_many([x, x[::-1]], n_resamples=3, seed=3)
    ref = ss.bootstrap((x,), np.mean, n_resamples=3, method="percentile", rng=np.random.default_rng(3))
    assert bootstrap_ci(x, n_resamples=3, seed=3, method="percentile") == pytest.approx(
        (ref.confidence_interval.low, ref.confidence_interval.high), rel=1e-12)


def test_nothing_warns() -> None:
    """Constant non-zero differences give t = inf on purpose (documented): no RuntimeWarning with it."""
    a, b = [0.5, 0.75, 1.0], [0.25, 0.5, 0.75]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert paired_t(a, b).statistic == math.inf
        assert cohens_d_paired(a, b) == math.inf
        assert bootstrap_test(a, b, n_resamples=20).statistic == math.inf
        assert bootstrap_test_many([[0.25, 0.25, 0.25], [0.1, -0.1, 0.3]], n_resamples=20)[0] == 1 / 21
        permutation(A, B, n_resamples=10)
        permutation(A, B, n_resamples=100)
        tukey_hsd_randomized(np.c_[A, B, A], n_resamples=50)
        tukey_hsd_randomized(np.c_[A, B], n_resamples=1000)
        wilcoxon([-1.0, -1.0, -2.0], [0.0, 0.0, 0.0])  # ties: the enumerated null


def _starts(rec: Recorder) -> list[tuple[str, float | None]]:
    return [(d, n) for kind, d, n in rec.events if kind == "start"]


def _steps(rec: Recorder) -> list[float | None]:
    return [n for kind, _, n in rec.events if kind == "advance"]


def test_progress_names_each_task_and_counts_every_resample(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small blocks (``BLOCK_ELEMENTS``): several steps, each the size of its block."""
    monkeypatch.setattr(randomization, "BLOCK_ELEMENTS", 12)
    monkeypatch.setattr(bootstrap_module, "BLOCK_ELEMENTS", 12)
    monkeypatch.setattr(tukey, "BLOCK_ELEMENTS", 12)
    d4 = [[0.1, 0.2, -0.3, 0.4]]
    rec = Recorder()
    permutation_many(d4, n_resamples=100, progress=rec)  # 16 sign vectors, 3 per block
    assert _starts(rec) == [("permutation test, 1 pair (exact)", 16)]
    assert _steps(rec) == [3.0] * 5 + [1.0]
    rec = Recorder()
    permutation_many(d4 * 3, n_resamples=7, progress=rec)
    assert _starts(rec) == [("permutation test, 3 pairs", 7)]
    assert _steps(rec) == [3, 3, 1]
    rec = Recorder()
    bootstrap_test_many(d4 * 2, n_resamples=7, progress=rec)
    assert _starts(rec) == [("bootstrap test, 2 pairs", 7)] and _steps(rec) == [3, 3, 1]
    rec = Recorder()
    bootstrap_test_many(d4, n_resamples=4, progress=rec)
    assert _starts(rec) == [("bootstrap test, 1 pair", 4)] and _steps(rec) == [3, 1]
    rec = Recorder()
    bootstrap_ci_many([A, B], n_resamples=5, method="percentile", progress=rec)  # 12 // 5 = 2 rows a block
    assert _starts(rec) == [("bootstrap intervals, 2 rows", 5)] and _steps(rec) == [2, 2, 1]
    rec = Recorder()
    bootstrap_ci_many([A], n_resamples=3, method="percentile", progress=rec)
    assert _starts(rec) == [("bootstrap intervals, 1 row", 3)]
    rec = Recorder()
    tukey_hsd_randomized(np.c_[A, B], n_resamples=5, progress=rec)  # 2**5 > 5: random; 12 // 10 = 1 a block
    assert _starts(rec) == [("Tukey HSD, 2 systems", 5)] and _steps(rec) == [1] * 5
