"""CSV with stable columns ``metric,query,value,flavor``; values at full precision (repr), text as is."""

from __future__ import annotations

import csv
import io

from ..results import Results


def render_csv(results: Results, per_query: bool) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["metric", "query", "value", "flavor"])
    for m in results.measures:
        flavor = str(m.measure)
        name = m.measure.display
        if per_query:
            for q, v in zip(m.queries, m.values, strict=True):
                w.writerow([name, str(q), v if isinstance(v, str) else repr(float(v)), flavor])
        if m.measure.spec.summary != "none":  # per-query-only metrics (relstring) have no summary
            w.writerow([name, "all", repr(float(m.summary)), flavor])
    return buf.getvalue()
