"""Checks of a judgments table: duplicates, the grade scale it is on, grades that look like a run's
scores, queries with no relevant judgment, grades off a declared scale.

The scale found is named from :data:`rankflavor.analysis.judgments.SCALES`: the named scale with the
fewest grades that holds every non-negative grade read (negative labels are read as unjudged by
trec_eval and every named scale).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankflavor.analysis.check.codes import Duplicates, doc_codes, duplicate_facts, duplicate_findings, query_codes
from rankflavor.analysis.check.facts import First, Histogram, Listed, Names, first, order_of
from rankflavor.analysis.check.findings import Finding, Severity, count_of
from rankflavor.flavor.flavor import format_number
from rankflavor.io.tables import Qrels
from rankflavor.presets.scales import SCALES, Scale

#: More distinct grades than this is no label scale: the grade column holds scores or ranks.
MAX_GRADES = 10


def check_qrels(qrels: Qrels, limit: int, scale: Scale | None = None) -> list[Finding]:
    """Every finding of a judgments table (see the module docstring)."""
    return qrels_findings(qrels_facts(qrels, limit, scale), qrels.source, scale)


@dataclass(frozen=True)
class QrelsFacts:
    """What the checks of a judgments table find (:mod:`rankflavor.analysis.check.facts`): ``distinct``
    grades is exact while ``grades`` holds them all (at most :data:`MAX_GRADES`), else the
    caller's count (:func:`qrels_findings` words it)."""

    rows: int
    duplicates: Duplicates | None
    grades: Histogram
    distinct: int
    fractional: int
    first_fractional: First | None
    negative: int
    first_negative: First | None
    no_relevant: Names
    off_scale: Listed | None


def qrels_facts(qrels: Qrels, limit: int, scale: Scale | None = None, at: np.ndarray | None = None
                ) -> QrelsFacts | None:
    """The facts of a judgments table (None: no row); ``at``: each row's input order (None: its
    index)."""
    if len(qrels) == 0:
        return None
    q, _, ids = query_codes(qrels.query)
    (doc,), n_docs = doc_codes([qrels.doc])
    grade = np.asarray(qrels.grade, dtype=np.float64)
    whole = grade == np.round(grade)
    histogram = Histogram.of(grade, MAX_GRADES)
    best = np.full(len(ids), -np.inf)
    np.maximum.at(best, q, grade)
    off = None
    if scale is not None:
        ok = np.isin(grade, np.asarray(scale.grades))
        if scale.negatives != "error":
            ok |= grade < 0
        bad = np.flatnonzero(~ok)
        off = Listed(limit, len(bad), tuple((o, qrels.line_of(r), float(grade[r]))
                                           for o, r in zip(order_of(at, bad[:limit]), bad[:limit].tolist(), strict=True)))
    return QrelsFacts(
        len(grade), duplicate_facts(qrels, q, doc, n_docs, grade, limit, at), histogram,
        len(histogram.values) if histogram.values is not None else len(np.unique(grade)),
        int(np.count_nonzero(~whole)), first(at, qrels.line_of, np.flatnonzero(~whole)),
        int(np.count_nonzero(grade < 0)), first(at, qrels.line_of, np.flatnonzero(grade < 0)),
        Names.of(ids[k] for k in np.flatnonzero(best <= 0).tolist()), off)


def qrels_findings(facts: QrelsFacts | None, source: str, scale: Scale | None = None) -> list[Finding]:
    """The findings of :func:`qrels_facts`, in the order the checks run."""
    if facts is None:
        return []
    found = duplicate_findings(facts.duplicates, "qrels", source)
    found += _grade_scale(facts, source)
    if facts.no_relevant.count:
        found.append(Finding(Severity.INFO, "no_relevant", source, None,
                             f"{count_of(facts.no_relevant.count, 'query', 'queries')} with no judgment above grade 0 "
                             f"({facts.no_relevant.text()}): NDCG and AP are empty there (knob empty)",
                             facts.no_relevant.count))
    if scale is not None and facts.off_scale is not None:
        found += _off_scale(facts.off_scale, source, scale)
    return found


def scale_of(grades: np.ndarray) -> Scale | None:
    """The named scale with the fewest grades holding every one of ``grades`` (>= 0), or None.

    >>> scale_of(np.array([0.0, 2.0, 3.0])).name, scale_of(np.array([0.0, 1.0])).name, scale_of(np.array([7.0]))
    ('trec_dl', 'msmarco', None)
    """
    fits = [s for s in SCALES.values() if np.isin(grades, s.grades).all()]
    return min(fits, key=lambda s: len(s.grades)) if fits else None


def _grade_scale(facts: QrelsFacts, source: str) -> list[Finding]:
    found = []
    if facts.grades.values is None:
        found.append(Finding(Severity.WARNING, "looks_like_run", source, None,
                             f"{facts.distinct} distinct grades ({facts.fractional} rows not whole numbers): the grade "
                             "column looks like a run's scores or ranks, not a label scale; was a run given as QRELS?",
                             facts.rows))
        return found
    histogram = ", ".join(f"{format_number(float(v))}: {c}" for v, c in facts.grades.values)
    plain = np.array([v for v, _ in facts.grades.values if v >= 0], dtype=np.float64)
    match = scale_of(plain)
    if match is None:
        said = "no named scale holds them (named: " + ", ".join(SCALES) + "); declare your own Scale"
    else:
        exact = "exactly" if len(plain) == len(match.grades) else "within"
        said = f"{exact} the {match.describe()}"
    found.append(Finding(Severity.INFO, "grade_scale", source, None, f"grades {histogram}; {said}", facts.rows))
    if facts.first_negative is not None:
        found.append(Finding(Severity.INFO, "negative_grades", source, facts.first_negative.line,
                             f"{facts.negative} judgments have a negative grade: trec_eval reads them as pooled but "
                             "unjudged (gain 0, never relevant, not judged non-relevant for bpref; knob negatives)",
                             facts.negative))
    if facts.first_fractional is not None:
        found.append(Finding(Severity.INFO, "fractional_grades", source, facts.first_fractional.line,
                             f"{facts.fractional} grades are not whole numbers (aggregated raters?)", facts.fractional))
    return found


def _off_scale(off: Listed, source: str, scale: Scale) -> list[Finding]:
    """Grades the declared ``scale`` does not have, by :meth:`Scale.check`'s rule, each line listed."""
    listed_grades = ", ".join(format_number(g) for g in scale.grades)
    found = [Finding(Severity.ERROR, "off_scale", source, line,
                     f"grade {format_number(g)} is not on the {scale.name} scale (grades {listed_grades})")
             for _, line, g in off.rows]
    if off.count > off.limit:
        found.append(Finding(Severity.ERROR, "off_scale", source, None,
                             f"{off.count - off.limit} more grades off the {scale.name} scale not listed",
                             off.count - off.limit))
    return found
