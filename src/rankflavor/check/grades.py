"""Checks of a judgments table: duplicates, the grade scale it is on, grades that look like a run's
scores, queries with no relevant judgment, grades off a declared scale.

The scale found is named from :data:`rankflavor.judgments.SCALES`: the named scale with the
fewest grades that holds every non-negative grade read (negative labels are read as unjudged by
trec_eval and every named scale).
"""

from __future__ import annotations

import numpy as np

from ..flavor import format_number
from ..judgments.scale import SCALES, Scale
from ..tables import Qrels
from .codes import doc_codes, duplicates, query_codes
from .findings import Finding, Severity, count_of, shown

#: More distinct grades than this is no label scale: the grade column holds scores or ranks.
MAX_GRADES = 10
#: Query ids a message names before "...".
NAMED = 5


def check_qrels(qrels: Qrels, limit: int, scale: Scale | None = None) -> list[Finding]:
    """Every finding of a judgments table (see the module docstring)."""
    if len(qrels) == 0:
        return []
    q, _, ids = query_codes(qrels.query)
    (doc,), n_docs = doc_codes([qrels.doc])
    grade = np.asarray(qrels.grade, dtype=np.float64)
    found = duplicates(qrels, q, doc, n_docs, grade, limit)
    found += _grade_scale(qrels, grade)
    found += _no_relevant(qrels, q, ids, grade)
    if scale is not None:
        found += _off_scale(qrels, grade, scale, limit)
    return found


def scale_of(grades: np.ndarray) -> Scale | None:
    """The named scale with the fewest grades holding every one of ``grades`` (>= 0), or None.

    >>> scale_of(np.array([0.0, 2.0, 3.0])).name, scale_of(np.array([0.0, 1.0])).name, scale_of(np.array([7.0]))
    ('trec_dl', 'msmarco', None)
    """
    fits = [s for s in SCALES.values() if np.isin(grades, s.grades).all()]
    return min(fits, key=lambda s: len(s.grades)) if fits else None


def _grade_scale(qrels: Qrels, grade: np.ndarray) -> list[Finding]:
    values, counts = np.unique(grade, return_counts=True)
    src = qrels.source
    found = []
    if len(values) > MAX_GRADES:
        fractional = int(np.count_nonzero(grade != np.round(grade)))
        found.append(Finding(Severity.WARNING, "looks_like_run", src, None,
                             f"{len(values)} distinct grades ({fractional} rows not whole numbers): the grade column "
                             "looks like a run's scores or ranks, not a label scale; was a run given as QRELS?",
                             len(grade)))
        return found
    histogram = ", ".join(f"{format_number(float(v))}: {c}" for v, c in zip(values.tolist(), counts.tolist(), strict=True))
    plain = values[values >= 0]
    match = scale_of(plain)
    if match is None:
        said = "no named scale holds them (named: " + ", ".join(SCALES) + "); declare your own Scale"
    else:
        exact = "exactly" if len(plain) == len(match.grades) else "within"
        said = f"{exact} the {match.describe()}"
    found.append(Finding(Severity.INFO, "grade_scale", src, None, f"grades {histogram}; {said}", len(grade)))
    negative = int(np.count_nonzero(grade < 0))
    if negative:
        at = int(np.flatnonzero(grade < 0)[0])
        found.append(Finding(Severity.INFO, "negative_grades", src, qrels.line_of(at),
                             f"{negative} judgments have a negative grade: trec_eval reads them as pooled but unjudged "
                             "(gain 0, never relevant, not judged non-relevant for bpref; knob negatives)", negative))
    fractional = int(np.count_nonzero(grade != np.round(grade)))
    if fractional:
        at = int(np.flatnonzero(grade != np.round(grade))[0])
        found.append(Finding(Severity.INFO, "fractional_grades", src, qrels.line_of(at),
                             f"{fractional} grades are not whole numbers (aggregated raters?)", fractional))
    return found


def _no_relevant(qrels: Qrels, q: np.ndarray, ids: list[str], grade: np.ndarray) -> list[Finding]:
    """Queries none of whose judgments has a grade above 0 (every gain-based measure is empty there)."""
    best = np.full(len(ids), -np.inf)
    np.maximum.at(best, q, grade)
    none = np.flatnonzero(best <= 0)
    if len(none) == 0:
        return []
    names = ", ".join(shown(ids[k]) for k in none[:NAMED].tolist()) + (", ..." if len(none) > NAMED else "")
    return [Finding(Severity.INFO, "no_relevant", qrels.source, None,
                    f"{count_of(len(none), 'query', 'queries')} with no judgment above grade 0 ({names}): NDCG and "
                    "AP are empty there (knob empty)", len(none))]


def _off_scale(qrels: Qrels, grade: np.ndarray, scale: Scale, limit: int) -> list[Finding]:
    """Grades the declared ``scale`` does not have, by :meth:`Scale.check`'s rule, each line listed."""
    ok = np.isin(grade, np.asarray(scale.grades))
    if scale.negatives != "error":
        ok |= grade < 0
    bad = np.flatnonzero(~ok)
    if len(bad) == 0:
        return []
    listed_grades = ", ".join(format_number(g) for g in scale.grades)
    found = [Finding(Severity.ERROR, "off_scale", qrels.source, qrels.line_of(r),
                     f"grade {format_number(float(grade[r]))} is not on the {scale.name} scale (grades {listed_grades})")
             for r in bad[:limit].tolist()]
    if len(bad) > limit:
        found.append(Finding(Severity.ERROR, "off_scale", qrels.source, None,
                             f"{len(bad) - limit} more grades off the {scale.name} scale not listed", len(bad) - limit))
    return found
