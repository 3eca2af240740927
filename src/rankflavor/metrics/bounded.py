"""How the interval of each metric under unjudged documents is found (:mod:`rankflavor.analysis.judgments`).

A separate table, kept beside the metrics so that no module outside ``metrics/`` branches on a
metric's name: :func:`bound_of` gives, for a metric whose interval :func:`rankflavor.bounds` derives
exactly, what the derivation reads (:class:`Bound`), and None for any other metric (refused there).
The proofs are in :mod:`rankflavor.analysis.judgments.extremes` and :mod:`rankflavor.analysis.judgments.ratio`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rankflavor.metrics.registry import MetricSpec


@dataclass(frozen=True)
class Bound:
    """What the exact interval of a metric reads.

    Attributes
    ----------
    search : how its ends are found: ``ratio`` (DCG over an ideal that grows with the graded
        documents: a search over multisets of their gains), ``monotone`` (the value never falls
        as one document's level rises: every document at the greatest / least level) or
        ``relevant_count`` (AP: every count of relevant documents, the earliest / latest ones).
    level : what a document contributes through its grade: ``gain`` (the gain knob),
        ``relevance`` (grade >= rel) or ``stop`` (ERR's stopping probability).
    averages : under ``ties=averaged`` a row earns its tie group's mean gain.
    ideal : the ``ideal`` knob chooses the list the ideal is made of.
    numerator : for a ratio, the metric whose kernel gives its numerator (NDCG's DCG).
    """

    search: str
    level: str
    averages: bool = False
    ideal: bool = False
    numerator: str | None = None


BOUNDS: dict[str, Bound] = {
    "ndcg": Bound("ratio", "gain", averages=True, ideal=True, numerator="dcg"),
    "dcg": Bound("monotone", "gain", averages=True),
    "RBP": Bound("monotone", "gain", averages=True),
    "P": Bound("monotone", "relevance"),
    "AP": Bound("relevant_count", "relevance"),
    "RR": Bound("monotone", "relevance"),
    "ERR": Bound("monotone", "stop"),
    "ERR_gain": Bound("monotone", "stop"),
}


def bound_of(spec: MetricSpec) -> Bound | None:
    """How ``spec``'s interval is derived, or None when it is not (:data:`BOUNDS`)."""
    return BOUNDS.get(spec.name)


def bounded() -> list[str]:
    """The metrics whose interval is derived."""
    return list(BOUNDS)


__all__ = ["BOUNDS", "Bound", "bound_of", "bounded"]
