"""``rankflavor.estimate``: a measure's mean with valid intervals from human and LLM judgments."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rankflavor._version import __version__
from rankflavor.analysis.estimate.ppi import check_alpha, classical_mean, effective_n, ppi_mean
from rankflavor.analysis.estimate.result import Estimates, RunEstimate
from rankflavor.analysis.estimate.values import run_values, split
from rankflavor.analysis.spread.api import run_names
from rankflavor.errors import UsageError
from rankflavor.io.inputs import as_qrels, as_run
from rankflavor.metrics.measure import Measure


def one_measure(measure: str | Measure, preset: str | None, knobs: dict[str, Any]) -> Measure:
    """The one measure ``measure`` names (canonical, dialect or ``PRESET:NAME``), refusing a
    pseudo-measure that has no per-query value."""
    from rankflavor.presets import resolve_measures

    if not isinstance(measure, (str, Measure)):
        raise UsageError(f"measure: expected one measure (text or Measure), received {type(measure).__name__}")
    measures, extras = resolve_measures([measure], preset, {k: str(v) for k, v in knobs.items()})
    if extras or len(measures) != 1:
        raise UsageError(f"measure: {measure!s} names no single per-query value to estimate")
    return measures[0]


def _tuning(lam: float | None) -> str:
    if lam is None:
        return "ppi++"
    return "ppi" if lam == 1 else f"lambda={lam:g}"


def estimate(
    human_qrels: Any,
    llm_qrels: Any,
    runs: Any,
    measure: str | Measure = "ndcg@10",
    *,
    alpha: float = 0.1,
    lam: float | None = None,
    alternative: str = "two-sided",
    preset: str | None = None,
    **knobs: Any,
) -> Estimates:
    """A measure's mean per run from human and LLM judgments: human-only, LLM-only and PPI.

    Each run is scored per query under ``human_qrels`` and under ``llm_qrels`` by the ordinary
    engine (the measure's flavor decides every value). The queries with a value under both are
    the labelled ones (``Y`` human, ``Yhat`` LLM); those with an LLM value only are unlabelled
    (``Yhat_unlabelled``). Three estimates of the mean over all of them, each with a
    ``1 - alpha`` interval (:mod:`rankflavor.analysis.estimate.ppi`):

    * human only: the mean of ``Y``, central-limit interval;
    * LLM only: the mean of every LLM value, which estimates the LLM-judged metric and is *not*
      valid for the human-judged one;
    * PPI (Angelopoulos et al., Science 2023) with PPI++ power tuning (``lam=None``), or plain PPI
      (``lam=1``): valid for the human-judged mean when the labelled queries are a random sample
      of all of them; its width beside human-only's (``width_ratio``, ``effective_n``) is what
      the LLM labels bought.

    Parameters
    ----------
    human_qrels, llm_qrels : path, ``{query: {doc: grade}}`` or DataFrame
        The human judgments (the queries they judge are the labelled set) and the LLM's.
    runs : a run, a list of runs or ``{name: run}``.
    measure : the measure (canonical, dialect or ``PRESET:NAME``).
    alpha : error level; the intervals target coverage ``1 - alpha``.
    lam : None (PPI++ tuning), or a fixed lambda in [0, 1] (1: plain PPI).
    alternative : ``"two-sided"``, ``"larger"`` (a lower bound) or ``"smaller"`` (an upper bound).
    preset : tool whose flavor an unprefixed measure takes.
    **knobs : flavor knobs of the measure.

    Returns
    -------
    Estimates

    Examples
    --------
    >>> human = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    >>> llm = {"q1": {"a": 1}, "q2": {"b": 1, "x": 1}, "q3": {"c": 1}, "q4": {"d": 1}, "q5": {"x": 1}}
    >>> run = {"q1": {"a": 2.0, "x": 1.0}, "q2": {"x": 2.0, "b": 1.0}, "q3": {"c": 1.0},
    ...        "q4": {"d": 1.0}, "q5": {"x": 1.0}}
    >>> e = estimate(human, llm, {"bm25": run}, "P@1", lam=1.0)
    >>> r = e["bm25"]
    >>> r.human.n, r.ppi.n_unlabelled, round(r.human.point, 4), round(r.llm.point, 4), round(r.ppi.point, 4)
    (3, 2, 0.6667, 1.0, 0.6667)
    """
    check_alpha(alpha, alternative)
    m = one_measure(measure, preset, knobs)
    names, items = run_names(runs)
    if not items:
        raise UsageError("runs: give at least one run")
    human_table, llm_table = as_qrels(human_qrels), as_qrels(llm_qrels)
    from rankflavor.engine.provenance import describe

    run_info = []
    out = []
    for name, item in zip(names, items, strict=True):
        run = as_run(item)
        run_info.append({"name": name, **describe(item, run)})
        h, g = run_values(human_table, run, m), run_values(llm_table, run, m)
        s = split(h, g)
        human = classical_mean(s.y, alpha, alternative)
        llm = classical_mean(np.concatenate([s.yhat, s.yhat_u]), alpha, alternative, labelled=False)
        ppi = ppi_mean(s.y, s.yhat, s.yhat_u, alpha, lam, alternative)
        ratio = ppi.se / human.se if math.isfinite(ppi.se) and math.isfinite(human.se) and human.se > 0 else math.nan
        out.append(RunEstimate(
            name, human, llm, ppi, ratio, effective_n(human, ppi), tuple(s.human_only.tolist()),
            {"human": h.not_a_number, "llm": g.not_a_number},
            {"human": {"empty=skip": h.skipped_empty, "missing=skip": h.skipped_missing},
             "llm": {"empty=skip": g.skipped_empty, "missing=skip": g.skipped_missing}},
            tuple(s.labelled.tolist()), tuple(s.y.tolist()), tuple(s.yhat.tolist()), tuple(s.unlabelled.tolist()),
            tuple(s.yhat_u.tolist())))
    provenance = {"rankflavor": __version__, "human_qrels": describe(human_qrels, human_table),
                  "llm_qrels": describe(llm_qrels, llm_table), "runs": run_info}
    return Estimates(str(m), m.display, float(alpha), alternative, _tuning(lam), tuple(out), provenance)


__all__ = ["estimate", "one_measure"]
