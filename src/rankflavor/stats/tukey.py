"""Randomized Tukey HSD over all pairs of systems (Carterette 2012)."""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankflavor.base.progress import Progress, task
from rankflavor.errors import EvaluationError, UsageError
from rankflavor.stats.randomization import BLOCK_ELEMENTS, SLACK_ULPS
from rankflavor.stats.result import resamples_of, seed_of


def _matrix(matrix: ArrayLike) -> NDArray[np.float64]:
    x = np.asarray(matrix, dtype=np.float64)
    if x.ndim != 2:
        raise UsageError(f"matrix must be 2-D (queries × systems), got shape {x.shape}")
    if x.shape[0] < 2 or x.shape[1] < 2:
        raise EvaluationError(f"Tukey HSD needs at least 2 queries and 2 systems, got {x.shape[0]} × {x.shape[1]}")
    bad = ~np.isfinite(x)
    if bad.any():
        q, s = (int(i[0]) for i in np.nonzero(bad))
        raise EvaluationError(f"matrix has {int(bad.sum())} non-finite value(s) (first at query {q}, system {s})")
    if (x == x[:, :1]).all():
        raise EvaluationError(f"all {x.shape[1]} systems score identically on every one of the {x.shape[0]} queries")
    return x


def _ranges(x: NDArray[np.float64], order: NDArray[np.intp]) -> NDArray[np.float64]:
    """Max minus min of the system means, for each arrangement ``order`` (resamples × Q × S)."""
    means = np.take_along_axis(np.broadcast_to(x, order.shape), order, axis=2).mean(axis=1)
    return np.asarray(means.max(axis=1) - means.min(axis=1), dtype=np.float64)


def _exact(x: NDArray[np.float64], threshold: NDArray[np.float64]) -> NDArray[np.float64]:
    """Exact p-values: every arrangement of every row, enumerated in blocks (arrangement ``a`` has
    digit ``j`` of ``a`` in base ``S!`` as the permutation of query ``j``)."""
    q, s = x.shape
    perms = np.array(list(itertools.permutations(range(s))), dtype=np.intp)
    total = len(perms) ** q
    place = len(perms) ** np.arange(q, dtype=np.int64)
    rows = max(1, BLOCK_ELEMENTS // (q * s))
    ranges = []
    for start in range(0, total, rows):
        codes = np.arange(start, min(total, start + rows), dtype=np.int64)
        ranges.append(_ranges(x, perms[(codes[:, None] // place) % len(perms)]))
    flat = np.sort(np.concatenate(ranges))
    counted = flat.size - np.searchsorted(flat, threshold, side="left")
    return np.asarray(counted / flat.size, dtype=np.float64)


def tukey_hsd_randomized(matrix: ArrayLike, *, n_resamples: int = 10_000, seed: int = 0,
                         progress: Progress | None = None) -> NDArray[np.float64]:
    """All-pairs p-values of the randomized Tukey HSD test.

    Under the null hypothesis that all systems are exchangeable on each query, every query's
    row of scores may be permuted across the systems. Each resample permutes every row
    independently and records the range ``max mean - min mean`` of the system means; the
    p-value of pair ``(i, j)`` is the share of resamples whose range is at least the observed
    ``|mean_i - mean_j|``. Comparing every pair with the distribution of the *largest*
    difference controls the family-wise error rate over all pairs.

    When the ``(S!)**Q`` arrangements number at most ``n_resamples`` they are all enumerated
    and the p-value is that exact share; otherwise the p-value is ``(b + 1) / (n_resamples + 1)``
    (Smyth & Phipson 2010), ``b`` the number of random resamples counted.

    Parameters
    ----------
    matrix : array_like
        2-D per-query scores, queries × systems.
    n_resamples : int
        Number of random resamples.
    seed : int
        Seed of ``np.random.default_rng``.
    progress : rankflavor.base.progress.Progress, optional
        Told of each block of resamples done (no output when None).

    Returns
    -------
    numpy.ndarray
        Symmetric systems × systems matrix of p-values, ``1.0`` on the diagonal.

    Raises
    ------
    EvaluationError
        Fewer than 2 queries or systems, non-finite values, or every system identical.

    References
    ----------
    .. [1] Carterette (2012). "Multiple testing in statistical analysis of systems-based
       information retrieval experiments". *ACM TOIS* 30(1): 4.
    .. [2] Tukey (1949). "Comparing individual means in the analysis of variance".
       *Biometrics* 5(2): 99-114.
    .. [3] Smyth & Phipson (2010). "Permutation p-values should never be zero". *Stat. Appl.
       Genet. Mol. Biol.* 9(1): 39.

    Examples
    --------
    >>> m = [[0.1, 0.5, 0.3], [0.2, 0.6, 0.2], [0.0, 0.9, 0.4], [0.3, 0.7, 0.3]]
    >>> tukey_hsd_randomized(m, n_resamples=999, seed=0).round(3).tolist()
    [[1.0, 0.019, 0.884], [0.019, 1.0, 0.232], [0.884, 0.232, 1.0]]
    """
    x = _matrix(matrix)
    n_resamples = resamples_of(n_resamples)
    seed = seed_of(seed)
    q, s = x.shape
    means = x.mean(axis=0)
    observed = np.abs(means[:, None] - means[None, :])
    threshold = observed - SLACK_ULPS * np.finfo(np.float64).eps * np.abs(x).sum(axis=0).max() / q
    per_query = math.factorial(s)
    if q * math.log(per_query) <= math.log(n_resamples) + 1e-9 and per_query**q <= n_resamples:
        return _exact(x, threshold)
    rng = np.random.default_rng(seed)
    rows = max(1, min(n_resamples, BLOCK_ELEMENTS // (q * s)))
    blocks = []
    with task(progress, f"Tukey HSD, {s} systems", n_resamples) as t:
        for start in range(0, n_resamples, rows):
            k = min(rows, n_resamples - start)
            shuffled = np.broadcast_to(x, (k, q, s)).copy()
            rng.permuted(shuffled, axis=2, out=shuffled)  # every (resample, query) row shuffled on its own
            means = shuffled.mean(axis=1)
            blocks.append(means.max(axis=1) - means.min(axis=1))
            t.advance(k)
    ranges = np.sort(np.concatenate(blocks))
    counted = ranges.size - np.searchsorted(ranges, threshold, side="left")
    return np.asarray((counted + 1) / (n_resamples + 1.0), dtype=np.float64)
