"""rankflavor's hand-written statistics against the SciPy call that would replace them (issue 38).

``compare`` resamples many rows over the same queries: the BCa intervals of every system's mean
and every pair's mean difference (10 systems: 10 + 45 = 55 rows), then the permutation and the
bootstrap test of every pair (45 rows). For each, on the same seeded data, this times:

* rankflavor: ``bootstrap_ci_many``, ``permutation_many``, ``bootstrap_test_many`` (one shared
  block of resampled queries or signs per step, one matrix product with every row);
* SciPy, vectorized along ``axis=-1`` with its own ``rng`` (it too shares one index matrix
  among all rows): ``scipy.stats.bootstrap((rows,), np.mean, method="BCa")``,
  ``scipy.stats.permutation_test((diffs,), |sum|, permutation_type="samples",
  alternative="greater")`` and, for the bootstrap test (SciPy has none), the bootstrap
  distribution of the studentized mean from ``scipy.stats.bootstrap(..., method="percentile")``.
  ``batch`` is what fits in rankflavor's block (``BLOCK_ELEMENTS`` float64 values, 32 MiB), so
  both hold the same memory per step; ``--scipy-batch rankflavor`` gives SciPy rankflavor's
  resamples per block instead (its memory then grows with the number of rows).

Three more rows: the BCa arithmetic alone on rankflavor's resampled means (rankflavor's
``_interval`` per row against ``scipy.stats.bootstrap(n_resamples=0, bootstrap_result=...)``,
whose jackknife gathers every leave-one-out sample); one row's interval (``bootstrap_ci_many`` of
one row against ``scipy.stats.bootstrap``, which ``bootstrap_ci`` calls); and Wilcoxon's
enumerated null at 13 pairs with ties (``rankflavor.stats.wilcoxon``, which runs
``scipy.stats.permutation_test`` on the signed ranks, against ``scipy.stats.wilcoxon``).

Figures: median seconds over ``--repeats`` warm in-process runs (one untimed warm-up), and the
peak of NumPy's allocations during one run (``tracemalloc``). For the intervals and Wilcoxon the
largest relative difference between the two results is printed too (same draws: they agree).

    python3 bench/bench_stats_scipy.py                          # 55/45 rows x 50, 1000, 7000 queries
    python3 bench/bench_stats_scipy.py --queries 50 1000 --repeats 5
    python3 bench/bench_stats_scipy.py --queries 7000 --only arithmetic
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import scipy.stats as ss

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from rankflavor import stats  # noqa: E402
from rankflavor.stats.bootstrap import _interval, count_blocks, default_batch  # noqa: E402
from rankflavor.stats.randomization import BLOCK_ELEMENTS  # noqa: E402

RESAMPLES = 10_000
SEED = 0


def timed(run: Callable[[], Any], repeats: int) -> tuple[float, float, Any]:
    """Median seconds of ``repeats`` runs after a warm-up, peak traced MiB of one run, the output."""
    out = run()
    took = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        took.append(time.perf_counter() - t0)
    tracemalloc.start()
    run()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return statistics.median(took), peak, out


def scipy_batch(kind: str, rows: int, n: int) -> int:
    if kind == "rankflavor":
        return default_batch(n, RESAMPLES)
    return max(1, BLOCK_ELEMENTS // (rows * n))


def studentized(x: np.ndarray, axis: int = -1) -> np.ndarray:
    n = x.shape[axis]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(x.mean(axis=axis) / (x.std(axis=axis, ddof=1) / np.sqrt(n)))
    return np.nan_to_num(t, nan=0.0)


def abs_sum(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.abs(x.sum(axis=axis))


def cases(n: int, batch_kind: str) -> list[tuple[str, Callable[[], Any], Callable[[], Any]]]:
    rng = np.random.default_rng(n)
    scores = rng.beta(2, 3, (10, n)) + np.linspace(0, 0.05, 10)[:, None]
    pairs = [(i, j) for i in range(10) for j in range(i + 1, 10)]
    diffs = np.stack([scores[j] - scores[i] for i, j in pairs])
    rows = np.vstack([scores, diffs])
    w = diffs - diffs.mean(axis=1, keepdims=True)

    def scipy_ci() -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = ss.bootstrap((rows,), np.mean, axis=-1, vectorized=True, n_resamples=RESAMPLES, method="BCa",
                             batch=scipy_batch(batch_kind, len(rows), n), rng=np.random.default_rng(SEED))
        return np.c_[r.confidence_interval.low, r.confidence_interval.high]

    def scipy_perm() -> np.ndarray:
        r = ss.permutation_test((diffs,), abs_sum, permutation_type="samples", vectorized=True, axis=-1,
                                n_resamples=RESAMPLES, alternative="greater",
                                batch=scipy_batch(batch_kind, 2 * len(diffs), n), rng=np.random.default_rng(SEED))
        return np.asarray(r.pvalue)

    def scipy_boot_test() -> np.ndarray:
        r = ss.bootstrap((w,), studentized, axis=-1, vectorized=True, n_resamples=RESAMPLES, method="percentile",
                         batch=scipy_batch(batch_kind, len(w), n), rng=np.random.default_rng(SEED))
        t_obs = studentized(diffs)
        return np.asarray((np.sum(r.bootstrap_distribution >= t_obs[:, None], axis=1) + 1) / (RESAMPLES + 1))

    theta = np.vstack([c @ rows.T / n for c in count_blocks(n, RESAMPLES, SEED)])  # rankflavor's resampled means

    def mine_arithmetic() -> np.ndarray:
        return np.array([_interval(row, theta[:, i], 0.95, "bca") for i, row in enumerate(rows)])

    def scipy_arithmetic() -> np.ndarray:
        r = ss.bootstrap((rows,), np.mean, axis=-1, vectorized=True, n_resamples=0, method="BCa",
                         bootstrap_result=SimpleNamespace(bootstrap_distribution=theta.T),
                         batch=scipy_batch(batch_kind, len(rows), n))
        return np.c_[r.confidence_interval.low, r.confidence_interval.high]

    return [
        (f"BCa intervals, {len(rows)} rows", lambda: stats.bootstrap_ci_many(rows, n_resamples=RESAMPLES, seed=SEED),
         scipy_ci),
        (f"permutation test, {len(diffs)} pairs", lambda: stats.permutation_many(diffs, n_resamples=RESAMPLES, seed=SEED),
         scipy_perm),
        (f"bootstrap test, {len(diffs)} pairs", lambda: stats.bootstrap_test_many(diffs, n_resamples=RESAMPLES, seed=SEED),
         scipy_boot_test),
        (f"BCa interval arithmetic on the same resampled means, {len(rows)} rows", mine_arithmetic, scipy_arithmetic),
        ("BCa interval, 1 row", lambda: stats.bootstrap_ci_many(diffs[:1], n_resamples=RESAMPLES, seed=SEED)[0],
         lambda: _scipy_one(diffs[0])),
    ]


def _scipy_one(x: np.ndarray) -> np.ndarray:
    r = ss.bootstrap((x,), np.mean, n_resamples=RESAMPLES, method="BCa", batch=default_batch(x.size, RESAMPLES),
                     rng=np.random.default_rng(SEED))
    return np.array([r.confidence_interval.low, r.confidence_interval.high])


def wilcoxon_case() -> tuple[str, Callable[[], Any], Callable[[], Any]]:
    """13 pairs with ties (scores on a grid of 0.1): the enumerated null of ``wilcoxon(method="auto")``."""
    rng = np.random.default_rng(13)
    a, b = np.round(rng.beta(2, 3, 13), 1), np.round(rng.beta(2, 3, 13), 1)
    return ("Wilcoxon, enumerated null, 1 pair", lambda: stats.wilcoxon(a, b).pvalue,
            lambda: ss.wilcoxon(a - b).pvalue)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, nargs="+", default=[50, 1000, 7000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scipy-batch", choices=["block", "rankflavor"], default="block")
    parser.add_argument("--only", help="run only the cases whose name contains this")
    args = parser.parse_args(argv)
    print(f"numpy {np.__version__}, scipy {__import__('scipy').__version__}; {RESAMPLES:,} resamples; "
          f"median of {args.repeats} warm runs; SciPy batch: {args.scipy_batch}\n")
    print("| queries | what | rankflavor s | SciPy s | SciPy / rankflavor | rankflavor MiB | SciPy MiB | max rel. diff |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    todo = [(13, wilcoxon_case())] + [(n, c) for n in args.queries for c in cases(n, args.scipy_batch)]
    for n, (name, mine, theirs) in todo:
        if args.only and args.only not in name:
            continue
        t_mine, m_mine, out_mine = timed(mine, args.repeats)
        t_theirs, m_theirs, out_theirs = timed(theirs, args.repeats)
        diff = "-"  # the tests' p-values: other draws (and for permutation_test another two-sided rule)
        if "interval" in name or "Wilcoxon" in name:
            rel = np.abs(np.subtract(out_mine, out_theirs)) / np.maximum(np.abs(out_theirs), 1e-300)
            diff = f"{float(np.max(rel)):.1e}"
        print(f"| {n:,} | {name} | {t_mine:.3f} | {t_theirs:.3f} | {t_theirs / t_mine:.1f}x | {m_mine:.0f} | "
              f"{m_theirs:.0f} | {diff} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
