"""The grade policies an ordering applies: fractional grades and negative grades.

A ranking reads each row's grade under ``fractional`` (keep, truncate toward zero as trec_eval's
``atol``, or refuse) and ``negatives`` (a negative grade is pooled but unjudged as in trec_eval,
counts as 0, or is refused). The tie rules ``pessimistic``/``optimistic`` order by these grades.

Examples
--------
>>> import numpy as np
>>> from rankflavor.order.strategy import Ordering
>>> grade, judged, pooled = row_grades(np.array([2.0, -1.0, np.nan]), Ordering(), truncate=False)
>>> grade.tolist(), judged.tolist(), pooled.tolist()
([2.0, 0.0, 0.0], [True, False, False], [True, True, False])
>>> row_grades(np.array([-1.0]), Ordering(negatives="zero"), truncate=False)[1].tolist()
[True]

Each policy is data (:data:`FRACTIONAL`, :data:`NEGATIVES`): the functions here and
:mod:`rankflavor.torch` read the same tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from rankflavor.errors import InputError
from rankflavor.order.strategy import Ordering

if TYPE_CHECKING:
    from rankflavor.align import Aligned

Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]


#: What the ``fractional`` knob does to a grade with a fractional part: ``keep`` it, ``truncate``
#: it toward zero (trec_eval's ``atol``; -0.5 becomes a judged 0), or ``refuse`` the input.
FRACTIONAL: dict[str, str] = {"keep": "keep", "truncate": "truncate", "error": "refuse"}

#: What the ``negatives`` knob makes of a negative grade: ``unjudged`` (pooled but unjudged: gain
#: 0, never in an ideal, as trec_eval), ``zero`` (a judged grade 0), or ``refuse`` the input.
NEGATIVES: dict[str, str] = {"unjudged": "unjudged", "zero": "zero", "error": "refuse"}


def fractional_error(n: int) -> str:
    """The message of ``fractional=error`` refusing ``n`` judgments (the Spark engine's too)."""
    return (f"{n} judgment(s) have a grade that is not a whole number and the flavor says fractional=error "
            "(pytrec_eval and ir_measures reject them); use fractional=truncate (trec_eval) or fractional=keep")


def negatives_error(n: int) -> str:
    """The message of ``negatives=error`` refusing ``n`` judgments (the Spark engine's too)."""
    return (f"{n} judgment(s) have a negative grade and the flavor says negatives=error; "
            "use negatives=unjudged (trec_eval) or negatives=zero")


def count_fractional(qrels_grade: Floats) -> int:
    """How many judgments have a grade with a fractional part."""
    return int((qrels_grade != np.trunc(qrels_grade)).sum())


def check_grade_policies(aligned: Aligned, ordering: Ordering, n_fractional: int) -> None:
    """Raise what the refusing grade policies refuse: ``fractional=error``, ``negatives=error``
    (``n_fractional``: :func:`count_fractional` of the alignment's judgments)."""
    if FRACTIONAL[ordering.fractional] == "refuse" and n_fractional:
        raise InputError(aligned.qrels_source, None, fractional_error(n_fractional))
    if NEGATIVES[ordering.negatives] == "refuse":
        # Truncated, -0.5 is a 0 (as trec_eval's atol reads it), not a negative grade.
        truncate = truncates(ordering, n_fractional)
        jgrade_all = np.trunc(aligned.qrels_grade) if truncate else aligned.qrels_grade
        negatives = int((jgrade_all < 0).sum())
        if negatives:
            raise InputError(aligned.qrels_source, None, negatives_error(negatives))


def truncates(ordering: Ordering, n_fractional: int) -> bool:
    """Does ``fractional=truncate`` change any grade? (Not of whole grades: no pass over the rows.)"""
    return FRACTIONAL[ordering.fractional] == "truncate" and n_fractional > 0


def row_grades(grade_raw: Floats, ordering: Ordering, truncate: bool) -> tuple[Floats, Flags, Flags]:
    """(grade, judged, pooled) of rows with raw grades ``grade_raw`` (NaN: not in the qrels)
    under the fractional policy (``truncate``: :func:`truncates`) and the negatives policy: a
    negative grade counts as unjudged, or as grade 0."""
    pooled = ~np.isnan(grade_raw)
    if truncate:  # toward zero: -0.5 becomes a judged 0 (not -0), as atol reads it
        grade_raw = np.trunc(grade_raw) + 0.0
    if NEGATIVES[ordering.negatives] == "zero":
        return np.where(pooled, np.maximum(np.nan_to_num(grade_raw), 0.0), 0.0), pooled, pooled
    judged = pooled & ~(grade_raw < 0)
    return np.where(judged, grade_raw, 0.0), judged, pooled


def judgments(aligned: Aligned, ordering: Ordering, truncate: bool) -> tuple[npt.NDArray[np.integer], Floats]:
    """Query codes and grades of the usable judgments (for ideals and R)."""
    jgrade_all = aligned.qrels_grade
    if truncate:
        jgrade_all = np.trunc(jgrade_all) + 0.0
    usable = _usable(jgrade_all, ordering)
    if usable is None:
        return aligned.qrels_q, np.maximum(jgrade_all, 0.0)
    return aligned.qrels_q[usable], jgrade_all[usable]


def usable_judgments(aligned: Aligned, ordering: Ordering, truncate: bool) -> npt.NDArray[np.int64]:
    """The indices of the alignment's judgments that :func:`judgments` keeps, in its order."""
    jgrade_all = np.trunc(aligned.qrels_grade) if truncate else aligned.qrels_grade
    usable = _usable(jgrade_all, ordering)
    return np.arange(len(jgrade_all)) if usable is None else np.flatnonzero(usable)


def _usable(jgrade_all: Floats, ordering: Ordering) -> Flags | None:
    """Which judgments (of grades ``jgrade_all``, truncated if so) are usable; None: every one
    (``negatives=zero`` reads a negative grade as 0)."""
    if NEGATIVES[ordering.negatives] == "zero":
        return None
    usable: Flags = jgrade_all >= 0
    return usable
