"""Flavor robustness: does each pair's sign and verdict hold under every flavor counted?

Which flavors count is :class:`~rankflavor.analysis.compare.result.Robustness`'s rule (spread's: the
flavors only defect presets produced are listed but left out unless ``include_defects``).
"""

from __future__ import annotations

from collections.abc import Sequence

from rankflavor.analysis.compare.analysis import pair_indices, verdicts
from rankflavor.analysis.compare.flavors import Variant
from rankflavor.analysis.compare.queries import align_queries
from rankflavor.analysis.compare.result import FlavorVerdict, PairStat, Robustness
from rankflavor.analysis.compare.scores import RunScores
from rankflavor.analysis.compare.settings import Settings
from rankflavor.base.progress import Progress, task
from rankflavor.errors import RankflavorError


def robustness(pairs: list[PairStat], names: Sequence[str], variants: Sequence[Variant],
               scores: Sequence[Sequence[RunScores | None]], errors: dict[int, str], s: Settings,
               notes: Sequence[str] = (), progress: Progress | None = None,
               include_defects: bool = False) -> Robustness:
    """Re-test every pair under each variant flavor (``scores[v][r]``: run ``r`` under variant ``v``).

    A variant's ``defect`` (why only presets reproducing a known defect produced it,
    :func:`rankflavor.analysis.spread.api.defect_reason`) keeps it out of the flips unless ``include_defects``
    (:class:`Robustness` applies the rule). The verdict in each flavor uses the same test,
    correction, alpha, seed and query policy as the base measure. A flavor some run could not be
    evaluated in (its policy refused it) is listed in ``errors`` and left out. ``progress`` is told
    of each flavor re-tested.
    """
    index = pair_indices(names, s.baseline)
    found: list[FlavorVerdict] = []
    failed: dict[str, str] = {}
    with task(progress, f"re-testing under {len(variants)} flavors", len(variants)) as t:
        for v, variant in enumerate(variants):
            t.advance()
            label = variant.label
            if v in errors:
                failed[label] = errors[v]
                continue
            row = scores[v]
            try:
                aligned = align_queries([x for x in row if x is not None], names, s.queries)
            except RankflavorError as exc:
                failed[label] = str(exc)
                continue
            deltas, significant = verdicts(aligned.matrix, index, s)
            found.append(FlavorVerdict(str(variant.measure), label, len(aligned.queries), tuple(float(d) for d in deltas),
                                       tuple(bool(x) for x in significant), variant.defect, variant.presets))
    return Robustness(tuple(found), tuple(p.delta for p in pairs), tuple(p.significant for p in pairs), failed,
                      tuple(notes), include_defects)


def count_holding(r: Robustness, k: int) -> tuple[int, int]:
    """Flavors (of those counted: :attr:`Robustness.counted`) where pair ``k``'s sign, and its verdict,
    agree with the base."""
    n = len(r.counted)
    return n - len(r.sign_flips[k]), n - len(r.verdict_flips[k])


__all__ = ["count_holding", "robustness"]
