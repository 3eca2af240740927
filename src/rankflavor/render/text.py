"""Terminal table (rich): value, queries and the full flavor string beside every number."""

from __future__ import annotations

import io
import math

from ..results import Results, plain_value


def _fmt(v: float | str, is_sum: bool) -> str:
    if isinstance(v, str):  # text-valued metric (relstring)
        return repr(v)
    if math.isnan(v):
        return "nan"
    return str(round(v)) if is_sum else f"{v:.4f}"


def render_table(results: Results, per_query: bool) -> str:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=200, force_terminal=False, color_system=None)
    table = Table(title=None, show_lines=False)
    table.add_column("measure", no_wrap=True)
    table.add_column("value", justify="right")
    table.add_column("queries", justify="right")
    table.add_column("flavor", overflow="fold")
    for m in results.measures:
        is_sum = m.measure.spec.summary == "sum"
        summary = "-" if m.measure.spec.summary == "none" else _fmt(m.summary, is_sum)
        table.add_row(escape(m.measure.display), summary, str(m.n_queries), escape(str(m.measure)))
    console.print(table)
    if per_query:
        pq = Table(title="per query")
        pq.add_column("measure", no_wrap=True)
        pq.add_column("query", no_wrap=True)
        pq.add_column("value", justify="right")
        pq.add_column("status")
        for m in results.measures:
            is_sum = m.measure.spec.summary == "sum"
            for q, v, s in zip(m.queries, m.values, m.status, strict=True):
                pq.add_row(escape(m.measure.display), escape(str(q)), escape(_fmt(plain_value(v), is_sum)), str(s))
        console.print(pq)
    c = results.counts
    # Duplicates no ranking kept twice (below a depth cut, or in queries not scored).
    kept = f", run kept {c.run_duplicates_kept}" if c.run_duplicates_kept else ""
    console.print(
        f"queries: {c.queries_evaluated} evaluated, {c.queries_only_in_qrels} only in qrels, "
        f"{c.queries_only_in_run} only in run (ignored) | duplicates resolved: run {c.run_duplicates_resolved}, "
        f"qrels {c.qrels_duplicates_resolved}{kept} | unjudged retrieved: {c.unjudged_retrieved} | "
        f"negative grades: {c.negative_grades}"
    )
    return buf.getvalue()
