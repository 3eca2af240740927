"""trec_eval's own ``-q`` layout, so scripts that parse trec_eval keep working.

``printf("%-22s\\t%s\\t%6.4f\\n")`` per line; counts as integers; topics in byte order, each with
its measures in trec_eval's table order; then the ``all`` block. Like trec_eval 9.0.8, no
per-topic rows are printed for topics missing from the run. Geometric-mean measures (gm_map,
gm_bpref) print only their summary; text measures (relstring) only per topic, quoted.
"""

from __future__ import annotations

import math

from rankflavor.engine.results import MISSING, MeasureResult, Results, plain_value
from rankflavor.presets.trec_eval import sort_key


def _name(m: MeasureResult) -> str:
    return m.measure.label or m.measure.name


def _value(m: MeasureResult, v: float | str) -> str:
    if isinstance(v, str):
        return f"'{v}'"
    if math.isnan(v):
        # As C's printf: the sign of a NaN shows ("-nan" for trec_eval's 0/0, as for NumPy's).
        return f"{'-nan' if math.copysign(1.0, v) < 0 else 'nan':>6}"
    if m.measure.spec.summary == "sum":
        return str(round(v))
    return f"{v:6.4f}"


def _line(name: str, query: str, value: str) -> str:
    return f"{name:<22}\t{query}\t{value}"


def render_trec(results: Results, per_query: bool) -> str:
    measures = sorted(
        results.measures,
        key=lambda m: sort_key(m.measure.label) if m.measure.label else (10_000, 0.0),
    )
    lines: list[str] = []
    if per_query:
        rows: dict[str, list[str]] = {}
        for m in measures:
            if m.measure.spec.summary == "geometric":
                continue
            name = _name(m)
            for q, v, s in zip(m.queries, m.values, m.status, strict=True):
                if s == MISSING:
                    continue
                rows.setdefault(str(q), []).append(_line(name, str(q), _value(m, plain_value(v))))
        for q in sorted(rows, key=lambda s: s.encode("utf-8")):
            lines.extend(rows[q])
    if "runid" in results.extras:
        lines.append(_line("runid", "all", str(results.provenance.get("run", {}).get("tag"))))
    if "num_q" in results.extras:
        n = max((m.n_queries for m in results.measures if m.measure.spec.summary in ("mean", "geometric")), default=None)
        if n is None:
            n = results.counts.queries_evaluated
        lines.append(_line("num_q", "all", str(n)))
    for m in measures:
        if m.measure.spec.summary != "none":
            lines.append(_line(_name(m), "all", _value(m, m.summary)))
    return "\n".join(lines) + "\n"
