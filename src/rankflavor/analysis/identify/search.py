"""One pass over the flavor space with the plan of :func:`rankflavor.spread`.

One :class:`~rankflavor.engine.plan.Evaluation` (``one_ordering=True``) holds the alignment; the
flavors are visited grouped by ordering, so each ordering is sorted once. Flavors that differ
only in ``empty`` and ``missing`` share one kernel pass: those two knobs are applied by
:func:`~rankflavor.engine.aggregate.aggregate` after the kernel (the kernels never read them), so each
such flavor costs one aggregation, or none when its policy has no query to apply to. This is :meth:`Evaluation.evaluate
<rankflavor.engine.plan.Evaluation.evaluate>` with the kernel output kept between neighbours.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rankflavor.align import Aligned
from rankflavor.base.progress import Progress, task
from rankflavor.engine.aggregate import aggregate
from rankflavor.engine.plan import Evaluation
from rankflavor.engine.results import MeasureResult
from rankflavor.errors import RankflavorError
from rankflavor.flavor.flavor import KNOBS
from rankflavor.io.tables import Qrels, Run
from rankflavor.metrics.measure import Measure

#: Knobs only the aggregation reads (:func:`rankflavor.engine.aggregate.aggregate`).
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


@dataclass
class _Kernel:
    """One kernel pass, and the aggregations of it made so far (by the policy values that can
    change them: a policy with no query to apply to leaves the result as it is)."""

    values: np.ndarray
    empty: np.ndarray
    aligned: Aligned
    any_empty: bool
    any_missing: bool
    done: dict[tuple[str, str], MeasureResult | RankflavorError]

    @classmethod
    def run(cls, plan: Evaluation, m: Measure) -> _Kernel:
        ranked = plan.ranked(m)
        values, empty = m.spec.compute(ranked, m)
        a = ranked.aligned
        # (missing also decides the queries the judgments list with no judgment: aggregate.judged_queries)
        any_missing = bool((a.in_qrels & ~a.in_run).any()) or a.listed_unjudged is not None
        return cls(np.asarray(values), empty, a, bool(empty.any()), any_missing, {})

    def result(self, m: Measure) -> MeasureResult:
        f = m.flavor
        key = (str(f.empty) if self.any_empty else "", str(f.missing) if self.any_missing else "")
        if key not in self.done:
            try:
                self.done[key] = aggregate(m, self.values, self.empty, self.aligned)
            except RankflavorError as exc:
                self.done[key] = exc.with_traceback(None)
        found = self.done[key]
        if isinstance(found, RankflavorError):
            raise found
        return found


def evaluate_space(qrels: Qrels, run: Run, measures: Sequence[Measure],
                   visit: Callable[[int, MeasureResult, np.ndarray], None],
                   progress: Progress | None = None) -> dict[int, str]:
    """Evaluate every measure; call ``visit(j, result, query_ids)`` for each one that evaluates
    (``query_ids``: the alignment's ids, byte-ordered). Returns ``{j: error}`` for the others;
    when every measure fails, raises the first error (the input itself is refused).

    Flavors whose ``empty``/``missing`` policy has no query to apply to (no query with nothing
    relevant, no judged query the run leaves out) get the very same result object: their
    numbers are the same, and ``visit`` may reuse what it made of it.

    ``progress`` (:mod:`rankflavor.base.progress`) is told of each kernel pass, in units of the
    flavors it serves (the flavors sharing a pass cost little more than it).
    """
    plan = Evaluation(qrels, run, one_ordering=True)
    errors: dict[int, str] = {}
    keys = [kernel_key(m) for m in measures]
    last: tuple[object, ...] | None = None
    kernel: _Kernel | RankflavorError | None = None
    first: RankflavorError | None = None
    pending = 0  # flavors visited since the bar last moved
    try:
        with task(progress, f"identify: {len(measures)} flavors", len(measures)) as bar:
            for j in sorted(range(len(measures)), key=keys.__getitem__):
                m = measures[j]
                if keys[j] != last:
                    last = keys[j]
                    bar.advance(pending)
                    pending = 0
                    try:
                        kernel = _Kernel.run(plan, m)
                    except RankflavorError as exc:
                        kernel = exc.with_traceback(None)
                pending += 1
                try:
                    if isinstance(kernel, RankflavorError):
                        raise kernel
                    assert kernel is not None
                    res = kernel.result(m)
                except RankflavorError as exc:
                    errors[j] = str(exc)
                    first = first or exc
                    continue
                visit(j, res, kernel.aligned.query_ids)
            bar.advance(pending)
    finally:
        plan.close()
    if measures and len(errors) == len(measures):
        raise first or RankflavorError(next(iter(errors.values())))
    return errors


__all__ = ["AGGREGATE_ONLY", "evaluate_space", "kernel_key", "universe_index"]
