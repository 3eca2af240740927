"""What :func:`rankflavor.identify` returns: the candidate flavors, grouped by what the data can
tell apart, the evidence that would separate them, and the queries no flavor explains."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from rankflavor.base.display import Shown
from rankflavor.metrics.measure import Measure

#: What input makes each knob move the score: the evidence that would separate two flavors the
#: data cannot tell apart on that knob.
KNOB_EVIDENCE: dict[str, str] = {
    "k": "a value at another cutoff, or queries with relevant documents between the cutoffs",
    "gain": "grades other than 0 and 1 (linear and exp2 agree on binary grades)",
    "discount": "relevant documents ranked 2nd or lower",
    "ideal": "relevant judged documents the run did not retrieve in its top k",
    "ideal_cut": "queries that retrieve fewer than k documents (hits), or have more than k relevant judgments (none)",
    "unjudged": "unjudged documents retrieved in the top k",
    "ties": "tied scores in the top k that straddle relevant documents",
    "precision": "scores equal in float32 but not in float64",
    "rel": "grade-1 documents under binary gain",
    "empty": "a query with nothing relevant",
    "missing": "a judged query the run does not answer",
    "fractional": "fractional grades",
    "negatives": "negative grades",
    "max_grade": "grades above the tool's top grade",
    "min_grade": "grades below the tool's relevance level",
    "run_only": "run queries without judgments",
    "self_hits": "documents named like their query",
}


@dataclass(frozen=True)
class Candidate:
    """A flavor that reproduces the reported number(s).

    ``presets``: the presets whose flavor it is; ``changed``: its knobs away from rankflavor's
    defaults (``k=...`` for another cutoff than the stated one); ``mean``: its mean on this input.
    """

    measure: Measure
    presets: tuple[str, ...]
    changed: tuple[str, ...]
    mean: float

    @property
    def flavor(self) -> str:
        return str(self.measure)

    @property
    def label(self) -> str:
        if self.presets:
            return "preset " + " = ".join(self.presets)
        return ", ".join(self.changed) or "rankflavor defaults"

    def to_dict(self) -> dict[str, Any]:
        return {"flavor": self.flavor, "presets": list(self.presets), "changed": list(self.changed),
                "mean": _json(self.mean)}


@dataclass(frozen=True)
class CandidateGroup:
    """Candidates with identical per-query values on this input: the data cannot tell them apart.

    ``indistinct``: the knobs (``k`` for the cutoff) whose values differ among the members, each
    with the values seen; ``evidence``: what input would separate them (:data:`KNOB_EVIDENCE`).
    """

    candidates: tuple[Candidate, ...]
    indistinct: tuple[tuple[str, tuple[str, ...]], ...]
    evidence: tuple[str, ...]

    @property
    def best(self) -> Candidate:
        return self.candidates[0]

    def to_dict(self) -> dict[str, Any]:
        return {"candidates": [c.to_dict() for c in self.candidates],
                "indistinct": {k: list(v) for k, v in self.indistinct},
                "evidence": list(self.evidence)}


@dataclass(frozen=True)
class Separation:
    """Two candidate groups the per-query values would separate, on these queries."""

    first: int
    other: int
    queries: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"first": self.first, "other": self.other, "queries": list(self.queries)}


@dataclass(frozen=True)
class Unexplained:
    """A reported per-query value the nearest flavor misses; unless ``by_some``, no flavor of the
    space reproduces it.

    ``nearest`` is the closest value any flavor gives for that query (None when the query is in
    neither qrels nor run), ``nearest_flavor`` that flavor; ``best_value`` is the value of the
    flavor that explains the most queries (:attr:`Identification.nearest`).
    """

    query: str
    reported: float
    line: int
    nearest: float | None
    nearest_flavor: str | None
    best_value: float | None
    #: Some other flavor reproduces this query (just not together with the rest).
    by_some: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "reported": self.reported, "line": self.line or None, "by_some": self.by_some,
                "nearest": _json(self.nearest), "nearest_flavor": self.nearest_flavor,
                "best_value": _json(self.best_value)}


@dataclass(frozen=True)
class Identification(Shown):
    """Result of :func:`rankflavor.identify`.

    Attributes
    ----------
    measure : the stated measure (metric and cutoff searched around).
    value, tolerance : the reported mean and how close a flavor's mean must be (None without a value).
    per_query_source : where the per-query values came from (None without them).
    rule : the matching rule, in words.
    n_flavors : flavors tried; errors counts those the input refused (a policy set to ``error``).
    groups : the candidate groups, best first (presets first, then fewest non-default knobs).
    separations : for groups that match the mean but differ per query, the queries that differ.
    unexplained : reported per-query values no flavor reproduces.
    nearest, nearest_explained : when no flavor explains every query, the flavor that explains
        the most, and how many.
    n_reported : per-query values read.
    """

    measure: Measure
    value: float | None
    tolerance: float | None
    per_query_source: str | None
    rule: str
    n_flavors: int
    errors: int
    groups: tuple[CandidateGroup, ...]
    separations: tuple[Separation, ...] = ()
    unexplained: tuple[Unexplained, ...] = ()
    nearest: Candidate | None = None
    nearest_explained: int = 0
    n_reported: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def candidates(self) -> list[Candidate]:
        """Every candidate, best first."""
        return [c for g in self.groups for c in g.candidates]

    @property
    def best(self) -> Candidate | None:
        return self.groups[0].best if self.groups else None

    @property
    def explained(self) -> bool:
        """Some flavor reproduces every reported number."""
        return bool(self.groups)

    def to_dict(self) -> dict[str, Any]:
        return {
            "measure": self.measure.name, "value": self.value, "tolerance": self.tolerance,
            "per_query": self.per_query_source, "rule": self.rule, "n_flavors": self.n_flavors,
            "errors": self.errors, "explained": self.explained,
            "groups": [g.to_dict() for g in self.groups],
            "separations": [s.to_dict() for s in self.separations],
            "unexplained": [u.to_dict() for u in self.unexplained],
            "nearest": self.nearest.to_dict() if self.nearest else None,
            "nearest_explained": self.nearest_explained, "n_reported": self.n_reported,
            "notes": list(self.notes),
        }


def _json(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else x


__all__ = ["KNOB_EVIDENCE", "Candidate", "CandidateGroup", "Identification", "Separation", "Unexplained"]
