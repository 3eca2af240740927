"""``rankflavor.judge_agreement``: a judge against human judgments, on grades and on the metric."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankflavor._version import __version__
from rankflavor.analysis.estimate.agreement import GradeAgreement, grade_agreement
from rankflavor.analysis.estimate.api import one_measure
from rankflavor.analysis.estimate.values import run_values
from rankflavor.analysis.spread.api import run_names
from rankflavor.base.finite import json_number, undefined
from rankflavor.errors import EvaluationError, UsageError
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.metrics.measure import Measure


@dataclass(frozen=True)
class RunMetric:
    """One run's measure under the human judgments and the judge's, on the queries both give a value.

    Attributes
    ----------
    name : the run's name; n : the queries compared.
    human, judge : the means; delta : mean of judge - human per query; low, high : its bootstrap
        interval (BCa; percentile where BCa is undefined, said in ``notes``).
    only_human, only_judge : queries with a value under one side only (left out).
    """

    name: str
    n: int
    human: float
    judge: float
    delta: float
    low: float
    high: float
    only_human: int
    only_judge: int
    notes: tuple[str, ...] = ()
    undefined: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "n": self.n, "human": json_number(self.human), "judge": json_number(self.judge),
                "delta": json_number(self.delta), "low": json_number(self.low), "high": json_number(self.high),
                "only_human": self.only_human, "only_judge": self.only_judge, "notes": list(self.notes),
                **undefined(self.undefined)}


@dataclass(frozen=True)
class JudgeAgreement:
    """What :func:`judge_agreement` returns.

    Attributes
    ----------
    human_source, judge_source : where the judgments came from.
    grades : :class:`~rankflavor.analysis.estimate.agreement.GradeAgreement` on the pairs both graded.
    measure, name : the measure's flavor string and short name (None without runs).
    runs : per run, the measure both ways.
    tau : Kendall's tau-b between the runs' orders by the human mean and by the judge's (two runs
        or more; NaN otherwise, with the reason under ``undefined``).
    alpha, n_resamples, seed : the intervals' settings.
    """

    human_source: str
    judge_source: str
    grades: GradeAgreement
    measure: str | None
    name: str | None
    runs: tuple[RunMetric, ...]
    tau: float
    alpha: float
    n_resamples: int
    seed: int
    provenance: dict[str, Any] = field(default_factory=dict)
    undefined: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"human": self.human_source, "judge": self.judge_source, "grades": self.grades.to_dict(),
                "measure": self.measure, "name": self.name, "runs": [r.to_dict() for r in self.runs],
                "tau": json_number(self.tau), "alpha": self.alpha, "level": 1.0 - self.alpha,
                "n_resamples": self.n_resamples, "seed": self.seed, "provenance": self.provenance,
                **undefined(self.undefined)}


def _run_metric(name: str, human: Any, judge: Any, alpha: float, n_resamples: int, seed: int) -> RunMetric:
    from rankflavor.stats import bootstrap_ci

    both, hi, ji = np.intersect1d(human.queries, judge.queries, assume_unique=True, return_indices=True)
    h, j = human.values[hi], judge.values[ji]
    only_h, only_j = len(human.queries) - len(both), len(judge.queries) - len(both)
    if len(both) == 0:
        why = "nan: no query has a value under both judgments"
        return RunMetric(name, 0, math.nan, math.nan, math.nan, math.nan, math.nan, only_h, only_j,
                         undefined={k: why for k in ("human", "judge", "delta", "low", "high")})
    d = j - h
    notes: tuple[str, ...] = ()
    if len(both) < 2:
        why = "nan: one query shows no spread, so there is no interval"
        return RunMetric(name, 1, float(h.mean()), float(j.mean()), float(d.mean()), math.nan, math.nan, only_h,
                         only_j, undefined={"low": why, "high": why})
    try:
        low, high = bootstrap_ci(d, level=1 - alpha, n_resamples=n_resamples, seed=seed)
    except EvaluationError as exc:  # BCa undefined (every resampled mean on one side)
        low, high = bootstrap_ci(d, level=1 - alpha, n_resamples=n_resamples, seed=seed, method="percentile")
        notes = (f"percentile interval: {exc}",)
    return RunMetric(name, len(both), float(h.mean()), float(j.mean()), float(d.mean()), low, high, only_h, only_j,
                     notes)


def _tau(runs: tuple[RunMetric, ...]) -> tuple[float, dict[str, str]]:
    usable = [r for r in runs if math.isfinite(r.human) and math.isfinite(r.judge)]
    if len(usable) < 2:
        return math.nan, {"tau": "nan: needs two runs or more with a mean under both judgments"}
    from scipy.stats import kendalltau

    tau = float(kendalltau([r.human for r in usable], [r.judge for r in usable]).statistic)
    if math.isnan(tau):
        return tau, {"tau": "nan: every run has the same mean under one of the judgments"}
    return tau, {}


def judge_agreement(
    human_qrels: Any,
    judge_qrels: Any,
    runs: Any = (),
    measure: str | Measure = "ndcg@10",
    *,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    scale: Any = None,
    preset: str | None = None,
    **knobs: Any,
) -> JudgeAgreement:
    """How far a judge's grades agree with human grades, and what that does to a measure.

    On the (query, doc) pairs both graded: Cohen's kappa (unweighted, linear, quadratic),
    Krippendorff's alpha (ordinal, interval), the confusion matrix, the mean grade bias (judge -
    human) with a query-clustered interval, and the counts of pairs and queries one side alone
    judges (:mod:`rankflavor.analysis.estimate.agreement`). With ``runs``: each run's ``measure`` under
    both judgments on the queries both give a value, the paired difference with a bootstrap
    interval, and Kendall's tau between the two orders of the runs.

    Parameters
    ----------
    human_qrels, judge_qrels : path, ``{query: {doc: grade}}`` or DataFrame
    runs : a run, a list of runs or ``{name: run}`` (optional).
    measure : the measure computed both ways (with runs).
    alpha : error level of the intervals.
    n_resamples, seed : the bootstrap's.
    scale : a label scale (name or :class:`~rankflavor.analysis.judgments.Scale`): its grades are categories
        of the kappas and alpha even where nobody gave them.
    preset, **knobs : the measure's tool and flavor knobs.

    Examples
    --------
    >>> human = {"q1": {"a": 0, "b": 1, "c": 2}, "q2": {"d": 2, "e": 0}}
    >>> judge = {"q1": {"a": 0, "b": 2, "c": 2}, "q2": {"d": 1, "e": 0, "f": 1}}
    >>> a = judge_agreement(human, judge)
    >>> a.grades.pairs, a.grades.only_judge, round(a.grades.bias, 4), a.grades.confusion
    (5, 1, 0.0, ((2, 0, 0), (0, 0, 1), (0, 1, 1)))
    """
    from rankflavor.base.finite import is_finite

    if not (is_finite(alpha) and 0 < alpha < 1):
        raise UsageError(f"alpha: expected a number in (0, 1), received {alpha!r}")
    grades = None
    if scale is not None:
        from rankflavor.presets.scales import scale_named

        sc = scale_named(scale) if isinstance(scale, str) else scale
        grades = None if sc is None else tuple(sc.grades)
    h_table, j_table = as_qrels(human_qrels), as_qrels(judge_qrels)
    from rankflavor.engine.provenance import describe

    g = grade_agreement(h_table, j_table, grades, alpha)
    none = runs is None or (isinstance(runs, (list, tuple, dict)) and len(runs) == 0)
    names, items = ([], []) if none else run_names(runs)
    m = one_measure(measure, preset, knobs) if items else None
    per_run, run_info = [], []
    for name, item in zip(names, items, strict=True):
        run = as_run(item)
        run_info.append({"name": name, **describe(item, run)})
        per_run.append(_run_metric(name, run_values(h_table, run, m), run_values(j_table, run, m),  # type: ignore[arg-type]
                                   alpha, n_resamples, seed))
    runs_t = tuple(per_run)
    tau, why = _tau(runs_t) if runs_t else (math.nan, {"tau": "nan: no run given"})
    provenance = {"rankflavor": __version__, "human_qrels": describe(human_qrels, h_table),
                  "judge_qrels": describe(judge_qrels, j_table), "runs": run_info}
    return JudgeAgreement(h_table.source, j_table.source, g, None if m is None else str(m),
                          None if m is None else m.display, runs_t, tau, float(alpha), n_resamples, seed, provenance,
                          why)


__all__ = ["JudgeAgreement", "RunMetric", "judge_agreement"]
