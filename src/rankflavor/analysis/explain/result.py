"""What :func:`rankflavor.analysis.explain.api.explain` returns: one query's measure, position by position.

Plain values (ranked documents, the ideal list, the documents left out, notes) with a JSON-ready
:meth:`Explanation.to_dict`; :mod:`rankflavor.render.explainfmt` prints them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rankflavor.metrics.measure import Measure


@dataclass(frozen=True)
class Position:
    """One ranked document that the flavor keeps.

    Attributes
    ----------
    rank : 1-based rank after the flavor's ordering, depth and condensing.
    doc, score : the document and its score as read; ``line`` is its line in the run file.
    grade : judged grade, or None when unjudged; ``judged`` is False also for negative grades
        under ``negatives=unjudged``.
    raw_gain : gain of the grade; ``gain`` is what enters DCG (the tie group's mean under
        ``ties=averaged``).
    discount : the divisor at this rank (``log2(rank + 1)`` for log2): contribution = gain / discount.
    contribution, cumulative : this rank's share of DCG and DCG up to here; 0 and unchanged
        below the cutoff.
    in_cut : the rank is within the cutoff k.
    tie_group : ``T1``, ``T2``... for rows whose score ties another row's, else None.
    """

    rank: int
    doc: str
    score: float
    grade: float | None
    judged: bool
    raw_gain: float
    gain: float
    discount: float
    contribution: float
    cumulative: float
    in_cut: bool
    tie_group: str | None
    line: int | None


@dataclass(frozen=True)
class IdealSlot:
    """One slot of the ideal list (within its cut).

    ``doc`` is None where the ideal is not made of documents (``ideal=max``) or their ids are not
    recoverable; ``retrieved_rank`` is the document's rank in the evaluated list, if it is there.
    """

    rank: int
    doc: str | None
    grade: float | None
    gain: float
    discount: float
    contribution: float
    cumulative: float
    retrieved_rank: int | None


@dataclass(frozen=True)
class Ignored:
    """A retrieved document that does not enter DCG, and why.

    ``kind`` is one of ``duplicate``, ``self_hit``, ``depth``, ``condensed``, ``cutoff``;
    ``reason`` says it in words, with the knob responsible.
    """

    doc: str
    score: float
    grade: float | None
    kind: str
    reason: str
    line: int | None


@dataclass(frozen=True)
class Explanation:
    """What :func:`rankflavor.analysis.explain.api.explain` returns.

    Attributes
    ----------
    query : the query id.
    measure : the measure explained (``flavor`` is its canonical string).
    status : ``ok``, ``empty`` (nothing relevant: IDCG = 0), ``missing`` (not in the run).
    dcg, idcg : DCG at the cutoff and the ideal's DCG (``idcg`` None for a metric without an ideal: dcg).
    ndcg : the value evaluate() reports for this query (after the ``empty``/``missing`` policy),
        None when the policy leaves the query out (``skip``) or refuses it (``error``); None for
        a metric without an ideal (see ``value``).
    value : the evaluate() value of the measure itself (NDCG or DCG), or None as above.
    ideal_cut : how many ideal slots count (None = all).
    rows, ideal, ignored : the ranked documents, the ideal list, the documents left out.
    notes : how the flavor treated this query (tie rule, policies applied, errors).
    """

    query: str
    measure: Measure
    status: str
    dcg: float
    idcg: float | None
    ndcg: float | None
    value: float | None
    ideal_cut: int | None
    rows: tuple[Position, ...]
    ideal: tuple[IdealSlot, ...]
    ignored: tuple[Ignored, ...]
    notes: tuple[str, ...]

    @property
    def flavor(self) -> str:
        return str(self.measure)

    @property
    def tie_groups(self) -> dict[str, list[int]]:
        """``{group label: [ranks]}`` for every group of tied scores."""
        out: dict[str, list[int]] = {}
        for r in self.rows:
            if r.tie_group:
                out.setdefault(r.tie_group, []).append(r.rank)
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``dcg``, ``idcg``, ``ndcg``, ``flavor``, ``rows``, ``ideal``, ``ignored`` and more."""
        return {
            "query": self.query,
            "flavor": self.flavor,
            "metric": self.measure.metric,
            "k": self.measure.k,
            "status": self.status,
            "dcg": _json(self.dcg),
            "idcg": _json(self.idcg),
            "ndcg": _json(self.ndcg),
            "value": _json(self.value),
            "ideal_cut": self.ideal_cut,
            "rows": [
                {"rank": r.rank, "doc": r.doc, "score": _json(r.score), "grade": _json(r.grade), "judged": r.judged,
                 "raw_gain": r.raw_gain, "gain": r.gain, "discount": r.discount, "contribution": r.contribution,
                 "cumulative": r.cumulative, "in_cut": r.in_cut, "tie_group": r.tie_group, "line": r.line}
                for r in self.rows
            ],
            "ideal": [
                {"rank": s.rank, "doc": s.doc, "grade": _json(s.grade), "gain": s.gain, "discount": s.discount,
                 "contribution": s.contribution, "cumulative": s.cumulative, "retrieved_rank": s.retrieved_rank}
                for s in self.ideal
            ],
            "ignored": [
                {"doc": i.doc, "score": _json(i.score), "grade": _json(i.grade), "kind": i.kind, "reason": i.reason,
                 "line": i.line}
                for i in self.ignored
            ],
            "tie_groups": self.tie_groups,
            "notes": list(self.notes),
        }


def _json(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


__all__ = ["Explanation", "IdealSlot", "Ignored", "Position"]
