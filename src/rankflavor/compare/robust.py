"""Flavor robustness: does each pair's sign and verdict hold under every flavor evaluated?"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import RankflavorError
from ..progress import Progress, task
from ..spreadresult import TIE_TOLERANCE
from .analysis import pair_indices, verdicts
from .queries import align_queries
from .result import FlavorVerdict, PairStat, Robustness
from .scores import RunScores
from .settings import Settings


def _sign(x: float) -> int:
    return 0 if abs(x) <= TIE_TOLERANCE else (1 if x > 0 else -1)


def robustness(pairs: list[PairStat], names: Sequence[str], variants: Sequence[tuple[str, str]],
               scores: Sequence[Sequence[RunScores | None]], errors: dict[int, str], s: Settings,
               notes: Sequence[str] = (), progress: Progress | None = None) -> Robustness:
    """Re-test every pair under each variant flavor (``scores[v][r]``: run ``r`` under variant ``v``).

    The verdict in each flavor uses the same test, correction, alpha, seed and query policy as the
    base measure. A flavor some run could not be evaluated in (its policy refused it) is listed in
    ``errors`` and left out. ``progress`` is told of each flavor re-tested.
    """
    index = pair_indices(names, s.baseline)
    found: list[FlavorVerdict] = []
    failed: dict[str, str] = {}
    with task(progress, f"re-testing under {len(variants)} flavors", len(variants)) as t:
        for v, (flavor, label) in enumerate(variants):
            t.advance()
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
            found.append(FlavorVerdict(flavor, label, len(aligned.queries), tuple(float(d) for d in deltas),
                                       tuple(bool(x) for x in significant)))
    sign_flips = []
    verdict_flips = []
    for k, p in enumerate(pairs):
        sign_flips.append(tuple(f.label for f in found if _sign(f.deltas[k]) != _sign(p.delta)))
        verdict_flips.append(tuple(f.label for f in found if f.significant[k] != p.significant))
    return Robustness(tuple(found), tuple(sign_flips), tuple(verdict_flips), failed, tuple(notes))


def count_holding(r: Robustness, k: int) -> tuple[int, int]:
    """Flavors (of those evaluated) where pair ``k``'s sign, and its verdict, agree with the base."""
    n = len(r.flavors)
    return n - len(r.sign_flips[k]), n - len(r.verdict_flips[k])


__all__ = ["count_holding", "robustness"]
