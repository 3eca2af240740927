"""The settings a comparison states in every report: tests, correction, alpha, seed, resamples."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rankflavor.errors import UsageError

#: Test names and the spellings accepted for them.
TESTS = {"t": "t", "ttest": "t", "paired_t": "t", "permutation": "permutation", "randomization": "permutation",
         "bootstrap": "bootstrap", "wilcoxon": "wilcoxon", "sign": "sign"}
CORRECTIONS = ("holm", "bonferroni", "bh", "tukey")
#: The adjusted p-value's key under ``correction="tukey"`` (one test for every pair at once).
TUKEY = "tukey_hsd"


@dataclass(frozen=True)
class Settings:
    """How a comparison tests: what every report states.

    Attributes
    ----------
    tests : the paired tests, canonical names; the first decides the significance verdict.
    correction : ``holm``, ``bonferroni``, ``bh`` (over the pairs of one measure) or ``tukey``
        (randomized Tukey HSD over every system, Carterette 2012).
    alpha : significance level of the verdict.
    n_resamples : permutations, bootstrap resamples and Tukey HSD permutations.
    seed : seed of every resampling.
    ci_level : level of the bootstrap confidence intervals (None: no intervals).
    queries : the query-set policy (``error``, ``intersection``, ``union-zero``).
    baseline : the system every other is compared with, or None for all pairs.
    """

    tests: tuple[str, ...]
    correction: str
    alpha: float
    n_resamples: int
    seed: int
    ci_level: float | None = 0.95
    queries: str = "error"
    baseline: str | None = None

    @property
    def verdict_key(self) -> str:
        """The adjusted p-value the verdict reads: the first test's, or the Tukey HSD's."""
        return TUKEY if self.correction == "tukey" else self.tests[0]

    def to_dict(self) -> dict[str, Any]:
        return {"tests": list(self.tests), "verdict": self.verdict_key, "correction": self.correction,
                "alpha": self.alpha, "n_resamples": self.n_resamples, "seed": self.seed,
                "ci_level": self.ci_level, "queries": self.queries, "baseline": self.baseline}

    def describe(self) -> str:
        """One line for a report: test, correction, alpha, seed, resamples."""
        return (f"tests {', '.join(self.tests)} (verdict: {self.verdict_key}) | correction {self.correction} | "
                f"alpha {self.alpha:g} | seed {self.seed} | {self.n_resamples} resamples | "
                f"{'no' if self.ci_level is None else f'{self.ci_level:.0%}'} bootstrap CIs | queries {self.queries}")


def make_settings(tests: Iterable[str], correction: str | None, alpha: float, n_resamples: int, seed: int,
                  queries: str, baseline: str | None, ci_level: float | None = 0.95) -> Settings:
    """Validate and canonicalise the options (``correction=None``: Holm against a baseline, Tukey HSD for all pairs)."""
    from rankflavor.analysis.compare.queries import check_policy

    items = [tests] if isinstance(tests, str) else list(tests)
    canon: list[str] = []
    for t in items:
        key = str(t).strip().lower()
        if key not in TESTS:
            raise UsageError(f"test: unknown test {t!r}; valid tests: t, permutation, bootstrap, wilcoxon, sign")
        if TESTS[key] not in canon:
            canon.append(TESTS[key])
    if not canon:
        raise UsageError("tests: give at least one test")
    if correction is None:
        correction = "holm" if baseline is not None else "tukey"
    correction = correction.lower()
    if correction not in CORRECTIONS:
        raise UsageError(f"correction: expected one of {', '.join(CORRECTIONS)}, received {correction!r}")
    if not 0.0 < alpha < 1.0:
        raise UsageError(f"alpha: expected a level between 0 and 1, received {alpha}")
    if ci_level is not None and not 0.0 < ci_level < 1.0:
        raise UsageError(f"ci_level: expected a level between 0 and 1 (or None), received {ci_level}")
    if int(n_resamples) < 1:
        raise UsageError(f"n_resamples: expected a positive number, received {n_resamples}")
    return Settings(tuple(canon), correction, float(alpha), int(n_resamples), int(seed),
                    ci_level=ci_level, queries=check_policy(queries), baseline=baseline)


__all__ = ["CORRECTIONS", "TESTS", "TUKEY", "Settings", "make_settings"]
