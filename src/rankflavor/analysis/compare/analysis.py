"""The statistics of one measure: per system, per pair, corrected for the pairs compared.

Every resampling takes the comparison's seed, so the same inputs and seed give the same report.
The permutation test of every pair runs as one batched call (:func:`rankflavor.stats.permutation_many`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rankflavor import stats
from rankflavor.analysis.compare.result import PairStat, SystemStat
from rankflavor.analysis.compare.settings import TUKEY, Settings
from rankflavor.base.progress import Progress

#: Queries listed as moving most, each way.
TOP_MOVED = 5


def pair_indices(names: Sequence[str], baseline: str | None) -> list[tuple[int, int]]:
    """``(a, b)`` index pairs: every system against the baseline, or every pair (later minus earlier)."""
    if baseline is not None:
        base = list(names).index(baseline)
        return [(base, j) for j in range(len(names)) if j != base]
    return [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]


def _pvalues(test: str, matrix: np.ndarray, pairs: list[tuple[int, int]], s: Settings,
             progress: Progress | None = None) -> np.ndarray:
    """Raw p-values of ``test`` for every pair (batched for the resampling tests).

    A pair whose systems score identically on every query has p = 1: there is nothing to test
    (the tests refuse all-zero differences).
    """
    out = np.ones(len(pairs))
    diffs = np.stack([matrix[b] - matrix[a] for a, b in pairs]) if pairs else np.empty((0, matrix.shape[1]))
    live = np.flatnonzero(np.any(diffs != 0, axis=1))
    if len(live) == 0:
        return out
    if test in ("permutation", "bootstrap"):
        many = stats.permutation_many if test == "permutation" else stats.bootstrap_test_many
        out[live] = np.asarray(many(diffs[live], n_resamples=s.n_resamples, seed=s.seed, progress=progress),
                               dtype=np.float64)
        return out
    one = {"t": stats.paired_t, "wilcoxon": stats.wilcoxon, "sign": stats.sign_test}[test]
    for k in live:
        a, b = pairs[k]
        out[k] = one(matrix[b], matrix[a]).pvalue
    return out


def adjusted_pvalues(tests: Sequence[str], matrix: np.ndarray, pairs: list[tuple[int, int]], s: Settings,
                     progress: Progress | None = None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Raw p-values per test, and the corrected ones (per test, or the Tukey HSD's under ``tukey``)."""
    raw = {t: _pvalues(t, matrix, pairs, s, progress) for t in tests}
    if s.correction == "tukey":
        if len(pairs) == 0:
            return raw, {TUKEY: np.empty(0)}
        # queries x systems, as the Tukey HSD reads them
        p = np.asarray(stats.tukey_hsd_randomized(matrix.T, n_resamples=s.n_resamples, seed=s.seed, progress=progress))
        return raw, {TUKEY: np.array([p[a, b] for a, b in pairs], dtype=np.float64)}
    return raw, {t: np.asarray(stats.correct(raw[t], method=s.correction), dtype=np.float64) for t in tests}


def verdicts(matrix: np.ndarray, pairs: list[tuple[int, int]], s: Settings) -> tuple[np.ndarray, np.ndarray]:
    """Mean differences and significance verdicts of ``pairs`` (only the verdict's test is run)."""
    deltas = np.array([float(np.mean(matrix[b] - matrix[a])) for a, b in pairs])
    tests = () if s.correction == "tukey" else (s.tests[0],)
    _, adjusted = adjusted_pvalues(tests, matrix, pairs, s)
    return deltas, adjusted[s.verdict_key] < s.alpha


def _moved(queries: np.ndarray, d: np.ndarray, sign: int) -> tuple[tuple[str, float], ...]:
    # Largest move first; equal moves in query-id order, so the list does not depend on input order.
    order = np.lexsort((queries, -sign * d))
    picked = [i for i in order[:TOP_MOVED] if sign * d[i] > 0]
    return tuple((str(queries[i]), float(d[i])) for i in picked)


def analyse(matrix: np.ndarray, queries: np.ndarray, names: Sequence[str], s: Settings,
            progress: Progress | None = None) -> tuple[list[SystemStat], list[PairStat]]:
    """Per-system means and CIs, per-pair differences, effect sizes, wins and (corrected) p-values."""
    pairs = pair_indices(names, s.baseline)
    diffs = np.stack([matrix[b] - matrix[a] for a, b in pairs]) if pairs else np.empty((0, matrix.shape[1]))
    # every interval (systems' means, pairs' differences) from one set of resampled queries
    rows = np.vstack([matrix, diffs])
    cis = (np.full((len(rows), 2), np.nan) if s.ci_level is None else
           stats.bootstrap_ci_many(rows, level=s.ci_level, n_resamples=s.n_resamples, seed=s.seed,
                                   progress=progress))
    systems = [SystemStat(name, float(np.mean(row)), (float(lo), float(hi)))
               for name, row, (lo, hi) in zip(names, matrix, cis, strict=False)]
    raw, adjusted = adjusted_pvalues(s.tests, matrix, pairs, s, progress)
    out = []
    for k, (a, b) in enumerate(pairs):
        d = diffs[k]
        lo, hi = cis[len(names) + k]
        # identical systems: no effect (the effect size refuses all-zero differences)
        effect = float(stats.cohens_d_paired(matrix[b], matrix[a])) if np.any(d != 0) else 0.0
        wins, losses, ties = stats.wins_losses_ties(matrix[b], matrix[a])
        adj = {t: float(v[k]) for t, v in adjusted.items()}
        out.append(PairStat(
            a=names[a], b=names[b], delta=float(np.mean(d)), ci=(float(lo), float(hi)),
            effect=effect, wins=int(wins), losses=int(losses),
            ties=int(ties), up=_moved(queries, d, 1), down=_moved(queries, d, -1),
            pvalues={t: float(v[k]) for t, v in raw.items()}, adjusted=adj,
            significant=bool(adj[s.verdict_key] < s.alpha)))
    return systems, out


__all__ = ["TOP_MOVED", "adjusted_pvalues", "analyse", "pair_indices", "verdicts"]
