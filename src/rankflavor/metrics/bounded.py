"""How the interval of each metric under unjudged documents is found (:mod:`rankflavor.judgments`).

A separate table, kept beside the metrics so that no module outside ``metrics/`` branches on a
metric's name: :func:`bound_of` gives, for a metric whose interval :func:`rankflavor.bounds` derives
exactly, what the derivation reads (:class:`Bound`), and None for any other metric (refused there).
The proofs are in :mod:`rankflavor.judgments.extremes` and :mod:`rankflavor.judgments.ratio`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .registry import MetricSpec


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
    value : the formula a grading is scored by: ``ratio``, ``discounted_gain`` (DCG),
        ``scaled_gain`` (RBP: gain / gain(G), weight (1 - p) p^(rank - 1)), ``precision``,
        ``average_precision``, ``reciprocal_rank`` or ``cascade`` (ERR).
    averages : under ``ties=averaged`` a row earns its tie group's mean gain.
    ideal : the ``ideal`` knob chooses the list the ideal is made of.
    """

    search: str
    level: str
    value: str
    averages: bool = False
    ideal: bool = False


BOUNDS: dict[str, Bound] = {
    "ndcg": Bound("ratio", "gain", "ratio", averages=True, ideal=True),
    "dcg": Bound("monotone", "gain", "discounted_gain", averages=True),
    "RBP": Bound("monotone", "gain", "scaled_gain", averages=True),
    "P": Bound("monotone", "relevance", "precision"),
    "AP": Bound("relevant_count", "relevance", "average_precision"),
    "RR": Bound("monotone", "relevance", "reciprocal_rank"),
    "ERR": Bound("monotone", "stop", "cascade"),
}


def bound_of(spec: MetricSpec) -> Bound | None:
    """How ``spec``'s interval is derived, or None when it is not (:data:`BOUNDS`)."""
    return BOUNDS.get(spec.name)


def bounded() -> list[str]:
    """The metrics whose interval is derived."""
    return list(BOUNDS)


__all__ = ["BOUNDS", "Bound", "bound_of", "bounded"]
