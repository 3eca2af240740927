"""CSV of an evaluation: the stable columns ``metric,query,value,flavor``, then the counts of each
measure's summary (``n_queries,skipped_empty,skipped_missing``) and each per-query row's
``status``. Values at full precision (repr), text as is.

The columns after ``flavor`` were added later, at the end, so readers of the first four by
position or by name keep working. A per-query row (``-q``) carries its value and ``status``
(``ok``, ``empty``, ``missing``: :class:`rankflavor.engine.results.MeasureResult`) and leaves the counts
empty; the ``all`` row carries the summary and the counts of the JSON's measure (``value``,
``n_queries``, ``skipped_empty``, ``skipped_missing``) and status ``summary``. A measure with no
summary (``relstring``) has an ``all`` row too, with an empty value (the JSON's ``null``, the
table's ``-``), so its count of queries is there without ``-q``.

When the judgments name their label sources (:mod:`rankflavor.io.labels`), a last column ``labels``
holds each summary row's labels per kind (``human=2043;llm=380``); judgments that name none
leave the columns as they were.
"""

from __future__ import annotations

import csv
import io

from rankflavor.engine.results import Results

#: The columns, in order; the first four are the original ones.
COLUMNS = ("metric", "query", "value", "flavor", "n_queries", "skipped_empty", "skipped_missing", "status")


def render_csv(results: Results, per_query: bool) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    sourced = any(m.labels is not None for m in results.measures)
    w.writerow(COLUMNS + (("labels",) if sourced else ()))
    for m in results.measures:
        flavor = str(m.measure)
        name = m.measure.display
        if per_query:
            for q, v, s in zip(m.queries, m.values, m.status, strict=True):
                w.writerow([name, str(q), v if isinstance(v, str) else repr(float(v)), flavor, "", "", "", str(s)]
                           + ([""] if sourced else []))
        value = repr(float(m.summary)) if m.measure.spec.summary != "none" else ""
        w.writerow([name, "all", value, flavor, m.n_queries, m.skipped_empty, m.skipped_missing, "summary"]
                   + ([labels_cell(m.labels)] if sourced else []))
    return buf.getvalue()


def labels_cell(labels: tuple[tuple[str, int], ...] | None) -> str:
    """``human=2043;llm=380`` (empty when the judgments name no source).

    >>> labels_cell((("human", 2043), ("llm", 380)))
    'human=2043;llm=380'
    """
    return ";".join(f"{k}={n}" for k, n in labels or ())


__all__ = ["COLUMNS", "labels_cell", "render_csv"]
