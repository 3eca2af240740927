"""Per-query values of every run under every measure, from one read of the judgments and one
alignment per run (:func:`rankflavor.engine.plan.evaluate_grid`, which :func:`rankflavor.spread` uses).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rankflavor.base.progress import Progress
from rankflavor.engine.plan import evaluate_grid
from rankflavor.engine.results import MISSING, MeasureResult
from rankflavor.errors import RankflavorError
from rankflavor.io.tables import Qrels, Run
from rankflavor.metrics.measure import Measure


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
    results, errors = evaluate_grid(qrels, runs, measures, progress,
                                    f"scoring {len(runs)} runs x {len(measures)} measures")
    return [[None if res is None else run_scores(res) for res in row] for row in results], errors


def run_scores(result: MeasureResult) -> RunScores:
    """A measure's result as compared: the queries the run answered and their values."""
    answered = result.status != MISSING
    return RunScores(np.asarray(result.queries[answered]).astype(str),
                     np.asarray(result.values[answered], dtype=np.float64))


__all__ = ["RunScores", "run_scores", "score_runs"]
