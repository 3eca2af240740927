"""How far labels of other sources close the holes of one kind's judgments (issue 37).

When judgments name more than one source kind (people's labels, and an LLM's or clicks' filling
the documents people did not judge), :func:`rankflavor.judgments` also bounds every run on the
*base* kind's labels alone. The difference is what the filling bought: the unjudged documents of
each run's top k before and after, and each measure's mean interval before and after. An interval
over the base labels alone holds the value under *every* grading of those holes; after filling,
the holes the fill judged are fixed at the fill's grades, so the interval shrinks by exactly what
those labels decided (and the number rests on them: its flavor string says ``sources=...``).

The base kind is the preferred one of ``--labels prefer=KIND``; with ``--labels any`` it is
``human`` when people's labels are among the kinds; otherwise (one kind chosen, or no human
labels) there is nothing to compare and no such section.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from rankflavor.io.tables import Qrels


@dataclass(frozen=True)
class FilledMeasure:
    """One measure's mean interval on the base labels alone (``before``) and on every label chosen
    (``after``); ``measure`` is the flavor string of the latter."""

    measure: str
    before: tuple[float, float]
    after: tuple[float, float]

    @property
    def widths(self) -> tuple[float, float]:
        return self.before[1] - self.before[0], self.after[1] - self.after[0]


@dataclass(frozen=True)
class FilledRun:
    """One run: unjudged documents of its top k before and after the fill, and its measures."""

    run: str
    k: int | None
    holes_before: int
    holes_after: int
    #: Queries of the run the judgments judge, before and after (the fill may judge more queries;
    #: then the two means are over different queries, and the renderers say so).
    queries_before: int
    queries_after: int
    measures: tuple[FilledMeasure, ...]


@dataclass(frozen=True)
class Filled:
    """What the labels of ``fillers`` (source kinds) bought over the ``base`` kind's alone."""

    base: str
    fillers: tuple[str, ...]
    runs: tuple[FilledRun, ...]

    def to_dict(self) -> dict[str, Any]:
        def f(x: float) -> float | None:
            return x if x == x and abs(x) != float("inf") else None

        return {"base": self.base, "fillers": list(self.fillers),
                "runs": [{"run": r.run, "k": r.k, "unjudged_in_top_k": {"before": r.holes_before, "after": r.holes_after},
                          "queries": {"before": r.queries_before, "after": r.queries_after},
                          "measures": [{"measure": m.measure,
                                        "before": {"lower": f(m.before[0]), "upper": f(m.before[1])},
                                        "after": {"lower": f(m.after[0]), "upper": f(m.after[1])}}
                                       for m in r.measures]}
                         for r in self.runs]}


def base_kind(qrels: Qrels) -> tuple[str, tuple[str, ...]] | None:
    """The kind whose labels alone are the "before", and the other kinds present; None when the
    judgments are of one kind (or name none), or no base applies (module docstring)."""
    if qrels.label_source is None:
        return None
    from rankflavor.io.labels.sources import kind_codes, ordered_kinds

    kinds, codes = kind_codes(qrels.label_source)
    present = ordered_kinds([kinds[c] for c in np.unique(codes)])
    if len(present) < 2:
        return None
    rule = qrels.label_rule or "any"
    if rule.startswith("prefer="):
        base = rule.split("=", 1)[1]
    elif rule == "any" and "human" in present:
        base = "human"
    else:
        return None
    return (base, tuple(k for k in present if k != base)) if base in present else None


def filled(base: str, fillers: tuple[str, ...], before: list[Any], after: list[Any]) -> Filled:
    """Each run's coverage on the ``base`` kind's labels alone (``before``) beside its coverage on
    every label chosen (``after``): :class:`~rankflavor.analysis.judgments.RunCoverage` lists in one order."""
    out = []
    for b, a in zip(before, after, strict=True):
        measures = tuple(FilledMeasure(str(ma.measure), (mb.lower_mean, mb.upper_mean), (ma.lower_mean, ma.upper_mean))
                         for mb, ma in zip(b.bounds.measures, a.bounds.measures, strict=True))
        out.append(FilledRun(a.name, a.k, int(b.unjudged.sum()), int(a.unjudged.sum()), len(b.queries), len(a.queries),
                             measures))
    return Filled(base, fillers, tuple(out))


__all__ = ["Filled", "FilledMeasure", "FilledRun", "base_kind", "filled"]
