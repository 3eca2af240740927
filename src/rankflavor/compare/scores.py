"""Per-query values of every run under every measure, from one read of the judgments and one
alignment per run (the :class:`~rankflavor.plan.Evaluation` that :func:`rankflavor.spread` uses).

The measures sharing an ordering are evaluated together, so each distinct ordering of a run is
sorted once, however many flavors of the grid share it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import RankflavorError
from ..measure import Measure
from ..plan import Evaluation
from ..progress import Progress, task
from ..results import MISSING
from ..tables import Qrels, Run


@dataclass(frozen=True)
class RunScores:
    """One run's values under one measure.

    Attributes
    ----------
    queries : the queries the run answered (rows of the measure not scored by the ``missing``
        policy), in byte order.
    values : their per-query values, float64.
    """

    queries: np.ndarray
    values: np.ndarray


def score_runs(qrels: Qrels, runs: Sequence[Run], measures: Sequence[Measure], progress: Progress | None = None
               ) -> tuple[list[list[RunScores | None]], dict[tuple[int, int], RankflavorError]]:
    """``scores[r][j]``: run ``r`` under ``measures[j]`` (None where its policy refused it), and the errors.
    ``progress`` is told of each (run, measure) evaluated."""
    by_ordering = sorted(range(len(measures)), key=lambda j: Evaluation.key(measures[j]))
    scores: list[list[RunScores | None]] = []
    errors: dict[tuple[int, int], RankflavorError] = {}
    with task(progress, f"scoring {len(runs)} runs x {len(measures)} measures", len(runs) * len(measures)) as t:
        for r, run in enumerate(runs):
            row: list[RunScores | None] = [None] * len(measures)
            plan = Evaluation(qrels, run, one_ordering=True)
            try:
                for j in by_ordering:
                    t.advance()
                    try:
                        res = plan.evaluate(measures[j])
                    except RankflavorError as exc:
                        errors[(r, j)] = exc.with_traceback(None)
                        continue
                    answered = res.status != MISSING
                    row[j] = RunScores(np.asarray(res.queries[answered]).astype(str),
                                       np.asarray(res.values[answered], dtype=np.float64))
            finally:
                plan.close()
            scores.append(row)
    return scores, errors


__all__ = ["RunScores", "score_runs"]
