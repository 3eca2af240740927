"""What :func:`rankflavor.estimate` returns: per run, three estimates of one measure's mean."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from rankflavor.analysis.estimate.ppi import Interval
from rankflavor.base.finite import json_number, undefined

#: The three estimators, in the order every format shows them: key -> label.
ESTIMATORS = {"human": "human only", "llm": "LLM only", "ppi": "PPI"}

#: What each estimator estimates (every format says it).
MEANINGS = {
    "human": "mean of the human-judged values of the labelled queries: valid for the human-judged target",
    "llm": "mean of the LLM-judged values of every query the LLM judgments judge: an estimate of the "
           "LLM-judged metric, NOT valid for the human-judged target (the judge's errors bias it)",
    "ppi": "prediction-powered: the LLM-judged mean of the unlabelled queries corrected by the "
           "human-minus-LLM difference on the labelled ones; valid for the human-judged target",
}

#: What the validity of the human-only and PPI intervals assumes.
ASSUMPTION = ("the human-only and PPI intervals are valid for the mean over all these queries when the "
              "labelled queries are a random sample of them")


@dataclass(frozen=True)
class RunEstimate:
    """One run's estimates.

    Attributes
    ----------
    name : the run's name.
    human, llm, ppi : the three :class:`~rankflavor.analysis.estimate.ppi.Interval` estimates.
    width_ratio : PPI's standard error over human-only's (its interval width relative to
        human-only's; below 1: the LLM labels narrowed it). NaN when either is undefined.
    effective_n : the labelled queries a human-only interval would need to be as narrow as PPI's
        (``n * (se_human / se_ppi)^2``); NaN when either standard error is undefined or 0.
    human_only_queries : queries with a value under the human judgments and none under the LLM's
        (no estimate reads them).
    not_a_number : per side (``human``, ``llm``), queries whose value was NaN (``empty=nan``).
    skipped : per side, queries the measure's ``empty=skip``/``missing=skip`` left out.
    labelled, unlabelled : the query ids, and ``y``, ``yhat``, ``yhat_u`` their values (JSON's
        ``per_query``).
    """

    name: str
    human: Interval
    llm: Interval
    ppi: Interval
    width_ratio: float
    effective_n: float
    human_only_queries: tuple[str, ...]
    not_a_number: dict[str, tuple[str, ...]]
    skipped: dict[str, dict[str, int]]
    labelled: tuple[str, ...] = ()
    y: tuple[float, ...] = ()
    yhat: tuple[float, ...] = ()
    unlabelled: tuple[str, ...] = ()
    yhat_u: tuple[float, ...] = ()

    def estimates(self) -> dict[str, Interval]:
        return {"human": self.human, "llm": self.llm, "ppi": self.ppi}

    @property
    def undefined(self) -> dict[str, str]:
        why = {}
        if math.isnan(self.width_ratio):
            why["width_ratio"] = "nan: needs the standard errors of human-only (above 0) and PPI, both defined"
        if math.isnan(self.effective_n):
            why["effective_n"] = "nan: needs the standard errors of human-only and PPI, both defined and non-zero"
        return why

    def notes(self) -> list[str]:
        """Sentences about the queries no estimate read."""
        out = []
        if self.human_only_queries:
            few = ", ".join(self.human_only_queries[:5]) + (", ..." if len(self.human_only_queries) > 5 else "")
            out.append(f"{len(self.human_only_queries)} query(ies) have a value under the human judgments and none "
                       f"under the LLM's ({few}): no LLM value pairs with them, so no estimate reads them")
        for side, qs in self.not_a_number.items():
            if qs:
                out.append(f"{len(qs)} query(ies) are NaN under the {side} judgments (empty=nan): left out")
        for side, counts in self.skipped.items():
            for what, k in counts.items():
                if k:
                    out.append(f"{k} query(ies) skipped under the {side} judgments by the measure's {what}")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "estimates": {k: {"label": ESTIMATORS[k], **v.to_dict()} for k, v in self.estimates().items()},
            "width_ratio": json_number(self.width_ratio), "effective_n": json_number(self.effective_n),
            "human_only_queries": list(self.human_only_queries),
            "not_a_number": {k: list(v) for k, v in self.not_a_number.items()},
            "skipped": self.skipped, "notes": self.notes(),
            "per_query": {"labelled": [{"query": q, "human": y, "llm": h}
                                       for q, y, h in zip(self.labelled, self.y, self.yhat, strict=True)],
                          "unlabelled": [{"query": q, "llm": h} for q, h in zip(self.unlabelled, self.yhat_u,
                                                                                 strict=True)]},
            **undefined(self.undefined),
        }


@dataclass(frozen=True)
class Estimates:
    """What :func:`rankflavor.estimate` returns: the settings, then one :class:`RunEstimate` per run.

    Attributes
    ----------
    measure : the measure's canonical flavor string; name : its short name.
    alpha, alternative : the intervals' error level and sidedness.
    tuning : ``"ppi++"`` (lambda tuned), ``"ppi"`` (lambda = 1) or ``"lambda=<x>"``.
    runs : per run.
    provenance : the judgments' and runs' sources and content hashes, rankflavor's version.
    """

    measure: str
    name: str
    alpha: float
    alternative: str
    tuning: str
    runs: tuple[RunEstimate, ...]
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def level(self) -> float:
        return 1.0 - self.alpha

    def __getitem__(self, name: str) -> RunEstimate:
        for r in self.runs:
            if r.name == name:
                return r
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {"measure": self.measure, "name": self.name, "alpha": self.alpha, "level": self.level,
                "alternative": self.alternative, "tuning": self.tuning, "assumption": ASSUMPTION,
                "meanings": dict(MEANINGS), "runs": [r.to_dict() for r in self.runs], "provenance": self.provenance}


__all__ = ["ASSUMPTION", "ESTIMATORS", "MEANINGS", "Estimates", "RunEstimate"]
