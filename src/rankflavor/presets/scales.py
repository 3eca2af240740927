"""The label scale, declared once: grades, relevance threshold, gain table, top grade G and the
rule for negative labels.

A :class:`Scale` maps onto flavor knobs (``rel``, ``negatives``, ``gain`` when the scale has its
own table, and ``max_grade`` where the top grade changes the number), so every metric and every
backend honours it by construction; its one check of its own is the grade domain
(:meth:`Scale.check`), which names the file and line of a grade off the scale. G is taken from
the scale, never from the data (ERR, ``ideal=max``, RBP's g/G and the upper bound of
:func:`rankflavor.bounds` read it).

Examples
--------
>>> s = scale_named("trec_dl")
>>> s.grades, s.rel, s.top
((0.0, 1.0, 2.0, 3.0), 2.0, 3.0)
>>> from rankflavor.metrics.measure import parse_measure
>>> str(s.apply(parse_measure("P@10")))
'P@10[rel=2,unjudged=zero,negatives=unjudged,ties=docno_desc,precision=float64,depth=none,duplicates=error,missing=zero,empty=zero]'
>>> "max_grade" in str(s.apply(parse_measure("ndcg@10")))  # G does not change a global-ideal NDCG
False
>>> s.apply(parse_measure("ERR@10")).knobs["max_grade"]
'3'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankflavor.errors import FlavorError, InputError, did_you_mean
from rankflavor.flavor.flavor import Flavor, format_number, table_text
from rankflavor.io.tables import Qrels
from rankflavor.metrics.measure import Measure


@dataclass(frozen=True)
class Scale:
    """A label scale.

    Attributes
    ----------
    name : what it is called (``trec_dl``, or a caller's own name).
    grades : the non-negative grades a judgment may carry, ascending.
    rel : relevance threshold: a judged document is relevant when grade >= rel (knob ``rel``).
    top : the top grade G (knob ``max_grade`` where it changes the number; the upper bound).
    gains : the scale's own ``{grade: gain}`` table (knob ``gain``), or None to keep each
        metric's ``gain`` knob.
    negatives : the negative-label rule (knob ``negatives``): ``unjudged`` (a negative label marks
        a pooled but unjudged document, as trec_eval reads -1), ``zero`` (judged non-relevant) or
        ``error`` (a negative label is off the scale).
    doc : one line saying where the scale comes from.
    """

    name: str
    grades: tuple[float, ...]
    rel: float
    top: float
    gains: tuple[tuple[float, float], ...] | None = None
    negatives: str = "unjudged"
    doc: str = ""

    def __post_init__(self) -> None:
        grades = tuple(sorted(float(g) for g in self.grades))
        object.__setattr__(self, "grades", grades)
        object.__setattr__(self, "rel", float(self.rel))
        object.__setattr__(self, "top", float(self.top))
        if not grades or grades[0] < 0:
            raise FlavorError(f"scale {self.name!r}: grades must be non-negative and not empty")
        if float(self.top) != grades[-1]:
            raise FlavorError(f"scale {self.name!r}: the top grade G={format_number(self.top)} must be its largest grade")
        if self.negatives not in ("unjudged", "zero", "error"):
            raise FlavorError(f"scale {self.name!r}: negatives must be unjudged, zero or error")

    def knobs(self) -> dict[str, str]:
        """The knobs every measure under this scale starts from (``max_grade`` apart: :meth:`apply`)."""
        out = {"rel": format_number(self.rel), "negatives": self.negatives}
        if self.gains is not None:
            out["gain"] = table_text(self.gains)
        return out

    def flavor(self, base: Flavor | None = None) -> Flavor:
        """``base`` (default flavor) with the scale's knobs."""
        return (base or Flavor()).with_knobs(**self.knobs())

    def measure(self, measure: str | Measure) -> Measure:
        """``measure`` under this scale. Text is parsed over the scale's knobs (knobs written in
        its brackets win); a :class:`Measure` takes the scale's knobs where it left them at their
        defaults. Then ``max_grade`` is set where G changes the value
        (:meth:`~rankflavor.metrics.MetricSpec.needs_top_grade`); a measure naming another G
        contradicts the scale: FlavorError."""
        from rankflavor.metrics.measure import parse_measure

        if isinstance(measure, str):
            m = parse_measure(measure, base=self.flavor())
        else:
            default = Flavor()
            unset = {k: v for k, v in self.knobs().items() if getattr(measure.flavor, k) == getattr(default, k)}
            m = measure.with_knobs(**unset) if unset else measure
        return self.with_top_grade(m)

    def with_top_grade(self, m: Measure) -> Measure:
        """``m`` with ``max_grade`` = G where G changes its value; a measure naming another G
        contradicts the scale: FlavorError. (Its other knobs are left as they are.)"""
        current = m.flavor.top_grade
        if current is not None and current != self.top:
            raise FlavorError(
                f"{m.name} sets max_grade={format_number(current)} but the {self.name} scale's top grade is "
                f"{format_number(self.top)}; declare G once"
            )
        if current is None and m.spec.needs_top_grade(m.flavor):
            m = m.with_knobs(max_grade=format_number(self.top))
        return m

    #: Alias kept short for callers holding a Measure.
    apply = measure

    def check(self, qrels: Qrels) -> None:
        """Raise :class:`~rankflavor.errors.InputError` at the first grade off the scale, naming
        its file and line."""
        grade = np.asarray(qrels.grade, dtype=np.float64)
        allowed = np.asarray(self.grades)
        ok = np.isin(grade, allowed)
        if self.negatives != "error":
            ok |= grade < 0
        if ok.all():
            return
        row = int(np.flatnonzero(~ok)[0])
        raise self.off_scale(qrels.source, qrels.line_of(row), float(grade[row]), int((~ok).sum()))

    def off_scale(self, source: str, line: int | None, grade: float, bad: int) -> InputError:
        """The error for ``bad`` grades off the scale, the first at ``source:line`` (every
        backend words it the same)."""
        listed = ", ".join(format_number(g) for g in self.grades)
        neg = "" if self.negatives == "error" else " (or a negative label)"
        return InputError(
            source, line,
            f"grade {format_number(grade)} is not on the {self.name} scale (grades {listed}{neg}); "
            f"{bad} judgment(s) are off it. Remap the grades or declare the scale that fits them",
        )

    def describe(self) -> str:
        listed = ",".join(format_number(g) for g in self.grades)
        return f"{self.name}: grades {{{listed}}}, relevant >= {format_number(self.rel)}, G = {format_number(self.top)}"


#: The named scales (``--scale NAME``).
SCALES: dict[str, Scale] = {
    s.name: s
    for s in (
        Scale("trec_dl", (0, 1, 2, 3), rel=2, top=3,
              doc="TREC Deep Learning 2019-2023: 0 irrelevant .. 3 perfectly relevant; relevant >= 2 "
                  "(the track's binary measures)."),
        Scale("msmarco", (0, 1), rel=1, top=1, doc="MS MARCO passage/document dev qrels: binary."),
        Scale("beir", (0, 1, 2), rel=1, top=2, doc="BEIR test qrels: 0-2 (TREC-COVID, NFCorpus, Touché); relevant >= 1."),
        Scale("ecommerce", (0, 1, 2, 3, 4), rel=3, top=4,
              doc="A five-point product-search scale: 0 irrelevant .. 4 exact match; relevant >= 3 "
                  "(good or better). Declare a Scale of your own if yours differs."),
    )
}


def scale_named(name: str | Scale | None) -> Scale | None:
    """The :class:`Scale` called ``name`` (a Scale passes through; None stays None)."""
    if name is None or isinstance(name, Scale):
        return name
    key = str(name).strip().lower()
    if key not in SCALES:
        raise FlavorError(
            f"unknown label scale {name!r}; named scales: {', '.join(SCALES)}." + did_you_mean(key, list(SCALES))
        )
    return SCALES[key]


__all__ = ["SCALES", "Scale", "scale_named"]
