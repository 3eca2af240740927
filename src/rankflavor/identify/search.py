"""One pass over the flavor space with the plan of :func:`rankflavor.spread`.

One :class:`~rankflavor.plan.Evaluation` (``one_ordering=True``) holds the alignment; the
flavors are visited grouped by ordering, so each ordering is sorted once. Flavors that differ
only in ``empty`` and ``missing`` share one kernel pass: those two knobs are applied by
:func:`~rankflavor.aggregate.aggregate` after the kernel (the kernels never read them), so each
such flavor costs one aggregation. This is :meth:`Evaluation.evaluate
<rankflavor.plan.Evaluation.evaluate>` with the kernel output kept between neighbours.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..aggregate import aggregate
from ..errors import RankflavorError
from ..flavor import KNOBS
from ..measure import Measure
from ..plan import Evaluation
from ..results import MeasureResult
from ..tables import Qrels, Run

#: Knobs only the aggregation reads (:func:`rankflavor.aggregate.aggregate`).
AGGREGATE_ONLY = ("empty", "missing")
_KERNEL_KNOBS = tuple(n for n in KNOBS if n not in AGGREGATE_ONLY)


def kernel_key(measure: Measure) -> tuple[object, ...]:
    """Measures with equal keys get the same kernel output: the ordering first (so a sort by key
    keeps each ordering together), then the metric, cutoff and every knob but :data:`AGGREGATE_ONLY`."""
    f = measure.flavor
    return (Evaluation.key(measure), measure.metric, measure.k if measure.k is not None else -1,
            *(str(getattr(f, n)) for n in _KERNEL_KNOBS))


def universe_index(universe: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Positions of ``queries`` (a subset of the alignment's byte-ordered ids) in ``universe``."""
    return np.searchsorted(universe, queries)


def evaluate_space(qrels: Qrels, run: Run, measures: Sequence[Measure],
                   visit: Callable[[int, MeasureResult, np.ndarray], None]) -> dict[int, str]:
    """Evaluate every measure; call ``visit(j, result, query_ids)`` for each one that evaluates
    (``query_ids``: the alignment's ids, byte-ordered). Returns ``{j: error}`` for the others;
    when every measure fails, raises the first error (the input itself is refused)."""
    plan = Evaluation(qrels, run, one_ordering=True)
    errors: dict[int, str] = {}
    keys = [kernel_key(m) for m in measures]
    order = sorted(range(len(measures)), key=keys.__getitem__)
    last: tuple[object, ...] | None = None
    out: tuple[np.ndarray, np.ndarray, object] | RankflavorError | None = None
    first: RankflavorError | None = None
    try:
        for j in order:
            m = measures[j]
            if keys[j] != last:
                last = keys[j]
                try:
                    ranked = plan.ranked(m)
                    values, empty = m.spec.compute(ranked, m)
                    out = (values, empty, ranked.aligned)
                except RankflavorError as exc:
                    out = exc.with_traceback(None)
                    first = first or out
            if isinstance(out, RankflavorError):
                errors[j] = str(out)
                continue
            assert out is not None
            values, empty, aligned = out
            try:
                res = aggregate(m, values, empty, aligned)  # type: ignore[arg-type]
            except RankflavorError as exc:
                errors[j] = str(exc)
                first = first or exc.with_traceback(None)
                continue
            visit(j, res, aligned.query_ids)  # type: ignore[attr-defined]
    finally:
        plan.close()
    if measures and len(errors) == len(measures):
        raise first or RankflavorError(next(iter(errors.values())))
    return errors


__all__ = ["AGGREGATE_ONLY", "evaluate_space", "kernel_key", "universe_index"]
